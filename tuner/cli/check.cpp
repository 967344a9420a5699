// `tuner check`: without a GPU (or with --compile-only), compile every config of the family for
// --arch (the plan with its audit: budget-pruned configs are compiled too) and report compile
// failures; with a GPU, check every survivor against the family's reference at batches 1 and 64.
// Shares the plan's enumerate -> rules -> budget -> compile path.
#include <cstdio>

#include "core/arch.hpp"
#include "core/cubin_cache.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/plan.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

PlanResult plan_for(const Problem& problem, const Arch& arch, bool audit) {
  PlanRequest request;
  request.family = problem.family;
  request.shape = problem.shape;
  request.arch = arch;
  request.audit = audit;
  request.allow_spills = true;  // a correctness check: spills are slow, not wrong
  return plan(request, CubinCache(default_cache_dir()));
}

int compile_check(const Problem& problem, const Arch& arch, const std::string& why) {
  std::printf("tuner check: %s: compile check of %s %s for %s\n", why.c_str(),
              problem.family->name.c_str(), problem.shape.canonical().c_str(), arch.name.c_str());
  const PlanResult result = plan_for(problem, arch, true);
  int failures = 0;
  for (const PlanRow& row : result.rows) {
    if (!row.compiled) continue;
    const bool ok = row.compiled->succeeded;
    failures += ok ? 0 : 1;
    std::printf("%-64s %s\n", describe(row.config).c_str(),
                ok ? ("ok, " + std::to_string(row.compiled->ptxas.registers) + " registers").c_str()
                   : ("COMPILE FAILED: " + row.reason).c_str());
  }
  std::printf("%d compile keys, %d failures\n", result.compile_keys, failures);
  return failures == 0 ? 0 : 1;
}

int gpu_check(const Problem& problem) {
  const cuda::DeviceInfo info = cuda::device_info(0);
  const cuda::Context context(0);
  const Arch arch = arch_from_device(0, nullptr);
  std::printf("tuner check: GPU %s (sm_%d): correctness run of every survivor, %s %s\n",
              info.name.c_str(), info.arch_sm(), problem.family->name.c_str(),
              problem.shape.canonical().c_str());
  const PlanResult result = plan_for(problem, arch, false);
  // Verification only, no timing: no L2 to keep out (l2_bytes 0), one input set.
  DeviceSession session = problem.family->open_device(
      DeviceSetup{problem.shape, info.arch_sm(), default_cache_dir().string(), 0.25, 0, 1});
  int failures = 0;
  for (const PlanRow& row : result.rows) {
    if (row.fate != Fate::survivor) continue;
    std::printf("%-64s", describe(row.config).c_str());
    for (int batch : {1, 64}) {
      session.prepare(batch);
      const LaunchFn launch = session.load(row.config);
      const Verdict verdict = session.verify(row.config, launch, 1000u + batch);
      failures += verdict.passed ? 0 : 1;
      std::printf(" b%-3d %s %.1e/%.1e", batch, verdict.passed ? "ok  " : "FAIL", verdict.out_error,
                  verdict.aux_error);
    }
    std::printf("\n");
  }
  std::printf("%s: %d failing checks (tolerance: %s)\n",
              failures == 0 ? "all configs correct" : "FAILURES", failures,
              problem.family->tolerance.c_str());
  return failures == 0 ? 0 : 1;
}

}  // namespace

int run_check(const Args& args) {
  ProblemOptions problem = problem_options_for(args);
  std::string arch_name = "sm_120";
  bool compile_only = false;
  po::options_description options("check options");
  add_problem_options(options, problem);
  options.add_options()("arch", po::value(&arch_name)->default_value(arch_name),
                        "target arch of the compile check (no GPU, or --compile-only)")(
      "compile-only", po::bool_switch(&compile_only), "compile check even when a GPU is present");
  if (!parse_or_help("check", "[--family F] [shape options] [options]", options, args)) return 0;
  const Problem parsed = parse_problem(problem);
  const Arch arch = arch_by_name(arch_name);
  std::string why_not;
  if (compile_only) return compile_check(parsed, arch, "--compile-only");
  if (!cuda::gpu_available(&why_not)) {
    return compile_check(parsed, arch, "no GPU (" + why_not + ")");
  }
  return gpu_check(parsed);
}

}  // namespace tuner::cli
