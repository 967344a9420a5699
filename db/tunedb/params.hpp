#pragma once
// Kernel parameters as stored: a flat JSON object of integers in canonical form (keys sorted,
// compact, no spaces: {"name_a":16,"name_b":4}). Parsed here without a JSON library because
// tunedb depends on SQLite only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunedb {

struct NamedValue {
  std::string name;
  std::int64_t value = 0;
};

// Parses a flat JSON object whose values are integers; names sorted. nullopt when `json` is not
// such an object (nested values, fractions, duplicate or escaped names, trailing text).
std::optional<std::vector<NamedValue>> parse_params_json(std::string_view json);

// The canonical text of sorted `params`.
std::string params_to_json(const std::vector<NamedValue>& params);

// Whether `json` is already canonical: params_to_json of its parse gives it back, byte for byte.
bool is_canonical_params_json(std::string_view json);

// parse + serialize (the text itself when canonical): nullopt when `json` is not a flat object of
// integers.
std::optional<std::string> canonical_params_json(std::string_view json);

}  // namespace tunedb
