// TARGET_CTAS 0 (kTargetOneWave, deploy.hpp): the split count from one wave of the split kernel's
// resident CTAs on the launching device. Split counts written by hand for the H200's 264 resident
// CTAs (2 CTAs x 132 SMs) and a 188-CTA device; the serving launcher's recorded grid (serve.cpp's
// path, not the tuner's geometry); the cluster merge's equivalence with TARGET_CTAS 1024 that
// space.cpp's trim states, over every batch; and the launch identity, which cannot know the
// capacity, keeping the value a launch of its own.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_capacity.hpp"
#include "core/config.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/serve.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "tests/support/serving_launches.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

// Sizes 1..8 at 2 CTAs per SM on the H200's 132 SMs (size 4: the measured 62, BENCHMARKS.md
// section 7; the others as test_sparse_mla_cluster_edges.cpp takes them).
ClusterCapacity h200_clusters() {
  ClusterCapacity capacity;
  const int per_size[] = {0, 264, 132, 86, 62, 50, 42, 36, 30};
  for (int size = 1; size <= ClusterCapacity::kMaxSize; ++size)
    capacity.clusters[size] = per_size[size];
  return capacity;
}

ClusterCapacity resident_only(int ctas) {
  ClusterCapacity capacity;
  capacity.clusters[1] = ctas;
  return capacity;
}

// 16 local heads in one head group (BLOCK_H 16), topk 2048 in 32 tiles of 64 tokens.
SplitPlan plan_at(int batch, int target_ctas, const ClusterCapacity& capacity, int merge = 4) {
  return split_plan({batch, 16, 2048}, {64, 16, target_ctas, merge, smla::kScheduleSplits},
                    capacity);
}

}  // namespace

TEST_CASE("one wave: split counts written by hand") {
  const ClusterCapacity h200 = resident_only(264);
  // batch: splits, tokens a split (a multiple of 64). At batch 9, 29 splits asked take 2 tiles
  // each, so 16 cover the 32 tiles. 264 / 66 = 4 splits of 8 tiles: one full
  // wave, where TARGET_CTAS 256 gives 3 splits of 11 tiles (198 CTAs) and 512 gives 7 (462).
  struct Case {
    int batch;
    int splits;
    int tokens;
  };
  for (const Case& expected :
       {Case{66, 4, 512}, Case{64, 4, 512}, Case{88, 3, 704}, Case{72, 3, 704}, Case{132, 2, 1024},
        Case{133, 1, 2048}, Case{264, 1, 2048}, Case{512, 1, 2048}, Case{1, 32, 64},
        Case{8, 32, 64}, Case{9, 16, 128}}) {
    CAPTURE(expected.batch);
    const SplitPlan plan = plan_at(expected.batch, kTargetOneWave, h200);
    CHECK(plan.num_splits == expected.splits);
    CHECK(plan.tokens_per_split == expected.tokens);
  }
  CHECK(plan_at(66, 256, h200).num_splits == 3);
  CHECK(plan_at(66, 512, h200).num_splits == 7);
  // Another device's wave: 188 resident CTAs (1 an SM on 188 SMs) give batch 47 four splits.
  CHECK(plan_at(47, kTargetOneWave, resident_only(188)).num_splits == 4);
  CHECK(plan_at(66, kTargetOneWave, resident_only(188)).num_splits == 2);
  // No device known (plans, the launch identity): one split a row, a valid launch.
  CHECK(plan_at(66, kTargetOneWave, {}).num_splits == 1);
  CHECK(plan_at(1, kTargetOneWave, {}).num_splits == 1);
}

