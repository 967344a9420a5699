// Two consumer groups (schedule 2, schedule.h's kScheduleTwoGroups) on the host: where the space
// admits them and why not elsewhere, the threads and shared memory the budget charges (worked out
// here by hand from the kernel's description: q, a ring both groups share, one P + statistics slab
// per group, the mbarriers), and ptxas on sm_90 and sm_120. The kernel runs on a GPU in
// gpu_sparse_mla_decode and gpu_sparse_mla_repeat (every launch variant of every compile key).
#include <doctest/doctest.h>

#include <string>

#include "core/arch.hpp"
#include "core/nvrtc.hpp"
#include "core/occupancy.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "templates/sparse_mla_decode/schedule.h"
#include "tests/support/winners_structure.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

KernelConfig two_groups(int block_t, int num_stages) {
  KernelConfig config = test::winners_structure(smla::kMergeCombineBf16);
  config.block_t = block_t;
  config.num_stages = num_stages;
  config.schedule = smla::kScheduleTwoGroups;
  return config;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_CASE("two consumer groups run the token softmax kernels with producer warps") {
  const Shape fp8;
  KernelConfig config = two_groups(64, 2);
  CHECK(shape_mismatch(config, fp8).empty());
  CHECK(arch_mismatch(config, 90).empty());
  CHECK(arch_mismatch(config, 120).empty());
  CHECK(shape_mismatch(two_groups(32, 4), fp8).empty());

  Shape bf16;
  bf16.kv_format = KvFormat::bf16;
  CHECK(shape_mismatch(config, bf16).find("schedule 2") != std::string::npos);
  config.producers = 0;
  CHECK(shape_mismatch(config, fp8).find("producer warps") != std::string::npos);
  config = two_groups(64, 2);
  config.block_h = 32;  // two m-tiles: no token softmax
  Shape wide = fp8;
  wide.n_heads = 128;
  CHECK(shape_mismatch(config, wide).find("token softmax") != std::string::npos);
  config = two_groups(16, 4);  // 2 n-tiles over 4 warps
  CHECK(shape_mismatch(config, fp8).find("token softmax") != std::string::npos);
}

TEST_CASE("the sweep leaves two consumer groups out, measured to lose") {
  const std::string lost = "measured to lose: two consumer groups a CTA (schedule 2)";
  for (const auto& [block_t, stages] : {std::pair{64, 2}, {64, 4}, {32, 2}, {32, 4}}) {
    CAPTURE(block_t);
    CAPTURE(stages);
    KernelConfig config = two_groups(block_t, stages);
    for (int merge : {smla::kMergeCombinePdl, smla::kMergeCluster, smla::kMergeCombineBf16}) {
      config.merge = merge;
      CHECK(starts_with(measured_trim(config), lost));
      config.schedule = smla::kScheduleSplits;  // the same structure, one group: swept
      CHECK(measured_trim(config).empty() == (block_t * stages <= 128));
      config.schedule = smla::kScheduleTwoGroups;
    }
  }
}

TEST_CASE("the budget charges 2 x 4 + 2 warps, a shared ring and one slab per group") {
  // q: 16 rows x 1,168 B = 18,688; ring: stages x BLOCK_T x 656 B; token ids: stages x BLOCK_T x 4;
  // per group P (4 copies x 16 rows x (2 BLOCK_T + 16) B) + statistics (2 x 16 x 4 warps x 4 B),
  // rounded up to 128 B; mbarriers (2 x stages + 2) x 8 B rounded up to 128 B. Every part starts on
  // a 128-byte boundary (the parts below are all multiples of 128 already).
  const auto expected = [](int block_t, int stages, int groups) {
    const int slab = (4 * 16 * (2 * block_t + 16) + 2 * 16 * 4 * 4 + 127) / 128 * 128;
    return 18688 + stages * block_t * 656 + stages * block_t * 4 + groups * slab + 128;
  };
  for (const auto& [block_t, stages] : {std::pair{64, 2}, {64, 4}, {32, 2}, {32, 4}}) {
    CAPTURE(block_t);
    CAPTURE(stages);
    KernelConfig one_group = two_groups(block_t, stages);
    one_group.schedule = smla::kScheduleSplits;
    const StaticBudget single = static_budget(one_group, KvFormat::fp8_ds_mla);
    const StaticBudget paired = static_budget(two_groups(block_t, stages), KvFormat::fp8_ds_mla);
    CHECK(single.smem_bytes_per_block == expected(block_t, stages, 1));
    CHECK(paired.smem_bytes_per_block == expected(block_t, stages, 2));
    CHECK(single.threads_per_block == 6 * 32);
    CHECK(paired.threads_per_block == 10 * 32);
    CHECK(paired.registers_per_thread == single.registers_per_thread);
  }
  // sm_120's 101,376 B a block: the 32-token, 2-stage ring fits, the 64-token one does not.
  CHECK(static_budget(two_groups(32, 2), KvFormat::fp8_ds_mla).smem_bytes_per_block <= 101376);
  CHECK(static_budget(two_groups(64, 2), KvFormat::fp8_ds_mla).smem_bytes_per_block > 101376);
}

TEST_CASE("two consumer groups compile without spills for sm_90 and sm_120") {
  for (const auto& [block_t, arch_sm] : {std::pair{64, 90}, {32, 120}}) {
    const KernelConfig config = two_groups(block_t, 2);
    const CompileResult result = compile(split_program(config, KvFormat::fp8_ds_mla, arch_sm));
    const PtxasReport& report =
        result.ptxas.at(result.lowered_names.at(split_kernel_name(config, KvFormat::fp8_ds_mla)));
    MESSAGE("BLOCK_T " << block_t << " sm_" << arch_sm << ": " << report.registers << " registers, "
                       << report.spill_bytes() << " spill bytes");
    CHECK(report.spill_bytes() == 0);
    // One CTA of 320 threads an SM: at most 204 registers a thread (65,536 / 320, in whole
    // 8-register steps of a warp's allocation).
    CHECK(report.registers <=
          registers_for_blocks(arch_by_name(arch_sm == 90 ? "sm_90" : "sm_120"), 320, 1));
  }
}
