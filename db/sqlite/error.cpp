#include "db/sqlite/error.hpp"

#include <sqlite3.h>

#include <array>
#include <utility>

namespace tuner::db {
namespace {

struct CodeName {
  int code;
  const char* name;
};

#define TUNER_DB_CODE(code) \
  CodeName { code, #code }
constexpr std::array kCodeNames = {
    TUNER_DB_CODE(SQLITE_OK),
    TUNER_DB_CODE(SQLITE_ERROR),
    TUNER_DB_CODE(SQLITE_INTERNAL),
    TUNER_DB_CODE(SQLITE_PERM),
    TUNER_DB_CODE(SQLITE_ABORT),
    TUNER_DB_CODE(SQLITE_BUSY),
    TUNER_DB_CODE(SQLITE_LOCKED),
    TUNER_DB_CODE(SQLITE_NOMEM),
    TUNER_DB_CODE(SQLITE_READONLY),
    TUNER_DB_CODE(SQLITE_INTERRUPT),
    TUNER_DB_CODE(SQLITE_IOERR),
    TUNER_DB_CODE(SQLITE_CORRUPT),
    TUNER_DB_CODE(SQLITE_NOTFOUND),
    TUNER_DB_CODE(SQLITE_FULL),
    TUNER_DB_CODE(SQLITE_CANTOPEN),
    TUNER_DB_CODE(SQLITE_PROTOCOL),
    TUNER_DB_CODE(SQLITE_EMPTY),
    TUNER_DB_CODE(SQLITE_SCHEMA),
    TUNER_DB_CODE(SQLITE_TOOBIG),
    TUNER_DB_CODE(SQLITE_CONSTRAINT),
    TUNER_DB_CODE(SQLITE_MISMATCH),
    TUNER_DB_CODE(SQLITE_MISUSE),
    TUNER_DB_CODE(SQLITE_NOLFS),
    TUNER_DB_CODE(SQLITE_AUTH),
    TUNER_DB_CODE(SQLITE_FORMAT),
    TUNER_DB_CODE(SQLITE_RANGE),
    TUNER_DB_CODE(SQLITE_NOTADB),
    TUNER_DB_CODE(SQLITE_NOTICE),
    TUNER_DB_CODE(SQLITE_WARNING),
    TUNER_DB_CODE(SQLITE_ROW),
    TUNER_DB_CODE(SQLITE_DONE),
    TUNER_DB_CODE(SQLITE_ERROR_MISSING_COLLSEQ),
    TUNER_DB_CODE(SQLITE_ERROR_RETRY),
    TUNER_DB_CODE(SQLITE_ERROR_SNAPSHOT),
    TUNER_DB_CODE(SQLITE_IOERR_READ),
    TUNER_DB_CODE(SQLITE_IOERR_SHORT_READ),
    TUNER_DB_CODE(SQLITE_IOERR_WRITE),
    TUNER_DB_CODE(SQLITE_IOERR_FSYNC),
    TUNER_DB_CODE(SQLITE_IOERR_DIR_FSYNC),
    TUNER_DB_CODE(SQLITE_IOERR_TRUNCATE),
    TUNER_DB_CODE(SQLITE_IOERR_FSTAT),
    TUNER_DB_CODE(SQLITE_IOERR_UNLOCK),
    TUNER_DB_CODE(SQLITE_IOERR_RDLOCK),
    TUNER_DB_CODE(SQLITE_IOERR_DELETE),
    TUNER_DB_CODE(SQLITE_IOERR_NOMEM),
    TUNER_DB_CODE(SQLITE_IOERR_ACCESS),
    TUNER_DB_CODE(SQLITE_IOERR_CHECKRESERVEDLOCK),
    TUNER_DB_CODE(SQLITE_IOERR_LOCK),
    TUNER_DB_CODE(SQLITE_IOERR_CLOSE),
    TUNER_DB_CODE(SQLITE_IOERR_SHMOPEN),
    TUNER_DB_CODE(SQLITE_IOERR_SHMSIZE),
    TUNER_DB_CODE(SQLITE_IOERR_SHMMAP),
    TUNER_DB_CODE(SQLITE_IOERR_SEEK),
    TUNER_DB_CODE(SQLITE_IOERR_DELETE_NOENT),
    TUNER_DB_CODE(SQLITE_IOERR_MMAP),
    TUNER_DB_CODE(SQLITE_IOERR_DATA),
    TUNER_DB_CODE(SQLITE_IOERR_CORRUPTFS),
    TUNER_DB_CODE(SQLITE_BUSY_RECOVERY),
    TUNER_DB_CODE(SQLITE_BUSY_SNAPSHOT),
    TUNER_DB_CODE(SQLITE_BUSY_TIMEOUT),
    TUNER_DB_CODE(SQLITE_CANTOPEN_NOTEMPDIR),
    TUNER_DB_CODE(SQLITE_CANTOPEN_ISDIR),
    TUNER_DB_CODE(SQLITE_CANTOPEN_FULLPATH),
    TUNER_DB_CODE(SQLITE_CANTOPEN_DIRTYWAL),
    TUNER_DB_CODE(SQLITE_CANTOPEN_SYMLINK),
    TUNER_DB_CODE(SQLITE_CORRUPT_SEQUENCE),
    TUNER_DB_CODE(SQLITE_CORRUPT_INDEX),
    TUNER_DB_CODE(SQLITE_READONLY_RECOVERY),
    TUNER_DB_CODE(SQLITE_READONLY_CANTLOCK),
    TUNER_DB_CODE(SQLITE_READONLY_ROLLBACK),
    TUNER_DB_CODE(SQLITE_READONLY_DBMOVED),
    TUNER_DB_CODE(SQLITE_READONLY_CANTINIT),
    TUNER_DB_CODE(SQLITE_READONLY_DIRECTORY),
    TUNER_DB_CODE(SQLITE_ABORT_ROLLBACK),
    TUNER_DB_CODE(SQLITE_CONSTRAINT_CHECK),
    TUNER_DB_CODE(SQLITE_CONSTRAINT_FOREIGNKEY),
    TUNER_DB_CODE(SQLITE_CONSTRAINT_FUNCTION),
    TUNER_DB_CODE(SQLITE_CONSTRAINT_NOTNULL),
    TUNER_DB_CODE(SQLITE_CONSTRAINT_PRIMARYKEY),
    TUNER_DB_CODE(SQLITE_CONSTRAINT_TRIGGER),
    TUNER_DB_CODE(SQLITE_CONSTRAINT_UNIQUE),
    TUNER_DB_CODE(SQLITE_CONSTRAINT_ROWID),
    TUNER_DB_CODE(SQLITE_CONSTRAINT_DATATYPE),
};
#undef TUNER_DB_CODE

std::string sqlite_message(const std::string& call, int code, const std::string& detail,
                           const std::string& sql, const std::string& path) {
  std::string message = "SQLite error: " + sqlite_code_name(code) + " (" + detail + "): " + call;
  if (!sql.empty()) message += " of `" + sql + "`";
  if (!path.empty()) message += " on " + path;
  return message;
}

}  // namespace

std::string sqlite_code_name(int code) {
  for (const CodeName& entry : kCodeNames) {
    if (entry.code == code) return entry.name;
  }
  // An extended code we do not list: name its primary code and keep the number.
  for (const CodeName& entry : kCodeNames) {
    if (entry.code == (code & 0xff) && code != (code & 0xff)) {
      return std::string(entry.name) + "_" + std::to_string(code >> 8);
    }
  }
  return "SQLITE_" + std::to_string(code);
}

// Copies, not moves: the message is built from the same arguments, and the order in which
// arguments are initialized is unspecified.
DbError::DbError(const std::string& call, int code, const std::string& detail,
                 const std::string& sql, const std::string& path)
    : DbError(sqlite_message(call, code, detail, sql, path), call, code, sql, path) {}

DbError::DbError(const std::string& message, std::string path)
    : DbError(message, std::string(), 0, std::string(), std::move(path)) {}

DbError::DbError(const std::string& message, std::string call, int code, std::string sql,
                 std::string path)
    : std::runtime_error(message),
      call_(std::move(call)),
      code_(code),
      sql_(std::move(sql)),
      path_(std::move(path)) {}

DbError DbError::with_context(const std::string& context) const {
  return DbError(context + ": " + what(), call_, code_, sql_, path_);
}

}  // namespace tuner::db
