// The sparse MLA decode family's deploy unit (kernels/sparse_mla_decode/deploy + serve), the code
// the serving launcher runs, without a GPU: the split plan against hand-computed cases and an
// independently written loop, the tuner's geometry against it, the parameter blocks byte by
// byte, the workspace layout and the launcher's refusals (recorded through a LaunchKernelFn that
// stands in for cuLaunchKernel: no driver runs here). The serving launch bound from the frozen
// launch facts: test_sparse_mla_serving_facts.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/serve.hpp"
#include "kernels/sparse_mla_decode/serve_args.h"
#include "tests/support/declared_record.hpp"
#include "tests/support/recorded_launches.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

// Written without deploy.cpp's formula: grow tiles-per-split until `requested` splits cover the
// tiles, then count the splits that start before the last tile.
SplitPlan expected_plan(int batch, int heads, int topk, int block_t, int block_h, int target) {
  SplitPlan plan;
  plan.head_groups = 0;
  for (int covered = 0; covered < heads; covered += block_h) ++plan.head_groups;
  int tiles = 0;
  for (int token = 0; token < topk; token += block_t) ++tiles;
  int wanted = 1;  // the most splits whose CTAs stay within the target, at least one
  while ((wanted + 1) * batch * plan.head_groups <= target) ++wanted;
  plan.requested_splits = wanted > tiles ? tiles : wanted;
  int per_split = 1;
  while (per_split * plan.requested_splits < tiles) ++per_split;
  plan.num_splits = 0;
  for (int first = 0; first < tiles; first += per_split) ++plan.num_splits;
  plan.tokens_per_split = per_split * block_t;
  return plan;
}

void check_plan(const SplitPlan& got, const SplitPlan& want) {
  CHECK(got.head_groups == want.head_groups);
  CHECK(got.requested_splits == want.requested_splits);
  CHECK(got.num_splits == want.num_splits);
  CHECK(got.tokens_per_split == want.tokens_per_split);
}

using test::fake_function;
using test::recorded;
constexpr LaunchKernelFn record = &test::record_launch<smla::SplitParams, smla::CombineParams>;

// `merge` under its name, or under `pdl` (DBs frozen before merge replaced it) when `legacy_pdl`.
BoundConfig bound_config(bool with_bf16, std::optional<std::int64_t> merge = std::nullopt,
                         bool legacy_pdl = false) {
  const BoundKernel fp8{fake_function(0x100), 128, 40000, {}};
  const BoundKernel bf16{fake_function(0x200), 192, 50000, {}};
  const BoundKernel combine{fake_function(0x300), 128, 0, {}};
  return deploy_family().bind(
      [&](std::string_view role) -> const BoundKernel* {
        if (role == "split.fp8_ds_mla") return &fp8;
        if (role == "split.bf16") return with_bf16 ? &bf16 : nullptr;
        if (role == "combine") return &combine;
        return nullptr;
      },
      [&](std::string_view name) -> std::optional<std::int64_t> {
        if (name == "block_t") return 16;
        if (name == "block_h") return 16;
        if (name == "target_ctas") return 128;
        if (name == (legacy_pdl ? "pdl" : "merge")) return merge;
        return std::nullopt;
      });
}

constexpr const char* kShape = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048";

tunedb_sparse_mla_decode_args good_args() {
  return {0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x100000, 1u << 24, 0.5f};
}

}  // namespace

