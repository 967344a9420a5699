// The fp8 block-scaled GEMM family without a GPU: shapes (canonical form, bad input), the space
// and its rules, the budget against layout.h's arithmetic done by hand, the CPU fp64 reference on
// hand-computed cases, the tolerance check, the vLLM export format, and plans (NVRTC compiles of
// every config) for sm_120 and sm_90.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>

#include "core/arch.hpp"
#include "core/cubin_cache.hpp"
#include "core/error.hpp"
#include "core/nvrtc.hpp"
#include "core/templates.hpp"
#include "kernels/fp8_gemm/family.hpp"
#include "kernels/fp8_gemm/reference.hpp"
#include "kernels/registry.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"
#include "tuner/plan.hpp"

using namespace tuner;
using namespace tuner::fp8_gemm;

namespace {

std::string canonicalize_error(const std::map<std::string, std::string>& values) {
  try {
    family().canonicalize(values);
  } catch (const InputError& error) {
    return error.what();
  }
  return {};
}

Config with(Config config, const std::string& name, int value) {
  for (auto& [key, current] : config.values) {
    if (key == name) current = value;
  }
  return config;
}

}  // namespace

TEST_CASE("fp8_gemm: shapes canonicalize to block,k,n and bad values name the option") {
  const Family& gemm = family_by_name("fp8_gemm");
  CHECK(&gemm == &family());
  const Shape shape = gemm.canonicalize({{"n", "7168"}, {"k", "4096"}, {"block", "128"}});
  CHECK(shape.canonical() == "block=128,k=4096,n=7168");
  CHECK(typed_shape(shape, 5).n == 7168);
  CHECK(typed_shape(shape, 5).k == 4096);
  CHECK(typed_shape(shape, 5).m == 5);
  CHECK(canonicalize_error({{"n", "100"}, {"k", "4096"}, {"block", "128"}}) ==
        "--n needs a positive multiple of 128 (the scale block), got '100'");
  CHECK(canonicalize_error({{"n", "7168"}, {"k", "0"}, {"block", "128"}}) ==
        "--k needs a positive multiple of 128 (the scale block), got '0'");
  CHECK(canonicalize_error({{"n", "7168"}, {"k", "4096"}, {"block", "64"}})
            .find("--block '64' is not supported") != std::string::npos);
  CHECK(canonicalize_error({{"n", "7168"}, {"block", "128"}}) ==
        "fp8_gemm needs shape dimension --k");
  CHECK(canonicalize_error({{"n", "7168"}, {"k", "4096"}, {"heads", "64"}})
            .find("has no shape dimension 'heads'") != std::string::npos);
  for (const NamedShape& named : gemm.default_shapes) {
    CAPTURE(named.name);
    CHECK_NOTHROW(gemm.canonicalize(named.values));
  }
}

TEST_CASE("fp8_gemm: the space, the default and the named rules") {
  const Family& gemm = family();
  const std::vector<Config> configs = cross_product(gemm.space());
  CHECK(configs.size() == 3 * 3 * 2 * 2 * 3 * 4);
  std::set<std::string> keys;
  for (const Config& config : configs) keys.insert(compile_key(config, gemm.space()));
  CHECK(keys.size() == configs.size() / 4);  // split_k is launch-only
  const Config def = gemm.default_config();
  CHECK(to_json(def) ==
        R"({"block_k":128,"block_m":16,"block_n":64,"num_stages":3,"num_warps":4,"split_k":1})");
  for (const NamedShape& named : gemm.default_shapes) {
    CHECK(gemm.rules(def, gemm.canonicalize(named.values)).empty());
  }
  const Shape small = gemm.canonicalize({{"n", "256"}, {"k", "512"}, {"block", "128"}});
  // 8 warps over 16 x 32: one warp row, 8 warp columns of 4 columns: not whole 8-wide tiles.
  const Config narrow = with(with(def, "num_warps", 8), "block_n", 32);
  CHECK(gemm.rules(narrow, small) == "tiling: 8 warps cannot tile 16x32 in whole 16x8 mma tiles");
  CHECK(gemm.rules(with(def, "split_k", 8), small) == "split_k: SPLIT_K 8 > 4 K groups of 128");
  CHECK(gemm.rules(with(def, "split_k", 4), small).empty());
}

TEST_CASE("fp8_gemm: the budget is layout.h's, checked against arithmetic done here") {
  const Family& gemm = family();
  const Shape shape = gemm.canonicalize({{"n", "7168"}, {"k", "4096"}, {"block", "128"}});
  // Default: 3 stages x (16 + 64 rows) x (128 + 16 pad) bytes.
  const StaticBudget budget = gemm.budget(gemm.default_config(), shape);
  CHECK(budget.smem_bytes_per_block == 3 * 80 * 144);
  CHECK(budget.threads_per_block == 128);
  // 4 warps along N: each 16 x 16 = 1 x 2 mma tiles: 2 x 8 accumulators + 4 + 4 + 40.
  CHECK(budget.registers_per_thread == 2 * 2 * 4 + 4 + 4 + 40);
  Config big = gemm.default_config();
  big = with(with(with(with(big, "block_m", 64), "block_n", 128), "num_stages", 4), "block_k", 128);
  CHECK(gemm.budget(big, shape).smem_bytes_per_block == 4 * 192 * 144);  // 110592 > 99 KB
}

