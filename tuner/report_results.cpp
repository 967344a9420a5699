// Per-batch results of a run or of the store's current winners: the winner rows, or, where a
// later sweep replaced a run's winners, results rebuilt from its trials with the winner rule.
#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "core/error.hpp"
#include "db/store/winner_rule.hpp"
#include "tuner/report.hpp"
#include "tuner/report_results.hpp"

namespace tuner::report {

namespace {

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

}  // namespace

std::string run_ids_text(const std::vector<db::RunInfo>& runs) {
  if (runs.empty()) return "no runs at all";
  std::string text = "runs";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    text += (i == 0 ? " " : ", ") + std::to_string(runs[i].id) + " (" +
            db::to_string(runs[i].kind) + ")";
  }
  return text;
}

db::RunInfo require_run(const db::Store& store, std::int64_t run_id) {
  for (const db::RunInfo& run : store.runs()) {
    if (run.id == run_id) return run;
  }
  throw InputError("run " + std::to_string(run_id) + " is not in tuning DB " + store.path() +
                   ": it holds " + run_ids_text(store.runs()) + "; pass one of those ids");
}

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

}  // namespace tuner::report
