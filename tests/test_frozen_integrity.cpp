// Frozen-file integrity (issue 11): every tampering a deployment could meet is refused by
// TuningDb::open (C++ and C) and by tunedb::verify with the same error, which names the file and
// what is wrong; none of them hands out a winner or a cubin. Winners: tests/support/fixture.hpp.
#include <doctest/doctest.h>

#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "db/sqlite/sqlite.hpp"
#include "db/tunedb/cubin_elf.hpp"
#include "db/tunedb/format.hpp"
#include "db/tunedb/freeze.hpp"
#include "db/tunedb/frozen.hpp"
#include "db/tunedb/tunedb.h"
#include "db/tunedb/tunedb.hpp"
#include "tests/support/frozen_fixture.hpp"

namespace fs = std::filesystem;
using tuner::db::Connection;
using tuner::db::OpenMode;

namespace {

const std::string kFix = "freeze it again from the store";

tunedb::CubinImage image_for(const tunedb::CubinRequest& request) {
  return {tunedb::stand_in_cubin(request.arch, "image " + request.params_json), {"_Z4splitv"}};
}

struct Frozen : tuner::test::FrozenFixture {
  std::string checksum = summary.checksum;

  Frozen() : FrozenFixture(image_for) {}

  // A copy of the frozen file with `sql` run on it.
  fs::path tampered(const std::string& name, const std::string& sql) const {
    const fs::path copy = dir / name;
    fs::copy_file(frozen, copy);
    Connection::open(copy, OpenMode::read_write_create).exec(sql);
    return copy;
  }
};

struct Refusal {
  std::string kind;  // "input" (DbInputError), "db" (DbError), "none"
  std::string message;
};

Refusal refusal_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const tunedb::DbInputError& error) {
    return {"input", error.what()};
  } catch (const tunedb::DbError& error) {
    return {"db", error.what()};
  }
  return {"none", ""};
}

// Open (C++ and C) and verify refuse `path` alike; returns the error.
Refusal refused_everywhere(const fs::path& path) {
  const Refusal opened = refusal_of([&] { tunedb::TuningDb::open(path); });
  const Refusal verified = refusal_of([&] { tunedb::verify(path); });
  CHECK(opened.kind != "none");
  CHECK(verified.kind == opened.kind);
  CHECK(verified.message == opened.message);
  tunedb_handle* handle = nullptr;
  const tunedb_status status = tunedb_open(path.c_str(), &handle);
  CHECK(handle == nullptr);
  CHECK(status == (opened.kind == "input" ? TUNEDB_ERROR_INPUT : TUNEDB_ERROR_DB));
  CHECK(std::string(tunedb_last_error()) == opened.message);
  tunedb_close(handle);
  return opened;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// A checksum mismatch against the fixture's stored checksum.
void check_mismatch(const Refusal& refusal, const fs::path& path, const std::string& stored) {
  CHECK(refusal.kind == "db");
  CHECK(starts_with(refusal.message, "checksum mismatch in frozen tuning DB " + path.string() +
                                         ": metadata says '" + stored +
                                         "', the content hashes to 'fnv1a64:"));
  CHECK(refusal.message.ends_with(
      "'; the file changed after freezing (corruption or an edit): freeze it again from the store "
      "or restore a good copy"));
}

// A copy edited by `sql` fails its checksum everywhere.
void check_edit_fails_checksum(const Frozen& fixture, const std::string& name,
                               const std::string& sql) {
  const fs::path path = fixture.tampered(name, sql);
  check_mismatch(refused_everywhere(path), path, fixture.checksum);
}

std::string unmarked_message(const fs::path& path, std::int64_t application_id) {
  return path.string() +
         " holds a frozen DB's tables (cubins, metadata) but its header does not mark it frozen "
         "(SQLite application_id " +
         std::to_string(application_id) +
         "), so its checksum cannot be trusted: the file was edited or written by an older "
         "tuner; " +
         kFix;
}

// Refused everywhere with exactly this error.
void check_refused(const fs::path& path, const std::string& kind, const std::string& message) {
  const Refusal refusal = refused_everywhere(path);
  CHECK(refusal.kind == kind);
  CHECK(refusal.message == message);
}

// Refused everywhere as a damaged file.
void check_damaged(const fs::path& path) {
  const Refusal refusal = refused_everywhere(path);
  CHECK(refusal.kind == "db");
  CHECK(starts_with(refusal.message,
                    "cannot read tuning DB " + path.string() +
                        ": the file is corrupted, truncated or not a SQLite database; " + kFix +
                        " or restore a good copy"));
}

using tuner::test::read_bytes;
using tuner::test::write_bytes;

// Stores the checksum of the file's current content, as a tamperer who knows the format would.
void rehash(const fs::path& path) {
  const Connection connection = Connection::open(path, OpenMode::read_write_create);
  const std::string checksum = tunedb::detail::frozen_checksum(connection);
  connection.prepare("UPDATE metadata SET value = ?1 WHERE key = 'checksum'")
      .bind(1, checksum)
      .run();
}

}  // namespace

