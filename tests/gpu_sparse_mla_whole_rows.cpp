// GPU correctness of the whole-rows schedule (schedule 2, templates/sparse_mla_decode/schedule.h)
// where it differs from the balanced one: batches from one wave of rows (the kernel's resident
// CTAs N on this GPU) to past two, so that each CTA runs a share of the tail rows and then W >= 1
// whole rows, with tails of one row to N - 1 rows (each tail row in up to 32 parts). The matrix
// (gpu_sparse_mla_decode) reaches W >= 1 only at 64 heads; here 16 heads (one head group, rows =
// batch items) and 32 (two), topk 2048 and 600, fp8 and bf16, merges 0, 1 and 4 (bf16 partials),
// against the GPU reference on fresh inputs with 3 % invalid indices.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernels/sparse_mla_decode/device_inputs.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"
#include "templates/sparse_mla_decode/schedule.h"
#include "tests/support/smla_gpu.hpp"

using namespace tuner;
using namespace tuner::smla_family;
using tuner::test::gpu;
using tuner::test::Gpu;

namespace {

// The structures the sweep runs the tile-dividing schedules on (4 consumer + 2 producer warps):
// the fp8 winners' (BLOCK_T 64, f16 MMA) under both launch bounds (whole-tile and token softmax),
// the e4m3 MMA path, and bf16's (BLOCK_T 32, 3 stages).
std::vector<KernelConfig> structures(KvFormat kv) {
  const KernelConfig base{.block_t = 64,
                          .block_h = 16,
                          .num_warps = 4,
                          .num_stages = 2,
                          .mma_path = 1,
                          .producers = 2,
                          .schedule = smla::kScheduleWholeRows};
  if (kv == KvFormat::bf16) {
    KernelConfig bf16 = base;
    bf16.block_t = 32;
    bf16.num_stages = 3;
    return {bf16};
  }
  KernelConfig token_softmax = base;  // the launch bound of two CTAs an SM: the token softmax
  token_softmax.ctas_per_sm = 2;
  KernelConfig e4m3 = base;
  e4m3.block_t = 32;
  e4m3.num_stages = 3;
  e4m3.mma_path = 2;
  return {base, token_softmax, e4m3};
}

// Batches (in rows) around one and two waves of N resident CTAs: tails of 0, 1, 8, N / 2 and
// N - 1 rows over W = 1, and 0 and 3 over W = 2.
std::vector<int> row_counts(int resident) {
  return {resident,         resident + 1, resident + 8,    resident + resident / 2,
          2 * resident - 1, 2 * resident, 2 * resident + 3};
}

}  // namespace

TEST_CASE("whole-rows schedule: tails of 1 to N - 1 rows before 1-2 whole rows a CTA") {
  Gpu& device = gpu();
  int checks = 0;
  for (const KvFormat kv : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
    for (const KernelConfig& structure : structures(kv)) {
      const CompileResult compiled = compile(split_program(structure, kv, device.info.arch_sm()));
      DecodeKernels kernels = load_decode_kernels(compiled, structure, kv);
      const int resident = kernels.clusters.at(1);
      REQUIRE(resident > 0);
      for (const int local_heads : {16, 32}) {
        const int head_groups = local_heads / structure.block_h;
        for (const int topk : {2048, 600}) {
          for (const int rows : row_counts(resident)) {
            if (rows % head_groups != 0) continue;
            Shape shape;
            shape.kv_format = kv;
            shape.n_heads = local_heads;
            shape.attn_tp = 1;
            shape.topk = topk;
            shape.batch = rows / head_groups;
            DeviceProblem problem = make_device_problem(
                device.utility, InputSpec{shape, 1 << 20, 1, 30, 11}, 64, device.stream.get());
            for (const int merge :
                 {smla::kMergeCombine, smla::kMergeCombinePdl, smla::kMergeCombineBf16}) {
              kernels.config = structure;
              kernels.config.merge = merge;
              const SplitPlan plan = launch_geometry(kernels.config, shape, kernels.clusters).plan;
              CAPTURE(describe(to_config(kernels.config)));
              CAPTURE(std::string(to_string(kv)));
              CAPTURE(local_heads);
              CAPTURE(topk);
              CAPTURE(rows);
              // The plan is the one this test is about: W >= 1, the tail as computed here.
              REQUIRE(plan.whole_rows == rows / resident);
              REQUIRE(plan.tail_rows == rows % resident);
              const Agreement agreement =
                  verify_candidate(device.utility, kernels, problem, 1000 + checks, device.stream);
              INFO(describe(agreement) << ", " << plan.num_splits << " parts at most");
              CHECK(agreement.passes(kOutTolerance, kLseTolerance));
              ++checks;
            }
          }
        }
      }
    }
  }
  MESSAGE(checks << " whole-rows launches checked against the GPU reference");
  CHECK(checks >= 4 * 2 * 2 * 5 * 3);
}
