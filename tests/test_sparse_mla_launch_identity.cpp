// Sparse MLA decode's launch identity (Family::launch_identity), checked against what the serving
// launcher hands the driver (tests/support/serving_launches.hpp: serve.cpp's path, recorded):
// two configs of one compiled kernel have equal identities exactly when their recorded launches
// (grids, block, shared memory, order, cluster, parameter bytes) are equal. Both sides take the
// split count from deploy.cpp's split_plan (shared code): this checks that the identity names every
// launch fact that differs, not the split rule, which test_sparse_mla_deploy.cpp checks by hand.
#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

#include "core/config.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "tests/support/serving_launches.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

bool same_recorded(const std::vector<test::RecordedLaunch>& a,
                   const std::vector<test::RecordedLaunch>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const test::RecordedLaunch& x = a[i];
    const test::RecordedLaunch& y = b[i];
    if (x.function != y.function || x.block != y.block || x.smem != y.smem || x.order != y.order ||
        x.cluster_x != y.cluster_x || x.params != y.params)
      return false;
    for (int d = 0; d < 3; ++d)
      if (x.grid[d] != y.grid[d]) return false;
  }
  return true;
}

std::string identity(const KernelConfig& config, KvFormat kv, int batch, int local_heads = 16) {
  smla_family::Shape shape;
  shape.kv_format = kv;
  shape.n_heads = local_heads;
  shape.attn_tp = 1;
  return family().launch_identity(to_config(config), canonical_shape(shape), batch);
}

// Every launch-time variant (TARGET_CTAS x merge) of one compiled kernel, `schedule` given (the
// tile-dividing schedules take neither the cluster nor the last-CTA merge).
std::vector<KernelConfig> launch_variants(int block_h, int block_t, int num_stages, int producers,
                                          int schedule) {
  std::vector<KernelConfig> variants;
  for (const int target : {0, 128, 256, 512, 1024}) {
    for (const int merge : {0, 1, 2, 3, 4}) {
      if (schedule != 0 && (merge == 2 || merge == 3)) continue;
      if (merge >= 3 && producers == 0) continue;  // merges 3 and 4 run on the pipelined kernels
      variants.push_back({.block_t = block_t,
                          .block_h = block_h,
                          .num_stages = num_stages,
                          .mma_path = producers > 0 ? 1 : 0,
                          .producers = producers,
                          .target_ctas = target,
                          .merge = merge,
                          .schedule = schedule});
    }
  }
  return variants;
}

// The launches are recorded as a GPU makes them: with the kernel's resident CTAs known (the
// balanced schedule's grid; 264 = 2 CTAs x 132 SMs), cluster sizes left unknown (no cap on merge
// 2).
ClusterCapacity resident_ctas_only() {
  ClusterCapacity capacity;
  capacity.clusters[1] = 264;
  return capacity;
}

// A compiled kernel whose cluster merge asks more shared memory than its ring (the exchange is
// larger), so that merge 2 is another launch even with one split.
std::tuple<int, int, int, int> kernel_with_larger_exchange() {
  for (const int block_h : {16, 32, 64}) {
    for (const int block_t : {16, 32, 64}) {
      KernelConfig config;
      config.block_h = block_h;
      config.block_t = block_t;
      config.num_stages = 1;
      smla_family::Shape shape;
      shape.n_heads = 64;  // local heads 64: every BLOCK_H applies
      const tuner::Shape canonical = canonical_shape(shape);
      const int ring = family().budget(to_config(config), canonical).smem_bytes_per_block;
      config.merge = 2;
      if (family().budget(to_config(config), canonical).smem_bytes_per_block > ring)
        return {block_h, block_t, 1, 0};
    }
  }
  FAIL("no kernel of the space has an exchange larger than its ring");
  return {};
}

}  // namespace

