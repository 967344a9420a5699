#include "tuner/cli/db_open.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace tuner::cli {

void require_file(const std::string& path, const std::string& option) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (path.empty() || !std::filesystem::exists(status)) {
    throw InputError(option + " '" + path + "' does not exist: pass the path of a tuning DB");
  }
  if (std::filesystem::is_directory(status)) {
    throw InputError(option + " '" + path + "' is a directory: pass the path of a tuning DB file");
  }
}

tunedb::TuningDb open_tuning_db(const std::string& path) {
  require_file(path, "--db");
  try {
    return tunedb::TuningDb::open(path);
  } catch (const tunedb::DbInputError& error) {
    throw InputError(std::string("cannot use --db ") + path + ": " + error.what());
  } catch (const tunedb::DbError& error) {
    throw InputError(std::string("cannot read --db ") + path + ": " + error.what());
  }
}

std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace tuner::cli
