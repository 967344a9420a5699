#include "tuner/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/cubin_cache.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/measure.hpp"
#include "core/nvrtc.hpp"
#include "core/worker_process.hpp"
#include "db/store/shards.hpp"
#include "db/store/store.hpp"
#include "db/store/winner_rule.hpp"
#include "tuner/batch_set.hpp"
#include "tuner/device_pool.hpp"
#include "tuner/plan.hpp"
#include "tuner/plan_record.hpp"
#include "tuner/retry_policy.hpp"
#include "tuner/run_info.hpp"
#include "tuner/sweep_worker.hpp"

namespace tuner {

namespace {

using nlohmann::json;

constexpr std::chrono::seconds kJobTimeout{180};

// The worker: restarted on demand after it dies.
class Measurer {
 public:
  Measurer(const SweepRequest& request, int device) : request_(request), device_(device) {}

  // The answer, or {"status":"fault","reason":...} when the worker died on this job.
  json ask(const json& job) {
    if (!worker_ || !worker_->running()) start();
    std::string death;
    std::optional<json> answer = worker_->request(job, kJobTimeout, death);
    if (!answer) {
      const bool timed_out = worker_->timed_out();
      worker_.reset();
      return json{{"status", "fault"}, {"reason", death}, {"transient", timed_out}};
    }
    if (answer->value("status", "") == "fault") worker_.reset();  // it exits after a sticky error
    return *answer;
  }

 private:
  // One typed setup message, then the jobs.
  void start() {
    worker_ = std::make_unique<WorkerProcess>(
        std::vector<std::string>{self_executable(), "sweep-worker"});
    WorkerSetup setup;
    setup.family = request_.family->name;
    setup.shape = request_.shape;
    setup.device = device_;
    setup.cache_dir = request_.cache_dir;
    setup.memory_gib = request_.memory_gib;
    setup.min_launches = request_.min_launches;
    std::string death;
    const std::optional<json> answer = worker_->request(to_json(setup), kJobTimeout, death);
    if (!answer || answer->value("status", "") != "ok") {
      throw std::runtime_error("the measuring worker refused its setup: " +
                               (answer ? answer->dump() : death));
    }
  }

  const SweepRequest& request_;
  int device_;
  std::unique_ptr<WorkerProcess> worker_;
};

// Counts steps and hands them to the request's callback.
class Progress {
 public:
  Progress(const SweepRequest& request, int total) : request_(request), total_(total) {}
  void step(const std::string& what) {
    ++done_;
    if (request_.on_progress) request_.on_progress(SweepProgress{done_, total_, what});
  }
  void note(const std::string& what) const {
    if (request_.on_progress) request_.on_progress(SweepProgress{0, total_, what});
  }

 private:
  const SweepRequest& request_;
  int total_;
  int done_ = 0;
};

struct Candidate {
  Config config;
  bool inject_fault = false;
};

struct Outcome {
  db::Fate fate = db::Fate::measured;
  std::optional<Timing> timing;
  std::string params_json;
  bool is_default = false;
};

db::Timing to_db_timing(const Timing& timing) {
  return db::Timing{timing.median_us,
                    timing.p10_us,
                    timing.p90_us,
                    timing.samples,
                    timing.median_us > 0 ? (timing.p90_us - timing.p10_us) / timing.median_us : 0.0,
                    timing.launch_p10_us,
                    timing.launch_p90_us};
}

Timing timing_of(const db::TrialRecord& trial) {
  Timing timing;
  timing.median_us = trial.median_us.value_or(0.0);
  timing.p10_us = trial.p10_us.value_or(0.0);
  timing.p90_us = trial.p90_us.value_or(0.0);
  timing.samples = static_cast<int>(trial.samples.value_or(0));
  timing.launch_p10_us = trial.launch_p10_us.value_or(0.0);
  timing.launch_p90_us = trial.launch_p90_us.value_or(0.0);
  return timing;
}

// Protocol-2 figures of a worker's answer into a trial (per-launch quantiles, 0: not measured).
void add_launch_spread(const Timing& timing, db::TrialRecord& trial) {
  if (timing.launch_p10_us > 0.0) trial.launch_p10_us = timing.launch_p10_us;
  if (timing.launch_p90_us > 0.0) trial.launch_p90_us = timing.launch_p90_us;
}

class Sweep {
 public:
  explicit Sweep(const SweepRequest& request) : request_(request) {}

