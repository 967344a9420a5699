// NVRTC compiles of the sparse MLA decode kernels: NVRTC's errors, the launch bound's register
// cap, the baseline without spills, the combine's CTAs an SM, and every compile key of the space
// for sm_120 and sm_90
// (~1,200 compiles, the longest CPU test: in its own executable, which CTest starts first,
// tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/arch.hpp"
#include "core/config.hpp"
#include "core/cubin_cache.hpp"
#include "core/error.hpp"
#include "core/nvrtc.hpp"
#include "core/occupancy.hpp"
#include "core/parallel.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "tests/support/matrix_compiles.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/winners_structure.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

struct SpaceCompile {
  int compiled = 0;
  int failed = 0;
  std::vector<std::string> failures;
};

// Every compile key that the structural rules allow for some shape (TARGET_CTAS is launch-only).
// The pipelined kernels are compiled with BLOCK_H 16 only: wider head groups only repeat their
// m-tile loop, which the GPU matrix runs at 32 and 64 local heads.
SpaceCompile compile_every_config(int arch_sm) {
  std::vector<std::pair<KernelConfig, KvFormat>> keys;
  for (KvFormat kv : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
    Shape widest;  // 64 local heads: no BLOCK_H is a shape mismatch
    widest.kv_format = kv;
    widest.attn_tp = 1;
    for (const Config& config : cross_product(parameter_space())) {
      const KernelConfig typed = from_config(config);
      // target_ctas and merge are launch-time: one value each per compile key.
      if (typed.target_ctas != 512 || typed.merge != 0 || !shape_mismatch(typed, widest).empty()) {
        continue;
      }
      if (typed.mma_path != 0 && typed.block_h != 16) continue;
      // ctas_per_sm only changes the launch bound (the ptxas register cap): its compiles are
      // the test below, not 2 x 1260 more here (CI time).
      if (typed.ctas_per_sm != 1) continue;
      // kv_unpack 1/2 change only the fragment conversion: compiled here at 2 stages; every
      // stage is compiled and checked by the GPU matrix (gpu_sparse_mla_decode).
      if (typed.kv_unpack != 0 && typed.num_stages != 2) continue;
      // The balanced schedule differs only in the loop over rows: compiled on the kernels the
      // sweep measures it on (4 consumer + 2 producer warps), every tile, stage and MMA path.
      if (typed.schedule != 0 && (typed.producers != 2 || typed.num_warps != 4)) continue;
      // Four producer warps: compiled on the structure the sweep measures them on, every stage
      // and MMA path, not on 60 more tile and warp combinations here (CI time).
      if (test::four_producers_off_structure(typed)) continue;
      keys.emplace_back(typed, kv);
    }
  }
  std::vector<std::string> errors(keys.size());
  std::vector<int> ok(keys.size(), 0);
  parallel_for(keys.size(), 0, [&](std::size_t i) {
    try {
      const CompileResult result = compile(split_program(keys[i].first, keys[i].second, arch_sm));
      // The split kernel and the two combine kernels.
      ok[i] = !result.cubin.empty() && result.lowered_names.size() == 3 && !result.ptxas.empty();
    } catch (const NvrtcError& error) {
      errors[i] = describe(to_config(keys[i].first)) + ": " + error.log().substr(0, 300);
    }
  });
  SpaceCompile summary;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    summary.compiled += ok[i];
    if (!ok[i]) {
      ++summary.failed;
      summary.failures.push_back(errors[i]);
    }
  }
  return summary;
}

// The fp8 split kernels of schedules 1 and 2 on 4 consumer warps and `producers` producer warps
// under a launch bound of `ctas_per_sm`, at 64- and 32-token tiles (`stages` each), for sm_90 and
// sm_120: each with its ptxas figures.
struct TileDividingKernel {
  int arch = 0;
  KernelConfig config;
  PtxasReport report;
};
std::vector<TileDividingKernel> tile_dividing_kernels(int producers, int ctas_per_sm,
                                                      std::pair<int, int> stages_at_64_and_32) {
  std::vector<TileDividingKernel> kernels;
  for (const int arch : {90, 120}) {
    for (const int schedule : {1, 2}) {
      for (const auto& [block_t, stages] :
           {std::pair{64, stages_at_64_and_32.first}, std::pair{32, stages_at_64_and_32.second}}) {
        const KernelConfig config{.block_t = block_t,
                                  .num_warps = 4,
                                  .num_stages = stages,
                                  .mma_path = 1,
                                  .producers = producers,
                                  .ctas_per_sm = ctas_per_sm,
                                  .schedule = schedule};
        const CompileResult result = compile(split_program(config, KvFormat::fp8_ds_mla, arch));
        kernels.push_back({arch, config,
                           result.ptxas.at(result.lowered_names.at(
                               split_kernel_name(config, KvFormat::fp8_ds_mla)))});
      }
    }
  }
  return kernels;
}

}  // namespace

