// tunedb (db/tunedb): freeze, verify, and the serving-side lookup through the C++ and C APIs, on
// real SQLite files in a fresh temporary directory per case. Winners: tests/support/fixture.hpp.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "db/tunedb/cubin_elf.hpp"
#include "db/tunedb/freeze.hpp"
#include "db/tunedb/params.hpp"
#include "db/tunedb/shape.hpp"
#include "db/tunedb/tunedb.h"
#include "db/tunedb/tunedb.hpp"
#include "tests/support/allocation_counter.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/frozen_fixture.hpp"
#include "tests/support/temp_dir.hpp"

using tuner::test::allocations;

namespace fs = std::filesystem;
using tunedb::How;
using tunedb::Miss;
using tuner::db::Connection;
using tuner::db::OpenMode;

namespace {

using tuner::test::TempDir;

const std::string kShape = tuner::db::fixture::kShape;
const std::string kDefault = tuner::db::fixture::kDefaultParams;
const std::string kTuned8 =
    R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":512})";
const std::string kTuned128 =
    R"({"block_h":16,"block_t":64,"num_stages":3,"num_warps":4,"target_ctas":256})";

tunedb::CubinImage test_image(const tunedb::CubinRequest& request) {
  const std::string text = "image " + request.arch + " " + request.params_json;
  return {tunedb::stand_in_cubin(request.arch, text), {"_Z4splitv", "_Z7combinev"}};
}

// The bytes after a stand-in image's 64-byte ELF header.
std::string image_payload(const tunedb::Cubin& cubin) {
  return std::string(cubin.bytes.begin() + 64, cubin.bytes.end());
}

// A store with the fixture winners, and its sm_120 winners frozen with test images.
struct Fixture : tuner::test::FrozenFixture {
  Fixture() : FrozenFixture(test_image) {}
};

using tuner::test::read_bytes;
using tuner::test::write_bytes;

fs::path edited_copy(const Fixture& fixture, const std::string& name, const std::string& sql) {
  const fs::path copy = fixture.dir / name;
  fs::copy_file(fixture.frozen, copy);
  Connection::open(copy, OpenMode::read_write_create).exec(sql);
  return copy;
}

std::string what_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "(no exception)";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("tunedb: exact, bucket and above-largest lookups") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);

  const tunedb::Lookup exact = db.lookup("sparse_mla_decode", "sm_120", kShape, 8);
  CHECK(exact.how == How::exact);
  CHECK(exact.miss == Miss::none);
  REQUIRE(exact.config != nullptr);
  CHECK(exact.config->params_json == kTuned8);
  CHECK(exact.config->value("block_t") == 32);
  CHECK_FALSE(exact.config->value("block_x").has_value());
  CHECK(exact.tuned_batch == 8);
  CHECK(exact.median_us == 20.5);
  CHECK(exact.run_id == 1);
  CHECK(exact.measured_arch == "sm_90");  // timed on the H200, not on an sm_120 part
  CHECK(exact.device_name == "NVIDIA H200");
  REQUIRE(exact.cubin != nullptr);
  CHECK(image_payload(*exact.cubin) == "image sm_120 " + kTuned8);
  CHECK(exact.cubin->kernel_names == std::vector<std::string_view>{"_Z4splitv", "_Z7combinev"});

  const tunedb::Lookup between = db.lookup("sparse_mla_decode", "sm_120", kShape, 9);
  CHECK(between.how == How::bucket);
  CHECK(between.tuned_batch == 32);  // the smallest tuned batch above 9
  CHECK(between.default_kept);
  CHECK(between.config->params_json == kDefault);

  const tunedb::Lookup above = db.lookup("sparse_mla_decode", "sm_120", kShape, 1000);
  CHECK(above.how == How::bucket);
  CHECK(above.tuned_batch == 128);
  CHECK(above.config->params_json == kTuned128);

  const tunedb::Lookup below_one = db.lookup("sparse_mla_decode", "sm_120", kShape, 0);
  CHECK(below_one.how == How::exact);  // batches below 1 are looked up as 1
  CHECK(below_one.tuned_batch == 1);
}

