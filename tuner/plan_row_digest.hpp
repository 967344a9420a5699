#pragma once
// What a plan's rows say, as the store records them, in one digest: a warm sweep rerun compares
// it with the one recorded beside the latest plan run (db/store/plan_run.hpp) instead of building
// and comparing ~500 000 rows.
#include <string>

#include "tuner/plan.hpp"

namespace tuner {

// The reason a plan row is recorded with: for compile_failed rows, NVRTC's log after it.
std::string recorded_reason(const PlanRow& row);

// SHA-256 over every row in the plan's order, then every narrowed value with the members it stands
// for: parameters' names and values, fate and recorded reason, which are what db::plan_fate_key
// compares. Rows in another order give another
// digest (the row-by-row check then decides). "sha256:" and 64 hex digits.
std::string plan_row_digest(const PlanResult& plan);

}  // namespace tuner
