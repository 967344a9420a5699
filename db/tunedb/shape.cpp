#include "db/tunedb/shape.hpp"

namespace tunedb {
namespace {

bool name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }
bool value_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

std::optional<std::string> pair_problem(std::string_view name, std::string_view value) {
  if (name.empty() || value.empty()) return "an empty name or value";
  for (char c : name) {
    if (!name_char(c)) return "name '" + std::string(name) + "' has a character outside [a-z0-9_]";
  }
  for (char c : value) {
    if (!value_char(c)) {
      return "value '" + std::string(value) + "' has a character outside [A-Za-z0-9_.-]";
    }
  }
  const bool digits = value.find_first_not_of("0123456789") == std::string_view::npos;
  if (digits && value.size() > 1 && value[0] == '0') {
    return "integer '" + std::string(value) + "' has a leading zero";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> shape_problem(std::string_view text) {
  if (text.empty()) return std::string("empty");
  std::string_view previous;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view pair = text.substr(start, comma - start);
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos) return "'" + std::string(pair) + "' has no '='";
    const std::string_view name = pair.substr(0, equals);
    if (auto problem = pair_problem(name, pair.substr(equals + 1))) return problem;
    if (!previous.empty() && name <= previous) {
      return "'" + std::string(name) + "' after '" + std::string(previous) +
             "': names must be sorted and unique";
    }
    previous = name;
    start = comma + 1;
  }
  return std::nullopt;
}

bool is_canonical_shape(std::string_view text) noexcept {
  try {
    return !shape_problem(text).has_value();
  } catch (...) {
    return false;
  }
}

std::optional<std::string> make_shape(const std::map<std::string, std::string, std::less<>>& dims) {
  std::string text;
  for (const auto& [name, value] : dims) {
    if (pair_problem(name, value)) return std::nullopt;
    if (!text.empty()) text += ',';
    text += name;
    text += '=';
    text += value;
  }
  if (text.empty()) return std::nullopt;
  return text;
}

std::string old_schema_message(const std::string& path, long long version) {
  return path + " has schema version " + std::to_string(version) +
         ", written before shapes were data (its winners are keyed on one family's fixed shape "
         "columns); this build reads version 2 and does not convert it: re-run "
         "`tuner sweep --db NEW.db` (and `tuner freeze`) with this build, or read the file with "
         "the tuner that wrote it";
}

}  // namespace tunedb
