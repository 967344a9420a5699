#pragma once
// Reports over a tuning store (`tuner report`, `tuner diff`): per batch the winner against the
// default, the A/B tables of every tuning dimension, the pruning summary and the winners' share
// of the copy bandwidth; and the comparison of two runs for nightly regression checks.
//
// Scope. With a run id: that run's winners and trials. Without: the store's current winners and,
// of the measured trials, the latest per (problem, params, archs, device); of the plan-stage
// trials (recorded again by every plan/sweep run) those of each family's latest run that has any.
// A run whose winners a later sweep replaced (the winners table holds one row per key) has its
// per-batch results rebuilt from its own trials with the store's winner rule (no final re-timing).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/store/store.hpp"

namespace tuner::report {

// What one set of winners and trials is about: a family's shape, tuned for a budget arch and
// timed on a device.
struct SeriesKey {
  std::string family;
  std::string shape;  // canonical text
  std::string budget_arch;
  std::string device_name;

  // clang-tidy 14 flags the 0 the compiler synthesizes for defaulted <=> (llvm-project#53961).
  auto operator<=>(const SeriesKey&) const = default;  // NOLINT(modernize-use-nullptr)
};

// "<family> <canonical shape>; pruned for sm_120, timed on NVIDIA H200"
std::string describe(const SeriesKey& key);
// A file-name-safe name of the series, the same one scripts/plot_report.py gives its PNGs.
std::string series_slug(const SeriesKey& key);
// {"tile_m":32,"num_warps":4} -> "tm32 nw4": each name's initials, then the value.
std::string compact_params(const std::string& params_json);

// The outcome at one batch of one series: what a run decided (or the store holds now).
struct BatchResult {
  SeriesKey key;
  int batch = 0;
  std::string params_json;  // what to run
  double median_us = 0.0;
  std::optional<std::string> default_params_json;
  std::optional<double> default_median_us;  // empty when the default was not measured
  std::optional<double> speedup_vs_default;
  std::optional<db::Decision> decision;  // empty when no default timing to decide against
  std::string reason;
  double noise_rel = db::kNoiseFloorRel;  // the relative noise of this result (>= the floor)
  std::int64_t run_id = 0;
  bool from_winner_row = true;  // false: rebuilt from the run's trials
  std::optional<std::int64_t> bytes_moved;
  std::optional<double> copy_bandwidth_gbs;  // of the run that timed it
  // bytes_moved / median time in GB/s, and that over the copy bandwidth.
  std::optional<double> achieved_gbs;
  std::optional<double> copy_bandwidth_fraction;
};

// One tuning dimension's A/B table: for each batch, the best time at each value relative to the
// best time of all configs at that batch (1.00 = the best; empty = no measured config there).
struct DimensionTable {
  std::string name;
  std::vector<int> values;                                   // ascending
  std::vector<std::vector<std::optional<double>>> relative;  // [batch index][value index]
};

struct SeriesReport {
  SeriesKey key;
  std::vector<BatchResult> results;        // by batch
  std::vector<int> batches;                // batches with measured trials, ascending
  std::vector<double> best_us;             // per batch: the fastest measured config
  std::vector<int> measured_configs;       // per batch: distinct measured configs
  std::vector<DimensionTable> dimensions;  // by name
};

struct FateCount {
  db::Stage stage = db::Stage::plan;
  db::Fate fate = db::Fate::survivor;
  std::int64_t count = 0;
};

struct ReasonCount {
  db::Stage stage = db::Stage::plan;
  db::Fate fate = db::Fate::survivor;
  std::string reason;
  std::int64_t count = 0;
};

struct PruningSummary {
  std::vector<FateCount> fates;      // by stage, then fate order
  std::vector<ReasonCount> reasons;  // by stage, fate, then count descending
  std::int64_t trials = 0;  // configs judged and measured (a narrowed value's row: its members)
};

struct ReportScope {
  std::optional<std::string> family;
  std::optional<std::int64_t> run_id;
};

struct Report {
  std::string db_path;
  ReportScope scope;
  std::vector<db::RunInfo> runs;  // those whose results or trials are in the report
  std::vector<SeriesReport> series;
  PruningSummary pruning;
};

// Throws InputError for an unknown run id (naming the runs the store holds) and when the scope
// holds nothing to report (an empty store, a family with no rows).
Report build_report(const db::Store& store, const ReportScope& scope);
std::string render_markdown(const Report& report);
std::string render_summary(const Report& report);  // a few lines for the terminal

// Per batch and series, what run `run_id` decided: its winner rows, or where a later sweep
// replaced them, the result rebuilt from its measured trials. Throws InputError for an unknown
// run id.
std::vector<BatchResult> run_results(const db::Store& store, std::int64_t run_id,
                                     const std::optional<std::string>& family = std::nullopt);

// Every winner row of the store (all runs): what a merged store (tuner merge) decided.
std::vector<BatchResult> winner_results(const db::Store& store,
                                        const std::optional<std::string>& family = std::nullopt);

enum class DiffVerdict {
  slower_beyond_threshold,  // slower beyond the noise and the threshold: a regression
  slower_within_threshold,  // slower beyond the noise, not beyond the threshold
  faster,                   // faster beyond the noise
  unchanged,                // within the noise
  only_old,
  only_new,
};
const char* to_string(DiffVerdict verdict) noexcept;

struct DiffRow {
  SeriesKey key;
  int batch = 0;
  std::optional<BatchResult> old_result;
  std::optional<BatchResult> new_result;
  double change_rel = 0.0;  // new / old - 1
  double noise_rel = 0.0;   // max of both results' noise
  bool winner_changed = false;
  DiffVerdict verdict = DiffVerdict::unchanged;
};

struct Diff {
  std::vector<DiffRow> rows;  // by series, then batch
  double threshold_rel = 0.03;
  bool regression = false;  // any row slower_beyond_threshold
  int common = 0;           // batches present in both
};

Diff diff_results(const std::vector<BatchResult>& old_results,
                  const std::vector<BatchResult>& new_results, double threshold_rel);
std::string render_diff_table(const Diff& diff);

}  // namespace tuner::report
