#pragma once
// Launch geometry: how many splits, how many tokens each, and the two grids.
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/space.hpp"

namespace tuner::smla_family {

struct LaunchGeometry {
  SplitPlan plan;                      // deploy.hpp's: the serving launcher runs the same function
  unsigned split_grid[3] = {0, 0, 0};  // (num_splits, head_groups, batch); plan.cluster_x() along x
  unsigned split_threads = 0;
  unsigned split_smem_bytes = 0;
  unsigned combine_grid[3] = {0, 0, 0};  // (n_local_heads, batch, dim chunks); unused with 1 split
  unsigned combine_threads = 128;
  bool runs_combine() const { return plan.runs_combine(); }
};

LaunchGeometry launch_geometry(const KernelConfig& config, const Shape& shape);

}  // namespace tuner::smla_family
