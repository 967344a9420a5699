#include "tuner/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/error.hpp"
#include "db/store/winner_rule.hpp"
#include "kernels/registry.hpp"
#include "tuner/shape_text.hpp"

namespace tuner::report {

namespace {

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string run_ids_text(const std::vector<db::RunInfo>& runs) {
  if (runs.empty()) return "no runs at all";
  std::string text = "runs";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    text += (i == 0 ? " " : ", ") + std::to_string(runs[i].id) + " (" +
            db::to_string(runs[i].kind) + ")";
  }
  return text;
}

// The run with id `run_id`; InputError naming the runs the store holds when there is none.
db::RunInfo require_run(const db::Store& store, std::int64_t run_id) {
  for (const db::RunInfo& run : store.runs()) {
    if (run.id == run_id) return run;
  }
  throw InputError("run " + std::to_string(run_id) + " is not in tuning DB " + store.path() +
                   ": it holds " + run_ids_text(store.runs()) + "; pass one of those ids");
}

// Problem rows by id, read once each.
class Problems {
 public:
  explicit Problems(const db::Store& store) : store_(store) {}
  const db::ProblemKey& operator()(std::int64_t id) {
    auto found = cache_.find(id);
    if (found == cache_.end()) found = cache_.emplace(id, store_.problem(id)).first;
    return found->second;
  }

