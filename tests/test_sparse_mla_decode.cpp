// The sparse MLA decode family without a GPU: shapes, the space, the layout, launch geometry, the
// CPU reference and the tolerance check (NVRTC compiles: test_sparse_mla_compile.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <set>

#include "core/arch.hpp"
#include "core/error.hpp"
#include "core/nvrtc.hpp"
#include "core/occupancy.hpp"
#include "core/parallel.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/reference.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"
#include "templates/sparse_mla_decode/layout.h"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

std::string validation_error(Shape shape) {
  try {
    validate(shape);
  } catch (const InputError& error) {
    return error.what();
  }
  return {};
}

}  // namespace

TEST_CASE("bad shapes are refused with a message naming the field") {
  Shape shape;
  CHECK(validation_error(shape).empty());
  shape.attn_tp = 3;
  CHECK(validation_error(shape).find("not divisible by tp 3") != std::string::npos);
  shape = Shape{};
  shape.page_size = 40;
  CHECK(validation_error(shape).find("page size 40") != std::string::npos);
  shape = Shape{};
  shape.topk = 0;
  CHECK(validation_error(shape).find("topk must be positive") != std::string::npos);
  shape = Shape{};
  shape.batch = 0;
  CHECK(validation_error(shape).find("batch must be positive") != std::string::npos);
  CHECK_THROWS_AS(parse_kv_format("fp8"), InputError);
  CHECK(parse_kv_format("bf16") == KvFormat::bf16);
}

TEST_CASE("the space is the full cross product and the default is the seeds' baseline") {
  const auto configs = cross_product(parameter_space());
  // BLOCK_T 3 x BLOCK_H 3 x warps 3 x stages 6 x mma_path 3 x producers 4 x kv_unpack 3 x
  // ctas_per_sm 3 x TARGET_CTAS 5 x merge 6 x schedule 3.
  CHECK(configs.size() == 3 * 3 * 3 * 6 * 3 * 4 * 3 * 3 * 5 * 6 * 3);
  std::set<std::string> compile_keys;
  for (const Config& config : configs) compile_keys.insert(compile_key(config, parameter_space()));
  // TARGET_CTAS and merge are launch-time: they share one compile; schedule is compiled in.
  CHECK(compile_keys.size() == 3 * 3 * 3 * 6 * 3 * 4 * 3 * 3 * 3);
  const KernelConfig baseline = default_config();
  CHECK(baseline == KernelConfig{.block_t = 16,
                                 .block_h = 16,
                                 .num_warps = 4,
                                 .num_stages = 2,
                                 .mma_path = 0,
                                 .producers = 0,
                                 .target_ctas = 512});
  CHECK(from_config(config_from_json(to_json(to_config(baseline)))) == baseline);
  CHECK(to_json(to_config(baseline)) ==
        R"({"block_h":16,"block_t":16,"ctas_per_sm":1,"kv_unpack":0,"merge":0,"mma_path":0,)"
        R"("num_stages":2,"num_warps":4,"producers":0,"schedule":0,)"
        R"("target_ctas":512})");
  // Rows stored before mma_path/producers/kv_unpack existed read as the kernel they measured.
  CHECK(from_config(config_from_json(
            R"({"block_h":16,"block_t":16,"num_stages":2,"num_warps":4,"target_ctas":512})")) ==
        baseline);
  // Rows stored with `pdl` (before `merge` replaced it) read as the same launch.
  KernelConfig programmatic = baseline;
  programmatic.merge = 1;
  CHECK(from_config(
            config_from_json(R"({"block_h":16,"block_t":16,"num_stages":2,"num_warps":4,"pdl":1,)"
                             R"("target_ctas":512})")) == programmatic);
}

