#include "tuner/param_values.hpp"

#include <nlohmann/json.hpp>

namespace tuner {

std::vector<std::string> param_values(const std::string& params_json) {
  std::vector<std::string> values;
  const nlohmann::json parsed = nlohmann::json::parse(params_json, nullptr, false);
  if (!parsed.is_object()) return values;
  for (const auto& [name, value] : parsed.items()) values.push_back(name + "=" + value.dump());
  return values;
}

}  // namespace tuner
