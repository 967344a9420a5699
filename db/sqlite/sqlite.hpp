#pragma once
// Move-only RAII wrappers over the SQLite C API: Connection (sqlite3*), Statement (sqlite3_stmt*)
// and a commit-or-rollback Transaction guard. Every value reaches SQL through a bound parameter;
// every failure throws DbError quoting the call, the code's name, the SQL text and the file.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "db/sqlite/error.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace tuner::db {

enum class OpenMode {
  read_write_create,    // the store: created when missing
  read_only,            // URI mode=ro: a store another process may still be writing
  read_only_immutable,  // URI mode=ro&immutable=1: a frozen file nobody writes any more
};

// `file:` URI for `path` with `mode=ro` (and `immutable=1`), percent-encoding what URIs reserve.
std::string sqlite_uri(const std::filesystem::path& path, OpenMode mode);

// A BLOB parameter: the bytes are copied by SQLite at bind time.
struct Blob {
  const void* data = nullptr;
  std::size_t size = 0;
};

class Connection;

class Statement {
 public:
  // Adopts a prepared statement (finalized by the destructor).
  explicit Statement(sqlite3_stmt* stmt) noexcept : stmt_(stmt) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  ~Statement();

  sqlite3_stmt* get() const noexcept { return stmt_; }
  explicit operator bool() const noexcept { return stmt_ != nullptr; }

  // Binds by 1-based index or by name (":name", with its prefix). Accepts integers (and bool),
  // floating point, text (anything convertible to std::string_view), nullptr, Blob, and
  // std::optional of those (nullopt binds NULL).
  template <class T>
  Statement& bind(int index, const T& value);
  template <class T>
  Statement& bind(std::string_view name, const T& value) {
    return bind(parameter_index(name), value);
  }

  // Runs one step: true when a row is ready, false when done.
  bool step();
  // Steps to completion (for statements that return no rows, or whose rows are not wanted).
  void run();
  void reset() noexcept;

  int column_count() const noexcept;
  std::string column_name(int column) const;
  bool is_null(int column) const noexcept;
  std::int64_t column_int64(int column) const noexcept;
  double column_double(int column) const noexcept;
  std::string column_text(int column) const;
  std::vector<char> column_blob(int column) const;
  std::optional<std::int64_t> column_optional_int64(int column) const noexcept;
  std::optional<double> column_optional_double(int column) const noexcept;
  std::optional<std::string> column_optional_text(int column) const;

  // The SQL text as prepared (for error messages).
  std::string sql() const;

 private:
  int parameter_index(std::string_view name) const;
  void check_bind(int rc, int index) const;
  void bind_int64(int index, std::int64_t value);
  void bind_double(int index, double value);
  void bind_text(int index, std::string_view value);
  void bind_null(int index);
  void bind_blob(int index, Blob value);
  [[noreturn]] void fail(const char* call, int rc) const;

  sqlite3_stmt* stmt_ = nullptr;
};

class Connection {
 public:
  // Adopts an open handle (closed by the destructor).
  explicit Connection(sqlite3* db) noexcept : db_(db) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  ~Connection();

  // Opens `path`; throws DbError naming the path when SQLite cannot.
  static Connection open(const std::filesystem::path& path, OpenMode mode);

  sqlite3* get() const noexcept { return db_; }
  explicit operator bool() const noexcept { return db_ != nullptr; }

  Statement prepare(std::string_view sql) const;
  // Runs a script of statements without parameters (the schema, pragmas).
  void exec(const std::string& sql) const;
  // Runs a query that returns one integer (PRAGMA user_version, COUNT(*)).
  std::int64_t query_int64(std::string_view sql) const;

  std::int64_t last_insert_rowid() const noexcept;
  // The database file's path as SQLite resolved it ("" for an in-memory DB).
  std::string path() const;

 private:
  sqlite3* db_ = nullptr;
};

// BEGIN IMMEDIATE on construction; commit() makes it durable; a guard destroyed without commit()
// (an exception, an early return) rolls back, so a half-written record never stays behind.
class Transaction {
 public:
  explicit Transaction(const Connection& connection);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  void commit();

 private:
  const Connection* connection_;
  bool open_ = true;
};

template <class T>
Statement& Statement::bind(int index, const T& value) {
  using V = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<V, std::nullptr_t> || std::is_same_v<V, std::nullopt_t>) {
    bind_null(index);
  } else if constexpr (requires {
                         typename V::value_type;
                         value.has_value();
                       }) {
    if (value.has_value()) {
      bind(index, *value);
    } else {
      bind_null(index);
    }
  } else if constexpr (std::is_same_v<V, Blob>) {
    bind_blob(index, value);
  } else if constexpr (std::is_integral_v<V>) {
    bind_int64(index, static_cast<std::int64_t>(value));
  } else if constexpr (std::is_floating_point_v<V>) {
    bind_double(index, static_cast<double>(value));
  } else {
    static_assert(std::is_convertible_v<const V&, std::string_view>,
                  "Statement::bind: unsupported type");
    bind_text(index, std::string_view(value));
  }
  return *this;
}

}  // namespace tuner::db
