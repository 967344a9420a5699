#pragma once
// Writing a plan into the tuning store: one plan-stage trial per member of the cross product.
#include <cstdint>

#include "db/store/store.hpp"
#include "tuner/plan.hpp"

namespace tuner {

db::ProblemKey plan_problem_key(const PlanResult& plan);

// Records the rows of one plan (one transaction), then their digest (db/store/plan_digest.hpp),
// which lets tuner merge skip them unread in other shards that hold the same plan.
void record_plan_trials(db::Store& store, const std::vector<db::TrialRecord>& trials);

// Records every row of `plan` under `run_id` (the problem is the plan-level one, batch empty).
// The source hash is the family's.
void record_plan(db::Store& store, std::int64_t run_id, const PlanResult& plan,
                 const Family& family);

// As record_plan, unless the latest run that recorded this plan's problem, source and budget arch
// holds exactly these fates (a sweep rerun with nothing changed): then nothing is written.
// Returns the run that holds the plan's fates (`run_id` when they were recorded now).
std::int64_t record_plan_unless_held(db::Store& store, std::int64_t run_id, const PlanResult& plan,
                                     const Family& family);

db::Fate to_db_fate(Fate fate);

}  // namespace tuner
