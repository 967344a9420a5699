// The diagnostic timeline (templates/sparse_mla_decode/timeline.cuh): compiled in only where
// SMLA_TIMELINE is defined (scripts/devcarry_variant_tuner.sh), and then still a kernel that runs
// as the timed one does (two CTAs an SM for the batch-64 winner, no spills). NVRTC only.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "core/arch.hpp"
#include "core/nvrtc.hpp"
#include "core/occupancy.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/space.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

// The reference sweep's batch-64 winner on sm_90 (BLOCK_T 64, 2 stages) and within sm_120's
// budget (BLOCK_T 32, 3 stages): 4 + 2 warps, mma_path 1.
KernelConfig batch64_winner(int arch) {
  KernelConfig config;
  config.block_t = arch == 90 ? 64 : 32;
  config.block_h = 16;
  config.num_warps = 4;
  config.num_stages = arch == 90 ? 2 : 3;
  config.mma_path = 1;
  config.producers = 2;
  config.merge = 4;
  config.target_ctas = 256;
  return config;
}

bool holds(const std::vector<char>& bytes, std::string_view text) {
  return std::search(bytes.begin(), bytes.end(), text.begin(), text.end()) != bytes.end();
}

}  // namespace

TEST_CASE("the timeline is compiled in only where SMLA_TIMELINE is defined") {
  for (int arch : {90, 120}) {
    CAPTURE(arch);
    const KernelConfig config = batch64_winner(arch);
    CompileRequest plain_request = split_program(config, KvFormat::fp8_ds_mla, arch);
    CompileRequest timed_request = plain_request;
    timed_request.extra_options.emplace_back("-DSMLA_TIMELINE=100");
    const CompileResult plain = compile(plain_request);
    const CompileResult timed = compile(timed_request);
    // The global log the recorded launches store their marks in (namespace smla_timeline).
    CHECK_FALSE(holds(plain.cubin, "smla_timeline"));
    CHECK(holds(timed.cubin, "smla_timeline"));
    const std::string split =
        timed.lowered_names.at(split_kernel_name(config, KvFormat::fp8_ds_mla));
    const PtxasReport& report = timed.ptxas.at(split);
    CHECK(report.spill_bytes() == 0);
    // Two CTAs an SM, as the timed kernel: the timeline must not change the residency it measures.
    const StaticBudget budget = static_budget(config, KvFormat::fp8_ds_mla);
    const Occupancy occupancy =
        compute_occupancy(arch_by_name("sm_" + std::to_string(arch)),
                          {budget.threads_per_block, report.registers,
                           report.static_smem_bytes + budget.smem_bytes_per_block});
    const PtxasReport& plain_report = plain.ptxas.at(split);
    const Occupancy plain_occupancy =
        compute_occupancy(arch_by_name("sm_" + std::to_string(arch)),
                          {budget.threads_per_block, plain_report.registers,
                           plain_report.static_smem_bytes + budget.smem_bytes_per_block});
    MESSAGE("sm_" << arch << ": " << plain_report.registers << " -> " << report.registers
                  << " registers, " << plain_occupancy.blocks_per_sm << " -> "
                  << occupancy.blocks_per_sm << " CTAs an SM");
    CHECK(plain_occupancy.blocks_per_sm >= 1);
    CHECK(occupancy.blocks_per_sm == plain_occupancy.blocks_per_sm);
  }
}