TEST_CASE("frozen integrity: the untouched file opens and verifies") {
  Frozen fixture;
  const tunedb::VerifyReport report = tunedb::verify(fixture.frozen);
  CHECK(report.checksum == fixture.checksum);
  CHECK(report.cubins == 4);
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  CHECK(db.info().frozen);
  CHECK(
      Connection::open(fixture.frozen, OpenMode::read_only).query_int64("PRAGMA application_id") ==
      tunedb::kFrozenApplicationId);
}

TEST_CASE("frozen integrity: the issue's attack (marker gone, winner and cubin edited)") {
  Frozen fixture;
  const fs::path path = fixture.tampered(
      "attack.db", "PRAGMA application_id = " + std::to_string(tunedb::kApplicationId) +
                       "; DELETE FROM metadata WHERE key = 'frozen'; "
                       "UPDATE winners SET median_us = 1.0; UPDATE cubins SET bytes = x'DEADBEEF'");
  check_refused(path, "db", unmarked_message(path, tunedb::kApplicationId));
}

TEST_CASE("frozen integrity: one refusal per tampering") {
  Frozen fixture;
  SUBCASE("the frozen marker (application_id) cleared") {
    const fs::path path = fixture.tampered("zero.db", "PRAGMA application_id = 0");
    check_refused(path, "db", unmarked_message(path, 0));
  }
  SUBCASE("the metadata frozen row deleted") {
    check_edit_fails_checksum(fixture, "row.db", "DELETE FROM metadata WHERE key = 'frozen'");
  }
  SUBCASE("the checksum row deleted") {
    const fs::path path =
        fixture.tampered("nosum.db", "DELETE FROM metadata WHERE key = 'checksum'");
    check_refused(path, "db",
                  "frozen tuning DB " + path.string() +
                      " has no checksum row in its metadata, so its content cannot be trusted; " +
                      kFix + " or restore a good copy");
  }
  SUBCASE("one cubin byte altered") {
    check_edit_fails_checksum(
        fixture, "byte.db",
        "UPDATE cubins SET bytes = CAST(substr(bytes, 1, 70) || x'00' || "
        "substr(bytes, 72) AS BLOB) WHERE params_json = (SELECT MIN(params_json) FROM "
        "cubins)");
  }
  SUBCASE("one winner altered") {
    check_edit_fails_checksum(fixture, "winner.db",
                              "UPDATE winners SET median_us = 1.0 WHERE batch = 8");
  }
  SUBCASE("two cubins swapped") {
    check_edit_fails_checksum(
        fixture, "swap.db",
        "CREATE TEMP TABLE two AS SELECT params_json, bytes FROM cubins ORDER BY params_json "
        "LIMIT 2; UPDATE cubins SET bytes = (SELECT bytes FROM two WHERE two.params_json <> "
        "cubins.params_json) WHERE params_json IN (SELECT params_json FROM two)");
  }
  SUBCASE("an object added to the schema") {
    check_edit_fails_checksum(fixture, "view.db", "CREATE VIEW extra AS SELECT 1");
  }
}