  SweepSummary run() {
    const auto began = std::chrono::steady_clock::now();
    std::string why_not;
    if (!cuda::gpu_available(&why_not)) {
      throw NoGpuError("tuner sweep needs a GPU to time candidates: " + why_not +
                       ". Without one, `tuner plan --arch sm_120` shows every config's fate.");
    }
    const json info = start_measurers();
    device_name_ = info.at("device_name").get<std::string>();
    measured_arch_ = "sm_" + std::to_string(info.at("arch_sm").get<int>());
    summary_.copy_gbs = info.at("copy_gbs").get<double>();
    summary_.device_name = device_name_;
    // Refused before anything is recorded: no launch count makes a footprint under 4x L2 safe.
    check_memory_covers_l2(request_.memory_gib * static_cast<double>(1LL << 30),
                           info.at("l2_bytes").get<long long>(),
                           "--memory-gib " + json(request_.memory_gib).dump());
    budget_arch_ = request_.budget_arch.value_or(measured_arch_);

    store_ = std::make_unique<db::Store>(db::Store::open(request_.db_path));
    const db::RunInfo run = run_info(info);
    measure_env_ = measure_env(run.nvrtc_version.value_or("?"), run.driver_version.value_or("?"),
                               kMeasureProtocolVersion);
    run_id_ = store_->begin_run(run);
    summary_.run_id = run_id_;
    if (request_.shard.sharded()) {
      db::record_shard(*store_, run_id_, request_.shard.index, request_.shard.count,
                       sweep_work(request_.family->name, request_.shape.canonical(), budget_arch_,
                                  request_.batches));
    }
    const auto plan_began = std::chrono::steady_clock::now();
    const std::vector<Candidate> candidates = plan_candidates();
    summary_.plan_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - plan_began).count();
    // With several GPUs every item is measured first through the pool; the per-batch pass below
    // then finds them in the DB and re-times the finalists on one GPU.
    Progress progress(request_, count_items(candidates) * (measurers_.size() > 1 ? 2 : 1));
    progress.note("sweep: " + std::to_string(candidates.size()) + " candidates x " +
                  std::to_string(request_.batches.size()) + " batches on " + device_name_ + " (" +
                  measured_arch_ + "), budget arch " + budget_arch_ + ", run " +
                  std::to_string(run_id_));
    if (request_.shard.sharded()) {
      for (int batch : request_.batches) sweep_shard_batch(batch, candidates, progress);
    } else {
      if (measurers_.size() > 1) measure_through_pool(candidates, progress);
      run_search(candidates, progress);
    }
    std::sort(
        summary_.batches.begin(), summary_.batches.end(),
        [](const SweepBatchSummary& a, const SweepBatchSummary& b) { return a.batch < b.batch; });
    store_->end_run(run_id_);
    summary_.wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    return summary_;
  }

 private:
  db::RunInfo run_info(const json& info) const {
    db::RunInfo run = base_run_info(db::RunKind::sweep, budget_arch_, request_.command_line);
    run.gpu_name = device_name_;
    run.measured_arch = measured_arch_;
    run.driver_version = std::to_string(info.at("driver_version").get<int>());
    run.copy_bandwidth_gbs = info.at("copy_gbs").get<double>();
    return run;
  }

  // Plans against the budget arch and records every fate; the survivors are the candidates.
  std::vector<Candidate> plan_candidates() {
    PlanRequest plan_request;
    plan_request.family = request_.family;
    plan_request.shape = request_.shape;
    plan_request.arch = plan_arch(budget_arch_, nullptr);
    const PlanResult plan = tuner::plan(plan_request, CubinCache(request_.cache_dir));
    record_plan(*store_, run_id_, plan, *request_.family);
    std::vector<Candidate> candidates;
    const Config default_config = request_.family->default_config();
    bool has_default = false;
    for (const PlanRow& row : plan.rows) {
      if (row.fate != Fate::survivor) continue;
      candidates.push_back(Candidate{row.config, false});
      has_default = has_default || row.config == default_config;
    }
    // The default is always measured: it is what every winner is compared against.
    if (!has_default) candidates.insert(candidates.begin(), Candidate{default_config, false});
    if (request_.inject_fault_candidate) {
      Config faulty = default_config;
      faulty.values.emplace_back("test_fault", 1);
      candidates.push_back(Candidate{faulty, true});
    }
    return candidates;
  }

