// The sparse MLA decode family's serving launch bound from the launch facts `tuner freeze` writes
// (frozen_launches), recorded through a LaunchKernelFn that stands in for cuLaunchKernel, against
// the tuner's own geometry and packing (launch.cpp's path), for every merge value.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/serve.hpp"
#include "kernels/sparse_mla_decode/serve_args.h"
#include "tests/support/bound_winners.hpp"
#include "tests/support/recorded_launches.hpp"
#include "tests/support/serving_launches.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

using test::recorded;

// The serving launch of `config` at `batch`, bound from the launch facts `tuner freeze` writes
// (frozen_launches), recorded; then the tuner's geometry and packing for the same launch.
void check_serving_is_tuners(const KernelConfig& config, KvFormat kv, int batch,
                             const ClusterCapacity& clusters = {}) {
  smla_family::Shape shape;
  shape.kv_format = kv;
  shape.batch = batch;
  recorded = test::serving_launches(config, kv, batch, shape.n_local_heads(), clusters);
  const LaunchGeometry geometry = launch_geometry(config, shape, clusters);
  const DecodeDims dims{batch, shape.n_local_heads(), shape.topk};
  const SplitPlan plan = split_plan(
      dims, {config.block_t, config.block_h, config.target_ctas, config.merge, config.schedule},
      clusters);
  // merge 3: the ticket reset first, the split its programmatic dependent.
  const bool last_cta = plan.merges_last_cta();
  REQUIRE(recorded.size() == (geometry.runs_combine() || last_cta ? 2u : 1u));
  const test::RecordedLaunch& split = recorded[last_cta ? 1 : 0];
  for (int d = 0; d < 3; ++d) CHECK(split.grid[d] == geometry.split_grid[d]);
  CHECK(split.cluster_x == geometry.plan.cluster_x());
  CHECK(split.cluster_x ==
        (config.merge == 2 && plan.num_splits > 1 ? static_cast<unsigned>(plan.num_splits) : 1u));
  CHECK(split.block == geometry.split_threads);
  CHECK(split.smem == geometry.split_smem_bytes);
  CHECK(split.order == (last_cta ? LaunchOrder::programmatic : LaunchOrder::stream));
  const DecodeBuffers buffers = place_partials({0x1000, 0x2000, 0x3000, 0x4000, 0x5000}, 0x10000000,
                                               workspace_layout(dims, plan));
  const smla::SplitParams want = pack_split(buffers, dims, plan, 0.0625f);
  // Bytes, not fields: the kernel receives these bytes, so they must match exactly (a -0.0f
  // where +0.0f was packed would rightly differ here). params.h asserts the blocks have no inner
  // padding, so no indeterminate bytes are compared.
  // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
  CHECK(std::memcmp(split.params.data(), &want, sizeof want) == 0);
  CHECK((want.row_tickets != nullptr) == last_cta);
  if (last_cta) {
    const std::array<unsigned, 3> reset = reset_grid(dims, plan);
    for (int d = 0; d < 3; ++d) CHECK(recorded[0].grid[d] == reset[d]);
    CHECK(recorded[0].block == geometry.combine_threads);
    CHECK(recorded[0].smem == 0);
    CHECK(recorded[0].order == LaunchOrder::stream);
    const smla::CombineParams reset_params = pack_reset(buffers, dims, plan);
    // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): bytes, as above
    CHECK(std::memcmp(recorded[0].params.data(), &reset_params, sizeof reset_params) == 0);
    return;
  }
  if (!geometry.runs_combine()) return;
  // The whole-row kernel exactly when each thread of a one-chunk grid holds every part of its row:
  // at most 8 parts (combine.cuh traps otherwise), else the general one, which merges any row.
  const bool whole_row = plan.num_splits <= 8;
  CHECK(recorded[1].function ==
        test::fake_function(whole_row ? test::kServedCombineWholeRow : test::kServedCombine));
  CHECK((geometry.combine_grid[2] == 1) == whole_row);
  for (int d = 0; d < 3; ++d) CHECK(recorded[1].grid[d] == geometry.combine_grid[d]);
  CHECK(recorded[1].block == geometry.combine_threads);
  CHECK(recorded[1].smem == 0);  // launch.cpp launches combine without dynamic shared memory
  const bool programmatic = config.merge == 1 || config.merge == 4;  // merge 4: merge 1, bf16
  CHECK(recorded[1].order == (programmatic ? LaunchOrder::programmatic : LaunchOrder::stream));
  const smla::CombineParams combined = pack_combine(buffers, dims, plan);
  // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): bytes, as above
  CHECK(std::memcmp(recorded[1].params.data(), &combined, sizeof combined) == 0);
}

}  // namespace

TEST_CASE("the serving launch from frozen launch facts is the tuner's launch, partials included") {
  int cases = 0;
  for (const KvFormat kv : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
    for (const int block_t : {16, 64}) {
      for (const int num_warps : {4, 8}) {
        for (const int producers : {0, 2}) {
          for (const int target : {128, 1024}) {
            for (const int batch : {1, 7, 64, 512}) {
              for (const int merge : {0, 1, 2, 3, 4}) {
                KernelConfig config;
                config.block_t = block_t;
                config.num_warps = num_warps;
                config.producers = producers;
                config.mma_path = producers > 0 ? 1 : 0;
                config.target_ctas = target;
                config.merge = merge;
                CAPTURE(describe(to_config(config)));
                CAPTURE(batch);
                check_serving_is_tuners(config, kv, batch);
                ++cases;
              }
            }
          }
        }
      }
    }
  }
  CHECK(cases == 2 * 2 * 2 * 2 * 2 * 4 * 5);
}

