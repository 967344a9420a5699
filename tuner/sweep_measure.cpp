// tuner sweep: one candidate at one batch, measured (screened or in full) or found in the DB, and
// recorded as a trial with the protocol that timed it.
#include <cstdio>

#include "tuner/batch_set.hpp"
#include "tuner/sweep_run.hpp"
#include "tuner/sweep_timing.hpp"

namespace tuner {

using nlohmann::json;

db::ProblemKey SweepRun::problem_key(int batch) const {
  return db::ProblemKey{request_.family->name, request_.shape.canonical(), batch};
}

db::TrialRecord SweepRun::trial_base(std::int64_t problem_id, const Candidate& candidate) const {
  db::TrialRecord trial;
  trial.run_id = run_id_;
  trial.problem_id = problem_id;
  trial.source_hash = request_.family->source_hash();
  trial.stage = db::Stage::measure;
  trial.budget_arch = budget_arch_;
  trial.measured_arch = measured_arch_;
  trial.device_name = device_name_;
  trial.params_json = to_json(candidate.config);
  trial.compile_key = compile_key(candidate.config, request_.family->space());
  // A screen and a full-protocol timing are different measurements: the resume key tells them
  // apart, so neither is ever read as the other.
  trial.measure_env = screening_
                          ? measure_env_ + ", screen " + std::to_string(request_.screen_replays)
                          : measure_env_;
  return trial;
}

std::string SweepRun::first_pass_reason(bool verify) const {
  std::string reason = verify ? "verified and " : "";
  if (screening_) {
    reason += "screened: 1 warm-up + " + std::to_string(request_.screen_replays) +
              " timed replays of the L2-safe graph, no per-launch quantiles (a ranking; the "
              "winner rule reads only the finalists' full-protocol re-timings)";
  } else {
    reason += "timed in full (timing protocol 2)";
  }
  if (!verify) {
    reason += "; verified once per shape at batches " + batch_list_text(summary_.verify_batches);
  }
  return reason;
}

// Verifies and times one candidate (or reuses the DB's trial) and records the outcome.
Outcome SweepRun::measure(std::int64_t problem_id, int batch, const Candidate& candidate,
                          bool verify, Progress& progress, int& measured_now, Measurer* measurer) {
  db::TrialRecord trial = trial_base(problem_id, candidate);
  Outcome outcome;
  outcome.params_json = trial.params_json;
  std::unique_lock<std::mutex> writer(writer_mutex_);
  if (!request_.force || pooled_) {
    if (const auto done = store_->find_measured_trial(trial.measure_key())) {
      outcome.fate = done->fate;
      if (done->fate == db::Fate::measured) outcome.timing = timing_of(*done);
      progress.step("batch " + std::to_string(batch) + " " + describe(candidate.config) +
                    ": in the DB");
      return outcome;
    }
  }
  ++measured_now;
  writer.unlock();
  // One seed per batch: every config is verified on the same inputs, so the family computes the
  // reference once per batch instead of once per config.
  const Attempt attempt =
      ask_with_retry(measurer ? *measurer : *measurers_.front(),
                     json{{"op", "measure"},
                          {"params", json::parse(trial.params_json)},
                          {"batch", batch},
                          {"seed", 1000003u * static_cast<unsigned>(batch)},
                          {"verify", verify},
                          {"screen_replays", screening_ ? request_.screen_replays : 0},
                          {"inject_fault", candidate.inject_fault}},
                     [this](const json& answer) { account(answer); });
  writer.lock();
  record_answer(attempt.answer, attempt, verify, trial, outcome);
  char text[160];
  std::snprintf(text, sizeof text, "batch %d %s: %s", batch, describe(candidate.config).c_str(),
                outcome.timing ? (std::to_string(outcome.timing->median_us) + " us").c_str()
                               : db::to_string(trial.fate));
  progress.step(text);
  return outcome;
}

// The worker's answer into the trial's fate and figures, the summary's counts, and the store.
void SweepRun::record_answer(const json& answer, const Attempt& attempt, bool verify,
                             db::TrialRecord& trial, Outcome& outcome) {
  ++summary_.measurements;
  summary_.screens += screening_ ? 1 : 0;
  const std::string status = answer.value("status", "error");
  trial.reason = answer.value("reason", std::string());
  if (answer.contains("out_err")) trial.err_out = answer["out_err"].get<double>();
  if (answer.contains("lse_err")) trial.err_lse = answer["lse_err"].get<double>();
  if (status == "ok") {
    const Timing timing = timing_from_answer(answer);
    trial.fate = db::Fate::measured;
    trial.reason = first_pass_reason(verify);
    set_trial_timing(timing, trial);
    trial.bytes_moved = static_cast<std::int64_t>(answer["bytes_moved"].get<double>());
    outcome.timing = timing;
  } else if (status == "wrong_result") {
    trial.fate = db::Fate::wrong_result;
    ++summary_.wrong_results;
  } else if (status == "compile_failed") {
    trial.fate = db::Fate::compile_failed;
  } else {
    trial.fate = attempt.failed_twice->fate;
    trial.reason = attempt.failed_twice->reason;
    ++(trial.fate == db::Fate::fault ? summary_.faults : summary_.transients);
  }
  if (attempt.first_failure && !attempt.failed_twice) {
    trial.reason = recovered_reason(trial.reason, *attempt.first_failure);
  }
  outcome.fate = trial.fate;
  store_->record_trial(trial, request_.force ? db::OnDuplicate::replace : db::OnDuplicate::fail);
}

void SweepRun::account(const json& answer) {
  const std::lock_guard<std::mutex> lock(account_mutex_);
  summary_.worker_compile_s += answer.value("load_ms", 0.0) / 1000.0;
  summary_.verify_s += answer.value("verify_ms", 0.0) / 1000.0;
  const double timing_s = answer.value("time_ms", 0.0) / 1000.0;
  summary_.timing_s += timing_s;
  if (answer.value("protocol", std::string()) == "screen") summary_.screen_s += timing_s;
}

}  // namespace tuner
