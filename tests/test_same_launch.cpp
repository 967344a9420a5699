// tuner/same_launch: grouping a batch's picks by launch identity, on identities written here.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tuner/same_launch.hpp"

using tuner::BatchOutcome;
using tuner::group_same_launches;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kA = R"({"a":1})";
const std::string kB = R"({"b":1})";
const std::string kC = R"({"c":1})";
const std::string kD = R"({"d":1})";
const std::string kE = R"({"e":1})";

// a and c are one launch, b and the default d another; e is alone.
const std::map<std::string, std::string> kIdentity{
    {kA, "x"}, {kB, "y"}, {kC, "x"}, {kD, "y"}, {kE, "z"}};

tuner::SameLaunches grouped() {
  return group_same_launches({kA, kB, kD, kC, kE}, kD,
                             [](const std::string& params) { return kIdentity.at(params); });
}

}  // namespace

TEST_CASE("same launch: one config per identity is measured, the default always") {
  const tuner::SameLaunches same = grouped();
  // b comes before the default d in the picks, but d is the one measured.
  CHECK(same.measure == std::vector<std::string>{kA, kD, kE});
  CHECK(same.copies == std::map<std::string, std::string>{{kB, kD}, {kC, kA}});
  REQUIRE(same.skipped.size() == 2);
  for (const tuner::SkippedConfig& skip : same.skipped) {
    CAPTURE(skip.reason);
    CHECK(contains(skip.reason, "the same launch as"));
    CHECK(contains(skip.reason, skip.params_json == kB ? "d=1" : "a=1"));
  }
}

TEST_CASE("same launch: without a default among the picks the first of each identity is measured") {
  const tuner::SameLaunches same = group_same_launches(
      {kC, kA, kB}, kD, [](const std::string& params) { return kIdentity.at(params); });
  CHECK(same.measure == std::vector<std::string>{kC, kB});
  CHECK(same.copies == std::map<std::string, std::string>{{kA, kC}});
}

TEST_CASE(
    "same launch: a copy takes its measured config's median or failure, never a transient's") {
  const tuner::SameLaunches same = grouped();
  BatchOutcome outcome;
  outcome.timings.median_us = {{kA, 12.5}, {kE, 9.0}};
  outcome.failed = {kD};  // d failed; a was timed
  tuner::copy_same_launches(same, outcome);
  CHECK(outcome.timings.median_us.at(kC) == 12.5);
  CHECK_FALSE(outcome.timings.median_us.contains(kB));
  CHECK(std::count(outcome.failed.begin(), outcome.failed.end(), kB) == 1);
  CHECK(std::count(outcome.failed.begin(), outcome.failed.end(), kC) == 0);

  BatchOutcome transient;  // a was neither timed nor failed (a transient): c gets nothing
  tuner::copy_same_launches(same, transient);
  CHECK(transient.timings.median_us.empty());
  CHECK(transient.failed.empty());
}

TEST_CASE("same launch: --also-time sees a copy at its measured config's median") {
  const std::map<std::string, double> all = tuner::with_copies({{kA, 3.0}}, {{kC, kA}, {kB, kD}});
  CHECK(all == std::map<std::string, double>{{kA, 3.0}, {kC, 3.0}});
}
