// Store schema upgrades (db/store/migrate.cpp): a version 2 store (no per-launch quantiles) is read
// as it is by read-only commands and upgraded in place, rows kept, by the first writing open.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trial_rows.hpp"

namespace fs = std::filesystem;
using namespace tuner::db;

namespace {

// A measured trial of `params` at batch 8 of the fixture's problem, as protocol 1 recorded it.
TrialRecord timed_trial(Store& store, std::int64_t run, const std::string& params) {
  TrialRecord trial = tuner::test::measured_trial(
      run, store.problem_id(ProblemKey{fixture::kFamily, fixture::kShape, 8}), params, 20.0);
  trial.measure_env = "nvrtc 13.0, driver 13000, protocol 1";
  return trial;
}

// A store as schema version 2 wrote it: the current one less the two launch columns and `members`
// (versions 3 and 4 added nothing else), with one measured trial.
void write_version_2_store(const fs::path& path) {
  {
    Store store = Store::open(path);
    const std::int64_t run = store.begin_run(fixture::fixture_run());
    store.add_source(fixture::kSourceHash, fixture::kFamily);
    store.record_trial(timed_trial(store, run, R"({"block_t":32})"));
    store.end_run(run);
  }
  const Connection connection = Connection::open(path, OpenMode::read_write_create);
  connection.exec(
      "ALTER TABLE trials DROP COLUMN members; ALTER TABLE trials DROP COLUMN launch_p90_us; "
      "ALTER TABLE trials DROP COLUMN launch_p10_us; PRAGMA user_version = 2");
}

// A store as schema version 3 wrote it: the current one less `members`, with one measured trial
// and one plan row.
void write_version_3_store(const fs::path& path) {
  {
    Store store = Store::open(path);
    const std::int64_t run = store.begin_run(fixture::fixture_run());
    store.add_source(fixture::kSourceHash, fixture::kFamily);
    store.record_trial(timed_trial(store, run, R"({"block_t":32})"));
    TrialRecord plan_row = timed_trial(store, run, R"({"block_t":16})");
    plan_row.stage = Stage::plan;
    plan_row.fate = Fate::pruned_shape;
    plan_row.reason = "BLOCK_T 16 is too narrow";
    plan_row.median_us = plan_row.p10_us = plan_row.p90_us = std::nullopt;
    store.record_trial(plan_row);
    store.end_run(run);
  }
  Connection::open(path, OpenMode::read_write_create)
      .exec("ALTER TABLE trials DROP COLUMN members; PRAGMA user_version = 3");
}

std::int64_t members_columns(const Connection& connection) {
  return connection.query_int64(
      "SELECT COUNT(*) FROM pragma_table_info('trials') WHERE name = 'members'");
}

std::int64_t launch_columns(const Connection& connection) {
  return connection.query_int64(
      "SELECT COUNT(*) FROM pragma_table_info('trials') WHERE name LIKE 'launch_p_0_us'");
}

}  // namespace

TEST_CASE("store migration: version 2 is read as it is, then upgraded in place with its rows") {
  tuner::test::TempDir dir;
  const fs::path path = dir / "v2.db";
  write_version_2_store(path);
  CHECK(launch_columns(Connection::open(path, OpenMode::read_only)) == 0);
  {
    const Store reader = Store::open_read_only(path);
    const std::vector<TrialRecord> trials =
        reader.trials(TrialFilter{{}, {}, {}, Fate::measured, {}});
    REQUIRE(trials.size() == 1);
    CHECK(trials[0].median_us == 20.0);
    CHECK_FALSE(trials[0].launch_p10_us.has_value());
    CHECK_FALSE(trials[0].launch_p90_us.has_value());
  }
  // Reading did not touch the file.
  CHECK(Connection::open(path, OpenMode::read_only).query_int64("PRAGMA user_version") == 2);

  Store store = Store::open(path);
  CHECK(store.connection().query_int64("PRAGMA user_version") == 4);
  CHECK(launch_columns(store.connection()) == 2);
  CHECK(members_columns(store.connection()) == 1);
  std::vector<TrialRecord> trials = store.trials(TrialFilter{{}, {}, {}, Fate::measured, {}});
  REQUIRE(trials.size() == 1);
  CHECK(trials[0].params_json == R"({"block_t":32})");
  CHECK(trials[0].p90_us == 20.4);
  CHECK_FALSE(trials[0].launch_p10_us.has_value());

  // The upgraded table takes protocol-2 trials with their per-launch quantiles...
  const std::int64_t run = store.begin_run(fixture::fixture_run());
  TrialRecord jittery = timed_trial(store, run, R"({"block_t":64})");
  jittery.launch_p10_us = 18.5;
  jittery.launch_p90_us = 23.0;
  store.record_trial(jittery);
  trials = store.trials(TrialFilter{{}, {}, {}, Fate::measured, {}});
  REQUIRE(trials.size() == 2);
  CHECK(trials[1].launch_p10_us == 18.5);
  CHECK(trials[1].launch_p90_us == 23.0);
  // ...and refuses impossible ones (p90 below p10), as a fresh store does.
  TrialRecord inverted = timed_trial(store, run, R"({"block_t":128})");
  inverted.launch_p10_us = 23.0;
  inverted.launch_p90_us = 18.5;
  CHECK_THROWS_AS(store.record_trial(inverted), DbError);
  CHECK(store.integrity_check() == "ok");
}

