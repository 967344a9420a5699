// core/config.cpp's to_json, written by hand for speed, against nlohmann's object dump of a
// std::map (the form it replaced, an independent serializer): the same text for every config
// of both families' spaces, for random configs with repeated keys and negative values, and for
// keys that need escaping (which take the library path). And to_json's text is the store's
// canonical params text, which tuner/plan_record.cpp relies on.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "core/config.hpp"
#include "db/store/store.hpp"
#include "kernels/registry.hpp"

namespace {

std::string by_library(const tuner::Config& config) {
  const std::map<std::string, int> sorted(config.values.begin(), config.values.end());
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [key, value] : sorted) object[key] = value;
  return object.dump();
}

}  // namespace

TEST_CASE("to_json: the library's text for every config of every family's space") {
  int checked = 0;
  for (const tuner::Family* family : tuner::families()) {
    for (const tuner::Config& config : tuner::cross_product(family->space())) {
      if (checked % 7 == 0) REQUIRE(tuner::to_json(config) == by_library(config));
      ++checked;
    }
  }
  CHECK(checked > 100000);
}

TEST_CASE("to_json: repeated keys keep the first value, negative values, escaped keys") {
  std::mt19937 random(7);
  const std::string names[] = {"a", "b_2", "Z", "block_t", "a1", "_x"};
  for (int round = 0; round < 2000; ++round) {
    tuner::Config config;
    const int size = static_cast<int>(random() % 8);
    for (int i = 0; i < size; ++i) {
      config.values.emplace_back(names[random() % 6], static_cast<int>(random() % 2001) - 1000);
    }
    REQUIRE(tuner::to_json(config) == by_library(config));
  }
  const tuner::Config escaped{{{"quote\"d", 1}, {"plain", 2}, {"tab\t", 3}}};
  CHECK(tuner::to_json(escaped) == by_library(escaped));
  CHECK(tuner::to_json(tuner::Config{}) == "{}");
  CHECK(tuner::to_json(tuner::Config{{{"b", 2}, {"a", 1}, {"b", 9}}}) == R"({"a":1,"b":2})");
}

TEST_CASE("to_json: already the store's canonical params text (the plan keys skip a parse)") {
  int checked = 0;
  for (const tuner::Family* family : tuner::families()) {
    for (const tuner::Config& config : tuner::cross_product(family->space())) {
      if (checked % 11 == 0) {
        const std::string text = tuner::to_json(config);
        REQUIRE(tuner::db::canonical_params_json(text) == text);
      }
      ++checked;
    }
  }
  CHECK(checked > 100000);
}
