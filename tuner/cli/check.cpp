// `tuner check`: the family's correctness run on a GPU, or, without one, the NVRTC compile check of
// every config of the space for the target arch (sm_120 by default). It says which of the two ran.
#include <cstdio>
#include <memory>

#include "kernels/sparse_mla_decode/device_inputs.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"
#include "tuner/arch.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/cuda_driver.hpp"
#include "tuner/error.hpp"
#include "tuner/parallel.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

using smla_family::KernelConfig;

struct CheckRow {
  KernelConfig config;
  std::unique_ptr<CompileResult> compiled;
  std::string error;
};

std::vector<CheckRow> compile_space(smla_family::KvFormat kv, int arch_sm, int smem_limit) {
  std::vector<CheckRow> rows;
  for (const Config& config : cross_product(smla_family::parameter_space())) {
    KernelConfig typed = smla_family::from_config(config);
    if (typed.target_ctas != smla_family::default_config().target_ctas) continue;  // launch-only
    if (smla_family::static_budget(typed, kv).smem_bytes_per_block > smem_limit) continue;
    rows.push_back(CheckRow{typed, nullptr, {}});
  }
  parallel_for(rows.size(), 0, [&](std::size_t i) {
    try {
      rows[i].compiled = std::make_unique<CompileResult>(
          compile(smla_family::split_program(rows[i].config, kv, arch_sm)));
    } catch (const NvrtcError& error) {
      rows[i].error = error.log().substr(0, 200);
    }
  });
  return rows;
}

const PtxasReport* split_report(const CheckRow& row, smla_family::KvFormat kv) {
  if (!row.compiled) return nullptr;
  const auto name =
      row.compiled->lowered_names.find(smla_family::split_kernel_name(row.config, kv));
  if (name == row.compiled->lowered_names.end()) return nullptr;
  const auto report = row.compiled->ptxas.find(name->second);
  return report == row.compiled->ptxas.end() ? nullptr : &report->second;
}

void print_row_head(const CheckRow& row, smla_family::KvFormat kv) {
  const auto budget = smla_family::static_budget(row.config, kv);
  std::printf("%7d %7d %5d %6d %9d %7d", row.config.block_t, row.config.block_h,
              row.config.num_warps, row.config.num_stages, budget.smem_bytes_per_block,
              budget.registers_per_thread);
}

int compile_check(const smla_family::Shape& shape, const Arch& arch, const std::string& why) {
  std::printf("tuner check: %s: compile check of every config for %s (NVRTC %s), kv=%s\n",
              why.c_str(), arch.name.c_str(), nvrtc_version().c_str(),
              std::string(smla_family::to_string(shape.kv_format)).c_str());
  const std::vector<CheckRow> rows = compile_space(shape.kv_format, arch.sm, 1 << 30);
  std::printf("%7s %7s %5s %6s %9s %7s %5s %6s %8s  %s\n", "block_t", "block_h", "warps", "stages",
              "smem_B", "est_reg", "regs", "spill", "compile", "status");
  int compiled = 0;
  for (const CheckRow& row : rows) {
    print_row_head(row, shape.kv_format);
    const PtxasReport* report = split_report(row, shape.kv_format);
    if (report == nullptr) {
      std::printf(" %5s %6s %8s  compile failed: %s\n", "-", "-", "-", row.error.c_str());
      continue;
    }
    ++compiled;
    const bool fits =
        smla_family::static_budget(row.config, shape.kv_format).smem_bytes_per_block <=
        arch.max_smem_per_block_optin_bytes;
    std::printf(" %5d %6d %6.0fms  %s\n", report->registers, report->spill_bytes(),
                row.compiled->compile_ms, fits ? "ok" : "compiles, over the smem limit");
  }
  std::printf("%d of %zu compile keys compiled for %s\n", compiled, rows.size(), arch.name.c_str());
  return compiled == static_cast<int>(rows.size()) ? 0 : 1;
}

int gpu_check(smla_family::Shape shape) {
  const cuda::DeviceInfo info = cuda::device_info(0);
  const cuda::Context context(0);
  const int smem_optin =
      cuda::device_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0);
  std::printf("tuner check: GPU %s (sm_%d): correctness run of every config that fits, kv=%s\n",
              info.name.c_str(), info.arch_sm(),
              std::string(smla_family::to_string(shape.kv_format)).c_str());
  const smla_family::UtilityKernels utility = smla_family::load_utility_kernels(info.arch_sm());
  cuda::Stream stream;
  std::vector<CheckRow> rows = compile_space(shape.kv_format, info.arch_sm(), smem_optin);
  std::printf("%7s %7s %5s %6s %9s %7s %-28s %-28s\n", "block_t", "block_h", "warps", "stages",
              "smem_B", "est_reg", "batch 1", "batch 64");
  int failures = 0;
  for (const CheckRow& row : rows) {
    if (!smla_family::shape_mismatch(row.config, shape).empty()) continue;
    print_row_head(row, shape.kv_format);
    if (!row.compiled) {
      std::printf(" compile failed\n");
      ++failures;
      continue;
    }
    const smla_family::DecodeKernels kernels =
        smla_family::load_decode_kernels(*row.compiled, row.config, shape.kv_format);
    for (int batch : {1, 64}) {
      shape.batch = batch;
      smla_family::InputSpec spec{shape, 1 << 18, 1, 30, 17};
      smla_family::DeviceProblem problem = smla_family::make_device_problem(
          utility, spec, smla_family::launch_geometry(row.config, shape).num_splits, stream.get());
      const smla_family::Agreement agreement =
          smla_family::verify_candidate(utility, kernels, problem, 1000 + batch, stream);
      const bool ok = agreement.passes(smla_family::kOutTolerance, smla_family::kLseTolerance);
      failures += ok ? 0 : 1;
      std::printf(" %s %.1e/%.1e%-10s", ok ? "ok  " : "FAIL", agreement.out_rel_error,
                  agreement.lse_rel_error, "");
    }
    std::printf("\n");
  }
  std::printf("%s: %d failing checks\n", failures == 0 ? "all configs correct" : "FAILURES",
              failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int run_check(const Args& args) {
  ProblemOptions problem;
  std::string arch_name = "sm_120";
  bool compile_only = false;
  po::options_description options("check options");
  add_problem_options(options, problem);
  options.add_options()("arch", po::value(&arch_name)->default_value(arch_name),
                        "target arch of the compile check (no GPU, or --compile-only)")(
      "compile-only", po::bool_switch(&compile_only), "compile check even when a GPU is present");
  if (!parse_or_help("check", "[options]", options, args)) return 0;
  const smla_family::Shape shape = parse_problem(problem);
  const Arch arch = arch_by_name(arch_name);
  std::string why_not;
  if (compile_only) return compile_check(shape, arch, "--compile-only");
  if (!cuda::gpu_available(&why_not)) return compile_check(shape, arch, "no GPU (" + why_not + ")");
  return gpu_check(shape);
}

}  // namespace tuner::cli