TEST_CASE("structural rules of the mma paths name what the kernel cannot do") {
  Shape fp8;
  Shape bf16;
  bf16.kv_format = KvFormat::bf16;
  const KernelConfig pipelined{
      .block_t = 32, .block_h = 16, .num_warps = 4, .num_stages = 3, .mma_path = 1, .producers = 2};
  CHECK(shape_mismatch(pipelined, fp8).empty());
  CHECK(shape_mismatch(pipelined, bf16).empty());
  KernelConfig config = pipelined;
  config.mma_path = 2;
  CHECK(shape_mismatch(config, fp8).empty());
  CHECK(shape_mismatch(config, bf16) ==
        "e4m3 MMA (mma_path 2) needs the fp8_ds_mla cache; bf16 KV runs bf16 MMA");
  config.block_t = 16;
  CHECK(shape_mismatch(config, fp8) == "e4m3 MMA takes 32 tokens per k-step: BLOCK_T >= 32");
  config = pipelined;
  config.num_warps = 2;
  CHECK(shape_mismatch(config, fp8) ==
        "mma_path 1 gives each warp at most one 128-dim scale group: NUM_WARPS >= 4");
  config = pipelined;
  config.num_stages = 1;
  CHECK(shape_mismatch(config, fp8) == "mma_path 1 overlaps copies with compute: NUM_STAGES >= 2");
  KernelConfig seeds = default_config();
  seeds.producers = 2;
  CHECK(shape_mismatch(seeds, fp8) == "producer warps need a pipelined path (mma_path 1 or 2)");
  seeds.producers = 0;
  seeds.num_stages = 6;
  CHECK(shape_mismatch(seeds, fp8).empty());  // deep rings run on every path
  // The sweep's measured trims are separate and name themselves.
  CHECK(measured_trim(default_config()).empty());
  CHECK(measured_trim(seeds).rfind("measured to lose: mma_path 0 is swept at 8 warps", 0) == 0);
  seeds.num_warps = 8;
  seeds.num_stages = 2;
  CHECK(measured_trim(seeds).empty());
  CHECK(measured_trim(pipelined).empty());
  config = pipelined;
  config.num_stages = 6;  // 32 x 6 = 192 tokens
  CHECK(shape_mismatch(config, fp8).empty());
  CHECK(measured_trim(config) ==
        "measured to lose: pipelined rings hold 64-128 tokens, or 3 x 64 "
        "with four producer warps (BLOCK_T x NUM_STAGES = 192)");
  config = pipelined;
  config.producers = 1;
  CHECK(measured_trim(config).rfind("measured to lose: one producer warp", 0) == 0);
  // kv_unpack and ctas_per_sm: structure allows them (fp8 mma_path 1; pipelined paths), the sweep
  // leaves them out as measured.
  config = pipelined;
  config.kv_unpack = 1;
  CHECK(shape_mismatch(config, fp8).empty());
  CHECK(measured_trim(config).rfind("measured to lose: the bitwise e4m3 unpack", 0) == 0);
  CHECK(shape_mismatch(config, bf16).find("fp8_ds_mla cache on mma_path 1") != std::string::npos);
  config.mma_path = 2;
  CHECK(shape_mismatch(config, fp8).find("kv_unpack 1") == 0);
  config = pipelined;
  config.ctas_per_sm = 3;
  CHECK(shape_mismatch(config, fp8).empty());
  CHECK(measured_trim(config).rfind("measured to lose: launch bounds of 2-3 CTAs", 0) == 0);
  CHECK(shape_mismatch(KernelConfig{.ctas_per_sm = 2}, fp8) ==
        "the seeds' kernel (mma_path 0) keeps its launch bound of 1");
  // The cluster merge: planned on every pipelined kernel, swept on 4 + 2 warps only.
  config = pipelined;
  config.merge = 2;
  CHECK(shape_mismatch(config, fp8).empty());
  CHECK(measured_trim(config).empty());
  config.num_warps = 8;
  CHECK(measured_trim(config).rfind("measured to lose: the cluster merge (merge 2)", 0) == 0);
  config.num_warps = 4;
  config.producers = 0;
  CHECK(measured_trim(config).rfind("measured to lose: the cluster merge (merge 2)", 0) == 0);
  config.merge = 1;
  CHECK(measured_trim(config).empty());  // merge 0 and 1 on every kernel
  // merge 3's rules and trim: test_sparse_mla_last_cta.
  // e4m3 MMA is planned where it is native.
  config = pipelined;
  config.mma_path = 2;
  CHECK(arch_mismatch(config, 120).empty());
  CHECK(arch_mismatch(config, 89).empty());
  CHECK(arch_mismatch(config, 90).find("emulated on sm_90") != std::string::npos);
  CHECK(arch_mismatch(config, 86) == "e4m3 mma.sync needs sm_89 or newer (mma_path 2)");
  CHECK(arch_mismatch(pipelined, 90).empty());
  // Programmatic dependent launch and clusters are Hopper's and later.
  config = pipelined;
  config.merge = 1;
  CHECK(arch_mismatch(config, 90).empty());
  CHECK(arch_mismatch(config, 120).empty());
  CHECK(arch_mismatch(config, 89) ==
        "programmatic dependent launch (merge 1) needs sm_90 or newer");
  config.merge = 2;
  CHECK(arch_mismatch(config, 90).empty());
  CHECK(arch_mismatch(config, 120).empty());
  CHECK(arch_mismatch(config, 89) == "thread-block clusters (merge 2) need sm_90 or newer");
  config.merge = 0;
  CHECK(arch_mismatch(config, 80).empty());
  // The cluster merge lives in the pipelined kernels.
  KernelConfig seeds_clustered = default_config();
  seeds_clustered.merge = 2;
  CHECK(shape_mismatch(seeds_clustered, fp8) ==
        "the cluster merge (merge 2) is built into the pipelined kernels (mma_path 1 or 2)");
  config.merge = 2;
  CHECK(shape_mismatch(config, fp8).empty());
}

