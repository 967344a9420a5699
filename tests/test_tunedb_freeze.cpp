// tunedb::freeze and tunedb::verify (db/tunedb): a store's winners frozen for one budget arch with
// their images and verified, the choice of one device when a store holds several devices' winners
// for a key, and what freeze refuses to do (overwrite, freeze a frozen file, leave a partial file).
// Real SQLite files in a fresh temporary directory per case; winners: tests/support/fixture.hpp
// (lookups: test_tunedb_lookup.cpp; opening: test_tunedb_open.cpp).
#include <doctest/doctest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "db/tunedb/freeze.hpp"
#include "db/tunedb/tunedb.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/frozen_fixture.hpp"
#include "tests/support/tunedb_fixture.hpp"

namespace fs = std::filesystem;
using tuner::db::Connection;
using tuner::db::OpenMode;
using namespace tuner::test::tunedb_fixture;

namespace {

using tuner::test::read_bytes;

}  // namespace

TEST_CASE("tunedb: freeze and verify round-trip") {
  Fixture fixture;
  CHECK(fixture.summary.winners == 4);
  CHECK(fixture.summary.cubins == 4);  // 3 tuned configs + the default
  CHECK(fixture.summary.budget_arches == std::vector<std::string>{"sm_120"});
  CHECK(fixture.summary.device_names == std::vector<std::string>{"NVIDIA H200"});
  CHECK(fixture.summary.checksum.rfind("fnv1a64:", 0) == 0);
  CHECK(fixture.summary.checksum.size() == 8 + 16);

  const tunedb::VerifyReport report = tunedb::verify(fixture.frozen);
  CHECK(report.checksum == fixture.summary.checksum);
  CHECK(report.winners == 4);
  CHECK(report.cubins == 4);
  CHECK(report.schema_version == 4);

  const Connection frozen = Connection::open(fixture.frozen, OpenMode::read_only);
  CHECK(frozen.query_int64("SELECT COUNT(*) FROM sqlite_schema WHERE name IN ('trials', "
                           "'runs', 'problems', 'sources')") == 0);
  CHECK(frozen.query_int64("SELECT COUNT(*) FROM metadata WHERE (key, value) IN (VALUES "
                           "('frozen', '1'), ('budget_arches', 'sm_120'), ('device_names', "
                           "'NVIDIA H200'), ('measured_arches', 'sm_90'), ('cuda_versions', "
                           "'13.0'), ('nvrtc_versions', '13.0'), ('driver_versions', "
                           "'580.65'), ('source_hashes', 'src-0123456789abcdef'))") == 8);
  tuner::db::Statement mode = frozen.prepare("PRAGMA journal_mode");
  REQUIRE(mode.step());
  CHECK(mode.column_text(0) == "delete");
  CHECK_FALSE(fs::exists(fixture.frozen.string() + "-wal"));

  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  CHECK(db.info().frozen);
  CHECK(db.info().checksum == fixture.summary.checksum);
  CHECK(db.info().winners == 4);
}

TEST_CASE("tunedb: winners of several devices for one key need a choice") {
  Fixture fixture;
  {
    tuner::db::Store store = tuner::db::Store::open(fixture.store);
    tuner::db::WinnerRecord other =
        tuner::db::fixture::fixture_winner("sm_120", 8, kTuned128, 15.0, 17.0, 1);
    other.device_name = "NVIDIA RTX PRO 6000 Blackwell";
    other.measured_arch = "sm_120";
    store.record_winner(other);
  }
  CHECK(contains(what_of([&] { tunedb::TuningDb::open(fixture.store); }),
                 "holds winners of several devices for sparse_mla_decode sm_120 "
                 "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048 batch=8"));
  tunedb::OpenOptions native;
  native.device_name = "NVIDIA RTX PRO 6000 Blackwell";
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.store, native);
  const tunedb::Lookup found = db.lookup("sparse_mla_decode", "sm_120", kShape, 8);
  CHECK(found.measured_arch == "sm_120");
  CHECK(found.median_us == 15.0);

  const fs::path out = fixture.dir / "both.db";
  CHECK_THROWS_WITH_AS(tunedb::freeze(fixture.store, out, {}, test_image),
                       (fixture.store.string() +
                        " holds winners of several devices (NVIDIA H200, NVIDIA RTX PRO 6000 "
                        "Blackwell) for sparse_mla_decode sm_120 batch 8: pick one device to "
                        "freeze")
                           .c_str(),
                       tunedb::DbInputError);
  CHECK_FALSE(fs::exists(out));
  tunedb::FreezeOptions pick;
  pick.device_name = "NVIDIA RTX PRO 6000 Blackwell";
  CHECK(tunedb::freeze(fixture.store, out, pick, test_image).winners == 1);
}

