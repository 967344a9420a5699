#pragma once
// `tuner sweep`: plan, then verify and time the survivors the batch search picks at every batch
// size in a worker process (a short screen each; the finalists in the full timing protocol),
// committing each trial as it finishes, and pick per batch a winner that beats the default beyond
// the measured noise. Resumable: trials already in the DB for the same source, archs and device are
// not measured again (unless forced), and a batch whose winner is recorded is skipped.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/family.hpp"
#include "core/shape.hpp"
#include "tuner/also_time.hpp"
#include "tuner/batch_search.hpp"
#include "tuner/shard.hpp"

namespace tuner {

// What the sweep reports while it runs (the engine never prints; the CLI draws it).
struct SweepProgress {
  int done = 0;  // steps finished (one per candidate and batch); 0 with a note
  int total = 0;
  std::string what;  // the step, or a note ("batch 8: no winner recorded")
};

struct SweepRequest {
  std::string db_path;
  const Family* family = nullptr;
  Shape shape;  // canonical
  std::vector<int> batches;
  // --batches named 'waves': the sweep adds the family's wave-edge batches up to max_batch for
  // its GPU's SM count (Family::wave_edge_batches) before it plans the batch search.
  bool wave_edge_batches = false;
  // --batches named 'clusters': likewise the family's cluster-edge batches for its GPU's cluster
  // capacity (Family::cluster_edge_batches, core/cluster_probe.hpp).
  bool cluster_edge_batches = false;
  int max_batch = 512;
  // Which configs to measure at which batch (tuner/batch_search.hpp); --exhaustive measures and
  // verifies every config at every batch.
  SearchPolicy search;
  bool exhaustive = false;
  std::optional<std::string> budget_arch;  // default: the measured device's arch
  int device = 0;
  // --devices: "all" or "0,1,...": one worker per GPU, one queue (empty: `device` alone).
  std::string devices;
  bool force = false;
  std::string cache_dir;
  int finalists = 3;     // fastest configs re-timed side by side with the default, at most
  int final_rounds = 3;  // interleaved full-protocol re-timing rounds
  // The batch search's first pass: this many timed replays of the L2-safe graph after one warm-up
  // (a ranking, recorded as such); 0: the full protocol for every measurement. --exhaustive,
  // shards and several GPUs always time in full.
  int screen_replays = 4;
  double finalist_margin = 0.02;  // between anchors: finalists screened within this of the best
  // --also-time: configs timed in full at these batches beside the finalists, every round (a
  // regret check's configs; tuner/also_time.hpp). Only those measured at the batch.
  AlsoTime also_time;
  double memory_gib = 1.0;  // input footprint (the KV cache, the GEMM operands): >= 4x the L2
  int min_launches = 32;    // per timing graph at least; the family adds more for the L2
  bool inject_fault_candidate = false;  // test-only: adds a candidate that writes out of bounds
  // --shard i/N: measure only this slice of the (shape, batch, config) items and record no
  // winners (tuner merge decides them from all shards' trials).
  ShardSpec shard;
  std::string command_line;
  std::function<void(const SweepProgress&)> on_progress;  // may be empty
};

struct SweepBatchSummary {
  int batch = 0;
  std::string winner_params;
  double winner_us = 0.0;
  double default_us = 0.0;
  double speedup = 1.0;
  std::string decision;
  bool skipped = false;  // already done in an earlier run
  int measured_now = 0;
  int skipped_by_search = 0;  // configs the batch search left unmeasured here
  bool verified = false;      // configs were verified at this batch (else timed only)
  int finalists = 0;          // configs timed in full against each other (the default included)
};

struct SweepSummary {
  std::int64_t run_id = 0;
  std::vector<SweepBatchSummary> batches;
  int measurements = 0;  // trials measured in this run
  int faults = 0;
  int transients = 0;  // failed twice by timeout or out of memory: retried by the next sweep
  int wrong_results = 0;
  int skipped_by_search = 0;         // (config, batch) pairs recorded as skipped_by_search
  int same_launch = 0;               // ... of them the same launch as a config measured there
  int screens = 0;                   // first passes that were screens (0 without the search)
  int screen_replays = 0;            // timed replays per screen (0: no screening)
  int full_timings = 0;              // full-protocol timings of finalists (rounds counted)
  std::vector<int> anchors;          // batches where every config was measured
  std::vector<int> verify_batches;   // batches where configs were verified
  std::vector<int> wave_edges;       // the wave-edge batches 'waves' added (tuned like the rest)
  int sm_count = 0;                  // the SMs those edges were derived for (0: none asked)
  std::vector<int> cluster_edges;    // the cluster-edge batches 'clusters' added
  bool cluster_edges_asked = false;  // 'clusters' was named (and a GPU probed)
  double copy_gbs = 0.0;
  std::string device_name;
  int devices = 1;  // GPUs that measured
  // Where the time went (seconds): the plan (budget compiles), compiling/loading for the device in
  // the worker, verification against the reference, timing (incl. final re-timing), and all of it.
  double plan_s = 0.0;
  double worker_compile_s = 0.0;
  double verify_s = 0.0;
  double timing_s = 0.0;
  double screen_s = 0.0;  // the part of timing_s spent screening (the rest: the full protocol)
  double search_s = 0.0;  // deciding what to measure (the batch search's own overhead)
  double wall_s = 0.0;
};

// Throws NoGpuError without a GPU (the message points to `tuner plan`).
SweepSummary run_sweep(const SweepRequest& request);

}  // namespace tuner
