// The tuning store (db/store): schema, runs, problems, trials and their resume key, winners (the
// winner rule: test_winner_rule.cpp; upgrades: test_store_migrate.cpp). Every case works on real
// SQLite files in a fresh temporary directory.
#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "db/tunedb/format.hpp"
#include "db/tunedb/freeze.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trial_rows.hpp"

namespace fs = std::filesystem;
using namespace tuner::db;

namespace {

using tuner::test::measured_trial;
using tuner::test::TempDir;

RunInfo sweep_run() { return fixture::fixture_run(); }

RunInfo plan_run() {
  RunInfo run;
  run.host = "cpu-box";
  run.budget_arch = "sm_120";
  run.tuner_version = "0.1.0";
  run.command_line = "tuner plan --arch sm_120";
  run.kind = RunKind::plan;
  return run;
}

ProblemKey problem_at(std::optional<int> batch) {
  return ProblemKey{"sparse_mla_decode", fixture::kShape, batch};
}

const std::string kParams =
    R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":512})";

struct Recorded {
  std::int64_t run = 0;
  std::int64_t problem = 0;
};

Recorded start_sweep(Store& store) {
  Recorded ids;
  ids.run = store.begin_run(sweep_run());
  store.add_source(fixture::kSourceHash, fixture::kFamily);
  ids.problem = store.problem_id(problem_at(8));
  return ids;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST_CASE("store: the schema script is idempotent and sets user_version") {
  TempDir dir;
  const fs::path path = dir / "tune.db";
  {
    Store store = Store::open(path);
    CHECK(store.connection().query_int64("PRAGMA user_version") == kSchemaVersion);
    CHECK(store.connection().query_int64("PRAGMA foreign_keys") == 1);
    start_sweep(store);
  }
  Store again = Store::open(path);
  CHECK(again.connection().query_int64("PRAGMA user_version") == 3);
  CHECK(again.connection().query_int64(
            "SELECT COUNT(*) FROM sqlite_schema WHERE name IN ('runs', 'sources', 'problems', "
            "'trials', 'winners', 'trials_resume_key_v3')") == 6);
  CHECK(again.runs().size() == 1);  // the second open kept the data
  CHECK(again.integrity_check() == "ok");
}

TEST_CASE("store: a file with a newer schema version is refused with the versions named") {
  TempDir dir;
  const fs::path path = dir / "future.db";
  Connection::open(path, OpenMode::read_write_create).exec("PRAGMA user_version = 4");
  CHECK_THROWS_WITH_AS(
      Store::open(path),
      (path.string() + " has schema version 4, newer than the version 3 this tuner writes: use "
                       "a newer tuner, or another --db path")
          .c_str(),
      DbInputError);
}

TEST_CASE("store: bad paths and files get errors that name them") {
  TempDir dir;
  SUBCASE("missing directory") {
    const fs::path path = dir / "no/such/dir/tune.db";
    CHECK_THROWS_WITH_AS(
        Store::open(path),
        ("cannot create tuning store " + path.string() + ": directory " +
         (dir / "no/such/dir").string() + " does not exist; create it or pass another --db path")
            .c_str(),
        DbInputError);
  }
  SUBCASE("a directory instead of a file") { CHECK_THROWS_AS(Store::open(dir / ""), DbInputError); }
  SUBCASE("random bytes") {
    const fs::path path = dir / "junk.db";
    write_file(path, std::string(4096, '\x5a'));
    try {
      Store::open(path);
      FAIL("opening random bytes as a store did not throw");
    } catch (const DbError& error) {
      CHECK(error.code_name() == "SQLITE_NOTADB");
      CHECK(std::string(error.what())
                .find("tuning store " + path.string() + " is corrupted or not a SQLite database") ==
            0);
    }
  }
  SUBCASE("another program's SQLite file") {
    const fs::path path = dir / "other.db";
    Connection::open(path, OpenMode::read_write_create).exec("PRAGMA application_id = 42");
    CHECK_THROWS_WITH_AS(Store::open(path),
                         (path.string() + " is not a tuning store (SQLite application_id 42 "
                                          "belongs to another program): pass another --db path")
                             .c_str(),
                         DbInputError);
  }
}

TEST_CASE("store: a frozen DB is never opened for writing") {
  TempDir dir;
  {
    Store store = Store::open(dir / "store.db");
    fixture::write_fixture_winners(store);
  }
  tunedb::freeze(dir / "store.db", dir / "frozen.db", {}, {});
  const auto before = fs::last_write_time(dir / "frozen.db");
  CHECK_THROWS_WITH_AS(
      Store::open(dir / "frozen.db"),
      ((dir / "frozen.db").string() + " is a frozen tuning DB and is never written again: "
                                      "record into the tuning store and freeze it anew")
          .c_str(),
      DbInputError);
  CHECK(fs::last_write_time(dir / "frozen.db") == before);
  CHECK_FALSE(fs::exists(dir / "frozen.db-wal"));
  // With its header turned into a store's, the metadata row still refuses the write.
  fs::copy_file(dir / "frozen.db", dir / "unmarked.db");
  Connection::open(dir / "unmarked.db", OpenMode::read_write_create)
      .exec("PRAGMA application_id = " + std::to_string(tunedb::kApplicationId));
  CHECK_THROWS_WITH_AS(Store::open(dir / "unmarked.db"),
                       ((dir / "unmarked.db").string() +
                        " is a frozen tuning DB (metadata frozen=1) and is never written again: "
                        "record into the tuning store and freeze it anew")
                           .c_str(),
                       DbInputError);
}

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
                         "integers (e.g. {\"block_t\":16})",
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

TEST_CASE("store: a read-only open never changes the file and refuses writes") {
  TempDir dir;
  const fs::path path = dir / "tuning.db";
  {
    Store store = Store::open(path);
    const Recorded ids = start_sweep(store);
    store.record_trial(measured_trial(ids.run, ids.problem, kParams, 10.0));
  }
  auto bytes_of = [](const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string before = bytes_of(path);
  {
    Store store = Store::open_read_only(path);
    CHECK(store.runs().size() == 1);
    CHECK(store.count_trials() == 1);
    CHECK_THROWS_AS(store.begin_run(sweep_run()), DbError);
  }
  CHECK(bytes_of(path) == before);
  CHECK_THROWS_WITH_AS(Store::open_read_only(dir / "missing.db"),
                       doctest::Contains("does not exist"), DbInputError);
}
