#pragma once
// Launch geometry: how many splits, how many tokens each, and the two grids.
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/space.hpp"

namespace tuner::smla_family {

struct LaunchGeometry {
  int head_groups = 0;
  int requested_splits =
      0;               // clamp(floor(TARGET_CTAS / (batch x head_groups)), 1, ceil(topk / BLOCK_T))
  int num_splits = 0;  // splits that own at least one tile (<= requested)
  int tokens_per_split = 0;            // a multiple of BLOCK_T
  unsigned split_grid[3] = {0, 0, 0};  // (num_splits, head_groups, batch)
  unsigned split_threads = 0;
  unsigned split_smem_bytes = 0;
  unsigned combine_grid[3] = {0, 0,
                              0};  // (n_local_heads, batch, dim chunks); unused with one split
  unsigned combine_threads = 128;
  bool runs_combine() const { return num_splits > 1; }
};

LaunchGeometry launch_geometry(const KernelConfig& config, const Shape& shape);

}  // namespace tuner::smla_family
