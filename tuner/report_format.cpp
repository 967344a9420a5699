// How a report writes numbers, series (their description and file-name slug) and configs.
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>

#include "kernels/registry.hpp"
#include "tuner/report.hpp"
#include "tuner/report_format.hpp"
#include "tuner/shape_text.hpp"

namespace tuner::report {

namespace {

// The family's words for the shape when it is a known family (the DB may hold others).
std::string shape_words(const SeriesKey& key) {
  for (const Family* family : families()) {
    if (family->name != key.family) continue;
    try {
      return family->describe_shape(parse_canonical_shape(key.shape)) + " [" + key.shape + "]";
    } catch (const std::exception&) {
      break;  // a shape this build's family cannot read: show the text
    }
  }
  return key.shape;
}

}  // namespace

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string optional_us(const std::optional<double>& value) {
  return value ? fixed(*value, 2) : "-";
}

std::string percent(double fraction) { return fixed(fraction * 100.0, 1) + "%"; }

std::map<std::string, int> parse_params(const std::string& params_json) {
  std::map<std::string, int> params;
  const nlohmann::json object = nlohmann::json::parse(params_json);
  for (auto entry = object.begin(); entry != object.end(); ++entry) {
    params[entry.key()] = entry.value().get<int>();
  }
  return params;
}

std::string describe(const SeriesKey& key) {
  return key.family + " " + shape_words(key) + "; pruned for " + key.budget_arch + ", timed on " +
         key.device_name;
}

std::string series_slug(const SeriesKey& key) {
  std::string slug = key.family + "-" + key.shape + "-" + key.budget_arch + "-" + key.device_name;
  for (char& c : slug) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    if (!keep) c = '_';
  }
  return slug;
}

std::string compact_params(const std::string& params_json) {
  std::string text;
  for (const auto& [name, value] : parse_params(params_json)) {
    std::string initials;
    bool start = true;
    for (char c : name) {
      if (start && c != '_') initials += c;
      start = c == '_';
    }
    text += (text.empty() ? "" : " ") + initials + std::to_string(value);
  }
  return text.empty() ? "{}" : text;
}

}  // namespace tuner::report
