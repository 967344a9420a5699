// What a resumed sweep trusts (issue 11): transient failures are kept as history but never a
// resume hit; the measurement environment is part of the resume key; a schema-1 store is
// upgraded in place. Also the sweep's retry policy that decides between fault and transient.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "tuner/retry_policy.hpp"

namespace fs = std::filesystem;
using namespace tuner::db;
using nlohmann::json;

namespace {

const std::string kEnv = "nvrtc 13.0, driver 13000, protocol 1";

TrialRecord attempt(std::int64_t run, std::int64_t problem, Fate fate, const std::string& reason) {
  TrialRecord trial;
  trial.run_id = run;
  trial.problem_id = problem;
  trial.source_hash = fixture::kSourceHash;
  trial.stage = Stage::measure;
  trial.budget_arch = "sm_120";
  trial.measured_arch = "sm_90";
  trial.device_name = fixture::kDevice;
  trial.params_json = R"({"block_t":32})";
  trial.fate = fate;
  trial.reason = reason;
  trial.measure_env = kEnv;
  if (fate == Fate::measured) {
    trial.median_us = 20.0;
    trial.p10_us = 19.5;
    trial.p90_us = 21.0;
    trial.samples = 40;
  }
  return trial;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A store with the fixture's run, source and the batch-8 problem.
struct Swept {
  tuner::test::TempDir dir;
  Store store = Store::open(dir / "tune.db");
  std::int64_t run = store.begin_run(fixture::fixture_run());
  std::int64_t problem = [this] {
    store.add_source(fixture::kSourceHash, fixture::kFamily);
    return store.problem_id(ProblemKey{"sparse_mla_decode", fixture::kShape, 8});
  }();
};

}  // namespace

TEST_CASE("resume: a transient failure is history, not a resume hit") {
  Swept swept;
  Store& store = swept.store;
  const std::int64_t run = swept.run;
  const std::int64_t problem = swept.problem;
  const TrialRecord timed_out = attempt(run, problem, Fate::transient, "worker timed out");
  store.record_trial(timed_out);
  CHECK_FALSE(store.find_measured_trial(timed_out.measure_key()).has_value());
  store.record_trial(attempt(run, problem, Fate::transient, "CUDA_ERROR_OUT_OF_MEMORY"));

  // The next sweep measures it; both transient rows stay as the record of what happened.
  store.record_trial(attempt(run, problem, Fate::measured, "verified and timed"));
  const auto found = store.find_measured_trial(timed_out.measure_key());
  REQUIRE(found.has_value());
  CHECK(found->fate == Fate::measured);
  CHECK(found->measure_env == kEnv);
  TrialFilter transients;
  transients.fate = Fate::transient;
  CHECK(store.count_trials(transients) == 2);
  // A fault is a verdict: it is found, and a second one under the same key is refused.
  TrialRecord fault = attempt(run, problem, Fate::fault, "CUDA_ERROR_ILLEGAL_ADDRESS");
  fault.measure_env = "nvrtc 13.0, driver 13000, protocol 2";
  store.record_trial(fault);
  CHECK(store.find_measured_trial(fault.measure_key())->fate == Fate::fault);
  CHECK_THROWS_AS(store.record_trial(fault), DbError);
}

TEST_CASE("resume: a config the batch search skipped is recorded, never a resume hit") {
  Swept swept;
  const TrialRecord skipped =
      attempt(swept.run, swept.problem, Fate::skipped_by_search,
              "skipped by the batch search at batch 8: +12.0% vs the best at anchor 1 (rank 9)");
  swept.store.record_trial(skipped);
  swept.store.record_trial(skipped);  // a second sweep may skip it again: history, not a key
  CHECK_FALSE(swept.store.find_measured_trial(skipped.measure_key()).has_value());
  TrialFilter filter;
  filter.fate = Fate::skipped_by_search;
  CHECK(swept.store.count_trials(filter) == 2);
  // A later sweep (--exhaustive, or another search) measures it under the same key.
  swept.store.record_trial(attempt(swept.run, swept.problem, Fate::measured, "verified and timed"));
  CHECK(swept.store.find_measured_trial(skipped.measure_key())->fate == Fate::measured);
  CHECK(parse_fate("skipped_by_search") == Fate::skipped_by_search);
  // It is a sweep's fate: a plan cannot record it.
  TrialRecord planned = skipped;
  planned.stage = Stage::plan;
  CHECK_THROWS_AS(swept.store.record_trial(planned), std::invalid_argument);
}

TEST_CASE("resume: a schema-2 store is upgraded to 4 in place, keeping its trials") {
  tuner::test::TempDir dir;
  const fs::path path = dir / "v2.db";
  {
    Store store = Store::open(path);
    const std::int64_t run = store.begin_run(fixture::fixture_run());
    store.add_source(fixture::kSourceHash, fixture::kFamily);
    const std::int64_t problem =
        store.problem_id(ProblemKey{"sparse_mla_decode", fixture::kShape, 8});
    store.record_trial(attempt(run, problem, Fate::measured, "verified and timed"));
  }
  // Version 2 as it was written: its resume index (transient excluded) and user_version.
  Connection::open(path, OpenMode::read_write_create)
      .exec(
          "DROP INDEX trials_resume_key_v3; CREATE UNIQUE INDEX trials_resume_key_v2 ON trials "
          "(problem_id, params_json, source_hash, budget_arch, measured_arch, device_name, "
          "measure_env) WHERE stage = 'measure' AND fate <> 'transient'; "
          "PRAGMA user_version = 2");
  const Store upgraded = Store::open(path);
  const Connection& connection = upgraded.connection();
  CHECK(connection.query_int64("PRAGMA user_version") == 4);
  CHECK(connection.query_int64("SELECT COUNT(*) FROM trials WHERE fate = 'measured' AND "
                               "measure_env = '" +
                               kEnv + "'") == 1);
  CHECK(connection.query_int64("SELECT COUNT(*) FROM sqlite_schema WHERE name IN "
                               "('trials_resume_key_v2', 'trials_old')") == 0);
  CHECK(connection.query_int64(
            "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'trials_resume_key_v3'") == 1);
  CHECK(upgraded.integrity_check() == "ok");
}

TEST_CASE("resume: a finalist's re-timing is a trial of its own, never a resume hit") {
  Swept swept;
  Store& store = swept.store;
  const std::int64_t run = swept.run;
  const std::int64_t problem = swept.problem;
  TrialRecord retimed = attempt(run, problem, Fate::measured, "re-timed in 3 rounds");
  retimed.stage = Stage::retime;
  store.record_trial(retimed);
  CHECK_FALSE(store.find_measured_trial(retimed.measure_key()).has_value());
  store.record_trial(attempt(run, problem, Fate::measured, "verified and timed"));
  store.record_trial(retimed);  // the next sweep's re-timing of the same finalist
  TrialFilter retimes;
  retimes.stage = Stage::retime;
  CHECK(store.count_trials(retimes) == 2);
  CHECK(store.find_measured_trial(retimed.measure_key())->stage == Stage::measure);
  TrialRecord wrong = retimed;
  wrong.measured_arch.reset();
  CHECK_THROWS_AS(store.record_trial(wrong), std::invalid_argument);
}

TEST_CASE("resume: a schema-1 store is refused, naming the file, and left unchanged") {
  // Schema 1 keyed problems on the sparse-MLA fields; the shape-text stores refuse it (issue 10's
  // choice, db/README.md) rather than migrate it.
  tuner::test::TempDir dir;
  const fs::path path = dir / "v1.db";
  Connection::open(path, OpenMode::read_write_create)
      .exec(read_text(fs::path(TUNER_SOURCE_DIR) / "tests/data/store_v1.sql"));
  const std::string before = read_text(path);
  try {
    (void)Store::open_read_only(path);
    FAIL("a schema-1 store was opened");
  } catch (const tuner::db::DbInputError& error) {
    CHECK(std::string(error.what()).find(path.string()) != std::string::npos);
  }
  CHECK(read_text(path) == before);
  CHECK(Connection::open(path, OpenMode::read_only).query_int64("PRAGMA user_version") == 1);
}

TEST_CASE("retry policy: timeouts and out-of-memory are transient, other failures faults") {
  using tuner::classify;
  using tuner::Failure;
  const json timeout{{"status", "fault"}, {"reason", "worker timed out"}, {"transient", true}};
  const json oom{{"status", "fault"},
                 {"reason", "cuMemAlloc: out of memory"},
                 {"code", "CUDA_ERROR_OUT_OF_MEMORY"}};
  const json illegal{
      {"status", "fault"}, {"reason", "illegal address"}, {"code", "CUDA_ERROR_ILLEGAL_ADDRESS"}};
  const json died{{"status", "fault"}, {"reason", "worker killed by signal 9"}};
  CHECK(classify(timeout) == Failure::transient);
  CHECK(classify(oom) == Failure::transient);
  CHECK(classify(illegal) == Failure::fault);
  CHECK(classify(died) == Failure::fault);
  CHECK(classify(json{{"status", "error"}}) == Failure::fault);
  for (const char* result : {"ok", "wrong_result", "compile_failed"}) {
    CHECK(classify(json{{"status", result}}) == Failure::none);
  }

  const tuner::FailedFate flaky = tuner::failed_twice(illegal, timeout);
  CHECK(flaky.fate == Fate::transient);
  CHECK(flaky.reason ==
        "transient, retried by the next sweep: worker timed out (first attempt: illegal address)");
  const tuner::FailedFate reproduced = tuner::failed_twice(illegal, illegal);
  CHECK(reproduced.fate == Fate::fault);
  CHECK(reproduced.reason ==
        "reproduced on retry: illegal address (first attempt: illegal "
        "address)");
  CHECK(tuner::recovered_reason("verified and timed (4 splits)", died) ==
        "verified and timed (4 splits); the first attempt failed and did not reproduce (worker "
        "killed by signal 9)");
  CHECK(tuner::measure_env("13.0", "13000", 1) == "nvrtc 13.0, driver 13000, protocol 1");
}