  db::ProblemKey problem_key(int batch) const {
    return db::ProblemKey{request_.family->name, request_.shape.canonical(), batch};
  }

  std::optional<db::WinnerRecord> existing_winner(int batch) const {
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

  db::TrialRecord trial_base(std::int64_t problem_id, const Candidate& candidate) const {
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
    trial.measure_env = measure_env_;
    return trial;
  }

  struct Attempt {
    json answer;                             // the result, or the retry's failure
    std::optional<json> first_failure;       // when the first attempt failed
    std::optional<FailedFate> failed_twice;  // when the retry failed too
  };

  // Asks once, and once more (in a new worker if the first died) when the first attempt failed:
  // a timeout, an out-of-memory or a fault that does not reproduce is no verdict on the config.
  Attempt ask_with_retry(Measurer& measurer, const json& job) {
    Attempt attempt{measurer.ask(job), std::nullopt, std::nullopt};
    account(attempt.answer);
    if (classify(attempt.answer) == Failure::none) return attempt;
    attempt.first_failure = attempt.answer;
    attempt.answer = measurer.ask(job);
    account(attempt.answer);
    if (classify(attempt.answer) != Failure::none) {
      attempt.failed_twice = failed_twice(*attempt.first_failure, attempt.answer);
    }
    return attempt;
  }

  // The batch search (tuner/batch_search.hpp) decides which candidates each batch measures.
  void run_search(const std::vector<Candidate>& candidates, Progress& progress) {
    std::map<std::string, const Candidate*> by_params;
    std::vector<std::string> params;
    for (const Candidate& candidate : candidates) {
      params.push_back(to_json(candidate.config));
      by_params.emplace(params.back(), &candidate);
    }
    // Several GPUs measure every item through the pool first (the queue has no earlier batches to
    // search from), so the search then keeps them all.
    const bool exhaustive = request_.exhaustive || measurers_.size() > 1;
    summary_.anchors =
        exhaustive ? request_.batches : anchor_batches(request_.batches, request_.search);
    summary_.verify_batches =
        exhaustive ? request_.batches : verify_batches(summary_.anchors, request_.search);
    const SearchRun run = run_batch_search(
        request_.batches, params, to_json(request_.family->default_config()), request_.search,
        exhaustive, [&](int batch, const BatchPick& pick, bool verify) {
          std::vector<Candidate> chosen;
          for (const std::string& p : pick.measure) chosen.push_back(*by_params.at(p));
          return sweep_batch(batch, chosen, pick.skipped, verify, progress);
        });
    summary_.search_s = run.search_s;
  }

  // The configs the search left unmeasured at this batch: one skipped_by_search trial each.
  void record_skipped(std::int64_t problem_id, int batch, const std::vector<SkippedConfig>& skipped,
                      Progress& progress) {
    for (const SkippedConfig& config : skipped) {
      const Candidate candidate{config_from_json(config.params_json), false};
      db::TrialRecord trial = trial_base(problem_id, candidate);
      trial.fate = db::Fate::skipped_by_search;
      trial.reason = config.reason;
      store_->record_trial(trial);
      ++summary_.skipped_by_search;
      progress.step("batch " + std::to_string(batch) + " " + describe(candidate.config) +
                    ": skipped by the search");
    }
  }

  // What the DB holds for a batch done earlier: the medians the search reads at its anchors.
  BatchOutcome stored_outcome(std::int64_t problem_id, const std::vector<Candidate>& candidates) {
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

  // Verifies and times one candidate (or reuses the DB's trial) and records the outcome.
  Outcome measure(std::int64_t problem_id, int batch, const Candidate& candidate, bool verify,
                  Progress& progress, int& measured_now, Measurer* measurer = nullptr) {
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
    const int seed_index = measured_now++;
    writer.unlock();
    const Attempt attempt = ask_with_retry(
        measurer ? *measurer : *measurers_.front(),
        json{{"op", "measure"},
             {"params", json::parse(trial.params_json)},
             {"batch", batch},
             {"seed", 1000003u * static_cast<unsigned>(batch) + static_cast<unsigned>(seed_index)},
             {"verify", verify},
             {"inject_fault", candidate.inject_fault}});
    const json& answer = attempt.answer;
    writer.lock();
    ++summary_.measurements;
    const std::string status = answer.value("status", "error");
    trial.reason = answer.value("reason", std::string());
    if (answer.contains("out_err")) trial.err_out = answer["out_err"].get<double>();
    if (answer.contains("lse_err")) trial.err_lse = answer["lse_err"].get<double>();
    if (status == "ok") {
      Timing timing;
      timing.median_us = answer["median_us"].get<double>();
      timing.p10_us = answer["p10_us"].get<double>();
      timing.p90_us = answer["p90_us"].get<double>();
      timing.samples = answer["samples"].get<int>();
      timing.launch_p10_us = answer.value("launch_p10_us", 0.0);
      timing.launch_p90_us = answer.value("launch_p90_us", 0.0);
      add_launch_spread(timing, trial);
      trial.fate = db::Fate::measured;
      trial.reason = verify ? "verified and timed"
                            : "timed (verified once per shape at batches " +
                                  batch_list_text(summary_.verify_batches) + ")";
      trial.median_us = timing.median_us;
      trial.p10_us = timing.p10_us;
      trial.p90_us = timing.p90_us;
      trial.samples = timing.samples;
      trial.rel_spread = to_db_timing(timing).rel_spread;
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
    char text[160];
    std::snprintf(text, sizeof text, "batch %d %s: %s", batch, describe(candidate.config).c_str(),
                  outcome.timing ? (std::to_string(outcome.timing->median_us) + " us").c_str()
                                 : db::to_string(trial.fate));
    progress.step(text);
    return outcome;
  }

  // Re-times the fastest few and the default side by side, in interleaved rounds.
  std::map<std::string, Timing> retime(int batch, const std::vector<std::string>& finalists) {
    std::map<std::string, std::vector<double>> samples;
    std::map<std::string, std::vector<Timing>> passes;
    for (int round = 0; round < request_.final_rounds; ++round) {
      for (const std::string& params : finalists) {
        const json answer = measurers_.front()->ask(json{{"op", "measure"},
                                                         {"params", json::parse(params)},
                                                         {"batch", batch},
                                                         {"seed", round},
                                                         {"verify", false}});
        account(answer);
        if (answer.value("status", "") != "ok") continue;
        for (const json& sample : answer["samples_us"])
          samples[params].push_back(sample.get<double>());
        Timing pass;
        pass.median_us = answer["median_us"].get<double>();
        pass.launch_p10_us = answer.value("launch_p10_us", 0.0);
        pass.launch_p90_us = answer.value("launch_p90_us", 0.0);
        passes[params].push_back(pass);
      }
    }
    std::map<std::string, Timing> timings;
    for (auto& [params, values] : samples) timings[params] = merge_passes(values, passes[params]);
    return timings;
  }

  // The finalists' re-timings are trials too (stage retime): what the winner rule decided on is
  // kept, not only the winner row it wrote.
  void record_retimes(std::int64_t problem_id, const std::map<std::string, Timing>& timings) {
    for (const auto& [params, timing] : timings) {
      db::TrialRecord trial = trial_base(problem_id, Candidate{config_from_json(params), false});
      trial.stage = db::Stage::retime;
      trial.fate = db::Fate::measured;
      trial.reason = "re-timed in " + std::to_string(request_.final_rounds) +
                     " interleaved rounds with the other finalists and the default";
      trial.median_us = timing.median_us;
      trial.p10_us = timing.p10_us;
      trial.p90_us = timing.p90_us;
      trial.samples = timing.samples;
      trial.rel_spread = to_db_timing(timing).rel_spread;
      add_launch_spread(timing, trial);
      store_->record_trial(trial);
    }
  }

  bool in_my_shard(int batch, const Candidate& candidate) const {
    return in_shard(request_.shard,
                    sweep_item_key(request_.shape.canonical(), batch, to_json(candidate.config)));
  }

  int count_items(const std::vector<Candidate>& candidates) const {
    int items = 0;
    for (int batch : request_.batches) {
      for (const Candidate& candidate : candidates) items += in_my_shard(batch, candidate) ? 1 : 0;
    }
    return items;
  }

  // A shard measures its items and stops there: a winner needs every candidate of the batch,
  // which only tuner merge sees.
  void sweep_shard_batch(int batch, const std::vector<Candidate>& candidates, Progress& progress) {
    const std::int64_t problem_id = store_->problem_id(problem_key(batch));
    SweepBatchSummary batch_summary;
    batch_summary.batch = batch;
    for (const Candidate& candidate : candidates) {
      if (in_my_shard(batch, candidate)) {
        measure(problem_id, batch, candidate, true, progress, batch_summary.measured_now);
      }
    }
    batch_summary.decision = "shard " + request_.shard.text() + ": decided by tuner merge";
    summary_.batches.push_back(batch_summary);
  }

  BatchOutcome sweep_batch(int batch, const std::vector<Candidate>& candidates,
                           const std::vector<SkippedConfig>& skipped, bool verify,
                           Progress& progress) {
    SweepBatchSummary batch_summary;
    batch_summary.batch = batch;
    batch_summary.verified = verify;
    const std::int64_t problem_id = store_->problem_id(problem_key(batch));
    if (!request_.force) {
      if (const auto winner = existing_winner(batch)) {
        for (std::size_t i = 0; i < candidates.size() + skipped.size(); ++i)
          progress.step("batch " + std::to_string(batch) + ": done earlier");
        batch_summary.skipped = true;
        batch_summary.winner_params = winner->params_json;
        batch_summary.winner_us = winner->median_us;
        batch_summary.default_us = winner->default_median_us;
        batch_summary.speedup = winner->speedup_vs_default;
        batch_summary.decision = std::string(db::to_string(winner->decision)) + " (run " +
                                 std::to_string(winner->run_id) + ")";
        summary_.batches.push_back(batch_summary);
        return stored_outcome(problem_id, candidates);
      }
    }
    const std::string default_params = to_json(request_.family->default_config());
    std::vector<Outcome> measured;
    BatchOutcome found;
    int measured_now = 0;
    for (const Candidate& candidate : candidates) {
      Outcome outcome = measure(problem_id, batch, candidate, verify, progress, measured_now);
      outcome.is_default = outcome.params_json == default_params;
      if (outcome.timing) {
        measured.push_back(outcome);
        found.timings.median_us[outcome.params_json] = outcome.timing->median_us;
      } else if (outcome.fate != db::Fate::transient) {
        found.failed.push_back(outcome.params_json);
      }
    }
    record_skipped(problem_id, batch, skipped, progress);
    batch_summary.measured_now = measured_now;
    batch_summary.skipped_by_search = static_cast<int>(skipped.size());
    std::sort(measured.begin(), measured.end(), [](const Outcome& a, const Outcome& b) {
      return a.timing->median_us < b.timing->median_us;
    });
    const bool default_ok = std::any_of(measured.begin(), measured.end(),
                                        [](const Outcome& o) { return o.is_default; });
    if (measured.empty() || !default_ok) {
      progress.note(
          "sweep: batch " + std::to_string(batch) + ": " +
          (measured.empty() ? "no candidate was measured" : "the default config was not measured") +
          "; no winner recorded");
      batch_summary.decision = "none";
      summary_.batches.push_back(batch_summary);
      return found;
    }
    std::vector<std::string> finalists{default_params};
    for (const Outcome& outcome : measured) {
      if (static_cast<int>(finalists.size()) > request_.finalists) break;
      if (outcome.params_json != default_params) finalists.push_back(outcome.params_json);
    }
    const std::map<std::string, Timing> final_timings = retime(batch, finalists);
    record_retimes(problem_id, final_timings);
    record_winner(batch, batch_summary, finalists, final_timings, measured);
    summary_.batches.push_back(batch_summary);
    return found;
  }

  void record_winner(int batch, SweepBatchSummary& batch_summary,
                     const std::vector<std::string>& finalists,
                     const std::map<std::string, Timing>& final_timings,
                     const std::vector<Outcome>& measured) {
    const std::string& default_params = finalists.front();
    auto timing_for = [&](const std::string& params) {
      const auto found = final_timings.find(params);
      if (found != final_timings.end()) return found->second;
      for (const Outcome& outcome : measured) {
        if (outcome.params_json == params) return *outcome.timing;
      }
      return Timing{};
    };
    std::string best_params = default_params;
    Timing best = timing_for(default_params);
    for (const std::string& params : finalists) {
      const Timing timing = timing_for(params);
      if (timing.median_us > 0 && timing.median_us < best.median_us) {
        best = timing;
        best_params = params;
      }
    }
    const Timing default_timing = timing_for(default_params);
    const db::WinnerDecision decision =
        db::decide_winner(to_db_timing(best), to_db_timing(default_timing));
    db::WinnerRecord winner;
    const db::ProblemKey key = problem_key(batch);
    winner.family = key.family;
    winner.budget_arch = budget_arch_;
    winner.measured_arch = measured_arch_;
    winner.device_name = device_name_;
    winner.shape = key.shape;
    winner.batch = batch;
    const bool tuned = decision.decision == db::Decision::tuned;
    winner.params_json = tuned ? best_params : default_params;
    winner.median_us = tuned ? best.median_us : default_timing.median_us;
    winner.default_params_json = default_params;
    winner.default_median_us = default_timing.median_us;
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

  void account(const json& answer) {
    const std::lock_guard<std::mutex> lock(account_mutex_);
    summary_.worker_compile_s += answer.value("load_ms", 0.0) / 1000.0;
    summary_.verify_s += answer.value("verify_ms", 0.0) / 1000.0;
    summary_.timing_s += answer.value("time_ms", 0.0) / 1000.0;
  }

  // One worker per GPU (tuner/device_pool.hpp); the first also re-times the finalists.
  json start_measurers() {
    const std::vector<int> devices =
        request_.devices.empty()
            ? std::vector<int>{request_.device}
            : resolve_devices(parse_devices(request_.devices), cuda::device_count());
    std::vector<std::string> names;
    json first;
    for (int device : devices) {
      measurers_.push_back(std::make_unique<Measurer>(request_, device));
      const json info = measurers_.back()->ask(json{{"op", "info"}});
      if (info.value("status", "") != "ok") {
        throw std::runtime_error("the measuring worker of GPU " + std::to_string(device) +
                                 " could not start: " + info.value("reason", std::string("?")));
      }
      names.push_back(info.at("device_name").get<std::string>());
      if (first.is_null()) first = info;
    }
    require_one_model(devices, names);
    summary_.devices = static_cast<int>(devices.size());
    return first;
  }

  // Every item of every batch still to decide, longest first (the batch size drives a launch's
  // time), measured by whichever GPU's worker is free; trials are written under writer_mutex_.
  void measure_through_pool(const std::vector<Candidate>& candidates, Progress& progress) {
    struct Item {
      int batch;
      const Candidate* candidate;
      std::int64_t problem_id;
    };
    std::vector<Item> items;
    for (int batch : request_.batches) {
      if (!request_.shard.sharded() && !request_.force && existing_winner(batch)) continue;
      const std::int64_t problem_id = store_->problem_id(problem_key(batch));
      for (const Candidate& candidate : candidates) {
        if (in_my_shard(batch, candidate)) items.push_back(Item{batch, &candidate, problem_id});
      }
    }
    std::stable_sort(items.begin(), items.end(),
                     [](const Item& a, const Item& b) { return a.batch > b.batch; });
    std::vector<int> seeds(measurers_.size(), 0);
    run_queue(static_cast<int>(measurers_.size()), items.size(),
              [&](int worker, std::size_t index) {
                const Item& item = items[index];
                measure(item.problem_id, item.batch, *item.candidate, true, progress, seeds[worker],
                        measurers_[worker].get());
              });
    pooled_ = true;  // from here on, what the pool measured is reused, even under --force
  }

  const SweepRequest& request_;
  std::vector<std::unique_ptr<Measurer>> measurers_;
  std::mutex writer_mutex_;   // the store, the summary's counts and the progress
  std::mutex account_mutex_;  // the summary's time split
  bool pooled_ = false;
  std::unique_ptr<db::Store> store_;
  std::int64_t run_id_ = 0;
  std::string device_name_;
  std::string measured_arch_;
  std::string budget_arch_;
  std::string measure_env_;
  SweepSummary summary_;
};

}  // namespace

SweepSummary run_sweep(const SweepRequest& request) { return Sweep(request).run(); }

}  // namespace tuner
