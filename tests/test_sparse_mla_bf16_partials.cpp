// merge 4 (merge 1's programmatic combine over bf16 partials, layout.h's kMergeCombineBf16) on the
// host: where the space admits it and why not elsewhere, the workspace (half the partial bytes of
// merge 1, written out here by hand) and the parameter blocks and launches the serving launcher
// makes. The bf16 partials themselves are judged on a GPU in gpu_sparse_mla_decode (launch
// variant 4, or 3 on the balanced schedule).
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

using test::recorded;
using test::winners_structure;
constexpr LaunchKernelFn record = &test::record_launch<smla::SplitParams, smla::CombineParams>;

BoundConfig bound(std::int64_t merge) { return test::bound_winners(merge); }

constexpr const char* kShape = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048";

}  // namespace

TEST_CASE("merge 4 is a pipelined, sm_90+ variant, swept on the winners' warps") {
  const Shape shape;
  KernelConfig config = winners_structure(smla::kMergeCombineBf16);
  CHECK(shape_mismatch(config, shape).empty());
  CHECK(arch_mismatch(config, 90).empty());
  CHECK(arch_mismatch(config, 120).empty());
  CHECK(measured_trim(config).empty());
  CHECK(arch_mismatch(config, 89).find("merge 4") != std::string::npos);
  config.schedule = smla::kScheduleBalanced;  // the combine finds a balanced row's parts too
  CHECK(shape_mismatch(config, shape).empty());
  config = winners_structure(smla::kMergeCombineBf16);
  config.mma_path = 0;
  config.producers = 0;
  CHECK(shape_mismatch(config, shape).find("pipelined kernels") != std::string::npos);
  config = winners_structure(smla::kMergeCombineBf16);
  config.num_warps = 8;
  CHECK(measured_trim(config).rfind("left out for sweep time: bf16 partials (merge 4)", 0) == 0);
  config.merge = smla::kMergeCombinePdl;
  CHECK(measured_trim(config).empty());  // merge 1 is swept on every pipelined structure
}

TEST_CASE("serve launch: merge 4 stores bf16 partials in half merge 1's workspace") {
  // Batch 8, 16 heads (one head group), TARGET 256: 32 splits of one 64-token tile each.
  const auto args = tunedb_sparse_mla_decode_args{0x1000, 0x2000,   0x3000,   0x4000,
                                                  0x5000, 0x100000, 1u << 24, 0.5f};
  const std::size_t rows = std::size_t{8} * 16 * 32;
  std::size_t merge1_bytes = 0;
  REQUIRE(deploy_family().workspace_bytes(bound(1), kShape, 8, &merge1_bytes).status ==
          ServeStatus::ok);
  CHECK(merge1_bytes == rows * 512 * 4 + rows * 4);
  std::size_t bytes = 0;
  const BoundConfig config = bound(smla::kMergeCombineBf16);
  REQUIRE(deploy_family().workspace_bytes(config, kShape, 8, &bytes).status == ServeStatus::ok);
  CHECK(bytes == rows * 512 * 2 + rows * 4);  // 512 bf16 a partial row, then the fp32 lse
  recorded.clear();
  REQUIRE(deploy_family().launch(config, kShape, 8, &args, nullptr, record).status ==
          ServeStatus::ok);
  REQUIRE(recorded.size() == 2);
  CHECK(recorded[0].grid[0] == 32);
  CHECK(recorded[0].order == LaunchOrder::stream);
  CHECK(recorded[1].order == LaunchOrder::programmatic);
  smla::SplitParams split;
  std::memcpy(&split, recorded[0].params.data(), sizeof split);
  CHECK(split.partials == smla::kPartialsBf16);
  CHECK(reinterpret_cast<std::uintptr_t>(split.partial_out) == 0x100000);
  CHECK(reinterpret_cast<std::uintptr_t>(split.partial_lse) == 0x100000 + rows * 512 * 2);
  smla::CombineParams combine;
  std::memcpy(&combine, recorded[1].params.data(), sizeof combine);
  CHECK(combine.bf16_partials == 1);
  CHECK(combine.head_groups == 1);
  CHECK(combine.num_splits == 32);
  CHECK(reinterpret_cast<std::uintptr_t>(combine.partial_lse) == 0x100000 + rows * 512 * 2);
  // merge 1's blocks say fp32.
  recorded.clear();
  REQUIRE(deploy_family().launch(bound(1), kShape, 8, &args, nullptr, record).status ==
          ServeStatus::ok);
  REQUIRE(recorded.size() == 2);
  std::memcpy(&split, recorded[0].params.data(), sizeof split);
  std::memcpy(&combine, recorded[1].params.data(), sizeof combine);
  CHECK(split.partials == smla::kPartialsFp32);
  CHECK(combine.bf16_partials == 0);
}

TEST_CASE("merge 4 with one split: the split writes the row out, no workspace, no combine") {
  const DecodeDims dims{512, 16, 2048};
  const SplitPlan whole = split_plan(dims, {64, 16, 256, smla::kMergeCombineBf16, 0});
  REQUIRE(whole.num_splits == 1);
  CHECK_FALSE(whole.runs_combine());
  CHECK(workspace_layout(dims, whole).bytes == 0);
  Shape shape;
  shape.batch = 512;
  const std::string facts = launch_facts_text(winners_structure(smla::kMergeCombineBf16), shape);
  CHECK(facts.find("combine=none") != std::string::npos);
  shape.batch = 8;
  CHECK(launch_facts_text(winners_structure(smla::kMergeCombineBf16), shape)
            .find("order=programmatic partials=bf16") != std::string::npos);
  CHECK(launch_facts_text(winners_structure(smla::kMergeCombinePdl), shape).find("partials=") ==
        std::string::npos);
}
