#pragma once
// How many thread-block clusters of each size one kernel's launch keeps resident at once on one
// device (cuOccupancyMaxActiveClusters, with the launch's block and dynamic shared memory). A grid
// of more clusters runs in more than one wave. A cluster stays inside one GPC, so fewer clusters
// fit than CTAs suggest: on the H200 a kernel of 2 CTAs per SM holds 62 clusters of 4, not 66
// (Nsight Compute, BENCHMARKS.md section 7). Plain data: no driver here (core/cuda_driver.hpp
// fills it).
namespace tuner {

struct ClusterCapacity {
  static constexpr int kMaxSize = 8;  // the portable cluster size limit
  // By cluster size; 0: not known (no device, or refused). Size 1 is the kernel's resident CTAs
  // on the whole device: one wave of the grid.
  int clusters[kMaxSize + 1] = {};
  // 0 (no cap known) outside 1..kMaxSize.
  int at(int size) const { return size >= 1 && size <= kMaxSize ? clusters[size] : 0; }
};

// No device: nothing known, no cap. Plans, launch identities and CPU tests say so by this name;
// a launch on a GPU passes its kernel's capacity (a plan made without it can split differently:
// the cluster merge's cap, TARGET_CTAS 0's one wave).
inline constexpr ClusterCapacity kCapacityUnknown{};

}  // namespace tuner