TEST_CASE("with a cluster capacity the serving launch is still the tuner's, and it caps merge 2") {
  const KernelConfig config{.block_t = 64,
                            .num_stages = 2,
                            .mma_path = 1,
                            .producers = 2,
                            .target_ctas = 256,
                            .merge = 2};
  ClusterCapacity clusters;
  clusters.clusters[4] = 62;  // the H200's, for this kernel
  clusters.clusters[3] = 88;
  for (const int batch : {1, 32, 62, 63, 64, 100}) {
    CAPTURE(batch);
    check_serving_is_tuners(config, KvFormat::fp8_ds_mla, batch, clusters);
  }
  // Batch 64 asks for 4 splits; 64 clusters of 4 do not fit in 62: clusters of 3.
  CHECK(test::serving_launches(config, KvFormat::fp8_ds_mla, 64, 16, clusters)[0].cluster_x == 3u);
  CHECK(test::serving_launches(config, KvFormat::fp8_ds_mla, 62, 16, clusters)[0].cluster_x == 4u);
}

namespace {

// The winners' structure (BLOCK_T 64, 4 + 2 warps, 2 stages, mma_path 1) at TARGET_CTAS 256.
KernelConfig winners_structure(int merge, int schedule) {
  return KernelConfig{.block_t = 64,
                      .num_stages = 2,
                      .mma_path = 1,
                      .producers = 2,
                      .target_ctas = 256,
                      .merge = merge,
                      .schedule = schedule};
}

}  // namespace

TEST_CASE("the balanced schedule's serving launch is the tuner's, with and without resident CTAs") {
  ClusterCapacity resident;
  resident.clusters[1] = 264;  // 2 CTAs x 132 SMs
  int combines = 0;
  for (const KvFormat kv : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
    for (const int merge : {0, 1}) {
      for (const int batch : {1, 7, 64, 132, 136, 264, 512}) {
        const KernelConfig config = winners_structure(merge, smla::kScheduleBalanced);
        CAPTURE(batch);
        CAPTURE(merge);
        check_serving_is_tuners(config, kv, batch, resident);
        check_serving_is_tuners(config, kv, batch);
        const auto launches = test::serving_launches(config, kv, batch, 16, resident);
        // One wave: min(tiles, resident CTAs) along x, written here from 32 tiles per row.
        CHECK(launches[0].grid[0] == static_cast<unsigned>(std::min(batch * 32, 264)));
        CHECK(launches[0].grid[1] == 1u);
        CHECK(launches[0].grid[2] == 1u);
        combines += launches.size() == 2 ? 1 : 0;
      }
    }
  }
  // Every batch but 264 (one whole row per CTA) cuts some row across CTAs and runs the combine.
  CHECK(combines == 2 * 2 * 6);
}

TEST_CASE("the whole-rows schedule's serving launch: the tail rows' combine only") {
  ClusterCapacity resident;
  resident.clusters[1] = 264;  // 2 CTAs x 132 SMs
  for (const KvFormat kv : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
    for (const int merge : {0, 1, 4}) {
      // (batch, combine CTAs along y): 16 heads in one head group, so rows = batch items; the
      // rows left over after floor(batch / 264) whole rows a CTA, written here.
      for (const std::pair<int, int>& batch_and_tail : std::vector<std::pair<int, int>>{
               {7, 7}, {264, 0}, {265, 1}, {272, 8}, {400, 136}, {528, 0}, {531, 3}}) {
        const int batch = batch_and_tail.first;  // not a structured binding: CAPTURE (a lambda)
        const int tail_rows = batch_and_tail.second;
        const KernelConfig config = winners_structure(merge, smla::kScheduleWholeRows);
        CAPTURE(batch);
        CAPTURE(merge);
        check_serving_is_tuners(config, kv, batch, resident);
        const auto launches = test::serving_launches(config, kv, batch, 16, resident);
        CHECK(launches[0].grid[0] == static_cast<unsigned>(std::min(batch * 32, 264)));
        REQUIRE(launches.size() == (tail_rows > 0 ? 2u : 1u));
        if (tail_rows > 0) CHECK(launches[1].grid[1] == static_cast<unsigned>(tail_rows));
      }
    }
  }
}

TEST_CASE("a DB frozen before the whole-row combine launches its one combine kernel for any plan") {
  // bound_winners binds what such a DB holds: the split and "combine", whose kernel then held
  // both paths (419f545) or only the general one (earlier), and merges any row either way.
  const BoundConfig old_db = test::bound_winners(smla::kMergeCombine);
  const tunedb_sparse_mla_decode_args args{0x1000, 0x2000,     0x3000,     0x4000,
                                           0x5000, 0x10000000, 1ull << 32, 0.0625f};
  const std::string shape = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048";
  for (const int batch : {8, 64}) {  // TARGET_CTAS 256: 32 and 4 splits a row
    CAPTURE(batch);
    recorded.clear();
    REQUIRE(
        deploy_family()
            .launch(
                old_db, shape, batch, &args, nullptr,
                &test::record_launch<smla::SplitParams, smla::CombineParams, test::kBoundCombineId>)
            .status == ServeStatus::ok);
    REQUIRE(recorded.size() == 2);
    CHECK(recorded[1].function == test::fake_function(test::kBoundCombineId));
  }
  // The same config frozen now takes the whole-row kernel at batch 64 and not at batch 8.
  const KernelConfig winners{.block_t = 64,
                             .num_stages = 2,
                             .mma_path = 1,
                             .producers = 2,
                             .target_ctas = 256,
                             .merge = smla::kMergeCombine};
  CHECK(test::serving_launches(winners, KvFormat::fp8_ds_mla, 64)[1].function ==
        test::fake_function(test::kServedCombineWholeRow));
  CHECK(test::serving_launches(winners, KvFormat::fp8_ds_mla, 8)[1].function ==
        test::fake_function(test::kServedCombine));
}
