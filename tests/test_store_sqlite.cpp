// The SQLite layer under the tuning store (db/sqlite): a transaction destroyed without commit
// rolls back, a writer killed mid-transaction leaves the committed trials and a sound file, and
// errors quote the call, the code's name, the SQL and the file (the store's rows:
// test_store_records.cpp). Every case works on real SQLite files in a fresh temporary directory.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/store_setup.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trial_rows.hpp"

namespace fs = std::filesystem;
using namespace tuner::db;
using namespace tuner::test::store_setup;

TEST_CASE("store: a transaction destroyed without commit rolls back") {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  {
    Transaction transaction(store.connection());
    store.connection().exec(
        "INSERT INTO runs (host, budget_arch, tuner_version, command_line, kind) "
        "VALUES ('h', 'sm_120', '0.1.0', 'tuner plan', 'plan')");
    CHECK(store.runs().size() == 1);  // visible inside the transaction
  }
  CHECK(store.runs().empty());
  CHECK(store.begin_run(plan_run()) > 0);  // and the connection is usable again
}

TEST_CASE("store: a writer killed mid-transaction leaves the committed trials and a sound file") {
  TempDir dir;
  const fs::path path = dir / "tune.db";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child must never return into doctest: every path ends in _exit or SIGKILL.
    try {
      Store store = Store::open(path);
      const Recorded ids = start_sweep(store);
      store.record_trial(measured_trial(ids.run, ids.problem, kParams, 20.0));
      Transaction in_flight(store.connection());
      TrialRecord second = measured_trial(ids.run, ids.problem, kParams, 18.0);
      second.device_name = "other device";
      Statement insert = store.connection().prepare(
          "INSERT INTO trials (run_id, problem_id, source_hash, stage, budget_arch, "
          "measured_arch, device_name, params_json, fate, reason, median_us) "
          "VALUES (?1, ?2, ?3, 'measure', 'sm_120', 'sm_90', 'other', ?4, 'measured', 'x', 18)");
      insert.bind(1, ids.run).bind(2, ids.problem).bind(3, fixture::kSourceHash).bind(4, kParams);
      insert.run();
      ::kill(::getpid(), SIGKILL);
    } catch (...) {
    }
    ::_exit(3);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  Store store = Store::open(path);
  CHECK(store.integrity_check() == "ok");
  CHECK(store.count_trials({}) == 1);
  CHECK(store.trials({}).front().median_us == 20.0);
}

TEST_CASE("store: SQLite errors quote the call, the code's name, the SQL and the file") {
  TempDir dir;
  const fs::path path = dir / "tune.db";
  Store store = Store::open(path);
  try {
    store.connection().prepare("SELECT nope FROM nowhere");
    FAIL("preparing bad SQL did not throw");
  } catch (const DbError& error) {
    CHECK(std::string(error.what()) ==
          "SQLite error: SQLITE_ERROR (no such table: nowhere): sqlite3_prepare_v2 of `SELECT "
          "nope FROM nowhere` on " +
              path.string());
    CHECK(error.call() == "sqlite3_prepare_v2");
    CHECK(error.sql() == "SELECT nope FROM nowhere");
    CHECK(error.path() == path.string());
    const DbError wrapped = error.with_context("loading winners");
    CHECK(std::string(wrapped.what()).rfind("loading winners: SQLite error: SQLITE_ERROR", 0) == 0);
    CHECK(wrapped.code() == error.code());
  }
  CHECK(sqlite_code_name(2067) == "SQLITE_CONSTRAINT_UNIQUE");
  CHECK(sqlite_code_name(5 | (9 << 8)) == "SQLITE_BUSY_9");
}
