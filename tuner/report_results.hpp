#pragma once
// Internal to tuner report (tuner/report.hpp is the interface): what each batch of a series
// decided, from the store's winner rows or rebuilt from a run's measured trials. Shared by
// report_results.cpp (run_results, winner_results) and report.cpp (build_report).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/store/store.hpp"
#include "tuner/report.hpp"

namespace tuner::report {

// "runs 1 (sweep), 2 (plan)", or "no runs at all".
std::string run_ids_text(const std::vector<db::RunInfo>& runs);

// The run with id `run_id`; InputError naming the runs the store holds when there is none.
db::RunInfo require_run(const db::Store& store, std::int64_t run_id);

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

// The measured trials of one series at one batch.
using BatchTrials = std::map<std::pair<SeriesKey, int>, std::vector<const db::TrialRecord*>>;

BatchTrials group_measured(const std::vector<db::TrialRecord>& trials, Problems& problems);

// The winner row as a result; bytes_moved from its trials when the row has none.
BatchResult from_winner(const db::WinnerRecord& winner, const std::vector<db::RunInfo>& runs,
                        const BatchTrials& trials);

// Per batch: the run's winner rows, and where a later sweep replaced them, results rebuilt from
// `run_trials` with the winner rule.
std::vector<BatchResult> results_of_run(const db::Store& store, const db::RunInfo& run,
                                        const std::optional<std::string>& family,
                                        const std::vector<db::TrialRecord>& run_trials,
                                        Problems& problems);

// Without a run id: the latest measurement of each (problem, params, archs, device), and the
// plan-stage rows of each family's latest run that recorded any.
std::vector<db::TrialRecord> latest_trials(std::vector<db::TrialRecord> trials, Problems& problems);

}  // namespace tuner::report