TEST_CASE("the pipelined layout: bytes counted by hand, producer warps in the thread count") {
  // BLOCK_T 32, BLOCK_H 16, 8 consumer warps, 4 stages, fp8, f16 in registers, 1 producer warp:
  // q 16 x 1168 = 18688 | ring 4 x 32 x 656 = 83968 -> 102656 | ids 4 x 32 x 4 = 512 -> 103168 |
  // staged ids 2 x 32 x 4 -> 103424 | scores 2 buffers x k-split 2 (4 n-tiles for 8 warps) x 16 x
  // (32 + 8) x 4 = 10240 -> 113664 | mbarriers (2 x 4 + 2) x 8 = 80 -> 113744, to 128: 113792.
  const KernelConfig config{
      .block_t = 32, .block_h = 16, .num_warps = 8, .num_stages = 4, .mma_path = 1, .producers = 1};
  const StaticBudget budget = static_budget(config, KvFormat::fp8_ds_mla);
  CHECK(budget.smem_bytes_per_block == 113792);
  CHECK(budget.threads_per_block == 9 * 32);
  const smla::SmemLayout layout = smla::smem_layout(32, 16, 8, 4, smla::kFp8DsMla, 1, 1);
  CHECK(layout.ring_offset == 18688);
  CHECK(layout.token_offset == 102656);
  CHECK(layout.scores_offset == 103424);
  CHECK(layout.barrier_offset == 113664);
  // Without producer warps one score buffer and no mbarriers: 103168 + 5120 = 108288.
  CHECK(static_budget(
            KernelConfig{
                .block_t = 32, .block_h = 16, .num_warps = 8, .num_stages = 4, .mma_path = 1},
            KvFormat::fp8_ds_mla)
            .smem_bytes_per_block == 108288);
  // bf16 rows keep the 1168-byte ldmatrix stride: the ring is 4 x 32 x 1168 = 149504.
  CHECK(smla::smem_layout(32, 16, 8, 4, smla::kBf16, 1, 1).ring_stage_bytes == 32 * 1168);
  // On sm_120 (101376 B), 16-token tiles fit a 6-deep fp8 ring next to q, not an 8-deep one:
  // 18688 + 6 x 16 x 656 = 81664 | ids 384 -> 82048 | staged 128 -> 82176 | scores 2 x 2 x 16 x
  // 24 x 4 = 6144 -> 88320 | mbarriers (2 x 6 + 2) x 8 = 112 -> 88432, to 128: 88448.
  KernelConfig deep{
      .block_t = 16, .block_h = 16, .num_warps = 4, .num_stages = 6, .mma_path = 1, .producers = 1};
  CHECK(static_budget(deep, KvFormat::fp8_ds_mla).smem_bytes_per_block == 88448);
  deep.num_stages = 8;
  CHECK(static_budget(deep, KvFormat::fp8_ds_mla).smem_bytes_per_block > 101376);
}