TEST_CASE("tunedb: untuned shapes, families and archs fall back, flagged") {
  Fixture fixture;
  tunedb::OpenOptions options;
  options.defaults.push_back({"dense_gemm", R"({"tile":128})"});
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen, options);

  const std::string other_topk = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=1024";
  const tunedb::Lookup shape = db.lookup("sparse_mla_decode", "sm_120", other_topk, 8);
  CHECK(shape.how == How::default_config);
  CHECK(shape.miss == Miss::shape_not_tuned);
  CHECK(shape.config->params_json == kDefault);
  CHECK(std::isnan(shape.median_us));
  CHECK(shape.tuned_batch == 0);
  CHECK(shape.device_name.empty());
  REQUIRE(shape.cubin != nullptr);  // the default's image was frozen too
  CHECK(image_payload(*shape.cubin) == "image sm_120 " + kDefault);

  // The store holds sm_90 winners, but the file was frozen for sm_120 only.
  const tunedb::Lookup arch = db.lookup("sparse_mla_decode", "sm_90", kShape, 8);
  CHECK(arch.how == How::default_config);
  CHECK(arch.miss == Miss::arch_not_in_db);
  CHECK(arch.config->params_json == kDefault);
  CHECK(arch.cubin == nullptr);  // no image for an arch the file was not frozen for

  const tunedb::Lookup given = db.lookup("dense_gemm", "sm_120", kShape, 8);
  CHECK(given.how == How::default_config);
  CHECK(given.miss == Miss::family_not_in_db);
  CHECK(given.config->value("tile") == 128);

  const tunedb::Lookup unknown = db.lookup("paged_attention", "sm_120", kShape, 8);
  CHECK(unknown.how == How::not_found);
  CHECK(unknown.config == nullptr);
  CHECK(std::string(tunedb::how_name(unknown.how)) == "not_found");
  CHECK(std::string(tunedb::miss_name(arch.miss)) == "arch_not_in_db");
}

