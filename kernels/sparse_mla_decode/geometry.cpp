#include "kernels/sparse_mla_decode/geometry.hpp"

#include <algorithm>

#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"

namespace tuner::smla_family {

LaunchGeometry launch_geometry(const KernelConfig& config, const Shape& shape) {
  LaunchGeometry geometry;
  // The split count is deploy.hpp's (the serving launcher runs the same function).
  const DecodeDims dims{shape.batch, shape.n_local_heads(), shape.topk};
  const SplitPlan& plan = geometry.plan =
      split_plan(dims, {config.block_t, config.block_h, config.target_ctas, config.merge});
  geometry.split_grid[0] = static_cast<unsigned>(plan.num_splits);
  geometry.split_grid[1] = static_cast<unsigned>(plan.head_groups);
  geometry.split_grid[2] = static_cast<unsigned>(shape.batch);
  const StaticBudget budget = static_budget(config, shape.kv_format);
  geometry.split_threads = static_cast<unsigned>(budget.threads_per_block);
  geometry.split_smem_bytes = static_cast<unsigned>(budget.smem_bytes_per_block);
  const std::array<unsigned, 3> combine = combine_grid(dims, plan);
  std::copy(combine.begin(), combine.end(), geometry.combine_grid);
  geometry.combine_threads = kCombineThreads;
  return geometry;
}

}  // namespace tuner::smla_family
