#pragma once
// The batch search: which configs a sweep measures at which batch, so that every captured batch
// size (51 for vLLM's list up to 512) is tuned in minutes instead of measuring every survivor at
// every batch. Pure functions over measured medians: no GPU, no DB (tests/test_batch_search.cpp
// drives them with synthetic timings).
//
// The rule (documented in README.md, "The batch search"):
//   1. Anchors: the requested batches nearest to 1, 8, 64 and 512, plus the smallest and the
//      largest requested. At an anchor every survivor is measured (the exhaustive sweep there).
//   2. Verification: each config is verified against the reference once per shape, at up to three
//      anchors (the smallest, a middle one, the largest); everywhere else it is timed only. A
//      config that fails (wrong result, fault) at an anchor is not measured at other batches.
//   3. Other batches, in ascending order: the candidates are the configs within `margin` of the
//      best at the neighbouring anchors below and above (or among the `keep_top` fastest there),
//      at most `max_keep` of them (those closest to a neighbour's best), plus the default and the
//      `keep_top` fastest at the nearest batch already done below.
//      Also the fastest config with each parameter's value (one per name=value) at each
//      neighbouring anchor, when within `value_margin` of its best: a structural choice can lose
//      at every anchor and win between them (the balanced schedule on the H200: 15-26 % behind at
//      1, 8, 64 and 512, up to 19 % ahead at 136-176 and 272-416).
//      Every launch-time variant of the `agreed_sibling_groups` kernels closest to a neighbour's
//      best is measured too, even when the neighbours agree: a split count's best value follows
//      the batch's waves, which agreeing anchors do not see (at most a few more screens; the
//      H200's batch 272, first suspected, was not such a miss: BENCHMARKS.md section 9).
//      When the two neighbours' winners differ the landscape is changing between them: the
//      margin widens to `wide_margin`, and every launch-time variant of the `sibling_groups`
//      kernels closest to a neighbour's best is measured too (configs of one compiled kernel
//      that differ only in launch parameters, e.g. a split count, whose best value follows the
//      batch's wave quantization rather than the anchors; at batch 48 on the H200 both anchors
//      8 and 64 preferred other split counts, and the kept kernel's variant that was 2.2 %
//      faster there had been skipped).
//   4. Configs of a pick that are one launch at the batch are measured once
//      (tuner/same_launch.hpp, in the sweep).
//   5. What the sweep does with a pick (tuner/finalists.hpp): a short screen of each, then the
//      full timing protocol for the finalists only; the winner rule compares full timings.
//   Every config not measured at a batch gets the fate skipped_by_search with the rule that
//   skipped it, so the fate table stays complete. --exhaustive measures (and verifies) every
//   config at every batch instead.
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tuner {

struct SearchPolicy {
  std::vector<int> anchor_targets{1, 8, 64, 512};
  double margin = 0.05;           // keep configs within 5 % of a neighbouring anchor's best ...
  double wide_margin = 0.15;      // ... 15 % when the neighbouring anchors' winners differ
  int keep_top = 4;               // and always the fastest few at each neighbour,
  int max_keep = 12;              // but at most this many of those (the closest to a best)
  double value_margin = 0.25;     // the fastest config with each parameter value, within 25 %
  int verify_batches = 3;         // anchors at which every config is verified
  int sibling_groups = 2;         // kernels whose launch-time variants are all kept when widened
  int agreed_sibling_groups = 1;  // ... and when the neighbours agree
};

// params JSON -> its group: configs of one group differ only in launch-time parameters (the same
// compiled kernel; the sweep passes the compile key). Empty: no config has siblings.
using ConfigGroups = std::map<std::string, std::string>;

// Medians (us) of the configs measured at one batch, by canonical params JSON.
struct BatchTimings {
  int batch = 0;
  std::map<std::string, double> median_us;
};

// The anchors among `batches` (sorted, unique): every batch when there are at most two.
std::vector<int> anchor_batches(const std::vector<int>& batches, const SearchPolicy& policy);

// The anchors at which configs are verified (up to policy.verify_batches of them).
std::vector<int> verify_batches(const std::vector<int>& anchors, const SearchPolicy& policy);

// The order a sweep visits the batches in: the verification batches, the other anchors, then the
// rest, each ascending (so a config's failure is known before it is timed unverified).
std::vector<int> search_order(const std::vector<int>& batches, const SearchPolicy& policy);

struct SkippedConfig {
  std::string params_json;
  std::string reason;  // the rule that skipped it, with the numbers it used
};

struct BatchPick {
  std::vector<std::string> measure;  // in the order given
  std::vector<SkippedConfig> skipped;
};

// What to measure at `batch` given the batches measured so far (`done`, any order). `configs` are
// every candidate's params JSON; `anchors` from anchor_batches.
BatchPick pick_configs(int batch, const std::vector<std::string>& configs,
                       const std::string& default_params, const std::vector<int>& anchors,
                       const std::vector<BatchTimings>& done, const SearchPolicy& policy,
                       const ConfigGroups& groups = {});

// What a sweep found at one batch: the medians of the configs it measured, and the configs that
// failed there (wrong result, fault, compile failure: never measured again in this sweep).
struct BatchOutcome {
  BatchTimings timings;
  std::vector<std::string> failed;
};

// Measures `pick.measure` at `batch` (verifying them when `verify`), records `pick.skipped` as
// skipped_by_search, and says what it found.
using MeasureBatch = std::function<BatchOutcome(int batch, const BatchPick& pick, bool verify)>;

struct SearchRun {
  std::vector<int> anchors;   // every batch with --exhaustive
  std::vector<int> verified;  // batches where configs were verified
  int skipped = 0;            // (config, batch) pairs left unmeasured
  double search_s = 0.0;      // time spent deciding (not measuring)
};

// Walks `batches` in search_order, picking at each batch what to measure (pick_configs; every
// config, verified, at every batch when `exhaustive`), and hands each pick to `measure_batch`.
SearchRun run_batch_search(const std::vector<int>& batches, const std::vector<std::string>& configs,
                           const std::string& default_params, const SearchPolicy& policy,
                           bool exhaustive, const MeasureBatch& measure_batch,
                           const ConfigGroups& groups = {});

}  // namespace tuner
