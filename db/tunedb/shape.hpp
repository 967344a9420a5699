#pragma once
// Shapes as the DB keys them: canonical text, "name=value" pairs sorted by name and joined by ','
// (e.g. "m=64,n=2048"). Names are [a-z0-9_]+, values
// [A-Za-z0-9_.-]+ and integers are written without sign or leading zeros. The families build this
// text (tuner's Family::canonicalize); tunedb only checks and assembles it, knowing no family.
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tunedb {

bool is_canonical_shape(std::string_view text) noexcept;

// Why `text` is not canonical, or nullopt when it is.
std::optional<std::string> shape_problem(std::string_view text);

// The canonical text of `dims` (sorted by the map); nullopt when a name or value is not allowed.
std::optional<std::string> make_shape(const std::map<std::string, std::string, std::less<>>& dims);

// The message for a file of a schema version before shapes were text (version 1).
std::string old_schema_message(const std::string& path, long long version);

}  // namespace tunedb
