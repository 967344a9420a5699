// tuner/also_time: the --also-time file (configs timed in full at named batches) parsed against
// the sweep's batches and the family's space, and refused with the file and the fix named.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "tuner/also_time.hpp"

using tuner::InputError;
using tuner::Parameter;
using tuner::parse_also_time;

namespace {

const std::vector<Parameter> kSpace{{"num_warps", {4, 8}, false},
                                    {"target_ctas", {128, 256}, true}};
const std::vector<int> kBatches{1, 8, 20};

std::string refusal(const std::string& text) {
  try {
    (void)parse_also_time(text, "--also-time f.json", kBatches, kSpace);
  } catch (const InputError& error) {
    return error.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("--also-time: batches to canonical configs, repeats dropped") {
  const tuner::AlsoTime also = parse_also_time(
      R"({"8": [{"target_ctas": 256, "num_warps": 4}, {"num_warps": 4, "target_ctas": 256},
                {"num_warps": 8, "target_ctas": 128}], "20": []})",
      "f.json", kBatches, kSpace);
  REQUIRE(also.size() == 2);
  // The store's form: keys sorted, compact.
  CHECK(also.at(8) == std::vector<std::string>{R"({"num_warps":4,"target_ctas":256})",
                                               R"({"num_warps":8,"target_ctas":128})"});
  CHECK(also.at(20).empty());
}

TEST_CASE("--also-time: what is not a batch of the sweep or a config of the space is refused") {
  for (const auto& [text, named] : {
           std::pair{"[1]", "--also-time f.json is not an object"},
           std::pair{"{", "--also-time f.json is not JSON"},
           std::pair{R"({"x": []})", "key 'x' is not a batch size"},
           std::pair{R"({"0": []})", "key '0' is not a batch size"},
           std::pair{R"({"16": []})", "batch 16 is not one of the sweep's --batches"},
           std::pair{R"({"8": {}})", "batch 8 maps to no list of configs"},
           std::pair{R"({"8": [3]})", "batch 8, config 1 is not a config object"},
           std::pair{R"({"8": [{"num_warps": 4}]})", "gives no 'target_ctas'"},
           std::pair{R"({"8": [{"num_warps": 6, "target_ctas": 128}]})",
                     "num_warps=6 is not a value of the family's space"},
           std::pair{R"({"8": [{"num_warps": 4, "target_ctas": 128, "x": 1}]})",
                     "names a parameter the family does not have"},
       }) {
    CAPTURE(text);
    CHECK(refusal(text).find(named) != std::string::npos);
  }
}
