// merge 5 (the row-slice merge, templates/sparse_mla_decode/row_slice_merge.cuh) on the host:
// where the space admits it and why not elsewhere, its split counts (at most 8, and the grid in
// one wave of the kernel's resident CTAs, since a row's splits wait for each other), its workspace
// (bf16 partials, then the row tickets) and the launches the serving launcher makes (the ticket
// reset, then the split as its programmatic dependent, no combine). The merge itself runs on a
// GPU in gpu_sparse_mla_decode and gpu_sparse_mla_repeat (launch variant 5).
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/serve.hpp"
#include "kernels/sparse_mla_decode/serve_args.h"
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "tests/support/bound_winners.hpp"
#include "tests/support/recorded_launches.hpp"
#include "tests/support/winners_structure.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

using test::fake_function;
using test::recorded;
using test::winners_structure;
constexpr std::uintptr_t kCombineId = test::kBoundCombineId;
constexpr LaunchKernelFn record =
    &test::record_launch<smla::SplitParams, smla::CombineParams, kCombineId>;

ClusterCapacity resident(int ctas) {
  ClusterCapacity capacity;
  capacity.clusters[1] = ctas;
  return capacity;
}

// The winners' structure frozen with merge 5, on a device that holds `ctas` of its CTAs at once.
BoundConfig bound(int ctas) { return test::bound_winners(smla::kMergeRowSlices, resident(ctas)); }

constexpr const char* kShape = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048";

}  // namespace

TEST_CASE("merge 5 is a pipelined, per-row-splits, sm_90+ variant, trimmed as measured to lose") {
  const Shape shape;
  KernelConfig config = winners_structure(smla::kMergeRowSlices);
  CHECK(shape_mismatch(config, shape).empty());
  CHECK(arch_mismatch(config, 90).empty());
  CHECK(arch_mismatch(config, 120).empty());
  // Trimmed on the winners' kernel too: it lost or tied there on the H200 (twentieth session);
  // `tuner bench --trimmed` still plans it.
  CHECK(measured_trim(config).rfind("measured to lose: the row-slice merge (merge 5)", 0) == 0);
  CHECK(arch_mismatch(config, 89).find("merge 5") != std::string::npos);
  config.schedule = smla::kScheduleBalanced;
  CHECK(shape_mismatch(config, shape).find("per-row splits") != std::string::npos);
  config = winners_structure(smla::kMergeRowSlices);
  config.mma_path = 0;
  config.producers = 0;
  CHECK(shape_mismatch(config, shape).find("pipelined kernels") != std::string::npos);
  config = winners_structure(smla::kMergeCombineBf16);
  CHECK(measured_trim(config).empty());  // the same kernel with merge 4 is swept
}

TEST_CASE("merge 5 splits: at most 8 a row, and the whole grid within one wave") {
  // Batch 1, 16 heads, 32 tiles: TARGET 1024 asks for 32 splits; merge 1 takes them, merge 5 8.
  CHECK(split_plan({1, 16, 2048}, {64, 16, 1024, smla::kMergeCombinePdl, 0}).num_splits == 32);
  CHECK(split_plan({1, 16, 2048}, {64, 16, 1024, smla::kMergeRowSlices, 0}).num_splits == 8);
  // Batch 64: 4 splits of 8 tiles make 256 CTAs. A device that holds 264 keeps them; one that
  // holds 248 gets 3 splits (11, 11, 10 tiles: 192 CTAs), one that holds 100 one (no merge).
  const DecodeDims dims{64, 16, 2048};
  const GeometryParams params{64, 16, 256, smla::kMergeRowSlices, 0};
  CHECK(split_plan(dims, params).num_splits == 4);  // no capacity known: no cap
  CHECK(split_plan(dims, params, resident(264)).num_splits == 4);
  const SplitPlan capped = split_plan(dims, params, resident(248));
  CHECK(capped.num_splits == 3);
  CHECK(capped.tokens_per_split == 11 * 64);
  CHECK(64 * capped.num_splits <= 248);
  const SplitPlan single = split_plan(dims, params, resident(100));
  CHECK(single.num_splits == 1);
  CHECK_FALSE(single.takes_tickets());
  // The same device leaves merge 1's grid alone: only merge 5 waits across CTAs.
  CHECK(split_plan(dims, {64, 16, 256, smla::kMergeCombinePdl, 0}, resident(100)).num_splits == 4);
}

