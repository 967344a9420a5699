// db::run_holding_plan: a sweep rerun with nothing changed finds its plan's fates held by the
// latest plan run of the same problem, source and budget arch, and records nothing; any change
// (a reason, a fate, a row more or less, another source) records the whole plan again. Real
// SQLite files in a fresh temporary directory.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "db/store/held_plan.hpp"
#include "db/store/plan_digest.hpp"
#include "db/store/store.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/temp_dir.hpp"

using namespace tuner::db;
using tuner::test::TempDir;

namespace {

TrialRecord plan_row(std::int64_t run, std::int64_t problem, int target, Fate fate,
                     const std::string& reason) {
  TrialRecord row;
  row.run_id = run;
  row.problem_id = problem;
  row.source_hash = fixture::kSourceHash;
  row.stage = Stage::plan;
  row.budget_arch = "sm_90";
  row.params_json = R"({"block_t":32,"target_ctas":)" + std::to_string(target) + "}";
  row.compile_key = R"({"block_t":32})";
  row.fate = fate;
  row.reason = reason;
  return row;
}

std::vector<TrialRecord> plan_rows(std::int64_t run, std::int64_t problem) {
  std::vector<TrialRecord> rows;
  for (int target = 1; target <= 40; ++target) {
    const bool kept = target % 3 != 0;
    rows.push_back(plan_row(run, problem, target, kept ? Fate::survivor : Fate::pruned_shape,
                            kept ? "fits" : "BLOCK_H 32 > 16 local heads"));
  }
  return rows;
}

// A fresh store with one run begun and the fixture's source and problem.
struct PlanStore {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  std::int64_t first_run = store.begin_run(fixture::fixture_run());
  std::int64_t problem = add_problem(store);

  static std::int64_t add_problem(Store& store) {
    store.add_source(fixture::kSourceHash, fixture::kFamily);
    return store.problem_id(ProblemKey{"sparse_mla_decode", fixture::kShape, std::nullopt});
  }
};

}  // namespace

TEST_CASE("held plan: the same fates are found under the latest plan run, any change is not") {
  PlanStore fresh;
  Store& store = fresh.store;
  const std::int64_t first = fresh.first_run;
  const std::int64_t problem = fresh.problem;
  CHECK(run_holding_plan(store, plan_rows(first, problem)) == 0);  // nothing recorded yet
  store.record_trials(plan_rows(first, problem));
  const std::int64_t second = store.begin_run(fixture::fixture_run());
  std::vector<TrialRecord> again = plan_rows(second, problem);
  std::reverse(again.begin(), again.end());  // order does not matter
  CHECK(run_holding_plan(store, again) == first);

  std::vector<TrialRecord> reason = plan_rows(second, problem);
  reason[7].reason = "fits, by another rule";
  CHECK(run_holding_plan(store, reason) == 0);
  std::vector<TrialRecord> fate = plan_rows(second, problem);
  fate[4].fate = Fate::pruned_budget;
  CHECK(run_holding_plan(store, fate) == 0);
  std::vector<TrialRecord> fewer = plan_rows(second, problem);
  fewer.pop_back();
  CHECK(run_holding_plan(store, fewer) == 0);
  std::vector<TrialRecord> more = plan_rows(second, problem);
  more.push_back(plan_row(second, problem, 41, Fate::survivor, "fits"));
  CHECK(run_holding_plan(store, more) == 0);
  std::vector<TrialRecord> arch = plan_rows(second, problem);
  for (TrialRecord& row : arch) row.budget_arch = "sm_120";
  CHECK(run_holding_plan(store, arch) == 0);

  // A changed plan recorded under its own run is now the latest: the old fates are not held.
  store.record_trials(reason);
  CHECK(run_holding_plan(store, plan_rows(second + 1, problem)) == 0);
  CHECK(run_holding_plan(store, reason) == second);
}

TEST_CASE("held plan: the sorted keys decide, whatever order the rows came in") {
  PlanStore fresh;
  Store& store = fresh.store;
  const std::int64_t first = fresh.first_run;
  const std::int64_t problem = fresh.problem;
  store.record_trials(plan_rows(first, problem));
  const std::vector<TrialRecord> same = plan_rows(first + 1, problem);
  CHECK(run_holding_plan(store, same, plan_fate_keys(same)) == first);
  std::vector<TrialRecord> backwards = same;  // another order of the same rows: held
  std::reverse(backwards.begin(), backwards.end());
  CHECK(run_holding_plan(store, backwards, plan_fate_keys(backwards)) == first);
  std::vector<TrialRecord> reason = plan_rows(first + 1, problem);
  reason[11].reason = "fits, by another rule";
  CHECK(run_holding_plan(store, reason, plan_fate_keys(reason)) == 0);
  std::vector<TrialRecord> swapped = plan_rows(first + 1, problem);  // two rows' fates traded
  std::swap(swapped[2].fate, swapped[3].fate);
  std::swap(swapped[2].reason, swapped[3].reason);
  CHECK(run_holding_plan(store, swapped, plan_fate_keys(swapped)) == 0);
}
