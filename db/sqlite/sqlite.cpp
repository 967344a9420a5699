#include "db/sqlite/sqlite.hpp"

#include <sqlite3.h>

#include <cstdio>
#include <limits>
#include <utility>

namespace tuner::db {
namespace {

std::string db_path(sqlite3* db) {
  const char* name = db == nullptr ? nullptr : sqlite3_db_filename(db, "main");
  return name == nullptr ? std::string() : std::string(name);
}

bool is_uri_safe(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~' || c == '/';
}

}  // namespace

std::string sqlite_uri(const std::filesystem::path& path, OpenMode mode) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (const char c : path.string()) {
    if (is_uri_safe(c)) {
      uri += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      uri += '%';
      uri += kHex[byte >> 4];
      uri += kHex[byte & 0xf];
    }
  }
  if (mode == OpenMode::read_only) uri += "?mode=ro";
  if (mode == OpenMode::read_only_immutable) uri += "?mode=ro&immutable=1";
  return uri;
}

// ---- Statement ----

Statement::Statement(Statement&& other) noexcept : stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

std::string Statement::sql() const {
  const char* text = stmt_ == nullptr ? nullptr : sqlite3_sql(stmt_);
  return text == nullptr ? std::string() : std::string(text);
}

void Statement::fail(const char* call, int rc) const {
  sqlite3* db = sqlite3_db_handle(stmt_);
  const int code = db == nullptr ? rc : sqlite3_extended_errcode(db);
  throw DbError(call, code, db == nullptr ? sqlite3_errstr(rc) : sqlite3_errmsg(db), sql(),
                db_path(db));
}

int Statement::parameter_index(std::string_view name) const {
  const int index = sqlite3_bind_parameter_index(stmt_, std::string(name).c_str());
  if (index == 0) {
    throw DbError("no parameter named '" + std::string(name) + "' in `" + sql() + "`",
                  db_path(sqlite3_db_handle(stmt_)));
  }
  return index;
}

void Statement::check_bind(int rc, int index) const {
  if (rc != SQLITE_OK) {
    fail(("sqlite3_bind (parameter " + std::to_string(index) + ")").c_str(), rc);
  }
}

void Statement::bind_int64(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value), index);
}

void Statement::bind_double(int index, double value) {
  check_bind(sqlite3_bind_double(stmt_, index, value), index);
}

void Statement::bind_text(int index, std::string_view value) {
  check_bind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
}

void Statement::bind_null(int index) { check_bind(sqlite3_bind_null(stmt_, index), index); }

void Statement::bind_blob(int index, Blob value) {
  // A zero-length BLOB is still a BLOB, not NULL: give SQLite a valid pointer.
  static constexpr char kEmpty = 0;
  const void* data = value.size == 0 ? &kEmpty : value.data;
  check_bind(sqlite3_bind_blob64(stmt_, index, data, value.size, SQLITE_TRANSIENT), index);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail("sqlite3_step", rc);
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() noexcept {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const noexcept { return sqlite3_column_count(stmt_); }

std::string Statement::column_name(int column) const {
  const char* name = sqlite3_column_name(stmt_, column);
  return name == nullptr ? std::string() : std::string(name);
}

bool Statement::is_null(int column) const noexcept {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int64(int column) const noexcept {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::column_double(int column) const noexcept {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  return text == nullptr
             ? std::string()
             : std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

std::vector<char> Statement::column_blob(int column) const {
  const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  const int size = sqlite3_column_bytes(stmt_, column);
  return data == nullptr ? std::vector<char>() : std::vector<char>(data, data + size);
}

std::optional<std::int64_t> Statement::column_optional_int64(int column) const noexcept {
  if (is_null(column)) return std::nullopt;
  return column_int64(column);
}

std::optional<double> Statement::column_optional_double(int column) const noexcept {
  if (is_null(column)) return std::nullopt;
  return column_double(column);
}

std::optional<std::string> Statement::column_optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_text(column);
}

// ---- Connection ----

Connection::Connection(Connection&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

// close_v2 never fails on a valid handle: statements still alive keep it as a zombie until
// they are finalized.
Connection::~Connection() { sqlite3_close_v2(db_); }

Connection Connection::open(const std::filesystem::path& path, OpenMode mode) {
  sqlite3* raw = nullptr;
  int rc = SQLITE_OK;
  if (mode == OpenMode::read_write_create) {
    rc = sqlite3_open_v2(path.c_str(), &raw,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE,
                         nullptr);
  } else {
    rc = sqlite3_open_v2(sqlite_uri(path, mode).c_str(), &raw,
                         SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_EXRESCODE, nullptr);
  }
  Connection connection(raw);  // closes the handle SQLite may return even on failure
  if (rc != SQLITE_OK) {
    throw DbError("sqlite3_open_v2", raw == nullptr ? rc : sqlite3_extended_errcode(raw),
                  raw == nullptr ? sqlite3_errstr(rc) : sqlite3_errmsg(raw), std::string(),
                  path.string());
  }
  sqlite3_extended_result_codes(raw, 1);
  return connection;
}

Statement Connection::prepare(std::string_view sql) const {
  if (sql.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw DbError("SQL text too long to prepare", path());
  }
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  Statement statement(raw);
  if (rc != SQLITE_OK) {
    throw DbError("sqlite3_prepare_v2", sqlite3_extended_errcode(db_), sqlite3_errmsg(db_),
                  std::string(sql), path());
  }
  if (!statement) throw DbError("empty SQL statement", path());
  return statement;
}

void Connection::exec(const std::string& sql) const {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    const std::string detail = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw DbError("sqlite3_exec", sqlite3_extended_errcode(db_), detail, sql, path());
  }
}

std::int64_t Connection::query_int64(std::string_view sql) const {
  Statement statement = prepare(sql);
  if (!statement.step()) {
    throw DbError("query returned no row: `" + std::string(sql) + "`", path());
  }
  return statement.column_int64(0);
}

std::int64_t Connection::last_insert_rowid() const noexcept {
  return sqlite3_last_insert_rowid(db_);
}

std::string Connection::path() const { return db_path(db_); }

// ---- Transaction ----

Transaction::Transaction(const Connection& connection) : connection_(&connection) {
  connection_->exec("BEGIN IMMEDIATE");
}

void Transaction::commit() {
  connection_->exec("COMMIT");
  open_ = false;
}

Transaction::~Transaction() {
  // Some errors (SQLITE_FULL, SQLITE_IOERR...) already rolled back: autocommit is then on again.
  if (!open_ || sqlite3_get_autocommit(connection_->get()) != 0) return;
  if (sqlite3_exec(connection_->get(), "ROLLBACK", nullptr, nullptr, nullptr) != SQLITE_OK) {
    const char* file = sqlite3_db_filename(connection_->get(), "main");  // no allocation here
    std::fprintf(stderr, "tuner: warning: ROLLBACK failed on %s: %s\n",
                 file == nullptr ? "(memory)" : file, sqlite3_errmsg(connection_->get()));
  }
}

}  // namespace tuner::db