TEST_CASE("store migration: version 3 is read as it is, then gains `members` in place") {
  tuner::test::TempDir dir;
  const fs::path path = dir / "v3.db";
  write_version_3_store(path);
  CHECK(members_columns(Connection::open(path, OpenMode::read_only)) == 0);
  {
    const Store reader = Store::open_read_only(path);
    const std::vector<TrialRecord> trials = reader.trials(TrialFilter{});
    REQUIRE(trials.size() == 2);
    CHECK_FALSE(trials[0].members.has_value());
    CHECK_FALSE(trials[1].members.has_value());
  }
  CHECK(Connection::open(path, OpenMode::read_only).query_int64("PRAGMA user_version") == 3);

  Store store = Store::open(path);
  CHECK(store.connection().query_int64("PRAGMA user_version") == 4);
  CHECK(members_columns(store.connection()) == 1);
  REQUIRE(store.trials(TrialFilter{}).size() == 2);  // the rows stayed
  // The upgraded table takes a plan row standing for many configs, and refuses `members` on a
  // measurement or below 1, as a fresh store does.
  const std::int64_t run = store.begin_run(fixture::fixture_run());
  TrialRecord narrowed = timed_trial(store, run, R"({"block_h":64})");
  narrowed.stage = Stage::plan;
  narrowed.fate = Fate::pruned_shape;
  narrowed.reason = "BLOCK_H 64 > 16 local heads";
  narrowed.median_us = narrowed.p10_us = narrowed.p90_us = std::nullopt;
  narrowed.members = 393660;
  store.record_trial(narrowed);
  CHECK(store.trials(TrialFilter{}).back().members == 393660);
  TrialRecord none = narrowed;
  none.members = 0;
  CHECK_THROWS_AS(store.record_trial(none), DbError);
  TrialRecord measured = timed_trial(store, run, R"({"block_t":64})");
  measured.members = 2;
  CHECK_THROWS_AS(store.record_trial(measured), DbError);
  CHECK(store.integrity_check() == "ok");
}

TEST_CASE("store migration: a fresh store has the launch columns and refuses bad quantiles") {
  tuner::test::TempDir dir;
  Store store = Store::open(dir / "fresh.db");
  CHECK(launch_columns(store.connection()) == 2);
  const std::int64_t run = store.begin_run(fixture::fixture_run());
  store.add_source(fixture::kSourceHash, fixture::kFamily);
  TrialRecord zero = timed_trial(store, run, R"({"block_t":32})");
  zero.launch_p10_us = 0.0;  // "not measured" is NULL, never 0
  zero.launch_p90_us = 1.0;
  CHECK_THROWS_AS(store.record_trial(zero), DbError);
}

// The fifth session of 2026-12-01 wrote plan_digests with `fates` before the key column `digest`,
// which SQLite 3.40's integrity_check reports as "NULL value in plan_digests.fates". A writing
// open reorders the table, its rows kept.
TEST_CASE("store migration: plan_digests in the old column order is reordered, its rows kept") {
  tuner::test::TempDir dir;
  const fs::path path = dir / "old_digests.db";
  std::int64_t problem = 0;
  {
    Store store = Store::open(path);
    problem = store.problem_id(ProblemKey{fixture::kFamily, fixture::kShape, std::nullopt});
  }
  {
    const Connection connection = Connection::open(path, OpenMode::read_write_create);
    connection.exec(
        "DROP TABLE plan_digests; CREATE TABLE plan_digests (problem_id INTEGER NOT NULL, "
        "source_hash TEXT NOT NULL, budget_arch TEXT NOT NULL, fates INTEGER NOT NULL, digest "
        "TEXT NOT NULL, PRIMARY KEY (problem_id, source_hash, budget_arch, digest)) WITHOUT "
        "ROWID; INSERT INTO plan_digests VALUES (" +
        std::to_string(problem) + ", 'abc', 'sm_90', 123, 'd1')");
  }
  { Store::open(path); }
  const Connection connection = Connection::open(path, OpenMode::read_only);
  CHECK(connection.query_int64(
            "SELECT cid FROM pragma_table_info('plan_digests') WHERE name = 'fates'") == 4);
  CHECK(connection.query_int64(
            "SELECT COUNT(*) FROM plan_digests WHERE problem_id = " + std::to_string(problem) +
            " AND source_hash = 'abc' AND budget_arch = 'sm_90' AND fates = "
            "123 AND digest = 'd1'") == 1);
  CHECK(connection.query_int64("SELECT COUNT(*) FROM plan_digests") == 1);
  CHECK(connection.query_int64(
            "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'") == 0);
}