TEST_CASE("BLOCK_H wider than the local heads is a shape mismatch") {
  Shape shape;  // 64 heads / TP 4 = 16 local heads
  CHECK(shape.n_local_heads() == 16);
  const KernelConfig narrow{.block_t = 16, .block_h = 16, .num_warps = 4, .num_stages = 2};
  const KernelConfig wide{.block_t = 16, .block_h = 32, .num_warps = 4, .num_stages = 2};
  const KernelConfig widest{.block_t = 16, .block_h = 64, .num_warps = 4, .num_stages = 2};
  CHECK(shape_mismatch(narrow, shape).empty());
  CHECK(shape_mismatch(wide, shape) == "BLOCK_H 32 > 16 local heads");
  shape.attn_tp = 2;
  CHECK(shape_mismatch(wide, shape).empty());
  CHECK_FALSE(shape_mismatch(widest, shape).empty());
}

TEST_CASE("the layout puts the ring, q and the tiles where the budget says") {
  const smla::SmemLayout layout = smla::smem_layout(16, 16, 4, 2, smla::kFp8DsMla);
  CHECK(layout.ring_stage_bytes == 16 * 656);
  CHECK(layout.q_row_stride * 16 >= 18432u);
  CHECK(layout.total_bytes % 128 == 0);
  CHECK(static_budget(default_config(), KvFormat::fp8_ds_mla).smem_bytes_per_block ==
        static_cast<int>(layout.total_bytes));
  // Regions do not overlap and come in order.
  CHECK(layout.ring_offset >= layout.q_offset + 16 * layout.q_row_stride);
  CHECK(layout.token_offset >= layout.ring_offset + 2 * layout.ring_stage_bytes);
  CHECK(layout.stats_offset + 3 * 16 * 4 <= layout.total_bytes);
  // More stages or wider tiles never shrink the footprint.
  CHECK(smla::smem_layout(16, 16, 4, 3, 0).total_bytes > layout.total_bytes);
  CHECK(smla::smem_layout(32, 16, 4, 2, 0).total_bytes > layout.total_bytes);
  CHECK(smla::smem_layout(16, 16, 4, 2, smla::kBf16).dequant_bytes == 0);
}

TEST_CASE("launch geometry follows the split rule") {
  Shape shape;                             // topk 2048, 16 local heads
  KernelConfig config = default_config();  // BLOCK_T 16, TARGET_CTAS 512
  shape.batch = 1;
  LaunchGeometry geometry = launch_geometry(config, shape, kCapacityUnknown);
  CHECK(geometry.plan.requested_splits == 128);  // min(512 / 1, 2048 / 16)
  CHECK(geometry.plan.num_splits == 128);
  CHECK(geometry.plan.tokens_per_split == 16);
  shape.batch = 48;  // floor(512 / 48) = 10 splits requested -> 13 tiles each -> 10 splits
  geometry = launch_geometry(config, shape, kCapacityUnknown);
  CHECK(geometry.plan.requested_splits == 10);
  CHECK(geometry.plan.tokens_per_split == 13 * 16);
  CHECK(geometry.plan.num_splits == 10);
  shape.batch = 128;  // 512 / 128 = 4
  geometry = launch_geometry(config, shape, kCapacityUnknown);
  CHECK(geometry.plan.num_splits == 4);
  CHECK(geometry.runs_combine());
  shape.batch = 1024;
  CHECK_FALSE(launch_geometry(config, shape, kCapacityUnknown).runs_combine());
  shape.topk = 5;  // fewer tokens than one tile: one split
  shape.batch = 1;
  CHECK(launch_geometry(config, shape, kCapacityUnknown).plan.num_splits == 1);
}