 private:
  const db::Store& store_;
  std::map<std::int64_t, db::ProblemKey> cache_;
};

SeriesKey series_of(const db::ProblemKey& problem, const std::string& budget_arch,
                    const std::string& device_name) {
  return SeriesKey{problem.family, problem.shape, budget_arch, device_name};
}

SeriesKey series_of(const db::WinnerRecord& winner) {
  return SeriesKey{winner.family, winner.shape, winner.budget_arch, winner.device_name};
}

bool is_measured(const db::TrialRecord& trial) {
  return trial.stage == db::Stage::measure && trial.fate == db::Fate::measured && trial.median_us &&
         *trial.median_us > 0 && trial.device_name;
}

db::Timing timing_of(const db::TrialRecord& trial) {
  db::Timing timing;
  timing.median_us = trial.median_us.value_or(0.0);
  timing.p10_us = trial.p10_us.value_or(timing.median_us);
  timing.p90_us = trial.p90_us.value_or(timing.median_us);
  timing.samples = static_cast<int>(trial.samples.value_or(0));
  timing.rel_spread = trial.rel_spread.value_or(0.0);
  return timing;
}

// The measured trials of one series at one batch.
using BatchTrials = std::map<std::pair<SeriesKey, int>, std::vector<const db::TrialRecord*>>;

BatchTrials group_measured(const std::vector<db::TrialRecord>& trials, Problems& problems) {
  BatchTrials grouped;
  for (const db::TrialRecord& trial : trials) {
    if (!is_measured(trial)) continue;
    const db::ProblemKey& problem = problems(trial.problem_id);
    if (!problem.batch || *problem.batch <= 0) continue;
    grouped[{series_of(problem, trial.budget_arch, *trial.device_name), *problem.batch}].push_back(
        &trial);
  }
  return grouped;
}

std::optional<double> copy_bandwidth_of(const std::vector<db::RunInfo>& runs, std::int64_t run_id) {
  for (const db::RunInfo& run : runs) {
    if (run.id == run_id) return run.copy_bandwidth_gbs;
  }
  return std::nullopt;
}

void fill_bandwidth(BatchResult& result) {
  if (!result.bytes_moved || result.median_us <= 0) return;
  // bytes / (us * 1e-6) / 1e9 = GB/s
  result.achieved_gbs = static_cast<double>(*result.bytes_moved) / (result.median_us * 1e3);
  if (result.copy_bandwidth_gbs && *result.copy_bandwidth_gbs > 0) {
    result.copy_bandwidth_fraction = *result.achieved_gbs / *result.copy_bandwidth_gbs;
  }
}

// bytes_moved of `params` in `trials` (it does not depend on which run measured it).
std::optional<std::int64_t> bytes_moved_of(const std::vector<const db::TrialRecord*>& trials,
                                           const std::string& params_json) {
  for (const db::TrialRecord* trial : trials) {
    if (trial->params_json == params_json && trial->bytes_moved) return trial->bytes_moved;
  }
  return std::nullopt;
}

BatchResult from_winner(const db::WinnerRecord& winner, const std::vector<db::RunInfo>& runs,
                        const BatchTrials& trials) {
  BatchResult result;
  result.key = series_of(winner);
  result.batch = winner.batch;
  result.params_json = winner.params_json;
  result.median_us = winner.median_us;
  result.default_params_json = winner.default_params_json;
  result.default_median_us = winner.default_median_us;
  result.speedup_vs_default = winner.speedup_vs_default;
  result.decision = winner.decision;
  result.reason = winner.reason;
  result.noise_rel = std::max(winner.noise_rel, db::kNoiseFloorRel);
  result.run_id = winner.run_id;
  result.from_winner_row = true;
  result.bytes_moved = winner.bytes_moved;
  if (!result.bytes_moved) {
    const auto found = trials.find({result.key, result.batch});
    if (found != trials.end())
      result.bytes_moved = bytes_moved_of(found->second, winner.params_json);
  }
  result.copy_bandwidth_gbs = copy_bandwidth_of(runs, winner.run_id);
  fill_bandwidth(result);
  return result;
}

// The family's default config as the store's winners recorded it (same series first).
std::optional<std::string> default_params_for(const std::vector<db::WinnerRecord>& winners,
                                              const SeriesKey& key) {
  for (const db::WinnerRecord& winner : winners) {
    if (series_of(winner) == key) return winner.default_params_json;
  }
  for (const db::WinnerRecord& winner : winners) {
    if (winner.family == key.family) return winner.default_params_json;
  }
  return std::nullopt;
}

// What the sweep's winner rule decides from one run's trials alone (no final re-timing).
BatchResult rebuilt(const SeriesKey& key, int batch,
                    const std::vector<const db::TrialRecord*>& trials,
                    const std::optional<std::string>& default_params, std::int64_t run_id,
                    std::optional<double> copy_bandwidth_gbs) {
  const db::TrialRecord* best = *std::min_element(
      trials.begin(), trials.end(), [](const db::TrialRecord* a, const db::TrialRecord* b) {
        return *a->median_us < *b->median_us;
      });
  const db::TrialRecord* default_trial = nullptr;
  for (const db::TrialRecord* trial : trials) {
    if (default_params && trial->params_json == *default_params) default_trial = trial;
  }
  BatchResult result;
  result.key = key;
  result.batch = batch;
  result.run_id = run_id;
  result.from_winner_row = false;
  result.default_params_json = default_params;
  result.copy_bandwidth_gbs = copy_bandwidth_gbs;
  const db::TrialRecord* chosen = best;
  result.noise_rel = std::max(best->rel_spread.value_or(0.0), db::kNoiseFloorRel);
  result.reason = "rebuilt from the run's trials: the default was not measured in this run";
  if (default_trial != nullptr) {
    result.default_median_us = *default_trial->median_us;
    try {
      const db::WinnerDecision decision =
          db::decide_winner(timing_of(*best), timing_of(*default_trial));
      chosen = decision.decision == db::Decision::tuned ? best : default_trial;
      result.decision = decision.decision;
      result.speedup_vs_default = decision.speedup_vs_default;
      result.noise_rel = std::max(decision.noise_rel, db::kNoiseFloorRel);
      result.reason = "rebuilt from the run's trials: " + decision.reason;
    } catch (const std::invalid_argument& error) {
      result.reason = std::string("rebuilt from the run's trials; no decision: ") + error.what();
    }
  }
  result.params_json = chosen->params_json;
  result.median_us = *chosen->median_us;
  result.bytes_moved = chosen->bytes_moved;
  fill_bandwidth(result);
  return result;
}

std::vector<BatchResult> results_of_run(const db::Store& store, const db::RunInfo& run,
                                        const std::optional<std::string>& family,
                                        const std::vector<db::TrialRecord>& run_trials,
                                        Problems& problems) {
  const std::vector<db::RunInfo> runs = store.runs();
  db::WinnerFilter all_winners;
  all_winners.family = family;
  const std::vector<db::WinnerRecord> winners = store.winners(all_winners);
  const BatchTrials trials = group_measured(run_trials, problems);
  std::map<std::pair<SeriesKey, int>, BatchResult> results;
  for (const db::WinnerRecord& winner : winners) {
    if (winner.run_id != run.id) continue;
    BatchResult result = from_winner(winner, runs, trials);
    results.emplace(std::make_pair(result.key, result.batch), std::move(result));
  }
  for (const auto& [where, batch_trials] : trials) {
    if (results.contains(where)) continue;
    results.emplace(
        where, rebuilt(where.first, where.second, batch_trials,
                       default_params_for(winners, where.first), run.id, run.copy_bandwidth_gbs));
  }
  std::vector<BatchResult> list;
  list.reserve(results.size());
  for (auto& entry : results) list.push_back(std::move(entry.second));
  return list;
}

// Without a run id: the latest measurement of each (problem, params, archs, device), and the
// plan-stage rows of each family's latest run that recorded any.
std::vector<db::TrialRecord> latest_trials(std::vector<db::TrialRecord> trials,
                                           Problems& problems) {
  std::map<std::tuple<std::int64_t, std::string, std::string, std::string, std::string>,
           std::size_t>
      latest_measure;
  std::map<std::string, std::int64_t> latest_plan_run;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const db::TrialRecord& trial = trials[i];
    if (trial.stage == db::Stage::measure) {
      // Trials come by id, so a later one replaces an earlier one.
      latest_measure[{trial.problem_id, trial.params_json, trial.budget_arch,
                      trial.measured_arch.value_or(""), trial.device_name.value_or("")}] = i;
    } else {
      std::int64_t& run = latest_plan_run[problems(trial.problem_id).family];
      run = std::max(run, trial.run_id);
    }
  }
  std::vector<bool> keep(trials.size(), false);
  for (const auto& entry : latest_measure) keep[entry.second] = true;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const db::TrialRecord& trial = trials[i];
    if (trial.stage == db::Stage::plan) {
      keep[i] = trial.run_id == latest_plan_run[problems(trial.problem_id).family];
    }
  }
  std::vector<db::TrialRecord> kept;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(trials[i]));
  }
  return kept;
}

