#pragma once
// Opening tuning DBs for the read-side commands (query, export): every failure to open becomes an
// InputError (exit code 2) that names the file and the fix.
#include <string>
#include <vector>

#include "db/tunedb/tunedb.hpp"

namespace tuner::cli {

// TuningDb::open, with a missing, foreign, newer, damaged or checksum-failing file reported as
// InputError naming `path` (the file was handed in by the user; the fix is a different --db).
tunedb::TuningDb open_tuning_db(const std::string& path);

// Throws InputError when `path` does not exist or is a directory; `option` names the flag.
void require_file(const std::string& path, const std::string& option);

// "a, b, c"
std::string join_names(const std::vector<std::string>& names);

}  // namespace tuner::cli
