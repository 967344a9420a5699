// build_report: a report's series (winners per batch, the A/B table of each tuning dimension)
// and its pruning summary, over the scope's trials and results.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "tuner/report.hpp"
#include "tuner/report_format.hpp"
#include "tuner/report_results.hpp"

namespace tuner::report {

namespace {

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
  PruningSummary summary;
  for (const db::TrialRecord& trial : trials) {
    // A plan row of a value the shape rules out alone counts every member it stands for.
    const std::int64_t members = trial.members.value_or(1);
    fates[{trial.stage, trial.fate}] += members;
    reasons[{trial.stage, trial.fate, reason_class(trial)}] += members;
    summary.trials += members;
  }
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

}  // namespace

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

}  // namespace tuner::report
