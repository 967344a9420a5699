#pragma once
// How many thread-block clusters of each size one kernel's launch keeps resident at once on one
// device (cuOccupancyMaxActiveClusters, with the launch's block and dynamic shared memory). A grid
// of more clusters runs in more than one wave: on the H200, sparse MLA decode's winners' kernel
// (2 CTAs per SM) holds 62 clusters of 4, not 66, because a cluster stays inside one GPC
// (Nsight Compute, BENCHMARKS.md section 7), so batch 64 in clusters of 4 took 54.7 us against
// 33.4 us in one wave. Plain data: no driver here (core/cuda_driver.hpp fills it).
namespace tuner {

struct ClusterCapacity {
  static constexpr int kMaxSize = 8;  // the portable cluster size limit
  int clusters[kMaxSize + 1] = {};    // by cluster size; 0: not known (no device, or refused)
  // 0 (no cap known) outside 1..kMaxSize.
  int at(int size) const { return size >= 1 && size <= kMaxSize ? clusters[size] : 0; }
};

}  // namespace tuner
