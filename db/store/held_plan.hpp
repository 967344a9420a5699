#pragma once
// Whether a plan's fates are held already. A sweep records the plan's fate for every member of the
// cross product (~100 000 rows); a rerun with nothing changed would write the same rows again,
// which took 3.5 s of a 5.7 s warm 51-size sweep on the H200 machine (BENCHMARKS.md section 9).
#include <cstddef>
#include <cstdint>
#include <functional>
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
// Runs body(i) for every i < count, perhaps on several threads: the held rows' keys are a JSON
// parse each (~300,000 rows in a plan), so the tuner passes its parallel_for (db/ has none).
using ForEachIndex =
    std::function<void(std::size_t count, const std::function<void(std::size_t)>& body)>;

// The same with the plan's plan_fate_keys already at hand (the sweep hashes them too), the held
// rows' keys computed through `for_each_index` (empty: in order on this thread).
std::int64_t run_holding_plan(const Store& store, const std::vector<TrialRecord>& plan,
                              const std::vector<std::string>& sorted_keys,
                              const ForEachIndex& for_each_index = {});

}  // namespace tuner::db
