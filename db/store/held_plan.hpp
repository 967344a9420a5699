#pragma once
// Whether a plan's fates are held already. A sweep records the plan's fate for every member of the
// cross product (~100 000 rows); a rerun with nothing changed would write the same rows again,
// which took 3.5 s of a 5.7 s warm 51-size sweep on the H200 machine (BENCHMARKS.md section 9).
#include <cstdint>
#include <string>
#include <vector>

#include "db/store/store.hpp"

namespace tuner::db {

// The latest run that recorded plan rows for the problem, source hash and budget arch of `plan`
// (all of its rows share them) when those rows are exactly `plan`'s (the same configs with the
// same fates and reasons, in any order); 0 when there is none or they differ, so that a plan
// that changed in any row is recorded whole under its own run and a report reading the latest
// plan run sees every fate.
std::int64_t run_holding_plan(const Store& store, const std::vector<TrialRecord>& plan);
// The same with the plan's plan_fate_keys already at hand, sorted (the sweep hashes them too):
// the held run's keys come back from the store in that order, so one comparison decides.
std::int64_t run_holding_plan(const Store& store, const std::vector<TrialRecord>& plan,
                              const std::vector<std::string>& sorted_keys);

}  // namespace tuner::db