TEST_CASE("split plan: hand-computed cases") {
  // batch 1, 16 heads, BLOCK_T 16: 128 tiles, TARGET_CTAS 512 asks 512 splits, clamped to 128.
  check_plan(split_plan({1, 16, 2048}, {16, 16, 512}), {1, 128, 128, 16});
  // batch 7, TARGET 128: floor(128/7) = 18 splits asked (126 CTAs <= 128), 8 tiles each
  // (18 x 7 = 126 < 128 tiles), so 16 splits own a tile.
  check_plan(split_plan({7, 16, 2048}, {16, 16, 128}), {1, 18, 16, 128});
  // 10 tiles, 7 splits asked: 2 tiles each, so only 5 splits own a tile.
  check_plan(split_plan({1, 16, 160}, {16, 16, 7}), {1, 7, 5, 32});
  // batch 512: one split, no combine.
  const SplitPlan one = split_plan({512, 16, 2048}, {16, 16, 512});
  check_plan(one, {1, 1, 1, 2048});
  CHECK_FALSE(one.runs_combine());
  // 32 local heads, BLOCK_H 16: two head groups halve the splits asked.
  check_plan(split_plan({8, 32, 2048}, {32, 16, 512}), {2, 32, 32, 64});
  // The cluster merge (merge 2) asks for at most 8 splits, a cluster of them, and no combine.
  const SplitPlan cluster = split_plan({1, 16, 2048}, {16, 16, 512, 2});
  check_plan(cluster, {1, 8, 8, 256});
  CHECK(cluster.merges_in_cluster());
  CHECK(cluster.cluster_x() == 8u);
  CHECK_FALSE(cluster.runs_combine());
  // 10 tiles, 7 asked (under the cap): 5 splits own a tile, a cluster of 5.
  const SplitPlan five = split_plan({1, 16, 160}, {16, 16, 7, 2});
  check_plan(five, {1, 7, 5, 32});
  CHECK(five.cluster_x() == 5u);
  // One split: nothing to merge, an ordinary launch.
  const SplitPlan single = split_plan({512, 16, 2048}, {16, 16, 512, 2});
  CHECK_FALSE(single.merges_in_cluster());
  CHECK(single.cluster_x() == 1u);
  CHECK(workspace_layout({512, 16, 2048}, single).bytes == 0);
  CHECK(workspace_layout({1, 16, 2048}, cluster).bytes == 0);
}

TEST_CASE("the cluster merge's splits stay within the device's clusters") {
  // The H200's winners' kernel holds 62 clusters of 4 (Nsight Compute); the other sizes here are
  // made up. Batch 64, one head group, BLOCK_T 64 (32 tiles), TARGET_CTAS 256: 4 splits asked,
  // 64 clusters > 62, so 3 (11 tiles each: 11 + 11 + 10), 64 clusters <= 80.
  ClusterCapacity capacity;
  capacity.clusters[4] = 62;
  capacity.clusters[3] = 80;
  check_plan(split_plan({64, 16, 2048}, {64, 16, 256, 2}, capacity), {1, 3, 3, 704});
  // Without a capacity, or for the combine kernel's merges, no cap: 4 splits.
  check_plan(split_plan({64, 16, 2048}, {64, 16, 256, 2}), {1, 4, 4, 512});
  check_plan(split_plan({64, 16, 2048}, {64, 16, 256, 0}, capacity), {1, 4, 4, 512});
  // 62 batch items fit in clusters of 4.
  check_plan(split_plan({62, 16, 2048}, {64, 16, 256, 2}, capacity), {1, 4, 4, 512});
  // No size fits (3 holds 50): down to one split, an ordinary launch.
  capacity.clusters[3] = 50;
  capacity.clusters[2] = 60;
  const SplitPlan none = split_plan({64, 16, 2048}, {64, 16, 256, 2}, capacity);
  check_plan(none, {1, 1, 1, 2048});
  CHECK_FALSE(none.merges_in_cluster());
  CHECK(none.cluster_x() == 1u);
  // A size the query left unknown (0) is not capped.
  capacity.clusters[3] = 0;
  check_plan(split_plan({64, 16, 2048}, {64, 16, 256, 2}, capacity), {1, 3, 3, 704});
}

