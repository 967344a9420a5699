#pragma once
// Timings between the worker's answers, the store's trial rows and the winner rule.
#include <nlohmann/json.hpp>

#include "core/measure.hpp"
#include "db/store/records.hpp"
#include "db/store/winner_rule.hpp"

namespace tuner {

db::Timing to_db_timing(const Timing& timing);

// A stored measured trial's figures.
Timing timing_of(const db::TrialRecord& trial);

// The figures of a worker's "ok" answer to a measure request.
Timing timing_from_answer(const nlohmann::json& answer);

// A timing's figures into a trial (median, quantiles, samples, spread, per-launch quantiles when
// measured: 0 means not measured under timing protocol 2's screen).
void set_trial_timing(const Timing& timing, db::TrialRecord& trial);

}  // namespace tuner