TEST_CASE("every config of the space compiles for sm_120 and sm_90") {
  for (int arch : {120, 90}) {
    const SpaceCompile summary = compile_every_config(arch);
    MESSAGE("sm_" << arch << ": " << summary.compiled << " compile keys compiled, "
                  << summary.failed << " failed");
    for (const std::string& failure : summary.failures) MESSAGE(failure);
    // Counted by hand from the rules (the sweep's measured trims do not apply here). The seeds'
    // path: 2 formats x BLOCK_T 3 x BLOCK_H 3 x warps 3 x stages 6 (no producer warps).
    // Pipelined, BLOCK_H 16: BLOCK_T 3 x warps {4, 8} x stages {2,3,4,6,8} x producers {0, 1, 2},
    // for both formats on mma_path 1 and BLOCK_T {32, 64} for fp8 on mma_path 2; the bitwise
    // unpacks (kv_unpack 1, 2) on fp8 mma_path 1 at 2 stages. ctas_per_sm 1 only (see
    // compile_every_config). Schedules 1 and 2 on 4 + 2 warps, each: both formats x BLOCK_T 3 x
    // stages 5 on mma_path 1, BLOCK_T {32, 64} x stages 5 on mma_path 2, the two unpacks x BLOCK_T
    // 3; the same again for schedule 2. Four producer warps on BLOCK_T 64 x 4 warps x stages 5,
    // for both formats on mma_path 1 and for fp8 on mma_path 2.
    CHECK(summary.compiled == 2 * 3 * 3 * 3 * 6 + 2 * 3 * 2 * 5 * 3 + 2 * 2 * 5 * 3 +
                                  2 * 3 * 2 * 1 * 3 + 2 * (2 * 3 * 5 + 2 * 5 + 2 * 3) + 3 * 5);
  }
}

TEST_CASE("a template with a syntax error yields an error carrying NVRTC's log") {
  CompileRequest request = split_program(default_config(), KvFormat::fp8_ds_mla, 120);
  request.source_text += "this is not C++;\n";
  try {
    compile(request);
    FAIL("the broken source compiled");
  } catch (const NvrtcError& error) {
    CHECK(error.log().find("error") != std::string::npos);
    CHECK(std::string(error.what()).find("block_t=16") != std::string::npos);
  }
}

TEST_CASE("ctas_per_sm: ptxas keeps registers to what the launch bound's CTAs allow") {
  // Registers for N resident CTAs, by hand from the sm_90 register file (4 sub-partitions of
  // 16384, 256-register units per warp; a sub-partition holds whole warps): 6 warps x 2 CTAs
  // = 12 warps -> 3 per sub-partition -> 5376 per warp -> 168; 10 warps x 2 -> 5 per
  // sub-partition -> 3072 -> 96; 5 warps x 3 -> 4 -> 4096 -> 128.
  struct Case {
    KernelConfig config;
    int max_registers;
  };
  const std::vector<Case> cases = {
      {{.block_t = 64, .num_warps = 4, .mma_path = 1, .producers = 2, .ctas_per_sm = 2}, 168},
      {{.block_t = 64, .num_warps = 8, .mma_path = 1, .producers = 2, .ctas_per_sm = 2}, 96},
      {{.block_t = 32, .num_warps = 4, .mma_path = 1, .producers = 1, .ctas_per_sm = 3}, 128},
  };
  for (const Case& c : cases) {
    const CompileResult result = compile(split_program(c.config, KvFormat::fp8_ds_mla, 90));
    const PtxasReport& report =
        result.ptxas.at(result.lowered_names.at(split_kernel_name(c.config, KvFormat::fp8_ds_mla)));
    MESSAGE(describe(to_config(c.config)) << ": " << report.registers << " registers, "
                                          << report.spill_bytes() << " spill bytes");
    CHECK(report.registers <= c.max_registers);
    CHECK(registers_for_blocks(arch_by_name("sm_90"),
                               (c.config.num_warps + c.config.producers) * 32,
                               c.config.ctas_per_sm) == c.max_registers);
  }
}

TEST_CASE("the tile-dividing schedules' token-softmax kernels hold two CTAs an SM, no spills") {
  // Under a launch bound of two CTAs an SM the fp8 kernels of schedules 1 and 2 take the token
  // softmax (split_pipelined.cuh), which the sweep times because ptxas fits it in the 168
  // registers two 6-warp CTAs leave (by hand, the test above) without spilling: the winners'
  // structure on sm_90 (BLOCK_T 64, 2 stages) and sm_120's (BLOCK_T 32, 3 stages).
  for (const TileDividingKernel& kernel : tile_dividing_kernels(2, 2, {2, 3})) {
    CAPTURE(kernel.arch);
    CAPTURE(describe(to_config(kernel.config)));
    CHECK(kernel.report.registers <= 168);
    CHECK(kernel.report.spill_bytes() == 0);
  }
}