TEST_CASE("one wave: the serving launcher's grid follows the bound kernel's resident CTAs") {
  const KernelConfig config{.block_t = 64,
                            .num_stages = 2,
                            .mma_path = 1,
                            .producers = 2,
                            .target_ctas = kTargetOneWave,
                            .merge = 4};
  const std::vector<test::RecordedLaunch> h200 =
      test::serving_launches(config, KvFormat::fp8_ds_mla, 66, 16, resident_only(264));
  REQUIRE(h200.size() == 2);  // the split, then the combine
  CHECK(h200[0].grid[0] == 4);
  CHECK(h200[0].grid[1] == 1);
  CHECK(h200[0].grid[2] == 66);
  const std::vector<test::RecordedLaunch> other =
      test::serving_launches(config, KvFormat::fp8_ds_mla, 66, 16, resident_only(188));
  REQUIRE(other.size() == 2);
  CHECK(other[0].grid[0] == 2);
}

TEST_CASE("one wave: under the cluster merge it is TARGET_CTAS 1024's launch (space.cpp's trim)") {
  // Capacities where a cluster of s takes s of the resident CTAs' slots: the H200's, and the
  // same device without the GPC losses (floor(264 / s)).
  ClusterCapacity even;
  for (int size = 1; size <= ClusterCapacity::kMaxSize; ++size) even.clusters[size] = 264 / size;
  int clustered = 0;
  for (const ClusterCapacity& capacity : {h200_clusters(), even}) {
    for (const int block_t : {16, 32, 64}) {
      for (const int topk : {2048, 600, 5}) {
        for (int batch = 1; batch <= 600; ++batch) {
          CAPTURE(block_t);
          CAPTURE(topk);
          CAPTURE(batch);
          const GeometryParams one_wave{block_t, 16, kTargetOneWave, smla::kMergeCluster,
                                        smla::kScheduleSplits};
          GeometryParams most = one_wave;
          most.target_ctas = 1024;
          const SplitPlan a = split_plan({batch, 16, topk}, one_wave, capacity);
          const SplitPlan b = split_plan({batch, 16, topk}, most, capacity);
          CHECK(a.num_splits == b.num_splits);
          CHECK(a.tokens_per_split == b.tokens_per_split);
          clustered += a.merges_in_cluster() ? 1 : 0;
        }
      }
    }
  }
  CHECK(clustered > 1000);  // the equivalence covers clusters, not only one-split launches
}

TEST_CASE("one wave: a launch identity of its own, by merge") {
  smla_family::Shape shape;
  KernelConfig config{.block_t = 64, .num_stages = 2, .mma_path = 1, .producers = 2, .merge = 4};
  const auto identity = [&](int target, int merge, int batch) {
    config.target_ctas = target;
    config.merge = merge;
    return family().launch_identity(to_config(config), canonical_shape(shape), batch);
  };
  for (const int batch : {1, 66, 512}) {
    CAPTURE(batch);
    for (const int target : {128, 256, 512, 1024}) {
      CHECK(identity(kTargetOneWave, 4, batch) != identity(target, 4, batch));
    }
    CHECK(identity(kTargetOneWave, 4, batch) != identity(kTargetOneWave, 1, batch));
    CHECK(identity(kTargetOneWave, 1, batch) != identity(kTargetOneWave, 0, batch));
  }
  // The identity does not depend on the batch it cannot resolve.
  CHECK(identity(kTargetOneWave, 4, 66) == identity(kTargetOneWave, 4, 512));
}

TEST_CASE("one wave: bind takes TARGET_CTAS 0 and refuses a negative or missing one") {
  const BoundKernel kernel{test::fake_function(0x100), 128, 0, {}};
  const auto bind_with = [&](std::optional<std::int64_t> target) {
    return deploy_family().bind([&](std::string_view) { return &kernel; },
                                [target](std::string_view name) -> std::optional<std::int64_t> {
                                  if (name == "target_ctas") return target;
                                  return 16;
                                });
  };
  CHECK_NOTHROW(bind_with(0));
  CHECK_THROWS_WITH_AS(bind_with(-1), doctest::Contains("no target_ctas >= 0"), std::runtime_error);
  CHECK_THROWS_WITH_AS(bind_with(std::nullopt), doctest::Contains("no target_ctas >= 0"),
                       std::runtime_error);
}
