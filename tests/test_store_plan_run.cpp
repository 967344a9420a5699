// db::latest_plan_run and db::run_holding_plan_digest: the digest recorded beside a plan run
// stands for its rows only while that run is the latest plan run of its problem, source and budget
// arch; any later plan run, with a digest or without one (an older tuner, tuner merge), takes that
// place. Real SQLite files in a fresh temporary directory.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "db/store/plan_run.hpp"
#include "db/store/store.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/temp_dir.hpp"

using namespace tuner::db;
using tuner::test::TempDir;

namespace {

TrialRecord row(std::int64_t run, std::int64_t problem, Stage stage, const std::string& arch,
                int target) {
  TrialRecord trial;
  trial.run_id = run;
  trial.problem_id = problem;
  trial.source_hash = fixture::kSourceHash;
  trial.stage = stage;
  trial.budget_arch = arch;
  trial.params_json = R"({"block_t":32,"target_ctas":)" + std::to_string(target) + "}";
  trial.compile_key = R"({"block_t":32})";
  trial.fate = Fate::survivor;
  trial.reason = "fits";
  if (stage == Stage::measure) {
    trial.measured_arch = "sm_90";
    trial.device_name = "NVIDIA H200";
    trial.measure_env = "env";
    trial.fate = Fate::measured;
    trial.median_us = 10.0;
  }
  return trial;
}

std::vector<TrialRecord> plan_rows(std::int64_t run, std::int64_t problem,
                                   const std::string& arch) {
  std::vector<TrialRecord> rows;
  for (int target = 1; target <= 12; ++target) {
    rows.push_back(row(run, problem, Stage::plan, arch, target));
  }
  return rows;
}

struct Fresh {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  std::int64_t problem = add_problem(store, fixture::kShape);

  static std::int64_t add_problem(Store& store, const char* shape) {
    store.add_source(fixture::kSourceHash, fixture::kFamily);
    return store.problem_id(ProblemKey{fixture::kFamily, shape, std::nullopt});
  }
  PlanRunKey key(const std::string& arch = "sm_90") const {
    return PlanRunKey{problem, fixture::kSourceHash, arch};
  }
};

}  // namespace

TEST_CASE("plan run: the latest run that recorded plan rows of the key, nothing else") {
  Fresh fresh;
  Store& store = fresh.store;
  CHECK(latest_plan_run(store, fresh.key()) == 0);
  const std::int64_t first = store.begin_run(fixture::fixture_run());
  store.record_trials(plan_rows(first, fresh.problem, "sm_90"));
  const std::int64_t second = store.begin_run(fixture::fixture_run());
  store.record_trials(plan_rows(second, fresh.problem, "sm_120"));  // another budget arch
  const std::int64_t other =
      Fresh::add_problem(store, "kv_format=bf16,local_heads=16,page_size=64,topk=2048");
  store.record_trials(plan_rows(second, other, "sm_90"));                         // another problem
  store.record_trials({row(second, fresh.problem, Stage::measure, "sm_90", 3)});  // not a plan row
  CHECK(latest_plan_run(store, fresh.key()) == first);
  CHECK(latest_plan_run(store, fresh.key("sm_120")) == second);
  CHECK(latest_plan_run(store, PlanRunKey{other, fixture::kSourceHash, "sm_90"}) == second);
  CHECK(latest_plan_run(store, PlanRunKey{fresh.problem, "src-another", "sm_90"}) == 0);
}

TEST_CASE("plan run: a digest holds the plan only as the latest plan run's, with its row count") {
  Fresh fresh;
  Store& store = fresh.store;
  const std::int64_t first = store.begin_run(fixture::fixture_run());
  store.record_trials(plan_rows(first, fresh.problem, "sm_90"));
  CHECK(run_holding_plan_digest(store, fresh.key(), 12, "sha256:aa") == 0);  // no digest yet
  record_plan_run_digest(store, {first, fresh.key(), 12, "sha256:aa"});
  CHECK(run_holding_plan_digest(store, fresh.key(), 12, "sha256:aa") == first);
  CHECK(run_holding_plan_digest(store, fresh.key(), 12, "sha256:ab") == 0);
  CHECK(run_holding_plan_digest(store, fresh.key(), 11, "sha256:aa") == 0);
  CHECK(run_holding_plan_digest(store, fresh.key("sm_120"), 12, "sha256:aa") == 0);

  // A later run records the same key's plan rows without a digest: the first run's digest no
  // longer speaks for the latest plan.
  const std::int64_t second = store.begin_run(fixture::fixture_run());
  store.record_trials(plan_rows(second, fresh.problem, "sm_90"));
  CHECK(run_holding_plan_digest(store, fresh.key(), 12, "sha256:aa") == 0);
  record_plan_run_digest(store, {second, fresh.key(), 12, "sha256:bb"});
  CHECK(run_holding_plan_digest(store, fresh.key(), 12, "sha256:bb") == second);
  CHECK(run_holding_plan_digest(store, fresh.key(), 12, "sha256:aa") == 0);

  // Recorded again for a run (the same rows in another order): the new digest replaces the old.
  record_plan_run_digest(store, {second, fresh.key(), 12, "sha256:cc"});
  CHECK(run_holding_plan_digest(store, fresh.key(), 12, "sha256:cc") == second);
  CHECK(run_holding_plan_digest(store, fresh.key(), 12, "sha256:bb") == 0);
}
