// Opening a tuning store: the path checks, the kinds of file it refuses to write, the schema
// (created or migrated), and the read-only open of older schemas.
#include <sqlite3.h>

#include <system_error>
#include <utility>

#include "db/store/schema.hpp"
#include "db/store/store.hpp"
#include "db/tunedb/format.hpp"
#include "db/tunedb/shape.hpp"

namespace tuner::db {
namespace {

void check_directory(const std::filesystem::path& path) {
  std::error_code error;
  const std::filesystem::path parent =
      path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  if (!std::filesystem::is_directory(parent, error)) {
    throw DbInputError("cannot create tuning store " + path.string() + ": directory " +
                       parent.string() + " does not exist; create it or pass another --db path");
  }
  if (std::filesystem::is_directory(path, error)) {
    throw DbInputError("tuning store " + path.string() +
                       " is a directory: pass a file path such as " +
                       (path / "tuning.db").string());
  }
}

Connection open_writable(const std::filesystem::path& path) {
  try {
    Connection connection = Connection::open(path, OpenMode::read_write_create);
    // Several processes may share a store: wait for a writer instead of failing with SQLITE_BUSY.
    sqlite3_busy_timeout(connection.get(), 10000);
    if (sqlite3_db_readonly(connection.get(), "main") == 1) {
      throw DbInputError("tuning store " + path.string() +
                         " is read-only: make the file and its directory writable (SQLite "
                         "also writes -wal and -shm files next to it) or pass another --db path");
    }
    return connection;
  } catch (const DbError& error) {
    if (error.primary_code() != SQLITE_CANTOPEN) throw;
    throw DbInputError("cannot open tuning store " + path.string() + " for writing (" +
                       error.code_name() + "): check that the file and its directory " +
                       path.parent_path().string() + " are writable, or pass another --db path");
  }
}

// Refuses files the store must not write: other programs' SQLite files, frozen DBs, newer
// schemas.
void check_writable_kind(const Connection& connection, const std::string& path) {
  const std::int64_t application_id = connection.query_int64("PRAGMA application_id");
  if (application_id == tunedb::kFrozenApplicationId) {
    throw DbInputError(path +
                       " is a frozen tuning DB and is never written again: record into the "
                       "tuning store and freeze it anew");
  }
  if (application_id != 0 && application_id != tunedb::kApplicationId) {
    throw DbInputError(path + " is not a tuning store (SQLite application_id " +
                       std::to_string(application_id) +
                       " belongs to another program): pass another --db path");
  }
  Statement frozen =
      connection.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'metadata'");
  if (frozen.step()) {
    Statement flag = connection.prepare("SELECT value FROM metadata WHERE key = 'frozen'");
    if (flag.step() && flag.column_text(0) == "1") {
      throw DbInputError(path +
                         " is a frozen tuning DB (metadata frozen=1) and is never written "
                         "again: record into the tuning store and freeze it anew");
    }
  }
  const std::int64_t version = connection.query_int64("PRAGMA user_version");
  if (version > kSchemaVersion) {
    throw DbInputError(path + " has schema version " + std::to_string(version) +
                       ", newer than the version " + std::to_string(kSchemaVersion) +
                       " this tuner writes: use a newer tuner, or another --db path");
  }
  if (version != 0 && version < tunedb::kFirstShapeTextVersion) {
    throw DbInputError(tunedb::old_schema_message(path, version));
  }
}

void create_schema(const Connection& connection) {
  // journal_mode and foreign_keys cannot change inside a transaction.
  // WAL + synchronous=NORMAL: a commit survives a killed process (not always a power cut), and
  // readers (report, freeze) never block the sweep.
  connection.exec(
      "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON");
  Transaction transaction(connection);
  const int version = static_cast<int>(connection.query_int64("PRAGMA user_version"));
  begin_migration(connection, version);
  connection.exec(kStoreSchemaSql);
  finish_migration(connection, version);
  connection.exec("PRAGMA application_id = " + std::to_string(tunedb::kApplicationId) +
                  "; PRAGMA user_version = " + std::to_string(kSchemaVersion));
  transaction.commit();
}

}  // namespace

Store Store::open(const std::filesystem::path& path) {
  check_directory(path);
  Connection connection = open_writable(path);
  try {
    check_writable_kind(connection, path.string());
    create_schema(connection);
  } catch (const DbError& error) {
    const int primary = error.primary_code();
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
      throw error.with_context("tuning store " + path.string() +
                               " is corrupted or not a SQLite database: move it away and pass "
                               "another --db path (or restore a good copy)");
    }
    throw error.with_context("opening tuning store " + path.string());
  }
  return Store(std::move(connection), path.string());
}

Store Store::open_read_only(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw DbInputError("tuning store " + path.string() +
                       " does not exist: pass the --db file a sweep or plan wrote");
  }
  Connection connection = Connection::open(path, OpenMode::read_only);
  try {
    check_writable_kind(connection, path.string());
    const std::int64_t version = connection.query_int64("PRAGMA user_version");
    read_older_schema(connection, static_cast<int>(version));
    if (version != kSchemaVersion && (version < 1 || version > 3)) {
      throw DbInputError(path.string() + " has schema version " + std::to_string(version) +
                         ", not " + std::to_string(kSchemaVersion) +
                         ": open it once with a writing command (tuner plan --db) to upgrade it");
    }
  } catch (const DbError& failure) {
    const int primary = failure.primary_code();
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
      throw DbInputError("tuning store " + path.string() +
                         " is corrupted or not a SQLite database: pass another --db path");
    }
    throw failure.with_context("opening tuning store " + path.string() + " read-only");
  }
  return Store(std::move(connection), path.string());
}

}  // namespace tuner::db
