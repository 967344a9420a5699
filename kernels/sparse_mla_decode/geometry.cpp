#include "kernels/sparse_mla_decode/geometry.hpp"

#include <algorithm>

#include "kernels/sparse_mla_decode/resources.hpp"

namespace tuner::smla_family {

namespace {
int ceil_div(int a, int b) { return (a + b - 1) / b; }
}  // namespace

LaunchGeometry launch_geometry(const KernelConfig& config, const Shape& shape) {
  LaunchGeometry geometry;
  geometry.head_groups = ceil_div(shape.n_local_heads(), config.block_h);
  const int tiles = ceil_div(shape.topk, config.block_t);
  geometry.requested_splits =
      std::clamp(ceil_div(config.target_ctas, shape.batch * geometry.head_groups), 1, tiles);
  // Whole tiles per split; splits that would own no tile are not launched.
  const int tiles_per_split = ceil_div(tiles, geometry.requested_splits);
  geometry.num_splits = ceil_div(tiles, tiles_per_split);
  geometry.tokens_per_split = tiles_per_split * config.block_t;
  geometry.split_grid[0] = static_cast<unsigned>(geometry.num_splits);
  geometry.split_grid[1] = static_cast<unsigned>(geometry.head_groups);
  geometry.split_grid[2] = static_cast<unsigned>(shape.batch);
  const StaticBudget budget = static_budget(config, shape.kv_format);
  geometry.split_threads = static_cast<unsigned>(budget.threads_per_block);
  geometry.split_smem_bytes = static_cast<unsigned>(budget.smem_bytes_per_block);
  geometry.combine_grid[0] = static_cast<unsigned>(shape.n_local_heads());
  geometry.combine_grid[1] = static_cast<unsigned>(shape.batch);
  geometry.combine_grid[2] = 1;
  return geometry;
}

}  // namespace tuner::smla_family