TEST_CASE("fp8_gemm: e4m3 decoding and the CPU reference on hand-computed cases") {
  CHECK(e4m3_value(0x38) == 1.0);  // exponent 7 = bias
  CHECK(e4m3_value(0x30) == 0.5);
  CHECK(e4m3_value(0xb8) == -1.0);
  CHECK(e4m3_value(0x7e) == 448.0);                // largest finite
  CHECK(e4m3_value(0x01) == std::ldexp(1.0, -9));  // smallest subnormal
  CHECK(e4m3_value(0x3c) == 1.5);
  HostGemm g;
  g.m = 2;
  g.n = 128;
  g.k = 256;
  g.a.assign(static_cast<std::size_t>(g.m) * g.k, 0x38);  // 1.0
  g.b.assign(static_cast<std::size_t>(g.n) * g.k, 0x30);  // 0.5
  g.a_scale = {2.f, 4.f, 1.f, 1.f};                       // row 0: groups 2, 4; row 1: 1, 1
  g.b_scale = {3.f, 0.25f};                               // one N block, two K groups
  g.b[5 * g.k + 7] = 0xb8;                                // column 5, k 7 (group 0): -1.0
  const std::vector<double> c = cpu_reference(g);
  // Row 0: group 0: 128 x 0.5 x 2 x 3 = 384; group 1: 128 x 0.5 x 4 x 0.25 = 64.
  CHECK(c[0] == 384.0 + 64.0);
  // Column 5 loses one 0.5 and gains a -1.0 in group 0: (127 x 0.5 - 1) x 2 x 3 = 375.
  CHECK(c[5] == 375.0 + 64.0);
  // Row 1: 128 x 0.5 x 3 + 128 x 0.5 x 0.25 = 192 + 16.
  CHECK(c[static_cast<std::size_t>(g.n) + 1] == 208.0);
}

TEST_CASE("fp8_gemm: the tolerance check passes bf16 rounding and fails real errors") {
  const std::vector<double> ref = {1.0, -2.0, 3.0, 4.0};
  CHECK(compare({1.f, -2.f, 3.f, 4.f}, ref).passes());
  CHECK(compare({1.00390625f, -2.f, 3.f, 4.f}, ref).passes());  // one bf16 ulp at 1.0
  const GemmAgreement off = compare({1.f, -2.f, 3.f, 4.5f}, ref);
  CHECK_FALSE(off.passes());
  CHECK(off.rel_error == doctest::Approx(0.5 / std::sqrt(30.0)));
  const GemmAgreement nan = compare({1.f, std::numeric_limits<float>::quiet_NaN(), 3.f, 4.f}, ref);
  CHECK(nan.non_finite == 1);
  CHECK_FALSE(nan.passes());
}

TEST_CASE("fp8_gemm: vLLM block-fp8 export names and entries") {
  const Family& gemm = family();
  const Shape shape = gemm.canonicalize({{"n", "7168"}, {"k", "4096"}, {"block", "128"}});
  CHECK(gemm.export_name(shape, "NVIDIA_H200") ==
        "N=7168,K=4096,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json");
  CHECK(gemm.export_entry(with(gemm.default_config(), "split_k", 2)) ==
        R"({"BLOCK_SIZE_M":16,"BLOCK_SIZE_N":64,"BLOCK_SIZE_K":128,"GROUP_SIZE_M":1,)"
        R"("num_warps":4,"num_stages":3,"SPLIT_K":2})");
}

TEST_CASE("fp8_gemm: bad shape options exit 2 through the CLI and write no DB") {
  const tuner::test::TempDir dir;
  const std::string db = (dir / "plan.db").string();
  const tuner::test::CommandResult outcome = tuner::test::run_with_stderr(
      "'" + tuner::test::kTunerBinary + "' plan --family fp8_gemm --n 1000 --db '" + db + "'");
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.output.find("--n needs a positive multiple of 128") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(db));
}

TEST_CASE("fp8_gemm: its source hash covers its own templates and common/, not another family's") {
  const Family& smla = family_by_name("sparse_mla_decode");
  CHECK(family().source_hash() != smla.source_hash());
  CHECK(family().source_hash() == templates_hash({"common/", "fp8_gemm/"}));
  CHECK(family().source_hash() != templates_hash({"common/", "fp8_gemm/", "sparse_mla_decode/"}));
  for (const SourceFile& file : gemm_program(KernelConfig{}, 120).headers) {
    CAPTURE(file.name);
    CHECK(file.name.rfind("sparse_mla_decode/", 0) != 0);
  }
}

TEST_CASE("fp8_gemm: the reference and fill program compiles for sm_120 and sm_90") {
  for (int arch : {120, 90}) {
    CAPTURE(arch);
    const CompileResult compiled = compile(utility_program(arch));
    CHECK_FALSE(compiled.cubin.empty());
    CHECK(compiled.lowered_names.count("fp8_gemm_reference") == 1);
  }
}

TEST_CASE("fp8_gemm: plans for sm_120 and sm_90 compile every kept config, the default survives") {
  const tuner::test::TempDir dir;
  const CubinCache cache(dir.path());
  for (const char* arch : {"sm_120", "sm_90"}) {
    CAPTURE(arch);
    PlanRequest request;
    request.family = &family();
    request.shape = family().canonicalize({{"n", "7168"}, {"k", "4096"}, {"block", "128"}});
    request.arch = arch_by_name(arch);
    const PlanResult plan = tuner::plan(request, cache);
    CHECK(plan.rows.size() == 432);
    CHECK(plan.count(Fate::compile_failed) == 0);
    CHECK(plan.count(Fate::survivor) > 0);
    for (const PlanRow& row : plan.rows) {
      CHECK_FALSE(row.reason.empty());
      if (row.config == family().default_config()) CHECK(row.fate == Fate::survivor);
      if (row.fate == Fate::pruned_budget &&
          row.budget->smem_bytes_per_block > request.arch.max_smem_per_block_optin_bytes) {
        CHECK(row.reason.find("shared memory") == 0);
      }
    }
  }
}
