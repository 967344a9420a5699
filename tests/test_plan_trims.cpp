// The family's measured trims (Family::trims) in the plan: a trimmed config is pruned_shape with
// its "measured to lose" reason, and PlanRequest::keep_trimmed (`tuner bench --trimmed`) plans it
// like any other, here to a survivor sharing the compile of its untrimmed launch variants. One
// compile key (the shard filter keeps the rest out), so one NVRTC compile.
#include <doctest/doctest.h>

#include <string>

#include "core/config.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "tests/support/temp_dir.hpp"
#include "tuner/plan.hpp"

namespace {

using tuner::smla_family::KernelConfig;

// BLOCK_T 64, 8 consumer + 2 producer warps, 2 stages, f16 in registers: the sweep keeps merge 0
// and 1 here and trims merges 2 and 4 and TARGET_CTAS 0 (swept with 4 consumer warps only), 3 and
// 5 (measured to lose on every structure).
constexpr KernelConfig kKernel{
    .block_t = 64, .num_warps = 8, .num_stages = 2, .mma_path = 1, .producers = 2};

tuner::PlanResult plan(bool keep_trimmed, const tuner::CubinCache& cache) {
  const tuner::Config one = tuner::smla_family::to_config(kKernel);
  const std::string key = tuner::compile_key(one, tuner::smla_family::parameter_space());
  tuner::PlanRequest request;
  request.family = &tuner::smla_family::family();
  request.shape = tuner::smla_family::canonical_shape(tuner::smla_family::Shape{});
  request.arch = tuner::arch_by_name("sm_90");
  request.keep_trimmed = keep_trimmed;
  request.keep = [key](std::string_view compile_key) { return compile_key == key; };
  return tuner::plan(request, cache);
}

}  // namespace

TEST_CASE("plan: measured trims are pruned_shape with their reason, and keep_trimmed plans them") {
  const tuner::test::TempDir dir;
  const tuner::CubinCache cache(dir.path());
  for (const bool keep_trimmed : {false, true}) {
    CAPTURE(keep_trimmed);
    const tuner::PlanResult result = plan(keep_trimmed, cache);
    REQUIRE(result.rows.size() == 30);  // 5 TARGET_CTAS x 6 merge
    for (const tuner::PlanRow& row : result.rows) {
      CAPTURE(tuner::describe(row.config));
      if (row.config.at("target_ctas") == 0 && !keep_trimmed) {  // swept on 4 + 2 warps only
        CHECK(row.fate == tuner::Fate::pruned_shape);
        CHECK(row.reason.rfind("left out for sweep time: TARGET_CTAS 0 (one wave)", 0) == 0);
      } else if (row.config.at("merge") == 2 && !keep_trimmed) {
        CHECK(row.fate == tuner::Fate::pruned_shape);
        CHECK(row.reason.rfind("measured to lose: the cluster merge (merge 2)", 0) == 0);
      } else if (row.config.at("merge") == 3 && !keep_trimmed) {
        CHECK(row.fate == tuner::Fate::pruned_shape);
        CHECK(row.reason.rfind("measured to lose: the last-CTA merge (merge 3)", 0) == 0);
      } else if (row.config.at("merge") == 4 && !keep_trimmed) {
        CHECK(row.fate == tuner::Fate::pruned_shape);
        CHECK(row.reason.rfind("left out for sweep time: bf16 partials (merge 4)", 0) == 0);
      } else if (row.config.at("merge") == 5 && !keep_trimmed) {
        CHECK(row.fate == tuner::Fate::pruned_shape);
        CHECK(row.reason.rfind("measured to lose: the row-slice merge (merge 5)", 0) == 0);
      } else {
        CHECK(row.fate == tuner::Fate::survivor);
      }
    }
  }
}
