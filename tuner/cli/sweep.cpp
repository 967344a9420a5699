// `tuner sweep` (the main job) and `tuner sweep-worker` (its GPU process; not for direct use).
#include <cstdio>
#include <iostream>

#include "tuner/cli/commands.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/cubin_cache.hpp"
#include "tuner/sweep.hpp"
#include "tuner/sweep_worker.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

std::string joined(const std::string& program, const Args& args) {
  std::string text = program;
  for (const std::string& arg : args) text += " " + arg;
  return text;
}

void print_summary(const SweepSummary& summary) {
  std::printf(
      "\nrun %lld on %s (copy bandwidth %.0f GB/s): %d measurements, %d faults, %d transient "
      "(retried by the next sweep), %d wrong results\n",
      static_cast<long long>(summary.run_id), summary.device_name.c_str(), summary.copy_gbs,
      summary.measurements, summary.faults, summary.transients, summary.wrong_results);
  std::printf(
      "time: %.1f s wall = plan %.1f s (budget compiles) + worker compile/load %.1f s + verify "
      "%.1f s + timing %.1f s + rest\n",
      summary.wall_s, summary.plan_s, summary.worker_compile_s, summary.verify_s, summary.timing_s);
  std::printf("%6s %-72s %10s %10s %8s  %s\n", "batch", "winner", "winner_us", "default_us",
              "speedup", "decision");
  for (const SweepBatchSummary& batch : summary.batches) {
    std::printf("%6d %-72s %10.2f %10.2f %7.2fx  %s\n", batch.batch, batch.winner_params.c_str(),
                batch.winner_us, batch.default_us, batch.speedup, batch.decision.c_str());
  }
}

}  // namespace

int run_sweep(const Args& args) {
  ProblemOptions problem;
  std::string db_path;
  std::string batches = "1,2,4,8,16,32,48,64,80,96,128";
  std::string budget_arch;
  std::string cache_dir;
  SweepRequest request;
  po::options_description options("sweep options");
  add_problem_options(options, problem);
  options.add_options()("db", po::value(&db_path)->required(),
                        "SQLite tuning DB (created when missing)")(
      "batches", po::value(&batches)->default_value(batches), "batch sizes to tune")(
      "budget-arch", po::value(&budget_arch),
      "prune with this arch's limits (e.g. sm_120); default: the GPU's")(
      "device", po::value(&request.device)->default_value(0), "CUDA device ordinal")(
      "force", po::bool_switch(&request.force), "measure again what the DB already holds")(
      "cache-dir", po::value(&cache_dir), "cubin cache directory (default $XDG_CACHE_HOME/tuner)")(
      "finalists", po::value(&request.finalists)->default_value(request.finalists),
      "configs re-timed against the default")(
      "kv-gib", po::value(&request.kv_gib)->default_value(request.kv_gib), "KV cache size in GiB")(
      "test-fault-candidate", po::bool_switch(&request.inject_fault_candidate),
      "test only: add a candidate that writes out of bounds, to prove fault isolation");
  if (!parse_or_help("sweep", "--db FILE [options]", options, args)) return 0;
  request.db_path = db_path;
  request.shape = parse_problem(problem);
  request.batches = parse_int_list(batches, "batches");
  if (!budget_arch.empty()) request.budget_arch = budget_arch;
  request.cache_dir = cache_dir.empty() ? default_cache_dir().string() : cache_dir;
  CubinCache check_cache_dir(request.cache_dir);  // fails early, naming the dir, when unusable
  request.command_line = joined("tuner sweep", args);
  const SweepSummary summary = tuner::run_sweep(request);
  print_summary(summary);
  return 0;
}

int run_sweep_worker(const Args& args) {
  ProblemOptions problem;
  WorkerSetup setup;
  po::options_description options("sweep-worker options (internal: started by tuner sweep)");
  add_problem_options(options, problem);
  options.add_options()("device", po::value(&setup.device)->default_value(0),
                        "CUDA device ordinal")("cache-dir", po::value(&setup.cache_dir)->required(),
                                               "cubin cache directory")(
      "kv-gib", po::value(&setup.kv_gib)->default_value(1.0), "KV cache size in GiB")(
      "launches", po::value(&setup.launches_per_graph)->default_value(32), "launches per graph");
  if (!parse_or_help("sweep-worker", "[options]", options, args)) return 0;
  setup.shape = parse_problem(problem);
  return tuner::run_sweep_worker(setup, std::cin, std::cout);
}

}  // namespace tuner::cli
