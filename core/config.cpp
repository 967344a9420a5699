#include "core/config.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.hpp"

namespace tuner {

int Config::at(std::string_view name) const {
  for (const auto& [key, value] : values) {
    if (key == name) return value;
  }
  throw std::out_of_range("config has no parameter '" + std::string(name) + "'");
}

std::vector<Config> cross_product(const std::vector<Parameter>& space) {
  std::vector<Config> configs(1);
  for (const Parameter& parameter : space) {
    std::vector<Config> next;
    next.reserve(configs.size() * parameter.values.size());
    for (const Config& partial : configs) {
      for (int value : parameter.values) {
        Config extended = partial;
        extended.values.emplace_back(parameter.name, value);
        next.push_back(std::move(extended));
      }
    }
    configs = std::move(next);
  }
  return configs;
}

namespace {

bool plain_key(const std::string& key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string to_json_by_library(const Config& config) {
  std::map<std::string, int> sorted(config.values.begin(), config.values.end());
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [key, value] : sorted) object[key] = value;
  return object.dump();
}

}  // namespace

std::string to_json(const Config& config) {
  // By hand for plain keys: a plan turns ~160,000 configs into JSON, and nlohmann's object and
  // dump were ~12 % of a warm sweep's plan phase (bench/plan_warm.cpp). The same text: keys
  // sorted bytewise, the first of repeated keys kept (as std::map's range insert does).
  std::vector<const std::pair<std::string, int>*> entries;
  entries.reserve(config.values.size());
  for (const auto& entry : config.values) {
    if (!plain_key(entry.first)) return to_json_by_library(config);
    entries.push_back(&entry);
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto* a, const auto* b) { return a->first < b->first; });
  std::string text = "{";
  const std::string* previous = nullptr;
  for (const auto* entry : entries) {
    if (previous != nullptr && *previous == entry->first) continue;
    if (previous != nullptr) text += ',';
    text.append(1, '"').append(entry->first).append("\":").append(std::to_string(entry->second));
    previous = &entry->first;
  }
  return text + "}";
}

Config config_from_json(std::string_view json) {
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& error) {
    throw InputError("config JSON '" + std::string(json) + "' does not parse: " + error.what());
  }
  if (!parsed.is_object()) {
    throw InputError("config JSON '" + std::string(json) + "' is not an object of integers");
  }
  Config config;
  for (const auto& [key, value] : parsed.items()) {
    if (!value.is_number_integer()) {
      throw InputError("config JSON '" + std::string(json) + "': '" + key + "' is not an integer");
    }
    config.values.emplace_back(key, value.get<int>());
  }
  return config;
}

std::string compile_key(const Config& config, const std::vector<Parameter>& space) {
  Config compiled;
  for (const auto& entry : config.values) {
    const auto parameter = std::find_if(space.begin(), space.end(),
                                        [&](const Parameter& p) { return p.name == entry.first; });
    if (parameter == space.end() || !parameter->launch_only) compiled.values.push_back(entry);
  }
  return to_json(compiled);
}

std::string describe(const Config& config) {
  std::string text;
  for (const auto& [key, value] : config.values) {
    if (!text.empty()) text += ' ';
    text += key + '=' + std::to_string(value);
  }
  return text;
}

std::size_t ConfigHash::operator()(const Config& config) const noexcept {
  std::size_t hash = 0;
  for (const auto& [key, value] : config.values) {
    hash = hash * 1000003u ^ std::hash<std::string>{}(key);
    hash = hash * 1000003u ^ std::hash<int>{}(value);
  }
  return hash;
}

}  // namespace tuner
