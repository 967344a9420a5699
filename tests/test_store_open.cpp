// Opening the tuning store (db/store): the schema script and its version, newer, foreign and
// damaged files and bad paths refused with errors that name them, frozen DBs never opened for
// writing, and read-only opens that change nothing (records: test_store_records.cpp; upgrades:
// test_store_migrate.cpp). Every case works on real SQLite files in a fresh temporary directory.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "db/tunedb/format.hpp"
#include "db/tunedb/freeze.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/store_setup.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trial_rows.hpp"

namespace fs = std::filesystem;
using namespace tuner::db;
using namespace tuner::test::store_setup;

namespace {

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
  CHECK(again.connection().query_int64("PRAGMA user_version") == 4);
  CHECK(again.connection().query_int64(
            "SELECT COUNT(*) FROM sqlite_schema WHERE name IN ('runs', 'sources', 'problems', "
            "'trials', 'winners', 'trials_resume_key_v3')") == 6);
  CHECK(again.runs().size() == 1);  // the second open kept the data
  CHECK(again.integrity_check() == "ok");
}

TEST_CASE("store: a file with a newer schema version is refused with the versions named") {
  TempDir dir;
  const fs::path path = dir / "future.db";
  Connection::open(path, OpenMode::read_write_create).exec("PRAGMA user_version = 5");
  CHECK_THROWS_WITH_AS(
      Store::open(path),
      (path.string() + " has schema version 5, newer than the version 4 this tuner writes: use "
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
