#pragma once
// Internal to tuner sweep (tuner/sweep.hpp is the interface): the state of one sweep run, its
// member functions split by idea over sweep.cpp (set-up, plan, the search, pool and shards),
// sweep_measure.cpp (one candidate measured and recorded) and sweep_batch.cpp (one batch: its
// finalists in full protocol and its winner).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/store/store.hpp"
#include "tuner/batch_search.hpp"
#include "tuner/finalists.hpp"
#include "tuner/measurer.hpp"
#include "tuner/same_launch.hpp"
#include "tuner/sweep.hpp"

namespace tuner {

// Counts steps and hands them to the request's callback.
class Progress {
 public:
  Progress(const SweepRequest& request, int total) : request_(request), total_(total) {}
  void step(const std::string& what);
  void note(const std::string& what) const;

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

class SweepRun {
 public:
  explicit SweepRun(const SweepRequest& request) : request_(request) {}
  SweepSummary run();

 private:
  // sweep.cpp
  db::RunInfo run_info(const nlohmann::json& info) const;
  void open_store(const nlohmann::json& info);
  std::vector<Candidate> plan_candidates();
  nlohmann::json start_measurers();
  void measure_through_pool(const std::vector<Candidate>& candidates, Progress& progress);
  void run_search(const std::vector<Candidate>& candidates, Progress& progress);
  SameLaunches same_launches(int batch, const std::vector<std::string>& picked,
                             const std::map<std::string, const Candidate*>& by_params) const;
  bool in_my_shard(int batch, const Candidate& candidate) const;
  int count_items(const std::vector<Candidate>& candidates) const;
  void sweep_shard_batch(int batch, const std::vector<Candidate>& candidates, Progress& progress);

  // sweep_measure.cpp
  db::ProblemKey problem_key(int batch) const;
  // The trial row of `candidate` at a problem, under the first pass's protocol (screened or not).
  db::TrialRecord trial_base(std::int64_t problem_id, const Candidate& candidate) const;
  Outcome measure(std::int64_t problem_id, int batch, const Candidate& candidate, bool verify,
                  Progress& progress, int& measured_now, Measurer* measurer = nullptr);
  void record_answer(const nlohmann::json& answer, const Attempt& attempt, bool verify,
                     db::TrialRecord& trial, Outcome& outcome);
  std::string first_pass_reason(bool verify) const;
  void account(const nlohmann::json& answer);

  // sweep_batch.cpp
  std::optional<db::WinnerRecord> existing_winner(int batch) const;
  void record_skipped(std::int64_t problem_id, int batch, const std::vector<SkippedConfig>& skipped,
                      Progress& progress);
  BatchOutcome stored_outcome(std::int64_t problem_id, const std::vector<Candidate>& candidates);
  bool reuse_winner(int batch, std::size_t steps, SweepBatchSummary& batch_summary,
                    Progress& progress);
  // `copies`: configs left unmeasured as the same launch as one measured here (--also-time may
  // name them).
  BatchOutcome sweep_batch(int batch, const std::vector<Candidate>& candidates,
                           const std::vector<SkippedConfig>& skipped, bool verify,
                           Progress& progress,
                           const std::map<std::string, std::string>& copies = {});
  void add_also_timed(int batch, const std::map<std::string, double>& screened,
                      const std::map<std::string, std::string>& copies, Finalists& finalists,
                      const Progress& progress) const;
  std::map<std::string, Timing> retime(int batch, const Finalists& finalists);
  void record_retimes(std::int64_t problem_id, const std::map<std::string, Timing>& timings,
                      const Finalists& finalists);
  void record_winner(int batch, SweepBatchSummary& batch_summary, const Finalists& finalists,
                     const std::map<std::string, Timing>& final_timings,
                     const std::vector<Outcome>& measured);

  const SweepRequest& request_;
  std::vector<std::unique_ptr<Measurer>> measurers_;
  std::mutex writer_mutex_;   // the store, the summary's counts and the progress
  std::mutex account_mutex_;  // the summary's time split
  bool pooled_ = false;
  bool screening_ = false;  // first passes are screens (the batch search on one GPU)
  std::unique_ptr<db::Store> store_;
  std::int64_t run_id_ = 0;
  std::string device_name_;
  std::string measured_arch_;
  std::string budget_arch_;
  std::string measure_env_;  // the full protocol's; screens add ", screen N"
  SweepSummary summary_;
};

}  // namespace tuner
