#pragma once
// Launch geometry: how many splits, how many tokens each, and the two grids.
#include <string>

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

// `clusters`: the split kernel's cluster capacity on the launching device (split_plan's cap of the
// cluster merge, TARGET_CTAS 0's wave), kCapacityUnknown where no device launches (plans, the
// launch identity, CPU tests). No default: a GPU launch planned without its capacity wrote other
// bits than the sweep's (the thirty-sixth session's gpu_tunedb_cuda_factors).
LaunchGeometry launch_geometry(const KernelConfig& config, const Shape& shape,
                               const ClusterCapacity& clusters);

// Every launch fact launch_decode passes to the driver (both grids, the block, shared memory, the
// cluster, the tokens per split, whether and how the combine runs), as text;
// Family::launch_identity is the compile key and this. With one split, the merge values and the
// TARGET_CTAS that give it are one launch; with several, merge 0 and 1 differ in launch order and
// merge 2 in its cluster, merge 3 in its ticket reset.
std::string launch_facts_text(const KernelConfig& config, const Shape& shape);

}  // namespace tuner::smla_family