TEST_CASE("merge 5's workspace and parameters: bf16 partials, then the row tickets") {
  // Batch 3, 32 heads at BLOCK_H 16 (2 head groups), 4 splits each.
  const DecodeDims dims{3, 32, 2048};
  const SplitPlan plan = split_plan(dims, {64, 16, 24, smla::kMergeRowSlices, 0});
  REQUIRE(plan.num_splits == 4);
  REQUIRE(plan.merges_row_slices());
  CHECK(plan.takes_tickets());
  CHECK_FALSE(plan.merges_last_cta());
  CHECK_FALSE(plan.runs_combine());
  CHECK(split_order(plan) == LaunchOrder::programmatic);
  const WorkspaceLayout layout = workspace_layout(dims, plan);
  const std::size_t rows = std::size_t{3} * 32 * 4;
  CHECK(layout.partial_lse_offset == rows * 512 * 2);  // bf16 partials (a multiple of 256)
  const std::size_t lse_end = layout.partial_lse_offset + rows * 4;
  CHECK(layout.tickets_offset >= lse_end);
  CHECK(layout.tickets_offset < lse_end + 256);
  CHECK(layout.bytes == layout.tickets_offset + std::size_t{3} * 2 * 4);
  const DecodeBuffers buffers = place_partials({}, 0x10000000, layout);
  const smla::SplitParams split = pack_split(buffers, dims, plan, 0.1f);
  CHECK(reinterpret_cast<std::uintptr_t>(split.row_arrivals) == buffers.row_tickets);
  CHECK(split.row_tickets == nullptr);  // merge 3's last-CTA path stays off
  CHECK(split.partials == smla::kPartialsBf16);
  const smla::CombineParams reset = pack_reset(buffers, dims, plan);
  CHECK(reinterpret_cast<std::uintptr_t>(reset.reset_tickets) == buffers.row_tickets);
  CHECK(reset.reset_count == 6);
  // merge 3 takes the same counters through the other field.
  const SplitPlan last_cta = split_plan(dims, {64, 16, 24, smla::kMergeLastCta, 0});
  const smla::SplitParams merge3 = pack_split(
      place_partials({}, 0x10000000, workspace_layout(dims, last_cta)), dims, last_cta, 0.1f);
  CHECK(merge3.row_arrivals == nullptr);
  CHECK(merge3.row_tickets != nullptr);
}

TEST_CASE("serve launch: merge 5 resets the tickets, then the split, and no combine") {
  const auto args = tunedb_sparse_mla_decode_args{0x1000, 0x2000,   0x3000,   0x4000,
                                                  0x5000, 0x100000, 1u << 24, 0.5f};
  recorded.clear();
  REQUIRE(deploy_family().launch(bound(264), kShape, 64, &args, nullptr, record).status ==
          ServeStatus::ok);
  REQUIRE(recorded.size() == 2);
  CHECK(recorded[0].function == fake_function(kCombineId));
  CHECK(recorded[0].order == LaunchOrder::stream);
  CHECK(recorded[1].function == fake_function(test::kBoundSplitId));
  CHECK(recorded[1].order == LaunchOrder::programmatic);
  CHECK(recorded[1].grid[0] == 4);
  CHECK(recorded[1].grid[2] == 64);
  smla::CombineParams reset;
  std::memcpy(&reset, recorded[0].params.data(), sizeof reset);
  smla::SplitParams split;
  std::memcpy(&split, recorded[1].params.data(), sizeof split);
  CHECK(reset.reset_count == 64);
  CHECK(split.row_arrivals == reset.reset_tickets);
  CHECK(split.row_arrivals != nullptr);
  // A device that holds fewer CTAs gets fewer splits from the same frozen config.
  recorded.clear();
  REQUIRE(deploy_family().launch(bound(248), kShape, 64, &args, nullptr, record).status ==
          ServeStatus::ok);
  REQUIRE(recorded.size() == 2);
  CHECK(recorded[1].grid[0] == 3);
}

TEST_CASE("merge 5: the launch facts name the merge, and one split takes no tickets and no reset") {
  Shape shape;
  shape.batch = 64;
  CHECK(launch_facts_text(winners_structure(smla::kMergeRowSlices), shape)
            .find("merge=row_slices ticket_reset") != std::string::npos);
  shape.batch = 512;
  CHECK(launch_facts_text(winners_structure(smla::kMergeRowSlices), shape).find("combine=none") !=
        std::string::npos);
  const SplitPlan whole = split_plan({512, 16, 2048}, {64, 16, 256, smla::kMergeRowSlices, 0});
  REQUIRE(whole.num_splits == 1);
  CHECK(workspace_layout({512, 16, 2048}, whole).bytes == 0);
}