TEST_CASE("split plan and the tuner's geometry agree with an independent loop") {
  int cases = 0;
  for (const int batch : {1, 2, 3, 7, 8, 33, 64, 100, 128, 257, 512}) {
    for (const int heads : {16, 32, 8}) {
      for (const int block_t : {16, 32, 64}) {
        for (const int block_h : {16, 32, 64}) {
          for (const int target : {128, 256, 512, 1024}) {
            const SplitPlan want = expected_plan(batch, heads, 2048, block_t, block_h, target);
            check_plan(split_plan({batch, heads, 2048}, {block_t, block_h, target}), want);
            KernelConfig config;
            config.block_t = block_t;
            config.block_h = block_h;
            config.target_ctas = target;
            smla_family::Shape shape;
            shape.n_heads = heads;
            shape.attn_tp = 1;
            shape.batch = batch;
            const LaunchGeometry geometry = launch_geometry(config, shape, kCapacityUnknown);
            CHECK(geometry.split_grid[0] == static_cast<unsigned>(want.num_splits));
            CHECK(geometry.split_grid[1] == static_cast<unsigned>(want.head_groups));
            CHECK(geometry.split_grid[2] == static_cast<unsigned>(batch));
            CHECK(geometry.plan.tokens_per_split == want.tokens_per_split);
            ++cases;
          }
          // TARGET_CTAS 0 is the device's resident CTAs as the target (none known: one split).
          for (const int resident : {0, 188, 264, 1056}) {
            ClusterCapacity capacity;
            capacity.clusters[1] = resident;
            check_plan(split_plan({batch, heads, 2048}, {block_t, block_h, 0}, capacity),
                       expected_plan(batch, heads, 2048, block_t, block_h, resident));
          }
        }
      }
    }
  }
  CHECK(cases == 11 * 3 * 3 * 3 * 4);
}

TEST_CASE("parameter blocks carry the buffers, dimensions and plan") {
  const DecodeBuffers buffers{0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70};
  const SplitPlan plan = split_plan({4, 16, 2048}, {32, 16, 256});
  const smla::SplitParams split = pack_split(buffers, {4, 16, 2048}, plan, 0.125f);
  CHECK(reinterpret_cast<std::uintptr_t>(split.q) == 0x10);
  CHECK(reinterpret_cast<std::uintptr_t>(split.kv) == 0x20);
  CHECK(reinterpret_cast<std::uintptr_t>(split.indices) == 0x30);
  CHECK(reinterpret_cast<std::uintptr_t>(split.out) == 0x40);
  CHECK(reinterpret_cast<std::uintptr_t>(split.lse) == 0x50);
  CHECK(reinterpret_cast<std::uintptr_t>(split.partial_out) == 0x60);
  CHECK(reinterpret_cast<std::uintptr_t>(split.partial_lse) == 0x70);
  CHECK(split.batch == 4);
  CHECK(split.n_local_heads == 16);
  CHECK(split.topk == 2048);
  CHECK(split.num_splits == 64);  // 256 / 4 = 64 = tiles
  CHECK(split.tokens_per_split == 32);
  CHECK(split.scale_log2 == doctest::Approx(0.125 / std::log(2.0)).epsilon(1e-6));
  const smla::CombineParams combine = pack_combine(buffers, {4, 16, 2048}, plan);
  CHECK(reinterpret_cast<std::uintptr_t>(combine.partial_out) == 0x60);
  CHECK(reinterpret_cast<std::uintptr_t>(combine.partial_lse) == 0x70);
  CHECK(reinterpret_cast<std::uintptr_t>(combine.out) == 0x40);
  CHECK(reinterpret_cast<std::uintptr_t>(combine.lse) == 0x50);
  CHECK(combine.num_splits == 64);
  CHECK(combine.dim_chunks == 8);  // 64 splits: 8 slices of 8 splits each
}

TEST_CASE("combine dim chunks: the fewest of 1, 2, 4, 8 that leave a thread at most 8 splits") {
  for (int splits = 1; splits <= 300; ++splits) {
    const int chunks = combine_dim_chunks(splits);
    CAPTURE(splits);
    CHECK((chunks == 1 || chunks == 2 || chunks == 4 || chunks == 8));
    // Each chunk's threads split the splits into `chunks` slices.
    const int per_thread = (splits + chunks - 1) / chunks;
    if (chunks < 8) CHECK(per_thread <= 8);
    if (chunks > 1) CHECK((splits + chunks / 2 - 1) / (chunks / 2) > 8);  // half as many: too many
  }
}

TEST_CASE("workspace: partial_out then partial_lse on a 256-byte boundary") {
  const WorkspaceLayout layout = workspace_layout({2, 16, 2048}, {1, 4, 4, 512});
  CHECK(layout.partial_lse_offset == 2u * 16 * 4 * 512 * 4);
  CHECK(layout.bytes == 2u * 16 * 4 * 512 * 4 + 2u * 16 * 4 * 4);
  CHECK(workspace_layout({2, 16, 2048}, {1, 1, 1, 2048}).bytes == 0);
}

