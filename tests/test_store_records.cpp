// What the tuning store (db/store) records and reads back: runs, problems (no batch is not batch
// 1), trials with their resume key and the rules of their stage, winners replaced by a re-sweep,
// and canonical params (opening: test_store_open.cpp; the winner rule: test_winner_rule.cpp;
// resume: test_store_resume.cpp). Every case works on real SQLite files in a fresh temporary
// directory.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/store_setup.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trial_rows.hpp"

using namespace tuner::db;
using namespace tuner::test::store_setup;

TEST_CASE("store: runs are recorded, ended and read back") {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  const std::int64_t sweep = store.begin_run(sweep_run());
  const std::int64_t plan = store.begin_run(plan_run());
  store.end_run(sweep);
  const RunInfo read = store.run(sweep);
  CHECK(read.id == sweep);
  CHECK(read.kind == RunKind::sweep);
  CHECK(read.gpu_name == "NVIDIA H200");
  CHECK(read.measured_arch == "sm_90");
  CHECK(read.budget_arch == "sm_120");
  CHECK(read.copy_bandwidth_gbs == 4300.0);
  CHECK(read.ended_at.has_value());
  CHECK(read.started_at.size() == 24);  // 2026-01-02T03:04:05.678Z
  const RunInfo planned = store.run(plan);
  CHECK(planned.kind == RunKind::plan);
  CHECK_FALSE(planned.measured_arch.has_value());  // a plan without GPU
  CHECK_FALSE(planned.copy_bandwidth_gbs.has_value());
  CHECK_FALSE(planned.ended_at.has_value());
  CHECK(store.runs().size() == 2);
  const std::string unknown =
      "no run with id 42 in " + (dir / "tune.db").string() + ": `tuner report --db` lists the runs";
  CHECK_THROWS_WITH_AS(store.run(42), unknown.c_str(), DbInputError);
  CHECK_THROWS_WITH_AS(store.end_run(42), unknown.c_str(), DbInputError);
}

TEST_CASE("store: problems are created once, no batch is not batch 1") {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  const std::int64_t plan_level = store.problem_id(problem_at(std::nullopt));
  const std::int64_t batch_1 = store.problem_id(problem_at(1));
  CHECK(plan_level != batch_1);
  CHECK(store.problem_id(problem_at(std::nullopt)) == plan_level);
  CHECK(store.problem_id(problem_at(1)) == batch_1);
  CHECK(store.problem(plan_level) == problem_at(std::nullopt));
  CHECK(store.problem(batch_1) == problem_at(1));
  CHECK(store.connection().query_int64("SELECT COUNT(*) FROM problems") == 2);
  CHECK_THROWS_AS(store.problem_id(problem_at(0)), std::invalid_argument);
}

TEST_CASE("store: a recorded measured trial is found by the resume check") {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  const Recorded ids = start_sweep(store);
  // Not canonical on purpose: the store canonicalizes, so the resume key still matches.
  TrialRecord trial = measured_trial(
      ids.run, ids.problem,
      R"({ "target_ctas": 512, "num_warps": 4, "num_stages": 2, "block_t": 32, "block_h": 16 })",
      21.25);
  const std::int64_t id = store.record_trial(trial);

  MeasureKey key = trial.measure_key();
  key.params_json = kParams;
  const std::optional<TrialRecord> found = store.find_measured_trial(key);
  REQUIRE(found.has_value());
  CHECK(found->id == id);
  CHECK(found->params_json == kParams);
  CHECK(found->median_us == 21.25);
  CHECK(found->p90_us == doctest::Approx(21.25 * 1.02));
  CHECK(found->samples == 200);
  CHECK(found->cached == false);
  CHECK(found->occupancy_limiter == "smem");
  CHECK(found->fate == Fate::measured);
  CHECK(found->stage == Stage::measure);
  CHECK(found->err_lse == 2.0e-6);
  CHECK_FALSE(found->created_at.empty());

  SUBCASE("another device is another key") {
    key.device_name = "NVIDIA RTX PRO 6000 Blackwell";
    key.measured_arch = "sm_120";
    CHECK_FALSE(store.find_measured_trial(key).has_value());
  }
  SUBCASE("another kernel source is another key") {
    key.source_hash = "src-other";
    CHECK_FALSE(store.find_measured_trial(key).has_value());
  }
  SUBCASE("another NVRTC, driver or measurement protocol is another key") {
    key.measure_env = "nvrtc 13.1, driver 13010, protocol 1";
    CHECK_FALSE(store.find_measured_trial(key).has_value());
  }
}

TEST_CASE("store: a measured trial cannot be stored twice, --force replaces it") {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  const Recorded ids = start_sweep(store);
  store.record_trial(measured_trial(ids.run, ids.problem, kParams, 21.0));
  const TrialFilter all;

  SUBCASE("duplicate refused") {
    try {
      store.record_trial(measured_trial(ids.run, ids.problem, kParams, 19.0));
      FAIL("a duplicate measured trial was accepted");
    } catch (const DbError& error) {
      CHECK(error.code_name() == "SQLITE_CONSTRAINT_UNIQUE");
      CHECK(std::string(error.what())
                .find("a measured trial with this resume key is already "
                      "stored") == 0);
    }
    // Not even SQL around the API can add one: the schema holds the rule.
    CHECK_THROWS_AS(store.connection().exec(
                        "INSERT INTO trials (run_id, problem_id, source_hash, stage, budget_arch, "
                        "measured_arch, device_name, params_json, fate, reason, median_us) "
                        "SELECT run_id, problem_id, source_hash, stage, budget_arch, "
                        "measured_arch, device_name, params_json, fate, reason, median_us "
                        "FROM trials"),
                    DbError);
    CHECK(store.count_trials(all) == 1);
    CHECK(store.trials(all).front().median_us == 21.0);
  }
  SUBCASE("replace") {
    const std::int64_t id = store.record_trial(measured_trial(ids.run, ids.problem, kParams, 19.0),
                                               OnDuplicate::replace);
    CHECK(store.count_trials(all) == 1);
    const std::vector<TrialRecord> rows = store.trials(all);
    CHECK(rows.front().id == id);
    CHECK(rows.front().median_us == 19.0);
  }
}

