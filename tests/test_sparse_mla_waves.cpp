// The sparse MLA family's wave-edge batches (deploy.hpp's wave_edge_batches, the family's
// `waves` batch set): hand-computed cases, and an independent check that every edge is the last
// batch whose one-split grid still fits its number of waves.
#include <doctest/doctest.h>

#include <vector>

#include "core/shape.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/family.hpp"

using namespace tuner::smla_family;

TEST_CASE("wave edges: hand-computed cases") {
  // 16 local heads: only BLOCK_H 16 fits (one head group), so the edges are the multiples of the
  // SM count: the H200's 132 SMs, the RTX PRO 6000's 188.
  CHECK(wave_edge_batches(16, {16, 32, 64}, 132, 512) == std::vector<int>{132, 264, 396});
  CHECK(wave_edge_batches(16, {16, 32, 64}, 188, 512) == std::vector<int>{188, 376});
  // 64 local heads: 4, 2 or 1 head groups; 132 / 4 = 33, so every multiple of 33.
  std::vector<int> multiples_of_33;
  for (int batch = 33; batch <= 512; batch += 33) multiples_of_33.push_back(batch);
  CHECK(wave_edge_batches(64, {16, 32, 64}, 132, 512) == multiples_of_33);
  // 48 local heads, BLOCK_H 32: 2 head groups on 170 SMs: 85, 170, 255.
  CHECK(wave_edge_batches(48, {32, 64}, 170, 256) == std::vector<int>{85, 170, 255});
  CHECK(wave_edge_batches(16, {16}, 132, 131).empty());      // below the first edge
  CHECK(wave_edge_batches(16, {32, 64}, 132, 512).empty());  // no BLOCK_H fits 16 heads
}

TEST_CASE("wave edges: each is the last batch of its wave count, checked by counting CTAs") {
  for (const int sm_count : {78, 114, 132, 170, 188}) {
    for (const int local_heads : {16, 32, 64, 128}) {
      CAPTURE(sm_count);
      CAPTURE(local_heads);
      const std::vector<int> edges = wave_edge_batches(local_heads, {16, 32, 64}, sm_count, 512);
      // Independently: batch b is an edge when, for some BLOCK_H that fits, the one-split grid of
      // b x head_groups CTAs needs fewer waves than the one of (b + 1) x head_groups.
      std::vector<int> expected;
      for (int batch = 1; batch <= 512; ++batch) {
        bool edge = false;
        for (const int block_h : {16, 32, 64}) {
          if (block_h > local_heads) continue;
          const int groups = (local_heads + block_h - 1) / block_h;
          const int waves = (batch * groups + sm_count - 1) / sm_count;
          const int waves_after = ((batch + 1) * groups + sm_count - 1) / sm_count;
          edge = edge || waves_after > waves;
        }
        if (edge) expected.push_back(batch);
      }
      CHECK(edges == expected);
    }
  }
}

TEST_CASE("wave edges: the family's 'waves' set reads the shape's local heads") {
  const tuner::Family& family = tuner::smla_family::family();
  REQUIRE(static_cast<bool>(family.wave_edge_batches));
  const tuner::Shape shape = canonical_shape(Shape{});  // 64 heads / TP 4: 16 local heads
  CHECK(family.wave_edge_batches(shape, 132, 512) == std::vector<int>{132, 264, 396});
  CHECK(family.default_batches == "1-8,cudagraph,waves,clusters");
}
