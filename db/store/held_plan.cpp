#include "db/store/held_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>

#include "db/store/plan_digest.hpp"

namespace tuner::db {

namespace {

std::int64_t latest_plan_run(const Store& store, const TrialRecord& any_row) {
  Statement query = store.connection().prepare(
      "SELECT MAX(run_id) FROM trials WHERE stage = 'plan' AND problem_id = ?1 AND "
      "source_hash = ?2 AND budget_arch = ?3");
  query.bind(1, any_row.problem_id).bind(2, any_row.source_hash).bind(3, any_row.budget_arch);
  if (!query.step() || query.is_null(0)) return 0;
  return query.column_int64(0);
}

// The plan_fate_key of every plan row run `run` holds for `any_row`'s problem, source hash and
// budget arch, in the order they were recorded (the run's index keeps rowid order).
std::vector<std::string> held_keys(const Store& store, const TrialRecord& any_row,
                                   std::int64_t run) {
  Statement rows = store.connection().prepare(
      "SELECT params_json, fate, reason FROM trials WHERE stage = 'plan' AND problem_id = ?1 AND "
      "run_id = ?2 AND source_hash = ?3 AND budget_arch = ?4 ORDER BY rowid");
  rows.bind(1, any_row.problem_id).bind(2, run).bind(3, any_row.source_hash);
  rows.bind(4, any_row.budget_arch);
  std::vector<std::string> keys;
  while (rows.step()) {
    keys.push_back(plan_fate_key(rows.column_text(0), rows.column_text(1), rows.column_text(2)));
  }
  return keys;
}

}  // namespace

std::int64_t run_holding_plan(const Store& store, const std::vector<TrialRecord>& plan) {
  return run_holding_plan(store, plan, plan_fate_keys(plan));
}

std::int64_t run_holding_plan(const Store& store, const std::vector<TrialRecord>& plan,
                              const std::vector<std::string>& sorted_keys,
                              const std::vector<std::string>& row_keys) {
  if (plan.empty()) return 0;
  for (const TrialRecord& row : plan) {
    if (row.stage != Stage::plan || row.problem_id != plan.front().problem_id ||
        row.source_hash != plan.front().source_hash ||
        row.budget_arch != plan.front().budget_arch) {
      throw std::invalid_argument(
          "run_holding_plan: rows of one plan (stage, problem, source, arch)");
    }
  }
  const std::int64_t run = latest_plan_run(store, plan.front());
  if (run == 0) return 0;
  const std::vector<std::string> held = held_keys(store, plan.front(), run);
  if (held.size() != sorted_keys.size()) return 0;
  if (row_keys.size() == held.size() && std::equal(held.begin(), held.end(), row_keys.begin())) {
    return run;  // row by row, in the recorded order (the keys of one plan are distinct)
  }
  // Each held row's key looked up in the plan's (a plan's keys are distinct: one per config), not
  // a second sort of ~300,000 keys: equal counts and every held key found, each once, is equality.
  const std::unordered_set<std::string_view> wanted(sorted_keys.begin(), sorted_keys.end());
  if (wanted.size() != sorted_keys.size()) return 0;  // repeated keys: not one plan's rows
  std::unordered_set<std::string_view> found;
  found.reserve(wanted.size());
  for (const std::string& key : held) {
    const auto match = wanted.find(key);
    if (match == wanted.end() || !found.insert(*match).second) return 0;
  }
  return run;
}

}  // namespace tuner::db
