// `tuner sweep` (the main job) and `tuner sweep-worker` (its GPU process; not for direct use).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/cubin_cache.hpp"
#include "core/error.hpp"
#include "tuner/batch_set.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/device_pool.hpp"
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

std::string batch_list(const std::vector<int>& batches) {
  return batches.empty() ? "-" : batch_list_text(batches);
}

void print_summary(const SweepSummary& summary) {
  std::printf(
      "\nrun %lld on %d x %s (copy bandwidth %.0f GB/s): %d measurements, %d faults, %d "
      "transient (retried by the next sweep), %d wrong results\n",
      static_cast<long long>(summary.run_id), summary.devices, summary.device_name.c_str(),
      summary.copy_gbs, summary.measurements, summary.faults, summary.transients,
      summary.wrong_results);
  std::printf(
      "time: %.1f s wall = plan %.1f s (budget compiles) + worker compile/load %.1f s + verify "
      "%.1f s + timing %.1f s (screens %.1f + full protocol %.1f) + search %.3f s + rest\n",
      summary.wall_s, summary.plan_s, summary.worker_compile_s, summary.verify_s, summary.timing_s,
      summary.screen_s, summary.timing_s - summary.screen_s, summary.search_s);
  if (summary.screen_replays > 0) {
    std::printf(
        "protocol: %d screens (1 warm-up + %d replays of the L2-safe graph: a ranking), %d "
        "full-protocol timings of finalists (the winner rule compares only these)\n",
        summary.screens, summary.screen_replays, summary.full_timings);
  }
  std::printf(
      "batch search: %d (config, batch) pairs skipped_by_search (%d of them the same launch as a "
      "config measured there); anchors %s; verified at %s\n",
      summary.skipped_by_search, summary.same_launch, batch_list(summary.anchors).c_str(),
      batch_list(summary.verify_batches).c_str());
  if (summary.sm_count > 0) {
    std::printf("wave edges (%d SMs): %s\n", summary.sm_count,
                batch_list(summary.wave_edges).c_str());
  }
  if (summary.cluster_edges_asked) {
    std::printf("cluster edges: %s\n", batch_list(summary.cluster_edges).c_str());
  }
  std::printf("%6s %-72s %10s %10s %8s %8s %7s %5s  %s\n", "batch", "winner", "winner_us",
              "default_us", "speedup", "measured", "skipped", "final", "decision");
  for (const SweepBatchSummary& batch : summary.batches) {
    std::printf("%6d %-72s %10.2f %10.2f %7.2fx %8d %7d %5d  %s\n", batch.batch,
                batch.winner_params.c_str(), batch.winner_us, batch.default_us, batch.speedup,
                batch.measured_now, batch.skipped_by_search, batch.finalists,
                batch.decision.c_str());
  }
}

