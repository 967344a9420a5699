// The sparse MLA family's cluster-edge batches (cluster_edges.hpp, the batch set 'clusters'):
// hand-computed cases from the H200's measured capacity (62 clusters of 4 at 2 CTAs per SM,
// BENCHMARKS.md section 7), and an independent check against split rule 3: at every edge the
// cluster merge keeps its cluster size, and one batch more it does not; through the family hook,
// only the occupancies its kernels can reach count.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "core/cluster_capacity.hpp"
#include "kernels/sparse_mla_decode/cluster_edges.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/family.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

// Capacities by occupancy [0..2]; k = 2 holds `per_size[s]` clusters of size s.
std::vector<ClusterCapacity> two_ctas_per_sm(const std::vector<int>& per_size) {
  std::vector<ClusterCapacity> by_occupancy(3);
  for (std::size_t size = 1; size < per_size.size(); ++size) {
    by_occupancy[2].clusters[size] = per_size[size];
  }
  return by_occupancy;
}

}  // namespace

TEST_CASE("cluster edges: hand-computed cases") {
  // Sizes 1..8 at 2 CTAs per SM on 132 SMs (size 4: the measured 62).
  const std::vector<ClusterCapacity> h200 = two_ctas_per_sm({0, 264, 132, 86, 62, 50, 42, 36, 30});
  // 16 local heads, BLOCK_H 16: one head group, so every capacity of sizes 2..8 is an edge.
  CHECK(cluster_edge_batches(16, {16, 32, 64}, h200, 512) ==
        std::vector<int>{30, 36, 42, 50, 62, 86, 132});
  // 64 local heads: 4, 2 or 1 head groups (BLOCK_H 16, 32, 64).
  const std::vector<int> heads64 = cluster_edge_batches(64, {16, 32, 64}, h200, 512);
  CHECK(std::find(heads64.begin(), heads64.end(), 15) != heads64.end());  // 62 / 4
  CHECK(std::find(heads64.begin(), heads64.end(), 31) != heads64.end());  // 62 / 2
  CHECK(std::find(heads64.begin(), heads64.end(), 62) != heads64.end());  // 62 / 1
  // max_batch cuts; unknown capacities (0) and a BLOCK_H above the heads name nothing.
  CHECK(cluster_edge_batches(16, {16}, h200, 60) == std::vector<int>{30, 36, 42, 50});
  CHECK(cluster_edge_batches(16, {16}, std::vector<ClusterCapacity>(4), 512).empty());
  CHECK(cluster_edge_batches(16, {32, 64}, h200, 512).empty());
}

TEST_CASE("cluster edges: split rule 3 keeps the cluster at an edge and drops it one batch on") {
  const std::vector<ClusterCapacity> h200 = two_ctas_per_sm({0, 264, 132, 86, 62, 50, 42, 36, 30});
  const std::vector<int> edges = cluster_edge_batches(16, {16}, h200, 512);
  // The merge-2 plan of 16 local heads, BLOCK_T 64, topk 2048 (32 tiles per row) asking for s
  // splits (TARGET_CTAS = s x batch): at an edge of size s it runs clusters of s; one batch more,
  // fewer (deploy.cpp's split_plan with the capacity, independent of cluster_edges.cpp). Every
  // size 2..8 splits 32 tiles into exactly that many splits (ceil(32 / ceil(32 / s)) = s).
  for (int size = 2; size <= 8; ++size) {
    CAPTURE(size);
    const int edge = h200[2].at(size);
    REQUIRE(std::find(edges.begin(), edges.end(), edge) != edges.end());
    const GeometryParams at_edge{64, 16, size * edge, 2, 0};
    CHECK(split_plan({edge, 16, 2048}, at_edge, h200[2]).num_splits == size);
    const GeometryParams past_edge{64, 16, size * (edge + 1), 2, 0};
    CHECK(split_plan({edge + 1, 16, 2048}, past_edge, h200[2]).num_splits < size);
  }
}

TEST_CASE("cluster edges through the family: occupancies above the largest CTAS_PER_SM drop out") {
  // The space's launch bounds go up to 3 CTAs per SM, so a capacity at 4 names no batch.
  std::vector<ClusterCapacity> by_occupancy(5);
  by_occupancy[3].clusters[4] = 90;
  by_occupancy[4].clusters[4] = 120;
  const tuner::Shape shape = family().canonicalize(
      {{"heads", "64"}, {"tp", "4"}, {"topk", "2048"}, {"kv", "fp8_ds_mla"}, {"page_size", "64"}});
  CHECK(family().cluster_edge_batches(shape, by_occupancy, 512) == std::vector<int>{90});
  by_occupancy.resize(2);  // fewer occupancies probed than the space allows: those there count
  by_occupancy[1].clusters[2] = 66;
  CHECK(family().cluster_edge_batches(shape, by_occupancy, 512) == std::vector<int>{66});
}