TEST_CASE("frozen integrity: damaged, newer and foreign files") {
  Frozen fixture;
  SUBCASE("truncated") {
    const fs::path path = fixture.dir / "cut.db";
    const std::string bytes = read_bytes(fixture.frozen);
    REQUIRE(bytes.size() >= 8192);
    write_bytes(path, bytes.substr(0, bytes.size() / 2));
    check_damaged(path);
  }
  SUBCASE("random bytes") {
    const fs::path path = fixture.dir / "junk.db";
    std::string bytes(8192, '\0');
    unsigned state = 99;
    for (char& c : bytes) c = static_cast<char>((state = state * 1103515245u + 12345u) >> 16);
    write_bytes(path, bytes);
    check_damaged(path);
  }
  SUBCASE("a newer schema") {
    const fs::path path = fixture.tampered("newer.db", "PRAGMA user_version = 9");
    check_refused(path, "input",
                  path.string() +
                      " is a frozen tuning DB with schema version 9, newer than the version 4 "
                      "this build reads: use a newer tuner/tunedb, or a DB written by this one");
  }
  SUBCASE("a foreign application id") {
    const fs::path path = fixture.tampered("foreign.db", "PRAGMA application_id = 42");
    check_refused(path, "input",
                  path.string() +
                      " is not a tuning DB (SQLite application_id 42 belongs to another "
                      "program): pass a tuning store or a frozen DB");
  }
}

TEST_CASE("frozen integrity: a cubin's ELF arch must match its row") {
  Frozen fixture;
  SUBCASE("an sm_90 image under an sm_120 row, checksum recomputed") {
    const std::vector<char> sm90 = tunedb::stand_in_cubin("sm_90", "image");
    const fs::path path = fixture.dir / "arch.db";
    fs::copy_file(fixture.frozen, path);
    Connection::open(path, OpenMode::read_write_create)
        .prepare(
            "UPDATE cubins SET bytes = ?1 WHERE params_json = (SELECT MIN(params_json) "
            "FROM cubins)")
        .bind(1, tuner::db::Blob{sm90.data(), sm90.size()})
        .run();
    rehash(path);
    const Connection reader = Connection::open(path, OpenMode::read_only);
    tuner::db::Statement first = reader.prepare("SELECT MIN(params_json) FROM cubins");
    REQUIRE(first.step());
    const std::string params = first.column_text(0);
    check_refused(path, "db",
                  "frozen tuning DB " + path.string() + ": the cubin of sparse_mla_decode " +
                      params +
                      " under arch sm_120 is an ELF image for sm_90, not sm_120; the file was "
                      "edited or frozen wrongly: " +
                      kFix);
  }
  SUBCASE("freeze refuses a provider's image for another arch and writes nothing") {
    const fs::path out = fixture.dir / "wrong.db";
    tunedb::FreezeOptions options;
    options.budget_arch = "sm_120";
    const auto sm90_images = [](const tunedb::CubinRequest& request) {
      return tunedb::CubinImage{tunedb::stand_in_cubin("sm_90", request.params_json), {"_Z1kv"}};
    };
    const Refusal refusal =
        refusal_of([&] { tunedb::freeze(fixture.store, out, options, sm90_images); });
    CHECK(refusal.kind == "db");
    CHECK(starts_with(refusal.message, "the cubin provider's image for sparse_mla_decode "));
    CHECK(refusal.message.ends_with(
        " for sm_120 is an ELF image for sm_90, not sm_120: compile it for sm_120 (nothing was "
        "written)"));
    CHECK_FALSE(fs::exists(out));
  }
  SUBCASE("what is not a CUDA ELF image") {
    const std::string text = "DEADBEEF";
    CHECK(tunedb::cubin_arch_problem(text.data(), text.size(), "sm_120") ==
          "is not an ELF file (no \\x7fELF magic in a 64-byte header)");
    std::vector<char> x86 = tunedb::stand_in_cubin("sm_120", "");
    x86[18] = 62;  // EM_X86_64
    CHECK(tunedb::cubin_arch_problem(x86.data(), x86.size(), "sm_120") ==
          "is not a 64-bit little-endian CUDA ELF image (e_machine 62, wanted 190 = EM_CUDA)");
    CHECK(tunedb::arch_sm("sm_90a") == 90);
    CHECK_FALSE(tunedb::arch_sm("compute_90").has_value());
  }
}
