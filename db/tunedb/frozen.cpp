#include "db/tunedb/frozen.hpp"

#include <sqlite3.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "db/tunedb/cubin_elf.hpp"
#include "db/tunedb/format.hpp"
#include "db/tunedb/shape.hpp"

namespace tunedb::detail {

using tuner::db::Connection;
using tuner::db::DbError;
using tuner::db::DbInputError;
using tuner::db::OpenMode;
using tuner::db::Statement;

const char* const kFrozenSchemaSql = R"sql(
CREATE TABLE metadata(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE defaults(
  family TEXT PRIMARY KEY,
  params_json TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE winners(
  family TEXT NOT NULL,
  budget_arch TEXT NOT NULL,
  measured_arch TEXT NOT NULL,
  device_name TEXT NOT NULL,
  shape TEXT NOT NULL,
  batch INTEGER NOT NULL,
  params_json TEXT NOT NULL,
  median_us REAL NOT NULL,
  default_params_json TEXT NOT NULL,
  default_median_us REAL NOT NULL,
  speedup_vs_default REAL NOT NULL,
  noise_rel REAL NOT NULL,
  decision TEXT NOT NULL CHECK (decision IN ('tuned', 'default_kept')),
  reason TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  run_id INTEGER NOT NULL,
  bytes_moved INTEGER,
  PRIMARY KEY (family, budget_arch, shape, batch)
) WITHOUT ROWID;
CREATE TABLE cubins(
  family TEXT NOT NULL,
  arch TEXT NOT NULL,
  params_json TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  kernel_names TEXT NOT NULL,
  launch_contract TEXT NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (family, arch, params_json, source_hash)
) WITHOUT ROWID;
CREATE TABLE launches(
  family TEXT NOT NULL,
  arch TEXT NOT NULL,
  params_json TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  role TEXT NOT NULL,
  kernel_name TEXT NOT NULL,
  block_threads INTEGER NOT NULL CHECK (block_threads > 0),
  dynamic_smem INTEGER NOT NULL CHECK (dynamic_smem >= 0),
  max_dynamic_smem INTEGER NOT NULL CHECK (max_dynamic_smem >= dynamic_smem),
  launch_params TEXT NOT NULL,
  PRIMARY KEY (family, arch, params_json, source_hash, role),
  FOREIGN KEY (family, arch, params_json, source_hash)
    REFERENCES cubins (family, arch, params_json, source_hash)
) WITHOUT ROWID;
)sql";

namespace {

struct TableSpec {
  const char* name;
  const char* select;  // every column, in primary-key order
};

// The fixed order of the checksum. The checksum row itself is left out of metadata.
constexpr std::array kChecksumTables = {
    TableSpec{"metadata", "SELECT key, value FROM metadata WHERE key <> 'checksum' ORDER BY key"},
    TableSpec{"defaults", "SELECT family, params_json FROM defaults ORDER BY family"},
    TableSpec{"winners",
              "SELECT family, budget_arch, measured_arch, device_name, shape, batch, params_json, "
              "median_us, default_params_json, default_median_us, speedup_vs_default, noise_rel, "
              "decision, reason, source_hash, run_id, bytes_moved FROM winners ORDER BY family, "
              "budget_arch, shape, batch"},
    TableSpec{"cubins",
              "SELECT family, arch, params_json, source_hash, kernel_names, launch_contract, bytes "
              "FROM cubins "
              "ORDER BY family, arch, params_json, source_hash"},
    TableSpec{"launches",
              "SELECT family, arch, params_json, source_hash, role, kernel_name, block_threads, "
              "dynamic_smem, max_dynamic_smem, launch_params FROM launches ORDER BY family, arch, "
              "params_json, source_hash, role"},
};

void hash_u64(Fnv1a64& hash, std::uint64_t value) {
  std::array<unsigned char, 8> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<unsigned char>(value >> (8 * i));  // little endian on every host
  }
  hash.update(bytes.data(), bytes.size());
}

void hash_tag(Fnv1a64& hash, char tag) { hash.update(&tag, 1); }

void hash_bytes(Fnv1a64& hash, char tag, const void* data, std::size_t size) {
  hash_tag(hash, tag);
  hash_u64(hash, size);
  hash.update(data, size);
}

void hash_text(Fnv1a64& hash, std::string_view text) {
  hash_bytes(hash, 'T', text.data(), text.size());
}

void hash_column(Fnv1a64& hash, sqlite3_stmt* stmt, int column) {
  switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_INTEGER:
      hash_tag(hash, 'I');
      hash_u64(hash, static_cast<std::uint64_t>(sqlite3_column_int64(stmt, column)));
      break;
    case SQLITE_FLOAT: {
      const double value = sqlite3_column_double(stmt, column);
      std::uint64_t bits = 0;
      std::memcpy(&bits, &value, sizeof bits);
      hash_tag(hash, 'F');
      hash_u64(hash, bits);
      break;
    }
    case SQLITE_TEXT: {
      const auto* text = sqlite3_column_text(stmt, column);
      hash_bytes(hash, 'T', text, static_cast<std::size_t>(sqlite3_column_bytes(stmt, column)));
      break;
    }
    case SQLITE_BLOB: {
      const void* blob = sqlite3_column_blob(stmt, column);
      hash_bytes(hash, 'B', blob, static_cast<std::size_t>(sqlite3_column_bytes(stmt, column)));
      break;
    }
    default:
      hash_tag(hash, 'N');
  }
}

void hash_table(Fnv1a64& hash, const Connection& connection, const TableSpec& table) {
  Statement schema =
      connection.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1");
  schema.bind(1, std::string_view(table.name));
  hash_text(hash, table.name);
  hash_text(hash, schema.step() ? schema.column_text(0) : std::string());
  Statement rows = connection.prepare(table.select);
  const int columns = rows.column_count();
  while (rows.step()) {
    hash_tag(hash, 'R');
    for (int column = 0; column < columns; ++column) hash_column(hash, rows.get(), column);
  }
  hash_tag(hash, 'E');
}

// Every schema object (tables, indexes, views, triggers), so that an added or altered object
// changes the checksum as well as an edited row.
void hash_schema(Fnv1a64& hash, const Connection& connection) {
  hash_u64(hash, static_cast<std::uint64_t>(connection.query_int64("PRAGMA application_id")));
  hash_u64(hash, static_cast<std::uint64_t>(connection.query_int64("PRAGMA user_version")));
  Statement rows =
      connection.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name");
  while (rows.step()) {
    hash_tag(hash, 'S');
    for (int column = 0; column < 4; ++column) hash_column(hash, rows.get(), column);
  }
}

}  // namespace

