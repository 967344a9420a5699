#pragma once
// Errors of the db/ layer (the store and the tunedb runtime). db/ never includes tuner/, so these
// are its own types: DbError for a failed SQLite call or a damaged file, DbInputError for a
// problem with what the user handed in (a missing file, an unknown run id, a DB from a newer tool):
// the CLI maps DbInputError to exit code 2, like tuner::InputError.
#include <stdexcept>
#include <string>

namespace tuner::db {

// The name of an SQLite result code, extended codes included ("SQLITE_CONSTRAINT_UNIQUE").
// Unknown codes come back as "SQLITE_<number>".
std::string sqlite_code_name(int code);

class DbError : public std::runtime_error {
 public:
  // A failed SQLite call. `call` is the API name ("sqlite3_step"), `code` the extended result
  // code, `detail` sqlite3_errmsg's text, `sql` the statement (empty when none), `path` the file.
  DbError(const std::string& call, int code, const std::string& detail, const std::string& sql,
          const std::string& path);
  // A damaged or inconsistent file found without a failing SQLite call (checksum mismatch,
  // malformed row): `message` already names what is wrong and how to fix it.
  DbError(const std::string& message, std::string path);

  const std::string& call() const noexcept { return call_; }
  int code() const noexcept { return code_; }  // 0 when no SQLite call failed
  int primary_code() const noexcept { return code_ & 0xff; }
  std::string code_name() const { return code_ == 0 ? std::string() : sqlite_code_name(code_); }
  const std::string& sql() const noexcept { return sql_; }
  const std::string& path() const noexcept { return path_; }

  // The same error with `context` ("opening tuning DB /x.db") put in front of the message.
  DbError with_context(const std::string& context) const;

 private:
  DbError(const std::string& message, std::string call, int code, std::string sql,
          std::string path);

  std::string call_;
  int code_ = 0;
  std::string sql_;
  std::string path_;
};

// Bad input from the user: a missing or foreign file, an unknown run id, a newer schema, a
// frozen DB opened for writing. The message names the input and the fix.
class DbInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tuner::db
