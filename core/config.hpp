#pragma once
// A family's search space as plain data (named parameters with their values), and one point in it.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tuner {

struct Parameter {
  std::string name;
  std::vector<int> values;
  // Launch-only parameters change the grid, not the binary: configs that differ only in them
  // share one compile.
  bool launch_only = false;
};

struct Config {
  std::vector<std::pair<std::string, int>> values;  // in the family's parameter order

  // Throws std::out_of_range naming the parameter when absent.
  int at(std::string_view name) const;
  bool operator==(const Config& other) const = default;
};

// Every member of the cross product, the last parameter varying fastest.
std::vector<Config> cross_product(const std::vector<Parameter>& space);

// Canonical JSON object text: keys sorted, compact, integers ({"name_a":16,"name_b":4,...}).
// Used as the DB key and in cache keys, so equal configs always give equal text.
std::string to_json(const Config& config);
// Parses to_json's output (or any flat JSON object of integers); throws InputError when malformed.
Config config_from_json(std::string_view json);

// The compile key: the config without its launch-only parameters, as canonical JSON.
std::string compile_key(const Config& config, const std::vector<Parameter>& space);

// "name_a=16 name_b=4 ..." for tables and messages.
std::string describe(const Config& config);

struct ConfigHash {
  std::size_t operator()(const Config& config) const noexcept;
};

}  // namespace tuner
