#include "tuner/same_launch.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/config.hpp"

namespace tuner {

SameLaunches group_same_launches(const std::vector<std::string>& configs,
                                 const std::string& default_params,
                                 const LaunchIdentity& identity) {
  SameLaunches same;
  std::unordered_map<std::string, std::string> measured_by_identity;
  const bool has_default =
      std::find(configs.begin(), configs.end(), default_params) != configs.end();
  if (has_default) measured_by_identity.emplace(identity(default_params), default_params);
  for (const std::string& params : configs) {
    if (params == default_params) {
      same.measure.push_back(params);
      continue;
    }
    const auto [found, first] = measured_by_identity.emplace(identity(params), params);
    if (first) {
      same.measure.push_back(params);
      continue;
    }
    same.copies.emplace(params, found->second);
    same.skipped.push_back(
        {params, "the same launch as " + describe(config_from_json(found->second)) +
                     " at this batch (the family's launch identity: the same compiled kernel, "
                     "grids, shared memory and launch order): measured once, as that config"});
  }
  return same;
}

void copy_same_launches(const SameLaunches& same, BatchOutcome& outcome) {
  outcome.timings.median_us = with_copies(outcome.timings.median_us, same.copies);
  std::vector<std::string> failed_copies;
  for (const auto& [copy, measured] : same.copies) {
    if (std::find(outcome.failed.begin(), outcome.failed.end(), measured) != outcome.failed.end())
      failed_copies.push_back(copy);
  }
  outcome.failed.insert(outcome.failed.end(), failed_copies.begin(), failed_copies.end());
}

std::map<std::string, double> with_copies(const std::map<std::string, double>& medians,
                                          const std::map<std::string, std::string>& copies) {
  std::map<std::string, double> all = medians;
  for (const auto& [copy, measured] : copies) {
    const auto median = medians.find(measured);
    if (median != medians.end()) all.emplace(copy, median->second);
  }
  return all;
}

}  // namespace tuner
