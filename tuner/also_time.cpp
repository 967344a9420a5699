#include "tuner/also_time.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace tuner {

namespace {

using nlohmann::json;

const char* const kFix = ": write it with scripts/regret.py also-time";

int batch_of(const std::string& key, const std::string& source, const std::vector<int>& batches) {
  std::size_t used = 0;
  int batch = 0;
  try {
    batch = std::stoi(key, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != key.size() || batch < 1) {
    throw InputError(source + ": key '" + key + "' is not a batch size (a positive integer)" +
                     kFix);
  }
  if (std::find(batches.begin(), batches.end(), batch) == batches.end()) {
    throw InputError(source + ": batch " + key +
                     " is not one of the sweep's --batches: add it there or drop it from the file");
  }
  return batch;
}

// The config's canonical JSON; every parameter of the space with one of its values.
std::string config_of(const json& value, const std::string& where,
                      const std::vector<Parameter>& space) {
  if (!value.is_object()) throw InputError(where + " is not a config object" + kFix);
  const Config config = config_from_json(value.dump());
  for (const Parameter& parameter : space) {
    int chosen = 0;
    try {
      chosen = config.at(parameter.name);
    } catch (const std::out_of_range&) {
      throw InputError(where + " gives no '" + parameter.name +
                       "': name every parameter of the family");
    }
    if (std::find(parameter.values.begin(), parameter.values.end(), chosen) ==
        parameter.values.end()) {
      throw InputError(where + ": " + parameter.name + "=" + std::to_string(chosen) +
                       " is not a value of the family's space");
    }
  }
  if (config.values.size() != space.size()) {
    throw InputError(where + " names a parameter the family does not have: " + value.dump());
  }
  return to_json(config);
}

}  // namespace

AlsoTime parse_also_time(const std::string& text, const std::string& source,
                         const std::vector<int>& batches, const std::vector<Parameter>& space) {
  json parsed;
  try {
    parsed = json::parse(text);
  } catch (const json::exception& error) {
    throw InputError(source + " is not JSON (" + error.what() + ")" + kFix);
  }
  if (!parsed.is_object()) {
    throw InputError(source + " is not an object {\"BATCH\": [CONFIG, ...]}" + kFix);
  }
  AlsoTime also;
  for (const auto& [key, configs] : parsed.items()) {
    const int batch = batch_of(key, source, batches);
    std::string at = source;
    at.append(": batch ").append(key);
    if (!configs.is_array()) {
      throw InputError(at.append(" maps to no list of configs").append(kFix));
    }
    std::vector<std::string>& named = also[batch];
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const std::string where = at + ", config " + std::to_string(i + 1);
      const std::string params = config_of(configs[i], where, space);
      if (std::find(named.begin(), named.end(), params) == named.end()) named.push_back(params);
    }
  }
  return also;
}

}  // namespace tuner