// Progress on stderr: an updating bar with ETA on a terminal, plain lines otherwise.
class ProgressBar {
 public:
  void operator()(const SweepProgress& progress) {
    if (progress.done == 0) {
      std::fprintf(stderr, "%s%s\n", bar_drawn_ ? "\n" : "", progress.what.c_str());
      bar_drawn_ = false;
      return;
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = elapsed / progress.done * (progress.total - progress.done);
    if (terminal_) {
      const int width = 30;
      const int filled = progress.total > 0 ? width * progress.done / progress.total : width;
      std::fprintf(stderr, "\r[%-*s] %d/%d ETA %4.0fs %-70.70s", width,
                   std::string(filled, '#').c_str(), progress.done, progress.total, eta,
                   progress.what.c_str());
      bar_drawn_ = progress.done != progress.total;
      if (progress.done == progress.total) std::fputc('\n', stderr);
    } else {
      std::fprintf(stderr, "sweep %d/%d (ETA %.0f s): %s\n", progress.done, progress.total, eta,
                   progress.what.c_str());
    }
  }

 private:
  bool terminal_ = ::isatty(STDERR_FILENO) != 0;
  bool bar_drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

// The search's percentages into the request, refusing what is not one (exit 2, naming it).
void set_search_options(double margin_pct, double finalist_margin_pct, SweepRequest& request) {
  if (!(margin_pct >= 0.0 && margin_pct <= 100000.0)) {  // also refuses NaN
    throw InputError("--search-margin " + std::to_string(margin_pct) +
                     " is not a percentage: pass 0 or more (e.g. 5)");
  }
  request.search.margin = margin_pct / 100.0;
  request.search.wide_margin = std::max(request.search.wide_margin, request.search.margin);
  if (!(finalist_margin_pct >= 0.0 && finalist_margin_pct <= 100.0)) {
    throw InputError("--finalist-margin " + std::to_string(finalist_margin_pct) +
                     " is not a percentage from 0 to 100: pass e.g. 2");
  }
  request.finalist_margin = finalist_margin_pct / 100.0;
  if (request.screen_replays < 0 || request.screen_replays > 200) {
    throw InputError("--screen-replays " + std::to_string(request.screen_replays) +
                     " is out of range: pass 0 (full protocol) to 200 (e.g. 4)");
  }
  if (request.search.max_keep < 1) {
    throw InputError("--search-keep must be 1 or more, got " +
                     std::to_string(request.search.max_keep));
  }
}

namespace {

// The sweep's options as typed on the command line, before they are parsed into the request.
struct SweepText {
  std::string db_path;
  std::string batches;
  int max_batch = 0;
  std::string anchors = "1,8,64,512";
  std::string budget_arch;
  std::string cache_dir;
  std::string shard_text = "1/1";
  double margin_pct = 0.0;
  double finalist_margin_pct = 0.0;
  std::string also_time;  // a file: {"BATCH": [CONFIG, ...]}
};

void add_sweep_options(po::options_description& options, SweepText& text, SweepRequest& request) {
  options.add_options()("db", po::value(&text.db_path)->required(),
                        "SQLite tuning DB (created when missing)")(
      "batches", po::value(&text.batches)->default_value(text.batches),
      "batch sizes to tune: a list (1,2,4), ranges (1-16, 8-64:8), 'cudagraph' (vLLM's "
      "CUDA-graph capture sizes up to --max-batch) and/or 'waves' (the batches where the "
      "family's grid fills its last wave on this GPU, so that the bucket rule never hands a "
      "batch the winner of a grid one wave larger) and/or 'clusters' (the last batches whose "
      "cluster launches fit one wave of clusters on this GPU)")(
      "max-batch", po::value(&text.max_batch)->default_value(text.max_batch),
      "the largest batch of 'cudagraph', 'waves', 'clusters' and the family's default set (the "
      "family's default maximum)")(
      "exhaustive", po::bool_switch(&request.exhaustive),
      "measure and verify every config at every batch (no batch search)")(
      "search-anchors", po::value(&text.anchors)->default_value(text.anchors),
      "batch search: the batches nearest these are measured exhaustively")(
      "search-margin", po::value(&text.margin_pct)->default_value(text.margin_pct),
      "batch search: elsewhere measure configs within this % of a neighbouring anchor's best")(
      "search-keep", po::value(&request.search.max_keep)->default_value(request.search.max_keep),
      "batch search: at most this many configs per non-anchor batch (plus the default and the "
      "batch below's fastest)")("budget-arch", po::value(&text.budget_arch),
                                "prune with this arch's limits (e.g. sm_120); default: the GPU's")(
      "device", po::value(&request.device)->default_value(0), "CUDA device ordinal")(
      "devices", po::value(&request.devices),
      "all | 0,1,...: one worker per GPU (all of one model), one queue longest first; the "
      "finalists are re-timed on the first")("force", po::bool_switch(&request.force),
                                             "measure again what the DB already holds")(
      "cache-dir", po::value(&text.cache_dir),
      "cubin cache directory (default $XDG_CACHE_HOME/tuner)")(
      "finalists", po::value(&request.finalists)->default_value(request.finalists),
      "configs timed in full against the default, at most")(
      "screen-replays", po::value(&request.screen_replays)->default_value(request.screen_replays),
      "batch search: first pass = 1 warm-up + this many replays of the L2-safe graph (a "
      "ranking); only finalists get the full protocol; 0: full protocol for every measurement")(
      "finalist-margin",
      po::value(&text.finalist_margin_pct)->default_value(text.finalist_margin_pct),
      "batch search, between anchors: finalists are the configs screened within this % of the "
      "best (at most --finalists)")(
      "also-time", po::value(&text.also_time),
      "FILE {\"BATCH\": [CONFIG, ...]}: also time these configs in full at these batches, "
      "every round beside the finalists (both sides of a regret check from one run; "
      "scripts/regret.py also-time writes it)")(
      "memory-gib", po::value(&request.memory_gib)->default_value(request.memory_gib),
      "input footprint in GiB (KV cache, GEMM operand rotations): at least 4x the GPU's L2, else "
      "refused")(
      "shard", po::value(&text.shard_text),
      "i/N: measure only this deterministic slice of the (batch, config) work into --db "
      "and record no winners; tuner merge puts the N shard DBs together and decides them")(
      "test-fault-candidate", po::bool_switch(&request.inject_fault_candidate),
      "test only: add a candidate that writes out of bounds, to prove fault isolation");
}

// --also-time FILE into the request (exit 2 naming the file before any GPU work).
void read_also_time(const std::string& path, SweepRequest& request) {
  if (request.shard.sharded()) {
    throw InputError("--also-time with --shard: a shard times no finalists; sweep unsharded");
  }
  std::ifstream in(path);
  if (!in) {
    throw InputError("--also-time " + path +
                     ": cannot read the file; write it with scripts/regret.py also-time");
  }
  std::stringstream text;
  text << in.rdbuf();
  request.also_time =
      parse_also_time(text.str(), "--also-time " + path, request.batches, request.family->space());
}

}  // namespace

int run_sweep(const Args& args) {
  ProblemOptions problem = problem_options_for(args);
  SweepRequest request;
  SweepText text;
  text.batches = problem.family->default_batches;
  text.max_batch = problem.family->default_max_batch;
  text.margin_pct = request.search.margin * 100.0;
  text.finalist_margin_pct = request.finalist_margin * 100.0;
  po::options_description options("sweep options");
  add_problem_options(options, problem);
  add_sweep_options(options, text, request);
  if (!parse_or_help("sweep", "--db FILE [options]", options, args)) return 0;
  request.db_path = text.db_path;
  const Problem parsed = parse_problem(problem);
  request.family = parsed.family;
  request.shape = parsed.shape;
  const BatchSet batches = text.batches == problem.family->default_batches
                               ? parse_default_batch_set(text.batches, text.max_batch)
                               : parse_batch_set(text.batches, text.max_batch);
  request.batches = batches.batches;
  request.wave_edge_batches = batches.wave_edges;
  request.cluster_edge_batches = batches.cluster_edges;
  request.max_batch = batches.max_batch;
  request.search.anchor_targets = parse_int_list(text.anchors, "search-anchors");
  set_search_options(text.margin_pct, text.finalist_margin_pct, request);
  request.shard = parse_shard(text.shard_text);
  if (!text.also_time.empty()) read_also_time(text.also_time, request);
  if (!request.devices.empty()) (void)parse_devices(request.devices);  // exit 2 before any GPU work
  if (!text.budget_arch.empty()) request.budget_arch = text.budget_arch;
  request.cache_dir = text.cache_dir.empty() ? default_cache_dir().string() : text.cache_dir;
  CubinCache check_cache_dir(request.cache_dir);  // fails early, naming the dir, when unusable
  request.command_line = joined("tuner sweep", args);
  ProgressBar bar;
  request.on_progress = [&bar](const SweepProgress& progress) { bar(progress); };
  const SweepSummary summary = tuner::run_sweep(request);
  print_summary(summary);
  return 0;
}

int run_sweep_worker(const Args& args) {
  po::options_description options(
      "sweep-worker (internal: started by tuner sweep; its job arrives as one JSON setup message "
      "on stdin, see tuner/sweep_worker.hpp)");
  if (!parse_or_help("sweep-worker", "", options, args)) return 0;
  return tuner::run_sweep_worker(std::cin, std::cout);
}

}  // namespace tuner::cli