TEST_CASE("launch identity: equal exactly when the serving launches are equal") {
  // (local heads, BLOCK_H, BLOCK_T, stages, producers): the winners' structure, two plain kernels
  // and one whose exchange outgrows its ring.
  std::vector<std::tuple<int, int, int, int, int>> kernels{
      {16, 16, 64, 2, 2}, {16, 16, 16, 1, 0}, {16, 16, 32, 1, 0}};
  const auto [block_h, block_t, stages, producers] = kernel_with_larger_exchange();
  kernels.emplace_back(64, block_h, block_t, stages, producers);
  int equal_pairs = 0;
  int distinct_pairs = 0;
  const ClusterCapacity capacity = resident_ctas_only();
  for (const KvFormat kv : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
    for (const auto& [heads, bh, bt, ns, np] : kernels) {
      for (const int schedule : {0, 1, 2}) {
        if (schedule != 0 && np == 0) continue;  // the tile-dividing schedules: producer warps
        const std::vector<KernelConfig> variants = launch_variants(bh, bt, ns, np, schedule);
        for (const int batch : {1, 7, 64, 128, 272, 512}) {
          for (std::size_t i = 0; i < variants.size(); ++i) {
            const auto first = test::serving_launches(variants[i], kv, batch, heads, capacity);
            for (std::size_t j = i + 1; j < variants.size(); ++j) {
              CAPTURE(describe(to_config(variants[i])));
              CAPTURE(describe(to_config(variants[j])));
              CAPTURE(batch);
              const bool same = same_recorded(
                  first, test::serving_launches(variants[j], kv, batch, heads, capacity));
              const bool same_identity = identity(variants[i], kv, batch, heads) ==
                                         identity(variants[j], kv, batch, heads);
              // TARGET_CTAS 0 takes its splits from the device's resident CTAs, which the
              // identity cannot know: it may name one launch twice (timed twice), never two
              // launches once.
              if (variants[i].target_ctas == kTargetOneWave ||
                  variants[j].target_ctas == kTargetOneWave) {
                CHECK((!same_identity || same));
              } else {
                CHECK(same == same_identity);
              }
              (same ? equal_pairs : distinct_pairs) += 1;
            }
          }
        }
      }
    }
  }
  // Both sides occur: one split makes the merge values one launch, several splits tell them apart.
  CHECK(equal_pairs > 100);
  CHECK(distinct_pairs > 100);
}

TEST_CASE("launch identity: one split makes merge and TARGET_CTAS moot, a compile key never is") {
  // 16 local heads in one head group: batch 512 gives one split for TARGET_CTAS <= 1023 (written
  // here from the split rule, floor(TARGET_CTAS / (batch x head groups)) clamped to >= 1).
  KernelConfig config{
      .block_t = 64, .num_stages = 2, .mma_path = 1, .producers = 2, .target_ctas = 128};
  const std::string one_split = identity(config, KvFormat::fp8_ds_mla, 512);
  for (const int target : {256, 512}) {
    for (const int merge : {0, 1, 2, 4}) {
      config.target_ctas = target;
      config.merge = merge;
      CHECK(identity(config, KvFormat::fp8_ds_mla, 512) == one_split);
    }
  }
  config.target_ctas = 1024;  // two splits: the four merges are four launches
  config.merge = 0;
  const std::string stream = identity(config, KvFormat::fp8_ds_mla, 512);
  config.merge = 1;
  const std::string pdl = identity(config, KvFormat::fp8_ds_mla, 512);
  config.merge = 2;
  const std::string cluster = identity(config, KvFormat::fp8_ds_mla, 512);
  config.merge = 4;
  const std::string bf16_partials = identity(config, KvFormat::fp8_ds_mla, 512);
  CHECK(bf16_partials != pdl);  // the same launch order, other partials
  CHECK(bf16_partials != stream);
  CHECK(bf16_partials != cluster);
  CHECK(stream != one_split);
  CHECK(stream != pdl);
  CHECK(pdl != cluster);
  CHECK(stream != cluster);
  config.num_warps = 8;  // another compiled kernel with the same launch facts otherwise
  CHECK(identity(config, KvFormat::fp8_ds_mla, 512) != cluster);
  // A value the space does not know (the sweep's injected fault) makes a kernel of its own.
  Config faulty = to_config(config);
  faulty.values.emplace_back("test_fault", 1);
  smla_family::Shape shape;
  CHECK(family().launch_identity(faulty, canonical_shape(shape), 512) !=
        identity(config, KvFormat::fp8_ds_mla, 512));
}