TEST_CASE("fp8 e4m3 decoding covers normals, subnormals and signs") {
  CHECK(e4m3_to_double(0x38) == 1.0);                  // exponent 7, mantissa 0
  CHECK(e4m3_to_double(0x7e) == 448.0);                // largest finite
  CHECK(e4m3_to_double(0x01) == std::ldexp(1.0, -9));  // smallest subnormal
  CHECK(e4m3_to_double(0xb8) == -1.0);
  CHECK(bf16_to_double(0x3f80) == 1.0);
}

TEST_CASE("the CPU reference on a hand-worked case") {
  HostInputs inputs;
  inputs.shape.n_heads = 1;
  inputs.shape.attn_tp = 1;
  inputs.shape.topk = 3;
  inputs.shape.batch = 2;
  inputs.shape.kv_format = KvFormat::bf16;
  inputs.softmax_scale = 0.5;
  inputs.q.assign(2 * 576, 0);
  inputs.q[0] = 0x3f80;  // q[0][0][0] = 1
  inputs.kv.assign(2 * 1152, 0);
  auto set_kv = [&](int token, int dim, std::uint16_t bits) {
    std::memcpy(&inputs.kv[token * 1152 + dim * 2], &bits, 2);
  };
  set_kv(0, 0, 0x4000);  // token 0: k0 = 2 -> score 1
  set_kv(1, 0, 0x0000);  // token 1: k0 = 0 -> score 0
  set_kv(1, 1, 0x3f80);  // token 1: v1 = 1
  // Batch 0 uses tokens {0, 1, 1} (a duplicate counts twice); batch 1 has none valid.
  inputs.indices = {0, 1, 1, -1, -1, -1};
  const HostOutputs outputs = cpu_reference(inputs);
  const double e = std::exp(1.0);
  CHECK(outputs.lse[0] == doctest::Approx(std::log(e + 2.0)));
  CHECK(outputs.out[0] == doctest::Approx(2.0 * e / (e + 2.0)));  // v0 = k0: only token 0 has it
  CHECK(outputs.out[1] == doctest::Approx(2.0 / (e + 2.0)));
  CHECK(std::isinf(outputs.lse[1]));
  CHECK(outputs.out[512] == 0.0);
}

TEST_CASE("the tolerance check catches NaN, -inf mismatches and large errors") {
  const std::vector<double> ref_out = {1.0, 2.0, 3.0, 4.0};
  const std::vector<double> ref_lse = {5.0, -std::numeric_limits<double>::infinity()};
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(compare({1.f, 2.f, 3.f, 4.f}, {5.f, -inf}, ref_out, ref_lse).passes(1e-2, 1e-3));
  CHECK_FALSE(
      compare({1.f, 2.f, 3.f, std::nanf("")}, {5.f, -inf}, ref_out, ref_lse).passes(1e-2, 1e-3));
  CHECK_FALSE(compare({1.f, 2.f, 3.f, 4.f}, {5.f, 0.f}, ref_out, ref_lse).passes(1e-2, 1e-3));
  CHECK_FALSE(compare({1.f, 2.f, 3.f, 4.5f}, {5.f, -inf}, ref_out, ref_lse).passes(1e-2, 1e-3));
  CHECK_FALSE(compare({1.f, 2.f, 3.f, 4.f}, {5.01f, -inf}, ref_out, ref_lse).passes(1e-2, 1e-3));
}

