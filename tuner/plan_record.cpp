#include "tuner/plan_record.hpp"

#include <algorithm>
#include <iterator>

#include "core/hash.hpp"
#include "core/parallel.hpp"
#include "db/store/held_plan.hpp"
#include "db/store/plan_digest.hpp"
#include "db/store/plan_run.hpp"
#include "tuner/plan_row_digest.hpp"

namespace tuner {

db::Fate to_db_fate(Fate fate) {
  switch (fate) {
    case Fate::pruned_shape:
      return db::Fate::pruned_shape;
    case Fate::pruned_budget:
      return db::Fate::pruned_budget;
    case Fate::compile_failed:
      return db::Fate::compile_failed;
    case Fate::pruned_after_compile:
      return db::Fate::pruned_after_compile;
    case Fate::survivor:
      return db::Fate::survivor;
  }
  return db::Fate::survivor;
}

db::ProblemKey plan_problem_key(const PlanResult& plan) {
  return db::ProblemKey{plan.family, plan.shape.canonical(), std::nullopt};
}

namespace {

// The fields every plan row of `plan` shares.
db::TrialRecord plan_trial(db::Store& store, std::int64_t run_id, const PlanResult& plan,
                           const Family& family) {
  db::TrialRecord trial;
  trial.run_id = run_id;
  trial.source_hash = family.source_hash();
  store.add_source(trial.source_hash, plan.family);
  trial.problem_id = store.problem_id(plan_problem_key(plan));
  trial.stage = db::Stage::plan;
  trial.budget_arch = plan.arch.name;
  return trial;
}

// One row per narrowed value, standing for its members.
std::vector<db::TrialRecord> narrowed_trials(const db::TrialRecord& shared,
                                             const PlanResult& plan) {
  std::vector<db::TrialRecord> trials;
  for (const NarrowedValue& value : plan.narrowed) {
    db::TrialRecord& trial = trials.emplace_back(shared);
    trial.params_json = to_json(narrowed_config(value));
    trial.fate = db::Fate::pruned_shape;
    trial.reason = value.reason;
    trial.members = value.members;
  }
  return trials;
}

// The trials of plan.narrowed (when `with_narrowed`), then of plan.rows or of the rows `only`
// marks.
std::vector<db::TrialRecord> plan_trials(db::Store& store, std::int64_t run_id,
                                         const PlanResult& plan, const Family& family,
                                         bool with_narrowed,
                                         const std::vector<bool>* only = nullptr) {
  const db::TrialRecord shared = plan_trial(store, run_id, plan, family);
  std::vector<db::TrialRecord> trials;
  if (with_narrowed) trials = narrowed_trials(shared, plan);
  const std::size_t first = trials.size();
  std::vector<std::size_t> picked;
  for (std::size_t index = 0; index < plan.rows.size(); ++index) {
    if (only == nullptr || (*only)[index]) picked.push_back(index);
  }
  // Rows are independent: a plan has ~400 000 of them, and a warm sweep rerun (< 5 s) spends most
  // of its time here and in their keys (plan_row_keys below).
  trials.resize(first + picked.size(), shared);
  parallel_for(picked.size(), 0, [&](std::size_t index) {
    const PlanRow& row = plan.rows[picked[index]];
    db::TrialRecord& trial = trials[first + index];
    trial.params_json = to_json(row.config);
    // The compile this row's figures come from; none for the ~99.97 % pruned before compiling (a
    // function of params_json all the same), whose keys made the file 22 % larger.
    if (row.compiled) trial.compile_key = compile_key(row.config, family.space());
    trial.fate = to_db_fate(row.fate);
    trial.reason = recorded_reason(row);
    if (row.budget) {
      trial.est_smem_bytes = row.budget->smem_bytes_per_block;
      trial.est_regs = row.budget->registers_per_thread;
    }
    if (row.compiled && row.compiled->succeeded) {
      trial.ptxas_regs = row.compiled->ptxas.registers;
      trial.ptxas_spill_bytes = row.compiled->ptxas.spill_bytes();
      trial.compile_ms = row.compiled->compile_ms;
      trial.cached = row.compiled->cached;
    }
    if (const Occupancy* occupancy = row.shown_occupancy()) {
      trial.blocks_per_sm = occupancy->blocks_per_sm;
      trial.occupancy_limiter = std::string(to_string(occupancy->limiter));
    }
  });
  return trials;
}

// db::plan_fate_key of every row, on every core: the keys' canonical params are a JSON parse per
// row.
std::vector<std::string> sorted_fate_keys(const std::vector<db::TrialRecord>& trials) {
  std::vector<std::string> keys(trials.size());
  parallel_for(trials.size(), 0,
               [&](std::size_t index) { keys[index] = db::plan_fate_key(trials[index]); });
  std::sort(keys.begin(), keys.end());
  return keys;
}

// The same keys for plan_trials' rows, in row order, without the parse: their params are to_json's
// text, already the store's canonical form (tests/test_config_json.cpp checks it), which saves
// 0.35 s of a warm rerun on a 2-core machine.
std::vector<std::string> plan_row_keys(const std::vector<db::TrialRecord>& trials) {
  std::vector<std::string> keys(trials.size());
  parallel_for(trials.size(), 0, [&](std::size_t index) {
    const db::TrialRecord& trial = trials[index];
    keys[index] = db::plan_fate_key(trial.params_json, db::to_string(trial.fate), trial.reason);
  });
  return keys;
}

// The store holds every row of one plan (`sorted_keys` their plan_fate_keys) now: its digest says
// so, for tuner merge.
void record_digest(const db::Store& store, const db::PlanRunKey& key,
                   const std::vector<std::string>& sorted_keys) {
  db::record_plan_digest(
      store, db::PlanDigest{key.problem_id, key.source_hash, key.budget_arch,
                            static_cast<std::int64_t>(sorted_keys.size()),
                            "sha256:" + sha256_hex(db::joined_plan_fate_keys(sorted_keys))});
}

void record_digest(const db::Store& store, const std::vector<db::TrialRecord>& trials,
                   const std::vector<std::string>& sorted_keys) {
  if (trials.empty()) return;
  const db::TrialRecord& any = trials.front();
  record_digest(store, db::PlanRunKey{any.problem_id, any.source_hash, any.budget_arch},
                sorted_keys);
}

// The store's key of a plan of `family` for `shape` against `arch_name` (the source and problem
// added when new).
db::PlanRunKey plan_run_key(db::Store& store, const Family& family, const Shape& shape,
                            const std::string& arch_name) {
  store.add_source(family.source_hash(), family.name);
  return db::PlanRunKey{
      store.problem_id(db::ProblemKey{family.name, shape.canonical(), std::nullopt}),
      family.source_hash(), arch_name};
}

}  // namespace

void record_plan_trials(db::Store& store, const std::vector<db::TrialRecord>& trials) {
  store.record_trials(trials);  // one transaction for the whole plan
  record_digest(store, trials, sorted_fate_keys(trials));
}

// The store's key of `plan`'s rows (the source and problem added when new).
db::PlanRunKey plan_run_key(db::Store& store, const PlanResult& plan, const Family& family) {
  return plan_run_key(store, family, plan.shape, plan.arch.name);
}

void record_plan(db::Store& store, std::int64_t run_id, const PlanResult& plan,
                 const Family& family) {
  record_plan_trials(store, plan_trials(store, run_id, plan, family, true));
  if (plan.recorded_rows() == 0) return;
  db::record_plan_run_digest(store, {run_id, plan_run_key(store, plan, family),
                                     plan.recorded_rows(), plan_row_digest(plan)});
}

std::int64_t record_plan_unless_held(db::Store& store, std::int64_t run_id, const PlanResult& plan,
                                     const Family& family) {
  if (plan.recorded_rows() == 0) return run_id;
  // The fast check: the latest plan run recorded this plan's digest (one row read, no plan rows).
  const db::PlanRunKey key = plan_run_key(store, plan, family);
  const std::int64_t fates = plan.recorded_rows();
  const std::string digest = plan_row_digest(plan);
  if (const std::int64_t holder = db::run_holding_plan_digest(store, key, fates, digest)) {
    return holder;
  }
  // Else row by row: the latest plan run may hold these fates in another order, or predate
  // digests.
  const std::vector<db::TrialRecord> trials = plan_trials(store, run_id, plan, family, true);
  std::vector<std::string> keys = plan_row_keys(trials);  // sorted once: the check, the digest
  std::sort(keys.begin(), keys.end());
  const std::int64_t held_by = db::run_holding_plan(store, trials, keys);
  if (held_by == 0) store.record_trials(trials);  // one transaction for the whole plan
  record_digest(store, trials, keys);             // when held, the rows may predate digests
  const std::int64_t holder = held_by == 0 ? run_id : held_by;
  db::record_plan_run_digest(store, {holder, key, fates, digest});  // after the rows it covers
  return holder;
}

bool plan_never_recorded(db::Store& store, const PlanRequest& request) {
  return db::latest_plan_run(
             store, plan_run_key(store, *request.family, request.shape, request.arch.name)) == 0;
}

EarlyPlanRows record_decided_rows(db::Store& store, std::int64_t run_id, const PlanResult& partial,
                                  const std::vector<bool>& decided, const Family& family) {
  const std::vector<db::TrialRecord> trials =
      plan_trials(store, run_id, partial, family, true, &decided);
  store.record_trials(trials);  // one transaction
  return {decided, plan_row_keys(trials)};
}

void finish_plan_record(db::Store& store, std::int64_t run_id, const PlanResult& plan,
                        const Family& family, EarlyPlanRows early) {
  std::vector<bool> rest(plan.rows.size());
  for (std::size_t i = 0; i < rest.size(); ++i) rest[i] = !early.decided.at(i);
  const std::vector<db::TrialRecord> trials =
      plan_trials(store, run_id, plan, family, false, &rest);
  store.record_trials(trials);
  std::vector<std::string> keys = std::move(early.keys);
  std::vector<std::string> rest_keys = plan_row_keys(trials);
  keys.insert(keys.end(), std::make_move_iterator(rest_keys.begin()),
              std::make_move_iterator(rest_keys.end()));
  std::sort(keys.begin(), keys.end());
  if (plan.recorded_rows() == 0) return;
  const db::PlanRunKey key = plan_run_key(store, plan, family);
  record_digest(store, key, keys);
  db::record_plan_run_digest(store, {run_id, key, plan.recorded_rows(), plan_row_digest(plan)});
}

}  // namespace tuner