TEST_CASE("serve shape text: what a launch reads, parsed without allocating") {
  const auto parsed = parse_serve_shape("kv_format=bf16,local_heads=32,page_size=64,topk=1024");
  REQUIRE(parsed.has_value());
  CHECK(parsed->kv_format == KvFormat::bf16);
  CHECK(parsed->local_heads == 32);
  CHECK(parsed->topk == 1024);
  CHECK_FALSE(parse_serve_shape("local_heads=16,topk=2048").has_value());
  CHECK_FALSE(parse_serve_shape("kv_format=fp4,local_heads=16,topk=2048").has_value());
  CHECK_FALSE(parse_serve_shape("kv_format=bf16,local_heads=-1,topk=2048").has_value());
  CHECK_FALSE(parse_serve_shape("kv_format=bf16,local_heads=16,topk=2048x").has_value());
}

TEST_CASE("serve launch: split then combine with the frozen block sizes and the plan's grids") {
  recorded.clear();
  const BoundConfig config = bound_config(true);
  const auto args = good_args();
  const ServeResult result = deploy_family().launch(config, kShape, 8, &args, nullptr, record);
  REQUIRE(result.status == ServeStatus::ok);
  REQUIRE(recorded.size() == 2);
  // TARGET 128, batch 8: 16 splits of 8 tiles (128 tokens).
  CHECK(recorded[0].function == fake_function(0x100));
  CHECK(recorded[0].grid[0] == 16);
  CHECK(recorded[0].grid[1] == 1);
  CHECK(recorded[0].grid[2] == 8);
  CHECK(recorded[0].block == 128);
  CHECK(recorded[0].smem == 40000);
  smla::SplitParams split;
  std::memcpy(&split, recorded[0].params.data(), sizeof split);
  CHECK(split.tokens_per_split == 128);
  CHECK(reinterpret_cast<std::uintptr_t>(split.partial_out) == 0x100000);
  CHECK(reinterpret_cast<std::uintptr_t>(split.partial_lse) == 0x100000 + 8 * 16 * 16 * 512 * 4);
  CHECK(recorded[1].function == fake_function(0x300));
  CHECK(recorded[1].grid[0] == 16);
  CHECK(recorded[1].grid[1] == 8);
  CHECK(recorded[1].grid[2] == 2);  // 16 splits: two chunks of the latent dims, 8 splits each
  CHECK(recorded[1].block == 128);
  smla::CombineParams combine;
  std::memcpy(&combine, recorded[1].params.data(), sizeof combine);
  CHECK(combine.dim_chunks == 2);
  // A DB frozen without pdl: both launches stream-ordered.
  CHECK(recorded[0].order == LaunchOrder::stream);
  CHECK(recorded[1].order == LaunchOrder::stream);
  std::size_t bytes = 0;
  REQUIRE(deploy_family().workspace_bytes(config, kShape, 8, &bytes).status == ServeStatus::ok);
  CHECK(bytes == 8u * 16 * 16 * 512 * 4 + 8u * 16 * 16 * 4);
}

TEST_CASE("serve launch: merge 1 (or pdl 1) makes the combine a programmatic dependent") {
  for (const bool legacy : {false, true}) {
    for (const std::int64_t merge : {0, 1}) {
      CAPTURE(legacy);
      CAPTURE(merge);
      recorded.clear();
      const BoundConfig config = bound_config(true, merge, legacy);
      const auto args = good_args();
      REQUIRE(deploy_family().launch(config, kShape, 8, &args, nullptr, record).status ==
              ServeStatus::ok);
      REQUIRE(recorded.size() == 2);
      CHECK(recorded[0].order == LaunchOrder::stream);  // the split waits for its inputs' writers
      CHECK(recorded[0].cluster_x == 1);
      CHECK(recorded[1].order == (merge == 1 ? LaunchOrder::programmatic : LaunchOrder::stream));
    }
  }
}

