// Opening tunedb files (db/tunedb): a frozen file is read-only and never changes, an edited one
// fails its checksum, and damaged, foreign, newer, schema-1 and missing files are refused with
// errors that name the file and the fix. Real SQLite files in a fresh temporary directory per
// case; winners: tests/support/fixture.hpp (lookups: test_tunedb_lookup.cpp; freezing:
// test_tunedb_freeze.cpp).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "db/tunedb/freeze.hpp"
#include "db/tunedb/tunedb.hpp"
#include "tests/support/frozen_fixture.hpp"
#include "tests/support/tunedb_fixture.hpp"

namespace fs = std::filesystem;
using tunedb::How;
using tuner::db::Connection;
using tuner::db::OpenMode;
using namespace tuner::test::tunedb_fixture;

namespace {

using tuner::test::read_bytes;
using tuner::test::write_bytes;

fs::path edited_copy(const Fixture& fixture, const std::string& name, const std::string& sql) {
  const fs::path copy = fixture.dir / name;
  fs::copy_file(fixture.frozen, copy);
  Connection::open(copy, OpenMode::read_write_create).exec(sql);
  return copy;
}

}  // namespace

TEST_CASE("tunedb: a frozen file is opened read-only and never changes") {
  Fixture fixture;
  const std::string before = read_bytes(fixture.frozen);
  const auto stamp = fs::last_write_time(fixture.frozen);
  {
    const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
    CHECK(db.lookup("sparse_mla_decode", "sm_120", kShape, 8).how == How::exact);
    tunedb::verify(fixture.frozen);
  }
  CHECK(read_bytes(fixture.frozen) == before);
  CHECK(fs::last_write_time(fixture.frozen) == stamp);
  CHECK_FALSE(fs::exists(fixture.frozen.string() + "-journal"));
  CHECK_THROWS_AS(tuner::db::Store::open(fixture.frozen), tunedb::DbInputError);
}

TEST_CASE("tunedb: an edited frozen file fails its checksum") {
  Fixture fixture;
  const fs::path edited =
      edited_copy(fixture, "edited.db", "UPDATE winners SET median_us = 1.0 WHERE batch = 8");
  const std::string message = what_of([&] { tunedb::TuningDb::open(edited); });
  CHECK(message.rfind("checksum mismatch in frozen tuning DB " + edited.string() +
                          ": metadata says '" + fixture.summary.checksum + "'",
                      0) == 0);
  CHECK(contains(message, "freeze it again from the store or restore a good copy"));
  CHECK_THROWS_AS(tunedb::verify(edited), tunedb::DbError);

  tunedb::OpenOptions trusting;
  trusting.verify_checksum = false;  // the caller opted out: the edit shows through
  const tunedb::Lookup trusted =
      tunedb::TuningDb::open(edited, trusting).lookup("sparse_mla_decode", "sm_120", kShape, 8);
  CHECK(trusted.median_us == 1.0);
  CHECK(trusted.cubin == nullptr);  // code is handed out only from checked files

  SUBCASE("an edited cubin") {
    const fs::path cubin = edited_copy(fixture, "cubin.db",
                                       "UPDATE cubins SET bytes = zeroblob(8) WHERE params_json = "
                                       "(SELECT MIN(params_json) FROM cubins)");
    CHECK_THROWS_AS(tunedb::verify(cubin), tunedb::DbError);
  }
  SUBCASE("an edited integer") {
    const fs::path batch =
        edited_copy(fixture, "batch.db", "UPDATE winners SET batch = 7 WHERE batch = 8");
    CHECK_THROWS_AS(tunedb::verify(batch), tunedb::DbError);
  }
  SUBCASE("an edited text") {
    const fs::path device =
        edited_copy(fixture, "device.db", "UPDATE winners SET device_name = 'RTX PRO 6000'");
    CHECK_THROWS_AS(tunedb::verify(device), tunedb::DbError);
  }
  SUBCASE("a dropped metadata row") {
    const fs::path meta =
        edited_copy(fixture, "meta.db", "DELETE FROM metadata WHERE key = 'device_names'");
    CHECK_THROWS_AS(tunedb::TuningDb::open(meta), tunedb::DbError);
  }
}

