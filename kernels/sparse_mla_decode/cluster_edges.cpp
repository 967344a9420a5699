#include "kernels/sparse_mla_decode/cluster_edges.hpp"

#include <algorithm>

#include "templates/sparse_mla_decode/layout.h"

namespace tuner::smla_family {

std::vector<int> cluster_edge_batches(int local_heads, const std::vector<int>& block_h_values,
                                      const std::vector<ClusterCapacity>& by_occupancy,
                                      int max_batch) {
  std::vector<int> batches;
  for (const int block_h : block_h_values) {
    if (block_h > local_heads || block_h < 1) continue;
    const int head_groups = (local_heads + block_h - 1) / block_h;
    for (const ClusterCapacity& capacity : by_occupancy) {
      for (int size = 2; size <= smla::kMaxClusterSplits; ++size) {
        const int batch = capacity.at(size) / head_groups;
        if (batch >= 1 && batch <= max_batch) batches.push_back(batch);
      }
    }
  }
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  return batches;
}

}  // namespace tuner::smla_family