namespace {

// 128 batches x 16 heads of 8 values, and lse, made up but not constant.
struct RowsCase {
  static constexpr int kHeads = 16;
  static constexpr std::size_t kRows = 128 * kHeads;
  static constexpr std::size_t kWidth = 8;
  std::vector<double> ref_out = std::vector<double>(kRows * kWidth);
  std::vector<double> ref_lse = std::vector<double>(kRows);
  RowsCase() {
    for (std::size_t i = 0; i < ref_out.size(); ++i) ref_out[i] = 0.5 + 0.25 * std::sin(0.1 * i);
    for (std::size_t r = 0; r < kRows; ++r) ref_lse[r] = 3.0 + 0.001 * r;
  }
  std::vector<float> out() const { return std::vector<float>(ref_out.begin(), ref_out.end()); }
  std::vector<float> lse() const { return std::vector<float>(ref_lse.begin(), ref_lse.end()); }
};

}  // namespace

TEST_CASE("the tolerance check is per (batch, head) row and names the worst row") {
  const RowsCase rows;
  REQUIRE(compare(rows.out(), rows.lse(), rows.ref_out, rows.ref_lse, RowsCase::kHeads)
              .passes(kOutTolerance, kLseTolerance));
  const std::size_t bad_row = 37 * RowsCase::kHeads + 5;  // batch 37, head 5
  SUBCASE("one row 30% off fails, though the whole output is within 1% globally") {
    std::vector<float> out = rows.out();
    for (std::size_t i = 0; i < RowsCase::kWidth; ++i) out[bad_row * RowsCase::kWidth + i] *= 1.3f;
    double diff_squares = 0.0;
    double ref_squares = 0.0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      diff_squares += std::pow(static_cast<double>(out[i]) - rows.ref_out[i], 2);
      ref_squares += rows.ref_out[i] * rows.ref_out[i];
    }
    REQUIRE(std::sqrt(diff_squares / ref_squares) < kOutTolerance);  // a global norm misses it
    const Agreement agreement =
        compare(out, rows.lse(), rows.ref_out, rows.ref_lse, RowsCase::kHeads);
    CHECK_FALSE(agreement.passes(kOutTolerance, kLseTolerance));
    CHECK(agreement.out_rel_error == doctest::Approx(0.3).epsilon(1e-3));
    CHECK(agreement.worst_out_row == static_cast<long long>(bad_row));
    CHECK(describe(agreement).find("(worst row 597 (batch 37, head 5))") != std::string::npos);
  }
  SUBCASE("a NaN in the reference's lse (a row it never wrote) fails") {
    std::vector<double> ref_lse = rows.ref_lse;
    ref_lse[bad_row] = std::nan("");
    const Agreement agreement =
        compare(rows.out(), rows.lse(), rows.ref_out, ref_lse, RowsCase::kHeads);
    CHECK_FALSE(agreement.passes(kOutTolerance, kLseTolerance));
    CHECK(agreement.mismatch ==
          "the reference's row 597 (batch 37, head 5) is not finite (never written?)");
  }
  SUBCASE("a NaN or +inf in the candidate's out or lse fails and names the row") {
    std::vector<float> out = rows.out();
    out.at(bad_row * RowsCase::kWidth + 3) = std::nanf("");
    const Agreement nan_out = compare(out, rows.lse(), rows.ref_out, rows.ref_lse, 16);
    CHECK_FALSE(nan_out.passes(kOutTolerance, kLseTolerance));
    CHECK(nan_out.mismatch == "row 597 (batch 37, head 5) has 1 NaN/inf outputs");
    std::vector<float> lse = rows.lse();
    lse[bad_row] = std::numeric_limits<float>::infinity();
    CHECK_FALSE(compare(rows.out(), lse, rows.ref_out, rows.ref_lse, 16)
                    .passes(kOutTolerance, kLseTolerance));
  }
  SUBCASE("a tiny row is judged against a floor, not its own near-zero norm") {
    std::vector<double> ref_out = rows.ref_out;
    std::vector<float> out = rows.out();
    for (std::size_t i = 0; i < RowsCase::kWidth; ++i) {
      ref_out[bad_row * RowsCase::kWidth + i] = 1e-7;
      out[bad_row * RowsCase::kWidth + i] = 2e-7f;  // 100% off, but 1e-7 next to rows of ~1.5
    }
    CHECK(compare(out, rows.lse(), ref_out, rows.ref_lse, 16).passes(kOutTolerance, kLseTolerance));
  }
}