TEST_CASE("tunedb: freeze refuses what it must not do") {
  Fixture fixture;
  SUBCASE("overwrite an existing file unless asked") {
    const std::string before = read_bytes(fixture.frozen);
    CHECK_THROWS_WITH_AS(tunedb::freeze(fixture.store, fixture.frozen, {}, test_image),
                         ("frozen DB " + fixture.frozen.string() +
                          " already exists: choose another output path or ask to overwrite it")
                             .c_str(),
                         tunedb::DbInputError);
    CHECK(read_bytes(fixture.frozen) == before);
    tunedb::FreezeOptions overwrite;
    overwrite.overwrite = true;
    overwrite.budget_arch = "sm_90";
    CHECK(tunedb::freeze(fixture.store, fixture.frozen, overwrite, {}).winners == 1);
    CHECK(tunedb::verify(fixture.frozen).budget_arches == std::vector<std::string>{"sm_90"});
  }
  SUBCASE("an arch with no winners") {
    tunedb::FreezeOptions options;
    options.budget_arch = "sm_100";
    CHECK_THROWS_WITH_AS(tunedb::freeze(fixture.store, fixture.dir / "x.db", options, {}),
                         ("no winners in " + fixture.store.string() +
                          " for budget arch sm_100 and device (any); it holds: sm_120 (NVIDIA "
                          "H200),sm_90 (NVIDIA H200)")
                             .c_str(),
                         tunedb::DbInputError);
  }
  SUBCASE("freezing a frozen file") {
    CHECK_THROWS_WITH_AS(tunedb::freeze(fixture.frozen, fixture.dir / "x.db", {}, {}),
                         (fixture.frozen.string() +
                          " is already a frozen DB: freeze reads the tuning store that `tuner "
                          "sweep` writes")
                             .c_str(),
                         tunedb::DbInputError);
  }
  SUBCASE("a provider that fails leaves no file behind") {
    const fs::path out = fixture.dir / "x.db";
    const auto failing = [](const tunedb::CubinRequest&) -> tunedb::CubinImage {
      throw std::runtime_error("nvrtc failed");
    };
    CHECK_THROWS_WITH(tunedb::freeze(fixture.store, out, {}, failing), "nvrtc failed");
    CHECK_FALSE(fs::exists(out));
    for (const auto& entry : fs::directory_iterator(fixture.dir / "")) {
      CHECK_FALSE(contains(entry.path().filename().string(), ".tmp."));
    }
  }
  SUBCASE("overwrite its own input") {
    tunedb::FreezeOptions overwrite;
    overwrite.overwrite = true;
    CHECK_THROWS_WITH_AS(tunedb::freeze(fixture.store, fixture.store, overwrite, {}),
                         ("freeze would overwrite its own input " + fixture.store.string() +
                          ": write the frozen DB to another path")
                             .c_str(),
                         tunedb::DbInputError);
    CHECK(tuner::db::Store::open(fixture.store).winners({}).size() == 5);
  }
  SUBCASE("a missing store") {
    CHECK_THROWS_AS(tunedb::freeze(fixture.dir / "none.db", fixture.dir / "x.db", {}, {}),
                    tunedb::DbInputError);
  }
}