TEST_CASE("serve launch: merge 2 launches the splits as clusters, no combine, no workspace") {
  recorded.clear();
  const BoundConfig config = bound_config(true, 2);
  auto args = good_args();
  args.workspace = 0;
  args.workspace_bytes = 0;
  std::size_t bytes = 1;
  REQUIRE(deploy_family().workspace_bytes(config, kShape, 8, &bytes).status == ServeStatus::ok);
  CHECK(bytes == 0);
  REQUIRE(deploy_family().launch(config, kShape, 8, &args, nullptr, record).status ==
          ServeStatus::ok);
  REQUIRE(recorded.size() == 1);
  // TARGET 128 at batch 8 asks for 16 splits; a cluster holds at most 8: 8 splits of 16 tiles.
  CHECK(recorded[0].grid[0] == 8);
  CHECK(recorded[0].grid[2] == 8);
  CHECK(recorded[0].cluster_x == 8);
  CHECK(recorded[0].order == LaunchOrder::stream);
  smla::SplitParams split;
  std::memcpy(&split, recorded[0].params.data(), sizeof split);
  CHECK(split.partials == smla::kPartialsCluster);
  CHECK(split.num_splits == 8);
  CHECK(split.tokens_per_split == 256);
  // Batch 128: one split, no cluster, the bf16 output written directly.
  recorded.clear();
  REQUIRE(deploy_family().launch(config, kShape, 128, &args, nullptr, record).status ==
          ServeStatus::ok);
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0].grid[0] == 1);
  CHECK(recorded[0].cluster_x == 1);
  std::memcpy(&split, recorded[0].params.data(), sizeof split);
  CHECK(split.partials == smla::kPartialsFp32);
}

TEST_CASE("serve launch refusals enqueue nothing and say why") {
  recorded.clear();
  const BoundConfig config = bound_config(false);
  auto args = good_args();
  args.workspace_bytes = 1024;
  ServeResult result = deploy_family().launch(config, kShape, 8, &args, nullptr, record);
  CHECK(result.status == ServeStatus::workspace_too_small);
  CHECK(std::string(result.what).find("workspace") != std::string::npos);
  args = good_args();
  args.q = 0;
  CHECK(deploy_family().launch(config, kShape, 8, &args, nullptr, record).status ==
        ServeStatus::bad_arguments);
  args = good_args();
  args.softmax_scale = std::nanf("");
  CHECK(deploy_family().launch(config, kShape, 8, &args, nullptr, record).status ==
        ServeStatus::bad_arguments);
  args = good_args();
  CHECK(deploy_family().launch(config, kShape, 0, &args, nullptr, record).status ==
        ServeStatus::bad_batch);
  CHECK(deploy_family().launch(config, "topk=2048", 8, &args, nullptr, record).status ==
        ServeStatus::bad_shape);
  const char* bf16 = "kv_format=bf16,local_heads=16,page_size=64,topk=2048";
  CHECK(deploy_family().launch(config, bf16, 8, &args, nullptr, record).status ==
        ServeStatus::no_kernel);
  CHECK(recorded.empty());
}

TEST_CASE("bind refuses a config without the values the geometry reads") {
  const BoundKernel kernel{fake_function(0x100), 128, 0, {}};
  CHECK_THROWS_WITH_AS(
      deploy_family().bind([&](std::string_view) { return &kernel; },
                           [](std::string_view name) -> std::optional<std::int64_t> {
                             if (name == "block_t") return 16;
                             return std::nullopt;
                           }),
      doctest::Contains("no positive block_h"), std::runtime_error);
}

TEST_CASE("a record built from the declared fields by name reads back as serve_args.h's struct") {
  const DeployFamily& family = deploy_family();
  REQUIRE(family.args_size == sizeof(tunedb_sparse_mla_decode_args));
  REQUIRE(family.fields.size() == 8);  // the struct's members, each checked below
  const std::vector<unsigned char> bytes = test::record_from_fields(family);
  tunedb_sparse_mla_decode_args args{};
  std::memcpy(&args, bytes.data(), sizeof args);
  CHECK(args.q == test::declared_address(family, "q"));
  CHECK(args.kv == test::declared_address(family, "kv"));
  CHECK(args.indices == test::declared_address(family, "indices"));
  CHECK(args.out == test::declared_address(family, "out"));
  CHECK(args.lse == test::declared_address(family, "lse"));
  CHECK(args.workspace == test::declared_address(family, "workspace"));
  CHECK(args.workspace_bytes == test::declared_address(family, "workspace_bytes"));
  CHECK(args.softmax_scale == test::declared_float(family, "softmax_scale"));
}