void Fnv1a64::update(const void* data, std::size_t size) noexcept {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    hash_ ^= bytes[i];
    hash_ *= 0x100000001b3ULL;
  }
}

std::string frozen_checksum(const Connection& connection) {
  Fnv1a64 hash;
  hash_text(hash, "tunedb-frozen-checksum-v2");
  hash_schema(hash, connection);
  for (const TableSpec& table : kChecksumTables) hash_table(hash, connection, table);
  char text[32];
  std::snprintf(text, sizeof text, "fnv1a64:%016llx",
                static_cast<unsigned long long>(hash.value()));
  return text;
}

void check_db_path(const std::filesystem::path& path, const std::string& what) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw DbInputError(what + " " + path.string() +
                       " does not exist: pass the path of a file written by `tuner freeze` or "
                       "of a tuning store written by `tuner sweep`");
  }
  if (status.type() == std::filesystem::file_type::directory) {
    throw DbInputError(what + " " + path.string() + " is a directory: pass the DB file itself");
  }
}

std::string check_checksum(const Connection& connection, const std::string& path) {
  const std::optional<std::string> found = metadata_value(connection, "checksum");
  if (!found) {
    throw DbError("frozen tuning DB " + path +
                      " has no checksum row in its metadata, so its content cannot be trusted; "
                      "freeze it again from the store or restore a good copy",
                  path);
  }
  const std::string& stored = *found;
  const std::string computed = frozen_checksum(connection);
  if (computed != stored) {
    throw DbError("checksum mismatch in frozen tuning DB " + path + ": metadata says '" + stored +
                      "', the content hashes to '" + computed +
                      "'; the file changed after freezing (corruption or an edit): freeze it "
                      "again from the store or restore a good copy",
                  path);
  }
  return stored;
}

void check_cubin_arches(const Connection& connection, const std::string& path) {
  Statement rows = connection.prepare("SELECT family, arch, params_json, bytes FROM cubins");
  while (rows.step()) {
    const std::string arch = rows.column_text(1);
    const std::string problem =
        cubin_arch_problem(sqlite3_column_blob(rows.get(), 3),
                           static_cast<std::size_t>(sqlite3_column_bytes(rows.get(), 3)), arch);
    if (!problem.empty()) {
      std::string message = "frozen tuning DB " + path;
      message += ": the cubin of " + rows.column_text(0);
      message += " " + rows.column_text(2);
      message += " under arch " + arch;
      message += " " + problem;
      message += "; the file was edited or frozen wrongly: freeze it again from the store";
      throw DbError(message, path);
    }
  }
}