TEST_CASE("tunedb: lookups are noexcept, allocation-free and agree across threads") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  static_assert(noexcept(db.lookup("f", "a", kShape, 1)));

  const long before = allocations.load();
  int found = 0;
  for (int batch = 1; batch <= 256; ++batch) {
    found += db.lookup("sparse_mla_decode", "sm_120", kShape, batch).tuned_batch > 0 ? 1 : 0;
    found += db.lookup("sparse_mla_decode", "sm_100", kShape, batch).config != nullptr ? 1 : 0;
  }
  CHECK(allocations.load() == before);
  CHECK(found == 512);

  std::vector<int> expected;
  for (int batch = 1; batch <= 200; ++batch) {
    expected.push_back(db.lookup("sparse_mla_decode", "sm_120", kShape, batch).tuned_batch);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        for (int batch = 1; batch <= 200; ++batch) {
          const auto result = db.lookup("sparse_mla_decode", "sm_120", kShape, batch);
          if (result.tuned_batch != expected[static_cast<std::size_t>(batch - 1)]) ++mismatches;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(mismatches.load() == 0);
}

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
  CHECK(report.schema_version == 3);

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

TEST_CASE("tunedb: a tuning store can be looked up directly") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.store);
  CHECK_FALSE(db.info().frozen);
  CHECK(db.info().budget_arches == std::vector<std::string>{"sm_120", "sm_90"});
  const tunedb::Lookup sm90 = db.lookup("sparse_mla_decode", "sm_90", kShape, 8);
  CHECK(sm90.how == How::exact);
  CHECK(sm90.median_us == 18.0);
  CHECK(sm90.cubin == nullptr);  // images exist only in frozen files
  const std::string other = "kv_format=fp8_ds_mla,local_heads=16,page_size=16,topk=2048";
  CHECK(db.lookup("sparse_mla_decode", "sm_90", other, 8).config->params_json == kDefault);
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
    const fs::path newer = edited_copy(fixture, "newer.db", "PRAGMA user_version = 4");
    CHECK_THROWS_WITH_AS(
        tunedb::TuningDb::open(newer),
        (newer.string() + " is a frozen tuning DB with schema version 4, newer than the version "
                          "3 this build reads: use a newer tuner/tunedb, or a DB written by this "
                          "one")
            .c_str(),
        tunedb::DbInputError);
  }
  SUBCASE("a version-2 frozen file (no launch metadata) is refused with the fix") {
    const fs::path old = edited_copy(fixture, "v2.db", "PRAGMA user_version = 2");
    const std::string message = what_of([&] { tunedb::TuningDb::open(old); });
    CHECK(contains(message, old.string() + " is a frozen tuning DB of schema version 2"));
    CHECK(contains(message, "re-freeze it with `tuner freeze"));
    CHECK_THROWS_AS(tunedb::TuningDb::open(old), tunedb::DbInputError);
    CHECK_THROWS_AS(tunedb::verify(old), tunedb::DbInputError);
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

TEST_CASE("tunedb: a moved-from TuningDb answers not_found") {
  Fixture fixture;
  tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  tunedb::TuningDb moved = std::move(db);
  CHECK(moved.lookup("sparse_mla_decode", "sm_120", kShape, 8).how == How::exact);
  CHECK(db.lookup("sparse_mla_decode", "sm_120", kShape, 8).how == How::not_found);  // NOLINT
}

TEST_CASE("tunedb: the C API") {
  Fixture fixture;
  tunedb_handle* handle = nullptr;
  REQUIRE(tunedb_open(fixture.frozen.c_str(), &handle) == TUNEDB_OK);
  tunedb_result result;
  REQUIRE(tunedb_lookup(handle, "sparse_mla_decode", "sm_120", kShape.c_str(), 100, &result) ==
          TUNEDB_OK);
  CHECK(result.how == TUNEDB_HOW_BUCKET);
  CHECK(result.tuned_batch == 128);
  CHECK(result.median_us == 110.2);
  CHECK(std::string(result.params_json) == kTuned128);
  REQUIRE(result.n_params == 5);
  CHECK(std::string(result.params[1].name) == "block_t");
  CHECK(result.params[1].value == 64);
  CHECK(std::string(result.measured_arch) == "sm_90");
  CHECK(std::string(result.kernel_names) == "_Z4splitv\n_Z7combinev");
  REQUIRE(result.cubin_size > 64);
  CHECK(std::string(static_cast<const char*>(result.cubin) + 64, result.cubin_size - 64) ==
        "image sm_120 " + kTuned128);

  REQUIRE(tunedb_lookup(handle, "sparse_mla_decode", "sm_75", kShape.c_str(), 1, &result) ==
          TUNEDB_OK);
  CHECK(result.how == TUNEDB_HOW_DEFAULT);
  CHECK(result.miss == TUNEDB_MISS_ARCH_NOT_IN_DB);
  CHECK(std::string(tunedb_miss_name(result.miss)) == "arch_not_in_db");
  CHECK(std::string(result.device_name).empty());

  CHECK(tunedb_lookup(handle, nullptr, "sm_120", kShape.c_str(), 1, &result) == TUNEDB_ERROR_INPUT);
  CHECK(std::string(tunedb_last_error()) == "tunedb_lookup: family is NULL");
  // A shape that is not canonical text is refused, naming the problem (unsorted names here).
  CHECK(tunedb_lookup(handle, "sparse_mla_decode", "sm_120",
                      "topk=2048,kv_format=fp8_ds_mla,local_heads=16,page_size=64", 1,
                      &result) == TUNEDB_ERROR_INPUT);
  CHECK(contains(tunedb_last_error(), "is not canonical ('kv_format' after 'topk'"));
  CHECK(tunedb_lookup(handle, "sparse_mla_decode", "sm_120", "local_heads=016", 1, &result) ==
        TUNEDB_ERROR_INPUT);
  CHECK(contains(tunedb_last_error(), "leading zero"));
  tunedb_close(handle);

  tunedb_handle* missing = nullptr;
  CHECK(tunedb_open((fixture.dir / "missing.db").c_str(), &missing) == TUNEDB_ERROR_INPUT);
  CHECK(missing == nullptr);
  CHECK(contains(tunedb_last_error(), "missing.db does not exist"));
  CHECK(tunedb_verify(fixture.frozen.c_str()) == TUNEDB_OK);
  CHECK(std::string(tunedb_last_error()).empty());
  CHECK(tunedb_verify(fixture.store.c_str()) == TUNEDB_ERROR_INPUT);
}

TEST_CASE("tunedb: the C++ map lookup builds the canonical text") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  const std::map<std::string, std::string, std::less<>> dims = {
      {"topk", "2048"}, {"local_heads", "16"}, {"page_size", "64"}, {"kv_format", "fp8_ds_mla"}};
  CHECK(tunedb::make_shape(dims) == kShape);
  const tunedb::Lookup found = db.lookup("sparse_mla_decode", "sm_120", dims, 8);
  CHECK(found.how == How::exact);
  CHECK(found.median_us == 20.5);
  CHECK_THROWS_AS(db.lookup("sparse_mla_decode", "sm_120", {{"Bad Name", "1"}}, 8),
                  tunedb::DbInputError);
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

TEST_CASE("tunedb: params JSON parsing is strict and canonical") {
  const auto parsed = tunedb::parse_params_json(R"( {"z": -3, "a":7} )");
  REQUIRE(parsed.has_value());
  REQUIRE(parsed->size() == 2);
  CHECK(parsed->front().name == "a");
  CHECK(parsed->back().value == -3);
  CHECK(tunedb::canonical_params_json(R"({"z":-3,"a":7})") == R"({"a":7,"z":-3})");
  CHECK(tunedb::canonical_params_json(R"({"a":9223372036854775807})") ==
        R"({"a":9223372036854775807})");
  for (const char* bad : {R"({"a":9223372036854775808})", R"({"a":-})", R"({"":1})", R"({"a":1,})",
                          R"({a:1})", R"({"a":true})", R"({"a":null})"}) {
    CAPTURE(bad);
    CHECK_FALSE(tunedb::parse_params_json(bad).has_value());
  }
}
