#pragma once
// Writing a plan into the tuning store: one plan-stage trial per member of the cross product.
#include <cstdint>
#include <string>
#include <vector>

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

// A cold plan recorded in two parts, the second after its compiles (PlanRequest::while_compiling):
// first the rows whose fates are final before any compile (nearly all), while the compiles run,
// then the rest and the digests. Only for a plan whose problem, source and budget arch no run
// has recorded yet (a sweep into a new DB, or after the family's source changed): then
// record_plan_unless_held would write every row too; otherwise the plan may be held, which only
// the whole plan can tell.
bool plan_never_recorded(db::Store& store, const PlanRequest& request);

struct EarlyPlanRows {
  std::vector<bool> decided;      // the rows recorded early (PlanRequest::while_compiling's)
  std::vector<std::string> keys;  // their plan_fate_keys, for the plan's digest
};
EarlyPlanRows record_decided_rows(db::Store& store, std::int64_t run_id, const PlanResult& partial,
                                  const std::vector<bool>& decided, const Family& family);
// The other rows of the finished `plan`, then the digests record_plan writes.
void finish_plan_record(db::Store& store, std::int64_t run_id, const PlanResult& plan,
                        const Family& family, EarlyPlanRows early);

db::Fate to_db_fate(Fate fate);

}  // namespace tuner