bool has_table(const Connection& connection, std::string_view name) {
  Statement statement =
      connection.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
  statement.bind(1, name);
  return statement.step();
}

std::optional<std::string> metadata_value(const Connection& connection, std::string_view key) {
  if (!has_table(connection, "metadata")) return std::nullopt;
  Statement statement = connection.prepare("SELECT value FROM metadata WHERE key = ?1");
  statement.bind(1, key);
  if (!statement.step()) return std::nullopt;
  return statement.column_text(0);
}

FileKind inspect_file(const Connection& connection, const std::string& path) {
  const std::int64_t application_id = connection.query_int64("PRAGMA application_id");
  if (application_id != 0 && application_id != kApplicationId &&
      application_id != kFrozenApplicationId) {
    throw DbInputError(path + " is not a tuning DB (SQLite application_id " +
                       std::to_string(application_id) +
                       " belongs to another program): pass a tuning store or a frozen DB");
  }
  FileKind kind;
  kind.schema_version = static_cast<int>(connection.query_int64("PRAGMA user_version"));
  kind.frozen = application_id == kFrozenApplicationId;
  // Before the version checks: a frozen file whose marker was cleared must not pass for a newer
  // store.
  if (!kind.frozen && (has_table(connection, "cubins") || has_table(connection, "metadata"))) {
    throw DbError(path +
                      " holds a frozen DB's tables (cubins, metadata) but its header does not "
                      "mark it frozen (SQLite application_id " +
                      std::to_string(application_id) +
                      "), so its checksum cannot be trusted: the file was edited or written by "
                      "an older tuner; freeze it again from the store",
                  path);
  }
  const int known = kind.frozen ? kFrozenSchemaVersion : kStoreSchemaVersion;
  const char* what = kind.frozen ? "frozen tuning DB" : "tuning store";
  if (kind.schema_version > known) {
    throw DbInputError(path + " is a " + what + " with schema version " +
                       std::to_string(kind.schema_version) + ", newer than the version " +
                       std::to_string(known) +
                       " this build reads: use a newer tuner/tunedb, or a DB written by this one");
  }
  if (kind.schema_version != 0 && kind.schema_version < kFirstShapeTextVersion) {
    throw DbInputError(old_schema_message(path, kind.schema_version));
  }
  if (kind.frozen && kind.schema_version != 0 &&
      kind.schema_version < kFirstLaunchContractFrozenVersion) {
    throw DbInputError(path + " is a frozen tuning DB of schema version " +
                       std::to_string(kind.schema_version) +
                       ", before frozen files carried launch metadata and each cubin's launch "
                       "contract (version " +
                       std::to_string(kFirstLaunchContractFrozenVersion) +
                       "): re-freeze it with `tuner freeze --db STORE --out NEW.db` of this build");
  }
  if (kind.schema_version == 0 || !has_table(connection, "winners")) {
    throw DbInputError(path + " is not a tuning DB (schema version " +
                       std::to_string(kind.schema_version) +
                       ", no winners table): pass a tuning store written by `tuner sweep` or a "
                       "file written by `tuner freeze`");
  }
  return kind;
}

CheckedFile open_checked(const std::filesystem::path& path, bool verify) {
  const std::string name = path.string();
  CheckedFile file{Connection::open(path, OpenMode::read_only), {}, {}};
  file.kind = inspect_file(file.connection, name);
  if (!file.kind.frozen) return file;
  // Nobody writes a frozen file: immutable skips locking and change detection. The header is
  // read again through the connection that reads the content.
  file.connection = Connection::open(path, OpenMode::read_only_immutable);
  file.kind = inspect_file(file.connection, name);
  if (!file.kind.frozen) {
    throw DbError("frozen tuning DB " + name + " changed while it was opened", name);
  }
  if (verify) {
    file.checksum = check_checksum(file.connection, name);
    check_cubin_arches(file.connection, name);
  } else {
    file.checksum = metadata_value(file.connection, "checksum").value_or("");
  }
  return file;
}

bool is_damage(const DbError& error) noexcept {
  const int primary = error.primary_code();
  return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_IOERR;
}

DbError reading_error(const DbError& error, const std::string& path) {
  if (is_damage(error)) {
    return error.with_context("cannot read tuning DB " + path +
                              ": the file is corrupted, truncated or not a SQLite database; "
                              "freeze it again from the store or restore a good copy");
  }
  return error.with_context("reading tuning DB " + path);
}

}  // namespace tunedb::detail