TEST_CASE("tunedb: damaged, foreign, newer and missing files get clear errors") {
  Fixture fixture;
  SUBCASE("missing") {
    const fs::path missing = fixture.dir / "missing.db";
    CHECK_THROWS_WITH_AS(tunedb::TuningDb::open(missing),
                         ("tuning DB " + missing.string() +
                          " does not exist: pass the path of a file written by `tuner freeze` "
                          "or of a tuning store written by `tuner sweep`")
                             .c_str(),
                         tunedb::DbInputError);
  }
  SUBCASE("random bytes") {
    const fs::path junk = fixture.dir / "junk.db";
    std::string bytes(16384, '\0');
    unsigned state = 12345;
    for (char& c : bytes) c = static_cast<char>((state = state * 1103515245u + 12345u) >> 16);
    write_bytes(junk, bytes);
    try {
      tunedb::TuningDb::open(junk);
      FAIL("random bytes opened as a tuning DB");
    } catch (const tunedb::DbError& error) {
      CHECK(error.code_name() == "SQLITE_NOTADB");
      CHECK(std::string(error.what())
                .rfind("cannot read tuning DB " + junk.string() +
                           ": the file is corrupted, truncated or not a SQLite database",
                       0) == 0);
    }
    CHECK_THROWS_AS(tunedb::verify(junk), tunedb::DbError);
  }
  SUBCASE("truncated") {
    const fs::path cut = fixture.dir / "cut.db";
    const std::string bytes = read_bytes(fixture.frozen);
    REQUIRE(bytes.size() >= 8192);
    write_bytes(cut, bytes.substr(0, bytes.size() / 2));
    const std::string message = what_of([&] { tunedb::TuningDb::open(cut); });
    CHECK(contains(message, cut.string()));
    CHECK_THROWS_AS(tunedb::TuningDb::open(cut), tunedb::DbError);
    CHECK_THROWS_AS(tunedb::verify(cut), tunedb::DbError);
  }
  SUBCASE("newer schema") {
    const fs::path newer = edited_copy(fixture, "newer.db", "PRAGMA user_version = 5");
    CHECK_THROWS_WITH_AS(
        tunedb::TuningDb::open(newer),
        (newer.string() + " is a frozen tuning DB with schema version 5, newer than the version "
                          "4 this build reads: use a newer tuner/tunedb, or a DB written by this "
                          "one")
            .c_str(),
        tunedb::DbInputError);
  }
  SUBCASE("version-2 and -3 frozen files (no launch metadata, no launch contract) are refused") {
    for (const int version : {2, 3}) {
      const std::string name = "v" + std::to_string(version);
      const fs::path old =
          edited_copy(fixture, name + ".db", "PRAGMA user_version = " + std::to_string(version));
      const std::string message = what_of([&] { tunedb::TuningDb::open(old); });
      CHECK(contains(message, old.string() + " is a frozen tuning DB of schema version " +
                                  std::to_string(version)));
      CHECK(contains(message, "each cubin's launch contract"));
      CHECK(contains(message, "re-freeze it with `tuner freeze"));
      CHECK_THROWS_AS(tunedb::TuningDb::open(old), tunedb::DbInputError);
      CHECK_THROWS_AS(tunedb::verify(old), tunedb::DbInputError);
    }
  }
  SUBCASE("an empty SQLite file") {
    const fs::path empty = fixture.dir / "empty.db";
    Connection::open(empty, OpenMode::read_write_create).exec("CREATE TABLE t(x)");
    CHECK_THROWS_WITH_AS(
        tunedb::TuningDb::open(empty),
        (empty.string() + " is not a tuning DB (schema version 0, no winners table): pass a "
                          "tuning store written by `tuner sweep` or a file written by `tuner "
                          "freeze`")
            .c_str(),
        tunedb::DbInputError);
  }
  SUBCASE("bad default option") {
    tunedb::OpenOptions options;
    options.defaults.push_back({"dense_gemm", "tile=128"});
    CHECK_THROWS_AS(tunedb::TuningDb::open(fixture.frozen, options), tunedb::DbInputError);
  }
}

TEST_CASE("tunedb: a schema-1 store or frozen file is refused with the fix") {
  Fixture fixture;
  const fs::path old = fixture.dir / "old.db";
  fs::copy_file(fixture.store, old);
  {
    const tuner::db::Connection connection =
        tuner::db::Connection::open(old, tuner::db::OpenMode::read_write_create);
    connection.exec("PRAGMA user_version = 1");
  }
  const std::string message = what_of([&] { tunedb::TuningDb::open(old); });
  CHECK(contains(message, old.string() + " has schema version 1, written before shapes were data"));
  CHECK(contains(message, "re-run `tuner sweep --db NEW.db`"));
  CHECK_THROWS_AS(tuner::db::Store::open(old), tunedb::DbInputError);
}