TEST_CASE("four producer warps' tile-dividing kernels compile without spills under one CTA") {
  // With 4 + 4 warps no second CTA fits an SM above 128 registers, so the tile-dividing
  // schedules' kernels take the token softmax under the bound of one CTA too (split_pipelined.cuh;
  // 165 registers on sm_90 at 64-token tiles, where the whole-tile softmax took 163). Checked
  // here: no spills, and the premise (over 128 registers). Which softmax a kernel took is not
  // visible from the host; the GPU matrix checks these kernels' results.
  for (const TileDividingKernel& kernel : tile_dividing_kernels(4, 1, {3, 4})) {
    CAPTURE(kernel.arch);
    CAPTURE(describe(to_config(kernel.config)));
    CHECK(kernel.report.spill_bytes() == 0);
    CHECK(kernel.report.registers > 128);
  }
}

TEST_CASE("the baseline compiles for sm_120 and sm_90 without spills") {
  for (int arch : {120, 90}) {
    for (KvFormat kv : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
      const CompileResult result = compile(split_program(default_config(), kv, arch));
      const std::string mangled = result.lowered_names.at(split_kernel_name(default_config(), kv));
      const PtxasReport& report = result.ptxas.at(mangled);
      MESSAGE("baseline sm_" << arch << " kv=" << to_string(kv) << ": " << report.registers
                             << " registers, " << report.spill_bytes() << " spill bytes, "
                             << report.stack_frame_bytes << " B stack, estimate "
                             << static_budget(default_config(), kv).registers_per_thread);
      CHECK(report.registers > 0);
      CHECK(report.registers <= 255);
      CHECK(report.spill_bytes() == 0);
    }
  }
}

TEST_CASE("either combine kernel holds 8 CTAs an SM by its registers, without spills") {
  // Batch 64 at 16 local heads with 4 splits launches 1,024 combine CTAs of 128 threads: one
  // wave on the H200's 132 SMs needs 8 an SM. The combine's first batch of loads took it to 72
  // registers (7 an SM) before its launch bound; occupancy here is core's formula, not the bound.
  for (int arch : {120, 90}) {
    const CompileResult result =
        compile(split_program(default_config(), KvFormat::fp8_ds_mla, arch));
    for (const std::string& name : {combine_kernel_name(), combine_whole_row_kernel_name()}) {
      const PtxasReport& report = result.ptxas.at(result.lowered_names.at(name));
      const Occupancy occupancy =
          compute_occupancy(arch_by_name("sm_" + std::to_string(arch)),
                            {128, report.registers, report.static_smem_bytes});
      MESSAGE(name << " sm_" << arch << ": " << report.registers << " registers, "
                   << report.spill_bytes() << " spill bytes, " << occupancy.blocks_per_sm
                   << " CTAs an SM");
      CHECK(report.spill_bytes() == 0);
      CHECK(occupancy.by_registers >= 8);
      CHECK(occupancy.blocks_per_sm >= 8);
    }
  }
}

TEST_CASE("the matrix's compiles through a cubin cache: the second pass loads every key") {
  // What a device call carries (tests/support/matrix_cubins.cpp): the first pass's cubins,
  // taken from the cache the second time. Two keys of the bf16 16-head part keep it short.
  const test::TempDir dir;
  const CubinCache cache(dir.path() / "cubins");
  Shape base;
  base.kv_format = KvFormat::bf16;
  std::vector<KernelConfig> keys =
      test::compile_keys_for(base, arch_by_name("sm_90").max_smem_per_block_optin_bytes);
  REQUIRE(keys.size() > 2);
  keys.resize(2);
  const test::CompiledKeys first = test::compile_all(keys, base.kv_format, 90, cache);
  const test::CompiledKeys again = test::compile_all(keys, base.kv_format, 90, cache);
  CHECK(first.from_cache == 0);
  CHECK(again.from_cache == 2);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(first.results[i] != nullptr);
    REQUIRE(again.results[i] != nullptr);
    CHECK(again.results[i]->cubin == first.results[i]->cubin);
    CHECK(again.results[i]->lowered_names == first.results[i]->lowered_names);
    // NVRTC's cubins differ byte-wise between two compiles of one source: a direct compile is
    // compared by what ptxas reported for each kernel.
    const CompileResult direct = compile(split_program(keys[i], base.kv_format, 90));
    REQUIRE(again.results[i]->ptxas.size() == direct.ptxas.size());
    for (const auto& [name, report] : direct.ptxas) {
      CHECK(again.results[i]->ptxas.at(name).registers == report.registers);
      CHECK(again.results[i]->ptxas.at(name).spill_bytes() == report.spill_bytes());
    }
  }
}

TEST_CASE("the utility program (reference, fills, row errors) compiles for sm_120 and sm_90") {
  for (int arch : {120, 90}) {
    const CompileResult result = compile(utility_program(arch));
    const std::string mangled = result.lowered_names.at("sparse_mla_decode_row_errors");
    const PtxasReport& report = result.ptxas.at(mangled);
    MESSAGE("row errors sm_" << arch << ": " << report.registers << " registers, "
                             << report.spill_bytes() << " spill bytes");
    CHECK(report.registers > 0);
    CHECK(report.spill_bytes() == 0);
    CHECK(result.lowered_names.count(reference_kernel_name(KvFormat::fp8_ds_mla)) == 1);
  }
}