std::map<std::string, int> parse_params(const std::string& params_json) {
  std::map<std::string, int> params;
  const nlohmann::json object = nlohmann::json::parse(params_json);
  for (auto entry = object.begin(); entry != object.end(); ++entry) {
    params[entry.key()] = entry.value().get<int>();
  }
  return params;
}

std::vector<DimensionTable> dimension_tables(
    const std::vector<int>& batches, const std::vector<double>& best_us,
    const std::vector<std::vector<const db::TrialRecord*>>& trials) {
  std::map<std::string, std::set<int>> values;
  std::vector<std::vector<std::pair<std::map<std::string, int>, double>>> parsed(batches.size());
  for (std::size_t b = 0; b < batches.size(); ++b) {
    for (const db::TrialRecord* trial : trials[b]) {
      parsed[b].emplace_back(parse_params(trial->params_json), *trial->median_us);
      for (const auto& [name, value] : parsed[b].back().first) values[name].insert(value);
    }
  }
  std::vector<DimensionTable> tables;
  for (const auto& [name, value_set] : values) {
    DimensionTable table;
    table.name = name;
    table.values.assign(value_set.begin(), value_set.end());
    for (std::size_t b = 0; b < batches.size(); ++b) {
      std::vector<std::optional<double>> row(table.values.size());
      for (const auto& [params, median_us] : parsed[b]) {
        const auto found = params.find(name);
        if (found == params.end()) continue;
        const std::size_t v =
            std::lower_bound(table.values.begin(), table.values.end(), found->second) -
            table.values.begin();
        const double relative = median_us / best_us[b];
        if (!row[v] || relative < *row[v]) row[v] = relative;
      }
      table.relative.push_back(std::move(row));
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

std::vector<SeriesReport> series_reports(const std::vector<BatchResult>& results,
                                         const BatchTrials& trials) {
  std::map<SeriesKey, SeriesReport> series;
  for (const BatchResult& result : results) {
    SeriesReport& report = series[result.key];
    report.key = result.key;
    report.results.push_back(result);
  }
  std::map<SeriesKey, std::vector<std::vector<const db::TrialRecord*>>> per_batch;
  for (const auto& [where, batch_trials] : trials) {
    SeriesReport& report = series[where.first];
    report.key = where.first;
    report.batches.push_back(where.second);  // BatchTrials is ordered: batches ascend
    double best = std::numeric_limits<double>::infinity();
    std::set<std::string> configs;
    for (const db::TrialRecord* trial : batch_trials) {
      best = std::min(best, *trial->median_us);
      configs.insert(trial->params_json);
    }
    report.best_us.push_back(best);
    report.measured_configs.push_back(static_cast<int>(configs.size()));
    per_batch[where.first].push_back(batch_trials);
  }
  std::vector<SeriesReport> list;
  for (auto& [key, report] : series) {
    std::sort(report.results.begin(), report.results.end(),
              [](const BatchResult& a, const BatchResult& b) { return a.batch < b.batch; });
    report.dimensions = dimension_tables(report.batches, report.best_us, per_batch[key]);
    list.push_back(std::move(report));
  }
  return list;
}

// A batch-search skip names its batch and the config's numbers: the table counts the rule (the
// text after "; kept: ", or a failure at an earlier batch) instead of one row per config.
std::string reason_class(const db::TrialRecord& trial) {
  if (trial.fate != db::Fate::skipped_by_search) return trial.reason;
  const std::size_t kept = trial.reason.find("; kept: ");
  if (kept != std::string::npos) return "not within the search margin" + trial.reason.substr(kept);
  if (trial.reason.find("it failed at batch") != std::string::npos) {
    return "it failed at an earlier batch of the sweep";
  }
  return trial.reason;
}

PruningSummary pruning_summary(const std::vector<db::TrialRecord>& trials) {
  std::map<std::pair<db::Stage, db::Fate>, std::int64_t> fates;
  std::map<std::tuple<db::Stage, db::Fate, std::string>, std::int64_t> reasons;
  for (const db::TrialRecord& trial : trials) {
    ++fates[{trial.stage, trial.fate}];
    ++reasons[{trial.stage, trial.fate, reason_class(trial)}];
  }
  PruningSummary summary;
  summary.trials = static_cast<std::int64_t>(trials.size());
  for (const auto& [what, count] : fates) summary.fates.push_back({what.first, what.second, count});
  for (const auto& [what, count] : reasons) {
    summary.reasons.push_back({std::get<0>(what), std::get<1>(what), std::get<2>(what), count});
  }
  std::stable_sort(summary.reasons.begin(), summary.reasons.end(),
                   [](const ReasonCount& a, const ReasonCount& b) {
                     if (a.stage != b.stage) return a.stage < b.stage;
                     if (a.fate != b.fate) return a.fate < b.fate;
                     return a.count > b.count;
                   });
  return summary;
}

std::string optional_us(const std::optional<double>& value) {
  return value ? fixed(*value, 2) : "-";
}

std::string percent(double fraction) { return fixed(fraction * 100.0, 1) + "%"; }

std::string decision_text(const BatchResult& result) {
  return result.decision ? db::to_string(*result.decision) : "-";
}

// The family's words for the shape when it is a known family (the DB may hold others).
std::string shape_words(const SeriesKey& key) {
  for (const Family* family : families()) {
    if (family->name != key.family) continue;
    try {
      return family->describe_shape(parse_canonical_shape(key.shape)) + " [" + key.shape + "]";
    } catch (const std::exception&) {
      break;  // a shape this build's family cannot read: show the text
    }
  }
  return key.shape;
}

}  // namespace

std::string describe(const SeriesKey& key) {
  return key.family + " " + shape_words(key) + "; pruned for " + key.budget_arch + ", timed on " +
         key.device_name;
}

std::string series_slug(const SeriesKey& key) {
  std::string slug = key.family + "-" + key.shape + "-" + key.budget_arch + "-" + key.device_name;
  for (char& c : slug) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    if (!keep) c = '_';
  }
  return slug;
}

std::string compact_params(const std::string& params_json) {
  std::string text;
  for (const auto& [name, value] : parse_params(params_json)) {
    std::string initials;
    bool start = true;
    for (char c : name) {
      if (start && c != '_') initials += c;
      start = c == '_';
    }
    text += (text.empty() ? "" : " ") + initials + std::to_string(value);
  }
  return text.empty() ? "{}" : text;
}

std::vector<BatchResult> run_results(const db::Store& store, std::int64_t run_id,
                                     const std::optional<std::string>& family) {
  const db::RunInfo run = require_run(store, run_id);
  db::TrialFilter filter;
  filter.run_id = run_id;
  filter.family = family;
  filter.stage = db::Stage::measure;
  Problems problems(store);
  return results_of_run(store, run, family, store.trials(filter), problems);
}

std::vector<BatchResult> winner_results(const db::Store& store,
                                        const std::optional<std::string>& family) {
  Problems problems(store);
  db::TrialFilter filter;
  filter.family = family;
  // group_measured points into `trials`: it lives as long as they are used.
  const std::vector<db::TrialRecord> trials = latest_trials(store.trials(filter), problems);
  const BatchTrials measured = group_measured(trials, problems);
  const std::vector<db::RunInfo> runs = store.runs();
  db::WinnerFilter winner_filter;
  winner_filter.family = family;
  std::vector<BatchResult> results;
  for (const db::WinnerRecord& winner : store.winners(winner_filter)) {
    results.push_back(from_winner(winner, runs, measured));
  }
  return results;
}

Report build_report(const db::Store& store, const ReportScope& scope) {
  Report report;
  report.db_path = store.path();
  report.scope = scope;
  Problems problems(store);
  db::TrialFilter filter;
  filter.family = scope.family;
  std::vector<db::TrialRecord> trials;
  std::vector<BatchResult> results;
  const std::vector<db::RunInfo> runs = store.runs();
  if (scope.run_id) {
    const db::RunInfo run = require_run(store, *scope.run_id);
    filter.run_id = scope.run_id;
    trials = store.trials(filter);
    results = results_of_run(store, run, scope.family, trials, problems);
  } else {
    trials = latest_trials(store.trials(filter), problems);
    const BatchTrials measured = group_measured(trials, problems);
    db::WinnerFilter winner_filter;
    winner_filter.family = scope.family;
    for (const db::WinnerRecord& winner : store.winners(winner_filter)) {
      results.push_back(from_winner(winner, runs, measured));
    }
  }
  const std::string where = "tuning DB " + store.path() +
                            (scope.run_id ? ", run " + std::to_string(*scope.run_id) : "") +
                            (scope.family ? ", family " + *scope.family : "");
  if (trials.empty() && results.empty()) {
    throw InputError(where + " holds no trials and no winners to report: run `tuner sweep --db " +
                     store.path() + "` first, or pick another --run/--family (it holds " +
                     run_ids_text(runs) + ")");
  }
  report.series = series_reports(results, group_measured(trials, problems));
  report.pruning = pruning_summary(trials);
  std::set<std::int64_t> run_ids;
  for (const db::TrialRecord& trial : trials) run_ids.insert(trial.run_id);
  for (const BatchResult& result : results) run_ids.insert(result.run_id);
  for (const db::RunInfo& run : runs) {
    if (run_ids.contains(run.id)) report.runs.push_back(run);
  }
  return report;
}

std::string render_markdown(const Report& report) {
  std::string md = "# Tuning report\n\n";
  md += "DB `" + report.db_path + "`; scope: " +
        (report.scope.run_id ? "run " + std::to_string(*report.scope.run_id)
                             : std::string("all runs (current winners, latest trial per config)")) +
        (report.scope.family ? "; family " + *report.scope.family : std::string()) + ".\n\n";
  md +=
      "## Runs\n\n| run | kind | started | GPU | measured arch | budget arch | copy GB/s | command "
      "|\n";
  md += "|---:|---|---|---|---|---|---:|---|\n";
  for (const db::RunInfo& run : report.runs) {
    md += "| " + std::to_string(run.id) + " | " + db::to_string(run.kind) + " | " + run.started_at +
          " | " + run.gpu_name.value_or("-") + " | " + run.measured_arch.value_or("-") + " | " +
          run.budget_arch + " | " +
          (run.copy_bandwidth_gbs ? fixed(*run.copy_bandwidth_gbs, 0) : "-") + " | `" +
          run.command_line + "` |\n";
  }
  for (const SeriesReport& series : report.series) {
    const std::string slug = series_slug(series.key);
    md += "\n## " + describe(series.key) + "\n\n### Winners\n\n";
    md +=
        "| batch | winner | winner µs | default µs | speedup | decision | run | GB/s | of copy "
        "bandwidth | reason |\n";
    md += "|---:|---|---:|---:|---:|---|---:|---:|---:|---|\n";
    for (const BatchResult& result : series.results) {
      md += "| " + std::to_string(result.batch) + " | `" + compact_params(result.params_json) +
            "` | " + fixed(result.median_us, 2) + " | " + optional_us(result.default_median_us) +
            " | " + (result.speedup_vs_default ? fixed(*result.speedup_vs_default, 2) + "x" : "-") +
            " | " + decision_text(result) + " | " + std::to_string(result.run_id) + " | " +
            (result.achieved_gbs ? fixed(*result.achieved_gbs, 0) : "-") + " | " +
            (result.copy_bandwidth_fraction ? percent(*result.copy_bandwidth_fraction) : "-") +
            " | " + result.reason + " |\n";
    }
    if (!series.results.empty() && series.results.front().default_params_json) {
      md += "\nDefault config: `" + compact_params(*series.results.front().default_params_json) +
            "`.\n";
    }
    md +=
        "\n### Each dimension: best time at each value relative to the best config (1.00 = best)\n";
    for (const DimensionTable& table : series.dimensions) {
      md += "\n**" + table.name + "**\n\n| batch | best µs | configs |";
      for (int value : table.values) md += " " + table.name + "=" + std::to_string(value) + " |";
      md += "\n|---:|---:|---:|";
      for (std::size_t v = 0; v < table.values.size(); ++v) md += "---:|";
      md += "\n";
      for (std::size_t b = 0; b < series.batches.size(); ++b) {
        md += "| " + std::to_string(series.batches[b]) + " | " + fixed(series.best_us[b], 2) +
              " | " + std::to_string(series.measured_configs[b]) + " |";
        for (const std::optional<double>& relative : table.relative[b]) {
          md += ' ';
          md += relative ? fixed(*relative, 2) : std::string("-");
          md += " |";
        }
        md += "\n";
      }
    }
    md += "\n### Plots\n\n![time vs batch](time_vs_batch_";
    md += slug;
    md += ".png)\n\n![relative time per config and batch](heatmap_";
    md += slug;
    md += ".png)\n";
  }
  md += "\n## Pruning and outcomes (" + std::to_string(report.pruning.trials) + " trials)\n\n";
  md += "| stage | fate | count |\n|---|---|---:|\n";
  for (const FateCount& fate : report.pruning.fates) {
    md += std::string("| ") + db::to_string(fate.stage) + " | " + db::to_string(fate.fate) + " | " +
          std::to_string(fate.count) + " |\n";
  }
  md += "\n| stage | fate | reason | count |\n|---|---|---|---:|\n";
  for (const ReasonCount& reason : report.pruning.reasons) {
    md += std::string("| ") + db::to_string(reason.stage) + " | " + db::to_string(reason.fate) +
          " | " + (reason.reason.empty() ? "(none)" : reason.reason) + " | " +
          std::to_string(reason.count) + " |\n";
  }
  return md;
}

std::string render_summary(const Report& report) {
  std::string text =
      "report: " + report.db_path +
      (report.scope.run_id ? ", run " + std::to_string(*report.scope.run_id) : ", all runs") +
      ", " + std::to_string(report.series.size()) + " series, " +
      std::to_string(report.pruning.trials) + " trials\n";
  for (const SeriesReport& series : report.series) {
    text += describe(series.key) + "\n";
    text +=
        "   batch  winner                          winner_us  default_us  speedup  of_copy_bw\n";
    for (const BatchResult& result : series.results) {
      char line[256];
      std::snprintf(
          line, sizeof line, "  %6d  %-30s  %9.2f  %10s  %7s  %10s\n", result.batch,
          compact_params(result.params_json).c_str(), result.median_us,
          optional_us(result.default_median_us).c_str(),
          (result.speedup_vs_default ? fixed(*result.speedup_vs_default, 2) + "x"
                                     : std::string("-"))
              .c_str(),
          result.copy_bandwidth_fraction ? percent(*result.copy_bandwidth_fraction).c_str() : "-");
      text += line;
    }
    // Which value of each dimension is the best, at how many batches: "is 8 warps ever better?"
    for (const DimensionTable& table : series.dimensions) {
      if (table.values.size() < 2) continue;
      text += "  " + table.name + ": best at";
      for (std::size_t v = 0; v < table.values.size(); ++v) {
        int best_at = 0;
        for (const auto& row : table.relative) best_at += row[v] && *row[v] <= 1.0 ? 1 : 0;
        text += ' ';
        text += std::to_string(table.values[v]) + " -> " + std::to_string(best_at) + "/" +
                std::to_string(series.batches.size()) + (v + 1 < table.values.size() ? "," : "");
      }
      text += " batches\n";
    }
  }
  text += "fates:";
  for (const FateCount& fate : report.pruning.fates) {
    text += std::string(" ") + db::to_string(fate.stage) + "/" + db::to_string(fate.fate) + " " +
            std::to_string(fate.count);
  }
  text += "\n";
  return text;
}

const char* to_string(DiffVerdict verdict) noexcept {
  switch (verdict) {
    case DiffVerdict::slower_beyond_threshold:
      return "SLOWER (regression)";
    case DiffVerdict::slower_within_threshold:
      return "slower, within threshold";
    case DiffVerdict::faster:
      return "faster";
    case DiffVerdict::unchanged:
      return "unchanged (within noise)";
    case DiffVerdict::only_old:
      return "only in old run";
    case DiffVerdict::only_new:
      return "only in new run";
  }
  return "?";
}

Diff diff_results(const std::vector<BatchResult>& old_results,
                  const std::vector<BatchResult>& new_results, double threshold_rel) {
  std::map<std::pair<SeriesKey, int>, DiffRow> rows;
  for (const BatchResult& result : old_results) {
    DiffRow& row = rows[{result.key, result.batch}];
    row.key = result.key;
    row.batch = result.batch;
    row.old_result = result;
  }
  for (const BatchResult& result : new_results) {
    DiffRow& row = rows[{result.key, result.batch}];
    row.key = result.key;
    row.batch = result.batch;
    row.new_result = result;
  }
  Diff diff;
  diff.threshold_rel = threshold_rel;
  for (auto& [where, row] : rows) {
    if (!row.new_result) {
      row.verdict = DiffVerdict::only_old;
    } else if (!row.old_result) {
      row.verdict = DiffVerdict::only_new;
    } else {
      ++diff.common;
      row.change_rel = row.new_result->median_us / row.old_result->median_us - 1.0;
      row.noise_rel =
          std::max({row.old_result->noise_rel, row.new_result->noise_rel, db::kNoiseFloorRel});
      row.winner_changed = row.old_result->params_json != row.new_result->params_json;
      if (row.change_rel > row.noise_rel) {
        row.verdict = row.change_rel > threshold_rel ? DiffVerdict::slower_beyond_threshold
                                                     : DiffVerdict::slower_within_threshold;
      } else if (row.change_rel < -row.noise_rel) {
        row.verdict = DiffVerdict::faster;
      } else {
        row.verdict = DiffVerdict::unchanged;
      }
    }
    diff.regression = diff.regression || row.verdict == DiffVerdict::slower_beyond_threshold;
    diff.rows.push_back(std::move(row));
  }
  return diff;
}

std::string render_diff_table(const Diff& diff) {
  std::string text;
  const SeriesKey* current = nullptr;
  for (const DiffRow& row : diff.rows) {
    if (current == nullptr || !(*current == row.key)) {
      current = &row.key;
      text += describe(row.key) + "\n";
      char header[256];
      std::snprintf(header, sizeof header, "  %6s  %-28s %-28s %9s %9s %8s %6s  %s\n", "batch",
                    "old winner", "new winner", "old_us", "new_us", "change", "noise", "verdict");
      text += header;
    }
    const auto params = [](const std::optional<BatchResult>& result) {
      return result ? compact_params(result->params_json) : std::string("-");
    };
    const auto time = [](const std::optional<BatchResult>& result) {
      return result ? fixed(result->median_us, 2) : std::string("-");
    };
    const bool both = row.old_result && row.new_result;
    char line[512];
    std::snprintf(line, sizeof line, "  %6d  %-28s %-28s %9s %9s %8s %6s  %s%s\n", row.batch,
                  params(row.old_result).c_str(), params(row.new_result).c_str(),
                  time(row.old_result).c_str(), time(row.new_result).c_str(),
                  (both ? (row.change_rel >= 0 ? "+" : "") + fixed(row.change_rel * 100.0, 1) + "%"
                        : std::string("-"))
                      .c_str(),
                  both ? percent(row.noise_rel).c_str() : "-", to_string(row.verdict),
                  row.winner_changed ? "; winner changed" : "");
    text += line;
  }
  return text;
}

}  // namespace tuner::report
