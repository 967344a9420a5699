#pragma once
// The family's batch set 'clusters' (Family::cluster_edge_batches): the batches where a cluster
// merge (merge 2) of s splits stops fitting one wave of clusters. Its grid is batch x head_groups
// clusters of s CTAs; the device holds capacity_k(s) of them at once when the kernel runs k CTAs
// per SM, so batch floor(capacity_k(s) / head_groups) is the last whose clusters all fit, and one
// more launches a second wave (split rule 3 then takes fewer splits: deploy.cpp's split_plan). The
// bucket rule hands an untuned batch the winner of the next tuned one; tuned at these edges, a
// batch whose clusters fit never gets a winner tuned where they did not (the H200's batch 60 got
// batch 64's, 11 % slower: BENCHMARKS.md section 9).
#include <vector>

#include "core/cluster_capacity.hpp"

namespace tuner::smla_family {

// For every occupancy k of `by_occupancy` (index k; 0 unused), cluster size 2..kMaxClusterSplits
// and BLOCK_H of `block_h_values` that fits `local_heads`: floor(capacity / head_groups), when
// 1..max_batch. Sorted, unique. Capacities of 0 (not known) name no batch.
std::vector<int> cluster_edge_batches(int local_heads, const std::vector<int>& block_h_values,
                                      const std::vector<ClusterCapacity>& by_occupancy,
                                      int max_batch);

}  // namespace tuner::smla_family
