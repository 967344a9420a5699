#pragma once
// The frozen file's layout, its checksum and the checks every reader runs first. Internal to
// tunedb (freeze, verify and TuningDb::open share it).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "db/sqlite/sqlite.hpp"

namespace tunedb::detail {

// The frozen tables. No trials, no runs: what serving needs, plus provenance in metadata.
extern const char* const kFrozenSchemaSql;

// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
class Fnv1a64 {
 public:
  void update(const void* data, std::size_t size) noexcept;
  std::uint64_t value() const noexcept { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// "fnv1a64:" + 16 lowercase hex digits over the canonical serialization of the frozen tables
// (see db/README.md): the schema text of each table, then every row of metadata (less the
// checksum row), defaults, winners and cubins, in primary-key order, each value tagged with its
// SQLite type. It detects corruption and accidental edits, not deliberate tampering.
std::string frozen_checksum(const tuner::db::Connection& connection);

// Recomputes the checksum of a frozen file and returns it; throws DbError naming both values
// when it differs from the one stored in metadata, or when there is no checksum row.
std::string check_checksum(const tuner::db::Connection& connection, const std::string& path);

// Throws DbError naming the row when a cubin is not a CUDA ELF image for its row's arch.
void check_cubin_arches(const tuner::db::Connection& connection, const std::string& path);

// What kind of tuning file a connection holds: frozen when its application_id is
// kFrozenApplicationId. Throws DbInputError for a foreign SQLite file or a schema newer than this
// code reads, DbError for a file with a frozen file's tables but a store's header.
struct FileKind {
  bool frozen = false;
  int schema_version = 0;
};
FileKind inspect_file(const tuner::db::Connection& connection, const std::string& path);

// A tuning file opened read-only (a frozen one immutable) and checked as every reader checks it:
// TuningDb::open and verify share this, so they accept and refuse the same files. With `verify`,
// a frozen file's checksum and every cubin's ELF arch are checked; without it, `checksum` is the
// stored value and the caller must not hand out cubins.
struct CheckedFile {
  tuner::db::Connection connection;
  FileKind kind;
  std::string checksum;  // frozen files only
};
CheckedFile open_checked(const std::filesystem::path& path, bool verify);

// Throws DbInputError when `path` is missing or a directory; `what` names the file's role
// ("tuning DB", "tuning store").
void check_db_path(const std::filesystem::path& path, const std::string& what);

bool has_table(const tuner::db::Connection& connection, std::string_view name);
std::optional<std::string> metadata_value(const tuner::db::Connection& connection,
                                          std::string_view key);

// True for errors that mean the file is damaged (SQLITE_NOTADB, SQLITE_CORRUPT, SQLITE_IOERR).
bool is_damage(const tuner::db::DbError& error) noexcept;

// Context for a DbError raised while reading `path`: names the file and, for a damaged file,
// the fix.
tuner::db::DbError reading_error(const tuner::db::DbError& error, const std::string& path);

}  // namespace tunedb::detail
