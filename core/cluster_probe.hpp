#pragma once
// The device's cluster capacity by occupancy: how many thread-block clusters of each size 1..8 it
// keeps resident when each SM holds k CTAs. A cluster stays inside one GPC, so the count follows
// the device's GPC layout, not SMs x k / size (the H200 holds 62 clusters of 4 at 2 CTAs per SM,
// not 66). Read from an empty probe kernel whose dynamic shared memory lets exactly k CTAs share an
// SM, before any family kernel is compiled: a kernel that runs k CTAs per SM gets the same counts
// (tests/gpu_cuda_driver.cpp checks one). Families name from it the batches where their cluster
// launches stop fitting one wave (Family::cluster_edge_batches, the batch set 'clusters').
#include <vector>

#include "core/cluster_capacity.hpp"

namespace tuner::cuda {

// The occupancies the engine probes for the batch set 'clusters' (1..4 CTAs per SM).
constexpr int kClusterProbeOccupancy = 4;

// [k] for k = 1..max_ctas_per_sm; [0] stays empty. Throws CudaError or NvrtcError (the probe's
// compile, load or occupancy query), and std::runtime_error when the probe's shared memory does
// not give k CTAs per SM (a device whose limits the sizing below does not cover).
std::vector<ClusterCapacity> cluster_capacity_by_occupancy(int device, int max_ctas_per_sm);

}  // namespace tuner::cuda
