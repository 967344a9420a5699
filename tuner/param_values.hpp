#pragma once
// The "name=value" strings of a config's params JSON: the unit in which the batch search and the
// finalists ask whether a config brings a parameter value that the configs chosen so far lack
// (tuner/batch_search.hpp, tuner/finalists.hpp).
#include <string>
#include <vector>

namespace tuner {

// One "name=value" per parameter (the value as JSON text); empty when `params_json` is not a JSON
// object (the search's tests name configs with plain words).
std::vector<std::string> param_values(const std::string& params_json);

}  // namespace tuner
