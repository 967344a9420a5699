// tuner sweep: one batch. Its picked candidates are measured (screened in the batch search), the
// skipped ones recorded, the finalists timed with the full protocol in interleaved rounds, and
// the winner rule decides between the fastest of them and the default (tuner/finalists.hpp).
#include <algorithm>

#include "tuner/sweep_run.hpp"
#include "tuner/sweep_timing.hpp"

namespace tuner {

using nlohmann::json;

std::optional<db::WinnerRecord> SweepRun::existing_winner(int batch) const {
  db::WinnerFilter filter;
  filter.family = request_.family->name;
  filter.budget_arch = budget_arch_;
  filter.device_name = device_name_;
  const db::ProblemKey key = problem_key(batch);
  for (const db::WinnerRecord& winner : store_->winners(filter)) {
    if (winner.shape == key.shape && winner.batch == batch &&
        winner.source_hash == request_.family->source_hash()) {
      return winner;
    }
  }
  return std::nullopt;
}

// The configs the search left unmeasured at this batch: one skipped_by_search trial each, all in
// one transaction.
void SweepRun::record_skipped(std::int64_t problem_id, int batch,
                              const std::vector<SkippedConfig>& skipped, Progress& progress) {
  std::vector<db::TrialRecord> trials;
  for (const SkippedConfig& config : skipped) {
    const Candidate candidate{config_from_json(config.params_json), false};
    db::TrialRecord trial = trial_base(problem_id, candidate);
    trial.fate = db::Fate::skipped_by_search;
    trial.reason = config.reason;
    trials.push_back(std::move(trial));
    progress.step("batch " + std::to_string(batch) + " " + describe(candidate.config) +
                  ": skipped by the search");
  }
  store_->record_trials(trials);
  summary_.skipped_by_search += static_cast<int>(trials.size());
}

// What the DB holds for a batch done earlier: the medians the search reads at its anchors.
BatchOutcome SweepRun::stored_outcome(std::int64_t problem_id,
                                      const std::vector<Candidate>& candidates) {
  BatchOutcome outcome;
  for (const Candidate& candidate : candidates) {
    const db::TrialRecord trial = trial_base(problem_id, candidate);
    const auto done = store_->find_measured_trial(trial.measure_key());
    if (!done) continue;
    if (done->fate == db::Fate::measured) {
      outcome.timings.median_us[trial.params_json] = done->median_us.value_or(0.0);
    } else {
      outcome.failed.push_back(trial.params_json);
    }
  }
  return outcome;
}

// A batch whose winner an earlier run recorded is not measured again (unless --force).
bool SweepRun::reuse_winner(int batch, std::size_t steps, SweepBatchSummary& batch_summary,
                            Progress& progress) {
  if (request_.force) return false;
  const auto winner = existing_winner(batch);
  if (!winner) return false;
  for (std::size_t i = 0; i < steps; ++i)
    progress.step("batch " + std::to_string(batch) + ": done earlier");
  batch_summary.skipped = true;
  batch_summary.winner_params = winner->params_json;
  batch_summary.winner_us = winner->median_us;
  batch_summary.default_us = winner->default_median_us;
  batch_summary.speedup = winner->speedup_vs_default;
  batch_summary.decision = std::string(db::to_string(winner->decision)) + " (run " +
                           std::to_string(winner->run_id) + ")";
  summary_.batches.push_back(batch_summary);
  return true;
}

BatchOutcome SweepRun::sweep_batch(int batch, const std::vector<Candidate>& candidates,
                                   const std::vector<SkippedConfig>& skipped, bool verify,
                                   Progress& progress,
                                   const std::map<std::string, std::string>& copies) {
  SweepBatchSummary batch_summary;
  batch_summary.batch = batch;
  batch_summary.verified = verify;
  const std::int64_t problem_id = store_->problem_id(problem_key(batch));
  if (reuse_winner(batch, candidates.size() + skipped.size(), batch_summary, progress)) {
    return stored_outcome(problem_id, candidates);
  }
  const std::string default_params = to_json(request_.family->default_config());
  std::vector<Outcome> measured;
  BatchOutcome found;
  for (const Candidate& candidate : candidates) {
    Outcome outcome =
        measure(problem_id, batch, candidate, verify, progress, batch_summary.measured_now);
    outcome.is_default = outcome.params_json == default_params;
    if (outcome.timing) {
      measured.push_back(outcome);
      found.timings.median_us[outcome.params_json] = outcome.timing->median_us;
    } else if (outcome.fate != db::Fate::transient) {
      found.failed.push_back(outcome.params_json);
    }
  }
  record_skipped(problem_id, batch, skipped, progress);
  batch_summary.skipped_by_search = static_cast<int>(skipped.size());
  if (!found.timings.median_us.contains(default_params)) {
    progress.note(
        "sweep: batch " + std::to_string(batch) + ": " +
        (measured.empty() ? "no candidate was measured" : "the default config was not measured") +
        "; no winner recorded");
    batch_summary.decision = "none";
    summary_.batches.push_back(batch_summary);
    return found;
  }
  const bool at_anchor =
      std::binary_search(summary_.anchors.begin(), summary_.anchors.end(), batch);
  Finalists finalists =
      choose_finalists(found.timings.median_us, default_params, screening_, at_anchor,
                       FinalistPolicy{request_.finalists, request_.final_rounds,
                                      request_.finalist_margin, FinalistPolicy{}.default_close});
  add_also_timed(batch, with_copies(found.timings.median_us, copies), copies, finalists, progress);
  const std::map<std::string, Timing> final_timings =
      with_twins(retime(batch, finalists), finalists);
  record_retimes(problem_id, final_timings, finalists);
  batch_summary.finalists = static_cast<int>(finalists.configs.size());
  record_winner(batch, batch_summary, finalists, final_timings, measured);
  summary_.batches.push_back(batch_summary);
  return found;
}

// The configs --also-time names at this batch join the finalists; one with no first pass here
// (it failed, or the search skipped it) is said so and not timed.
void SweepRun::add_also_timed(int batch, const std::map<std::string, double>& screened,
                              const std::map<std::string, std::string>& copies,
                              Finalists& finalists, const Progress& progress) const {
  const auto named = request_.also_time.find(batch);
  if (named == request_.also_time.end()) return;
  for (const std::string& params :
       add_named_finalists(named->second, screened, copies, request_.final_rounds, finalists)) {
    progress.note("sweep: batch " + std::to_string(batch) + ": --also-time names " +
                  describe(config_from_json(params)) +
                  ", which has no first-pass timing here (not a survivor of the plan, failed, "
                  "or skipped by the search): not timed in full");
  }
}

// Times the finalists and the default with the full protocol, side by side in interleaved rounds.
std::map<std::string, Timing> SweepRun::retime(int batch, const Finalists& finalists) {
  std::map<std::string, std::vector<double>> samples;
  std::map<std::string, std::vector<Timing>> passes;
  for (int round = 0; round < request_.final_rounds; ++round) {
    for (const std::string& params : finalists.configs) {
      if (round >= finalists.rounds.at(params)) continue;
      const json answer = measurers_.front()->ask(json{{"op", "measure"},
                                                       {"params", json::parse(params)},
                                                       {"batch", batch},
                                                       {"seed", round},
                                                       {"verify", false},
                                                       {"screen_replays", 0}});
      account(answer);
      ++summary_.full_timings;
      if (answer.value("status", "") != "ok") continue;
      for (const json& sample : answer["samples_us"])
        samples[params].push_back(sample.get<double>());
      passes[params].push_back(timing_from_answer(answer));
    }
  }
  std::map<std::string, Timing> timings;
  for (auto& [params, values] : samples) timings[params] = merge_passes(values, passes[params]);
  return timings;
}

// The finalists' re-timings are trials too (stage retime, the full protocol): what the winner
// rule decided on is kept, not only the winner row it wrote.
void SweepRun::record_retimes(std::int64_t problem_id, const std::map<std::string, Timing>& timings,
                              const Finalists& finalists) {
  for (const auto& [params, timing] : timings) {
    db::TrialRecord trial = trial_base(problem_id, Candidate{config_from_json(params), false});
    trial.stage = db::Stage::retime;
    trial.measure_env = measure_env_;
    trial.fate = db::Fate::measured;
    const auto twin = finalists.twins.find(params);
    const std::string& timed = twin == finalists.twins.end() ? params : twin->second;
    trial.reason = "timing protocol 2 in full, " + std::to_string(finalists.rounds.at(timed)) +
                   " interleaved round(s) with the other finalists and the default; " +
                   finalists.rule;
    if (timed != params) {
      trial.reason = "the same launch as " + describe(config_from_json(timed)) +
                     ": timed in full once, as that config (" + trial.reason + ")";
    }
    set_trial_timing(timing, trial);
    store_->record_trial(trial);
  }
}

void SweepRun::record_winner(int batch, SweepBatchSummary& batch_summary,
                             const Finalists& finalists,
                             const std::map<std::string, Timing>& final_timings,
                             const std::vector<Outcome>& measured) {
  // A screen is a ranking, never compared by the winner rule; a full first pass (--exhaustive)
  // stands in for a finalist whose re-timing failed, as before.
  std::map<std::string, Timing> fallback;
  if (!screening_) {
    for (const Outcome& outcome : measured) fallback[outcome.params_json] = *outcome.timing;
  }
  const std::optional<Fastest> fastest = fastest_finalist(finalists, final_timings, fallback);
  if (!fastest) {
    batch_summary.decision = "none: the default's full-protocol timing failed";
    return;
  }
  const db::WinnerDecision decision =
      db::decide_winner(to_db_timing(fastest->timing), to_db_timing(fastest->default_timing));
  db::WinnerRecord winner;
  const db::ProblemKey key = problem_key(batch);
  winner.family = key.family;
  winner.budget_arch = budget_arch_;
  winner.measured_arch = measured_arch_;
  winner.device_name = device_name_;
  winner.shape = key.shape;
  winner.batch = batch;
  const bool tuned = decision.decision == db::Decision::tuned;
  winner.params_json = tuned ? fastest->params : finalists.configs.front();
  winner.median_us = tuned ? fastest->timing.median_us : fastest->default_timing.median_us;
  winner.default_params_json = finalists.configs.front();
  winner.default_median_us = fastest->default_timing.median_us;
  winner.speedup_vs_default = decision.speedup_vs_default;
  winner.noise_rel = decision.noise_rel;
  winner.decision = decision.decision;
  winner.reason = decision.reason;
  winner.source_hash = request_.family->source_hash();
  winner.run_id = run_id_;
  if (const auto trial = store_->find_measured_trial(
          trial_base(store_->problem_id(key),
                     Candidate{config_from_json(winner.params_json), false})
              .measure_key())) {
    winner.bytes_moved = trial->bytes_moved;
  }
  store_->record_winner(winner);
  batch_summary.winner_params = winner.params_json;
  batch_summary.winner_us = winner.median_us;
  batch_summary.default_us = winner.default_median_us;
  batch_summary.speedup = winner.speedup_vs_default;
  batch_summary.decision = decision.reason;
}

}  // namespace tuner