TEST_CASE("store: plan-stage fates are recorded again by every plan run") {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  store.add_source(fixture::kSourceHash, fixture::kFamily);
  const std::int64_t problem = store.problem_id(problem_at(std::nullopt));
  for (int i = 0; i < 2; ++i) {
    const std::int64_t run = store.begin_run(plan_run());
    TrialRecord trial;
    trial.run_id = run;
    trial.problem_id = problem;
    trial.source_hash = fixture::kSourceHash;
    trial.budget_arch = "sm_120";
    trial.params_json = R"({"block_t":64,"num_stages":4})";
    trial.fate = Fate::pruned_budget;
    trial.reason = "smem 168960 B > 101376 B per block on sm_120";
    trial.est_smem_bytes = 168960;
    store.record_trial(trial);
  }
  CHECK(store.count_trials({}) == 2);
  TrialFilter second_run;
  second_run.run_id = 2;
  CHECK(store.count_trials(second_run) == 1);
  TrialFilter pruned;
  pruned.fate = Fate::pruned_budget;
  CHECK(store.count_trials(pruned) == 2);
  const std::vector<TrialRecord> rows = store.trials({});
  CHECK_FALSE(rows.front().measured_arch.has_value());
  CHECK_FALSE(rows.front().median_us.has_value());
  CHECK(rows.front().stage == Stage::plan);
}

TEST_CASE("store: trials must be consistent with their stage") {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  const Recorded ids = start_sweep(store);
  TrialRecord trial = measured_trial(ids.run, ids.problem, kParams, 20.0);
  SUBCASE("measured at the plan stage") {
    trial.stage = Stage::plan;
    CHECK_THROWS_AS(store.record_trial(trial), std::invalid_argument);
  }
  SUBCASE("measured without a device") {
    trial.device_name.reset();
    CHECK_THROWS_AS(store.record_trial(trial), std::invalid_argument);
  }
  SUBCASE("params that are not a flat object of integers") {
    trial.params_json = R"({"block_t":32.5})";
    CHECK_THROWS_WITH_AS(store.record_trial(trial),
                         "params_json '{\"block_t\":32.5}' is not a flat JSON object of "
                         "integers (e.g. {\"name_a\":16})",
                         DbInputError);
  }
  SUBCASE("a source never added") {
    trial.source_hash = "src-unknown";
    try {
      store.record_trial(trial);
      FAIL("a trial with an unknown source was accepted");
    } catch (const DbError& error) {
      CHECK(error.code_name() == "SQLITE_CONSTRAINT_FOREIGNKEY");
      CHECK(std::string(error.what()).find("or source src-unknown that") != std::string::npos);
    }
  }
  CHECK(store.count_trials({}) == 0);
}

TEST_CASE("store: a re-sweep replaces the winner of the same key") {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  const std::int64_t run = fixture::write_fixture_winners(store);
  CHECK(store.winners({}).size() == 5);
  WinnerRecord again = fixture::fixture_winner(
      "sm_120", 8, R"({"block_h":16,"block_t":64,"num_stages":2,"num_warps":8,"target_ctas":512})",
      19.5, 23.0, run);
  store.record_winner(again);
  WinnerFilter sm120_only;
  sm120_only.budget_arch = "sm_120";
  const std::vector<WinnerRecord> sm120 = store.winners(sm120_only);
  CHECK(sm120.size() == 4);
  const auto batch_8 =
      std::find_if(sm120.begin(), sm120.end(), [](const WinnerRecord& w) { return w.batch == 8; });
  REQUIRE(batch_8 != sm120.end());
  CHECK(batch_8->median_us == 19.5);
  CHECK(batch_8->params_json ==
        R"({"block_h":16,"block_t":64,"num_stages":2,"num_warps":8,"target_ctas":512})");

  SUBCASE("another device is another winner") {
    again.device_name = "NVIDIA RTX PRO 6000 Blackwell";
    again.measured_arch = "sm_120";
    store.record_winner(again);
    CHECK(store.winners({}).size() == 6);
  }
  SUBCASE("a kept default must run the default config") {
    again.decision = Decision::default_kept;
    CHECK_THROWS_AS(store.record_winner(again), std::invalid_argument);
  }
}

TEST_CASE("store: canonical params are sorted, compact integers") {
  CHECK(canonical_params_json(R"({ "b" : 2, "a" : -1 })") == R"({"a":-1,"b":2})");
  CHECK(canonical_params_json("{}") == "{}");
  for (const char* bad :
       {R"({"a":1.0})", R"({"a":1e3})", R"({"a":"x"})", R"({"a":{"b":1}})", R"({"a":1,"a":2})",
        R"({"a":01})", R"([1,2])", R"({"a":1} x)", R"({"a\"b":1})", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(canonical_params_json(bad), DbInputError);
  }
}
