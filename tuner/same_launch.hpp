#pragma once
// Configs that are one launch at a batch: the family's launch identity (Family::launch_identity)
// is equal, so the GPU runs the same kernel with the same grids and arguments (e.g. launch-time
// values that the launch at this batch does not read). The batch search measures the first of each
// identity and lets the others take its outcome, recorded as skipped_by_search with the config
// they share the launch with. Pure: no GPU, no DB (tests/test_same_launch.cpp).
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tuner/batch_search.hpp"

namespace tuner {

struct SameLaunches {
  std::vector<std::string> measure;           // one config per launch, in the order given
  std::map<std::string, std::string> copies;  // a config left unmeasured -> the one measured
  std::vector<SkippedConfig> skipped;         // the copies, with the reason
};

// params JSON -> launch identity text at the batch being grouped.
using LaunchIdentity = std::function<std::string(const std::string& params_json)>;

// Groups `configs` (params JSON, the order a batch measures them in) by launch identity. The
// default, when among them, is always the one measured: every winner is compared against it.
SameLaunches group_same_launches(const std::vector<std::string>& configs,
                                 const std::string& default_params, const LaunchIdentity& identity);

// `outcome` with every copy given its measured config's result: the median when it was timed, a
// failure when it failed (the same launch fails the same way); nothing when it was neither
// (transient).
void copy_same_launches(const SameLaunches& same, BatchOutcome& outcome);

// `medians` with every copy's measured config's median added under the copy's params (what the
// finalist choice may name, e.g. by --also-time).
std::map<std::string, double> with_copies(const std::map<std::string, double>& medians,
                                          const std::map<std::string, std::string>& copies);

}  // namespace tuner
