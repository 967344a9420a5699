// merge 3 (the last-CTA merge, templates/sparse_mla_decode/last_cta_merge.cuh) on the host: where
// the space admits it and why not elsewhere, and its workspace (the row tickets after the
// partials) and launch parameters. The serving launch's order (the ticket reset, then the split as
// its programmatic dependent) is checked against the tuner's in test_sparse_mla_serving_facts; the
// merge itself on a GPU in gpu_sparse_mla_decode and gpu_sparse_mla_repeat (launch variant 3).
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "tests/support/winners_structure.hpp"

using namespace tuner::smla_family;

using tuner::test::winners_structure;

TEST_CASE("merge 3 is a pipelined, per-row-splits, sm_90+ variant, trimmed as measured to lose") {
  const Shape shape;
  KernelConfig config = winners_structure(smla::kMergeLastCta);
  CHECK(shape_mismatch(config, shape).empty());
  CHECK(arch_mismatch(config, 90).empty());
  CHECK(arch_mismatch(config, 120).empty());
  // Trimmed from the sweep on the winners' kernel too: it lost there on the H200 (fifteenth
  // session); `tuner bench --trimmed` still plans it.
  CHECK(measured_trim(config).rfind("measured to lose: the last-CTA merge (merge 3)", 0) == 0);
  CHECK(arch_mismatch(config, 89).find("merge 3") != std::string::npos);
  config.schedule = smla::kScheduleBalanced;
  CHECK(shape_mismatch(config, shape).find("per-row splits") != std::string::npos);
  config = winners_structure(smla::kMergeLastCta);
  config.mma_path = 0;
  config.producers = 0;
  CHECK(shape_mismatch(config, shape).find("pipelined kernels") != std::string::npos);
  config = winners_structure(smla::kMergeLastCta);
  config.num_warps = 8;
  CHECK(measured_trim(config).rfind("measured to lose: the last-CTA merge (merge 3)", 0) == 0);
  config.merge = smla::kMergeCombinePdl;
  CHECK(measured_trim(config).empty());  // the same kernel with merge 1 is swept
}

TEST_CASE("workspace: merge 3's row tickets after the partials, one u32 per row") {
  // Batch 3, 32 heads at BLOCK_H 16 (2 head groups), 4 splits each.
  const DecodeDims dims{3, 32, 2048};
  const SplitPlan plan = split_plan(dims, {64, 16, 24, smla::kMergeLastCta, 0});
  REQUIRE(plan.num_splits == 4);
  REQUIRE(plan.merges_last_cta());
  CHECK_FALSE(plan.runs_combine());
  CHECK(plan.keeps_partials());
  const WorkspaceLayout layout = workspace_layout(dims, plan);
  const std::size_t lse_end = 3u * 32 * 4 * 512 * 4 + 3u * 32 * 4 * 4;
  CHECK(layout.tickets_offset >= lse_end);
  CHECK(layout.tickets_offset < lse_end + 256);
  CHECK(layout.tickets_offset % 256 == 0);
  CHECK(layout.bytes == layout.tickets_offset + std::size_t{3} * 2 * 4);
  const DecodeBuffers buffers = place_partials({}, 0x10000000, layout);
  CHECK(buffers.row_tickets == 0x10000000 + layout.tickets_offset);
  const smla::SplitParams split = pack_split(buffers, dims, plan, 0.1f);
  CHECK(reinterpret_cast<std::uintptr_t>(split.row_tickets) == buffers.row_tickets);
  const smla::CombineParams reset = pack_reset(buffers, dims, plan);
  CHECK(reinterpret_cast<std::uintptr_t>(reset.reset_tickets) == buffers.row_tickets);
  CHECK(reset.reset_count == 6);
  CHECK(reset_grid(dims, plan) == std::array<unsigned, 3>{1, 1, 1});
  CHECK(reset_grid({300, 32, 2048}, plan)[0] == 5u);  // 600 tickets, 128 a block
  // The other merges keep no tickets, and their combine params are not in reset mode.
  const SplitPlan combined = split_plan(dims, {64, 16, 24, smla::kMergeCombinePdl, 0});
  CHECK(workspace_layout(dims, combined).tickets_offset == 0);
  CHECK(pack_split(place_partials({}, 0x10000000, workspace_layout(dims, combined)), dims, combined,
                   0.1f)
            .row_tickets == nullptr);
  CHECK(pack_combine(buffers, dims, combined).reset_tickets == nullptr);
}

TEST_CASE("merge 3 with one split: the split writes the row out, no tickets, no reset") {
  const DecodeDims dims{512, 32, 2048};
  const SplitPlan whole = split_plan(dims, {64, 16, 128, smla::kMergeLastCta, 0});
  REQUIRE(whole.num_splits == 1);
  CHECK_FALSE(whole.merges_last_cta());
  CHECK_FALSE(whole.runs_combine());
  CHECK(workspace_layout(dims, whole).bytes == 0);
  CHECK(pack_split(place_partials({}, 0x10000000, workspace_layout(dims, whole)), dims, whole, 0.1f)
            .row_tickets == nullptr);
}
