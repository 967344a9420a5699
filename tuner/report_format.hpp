#pragma once
// Internal to tuner report (tuner/report.hpp is the interface): how its tables write numbers and
// read a config's params JSON.
#include <map>
#include <optional>
#include <string>

namespace tuner::report {

// `value` with `decimals` digits after the point.
std::string fixed(double value, int decimals);
// Microseconds with 2 decimals; "-" when empty.
std::string optional_us(const std::optional<double>& value);
// 0.123 -> "12.3%".
std::string percent(double fraction);
// A flat JSON object of integers, by name.
std::map<std::string, int> parse_params(const std::string& params_json);

}  // namespace tuner::report
