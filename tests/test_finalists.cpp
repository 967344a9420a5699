// tuner/finalists: which configs of a batch get the full timing protocol after the search's
// screen, and that the winner is taken from full-protocol timings only (no GPU).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "tuner/finalists.hpp"

using tuner::choose_finalists;
using tuner::FinalistPolicy;
using tuner::Finalists;
using tuner::Timing;

namespace {

Timing at(double median_us) {
  Timing timing;
  timing.median_us = median_us;
  timing.p10_us = median_us * 0.99;
  timing.p90_us = median_us * 1.01;
  timing.samples = 10;
  return timing;
}

// Screens: "a" best, "b" 1 % behind, "c" 3 %, "d" 4 %; the default "z" twice as slow.
const std::map<std::string, double> kScreens{
    {"a", 100.0}, {"b", 101.0}, {"c", 103.0}, {"d", 104.0}, {"z", 200.0}};

}  // namespace

TEST_CASE("finalists: between anchors only what the screen cannot tell from the best") {
  const FinalistPolicy policy;
  const auto between = choose_finalists(kScreens, "z", true, false, policy);
  CHECK(between.configs == std::vector<std::string>{"z", "a", "b"});  // c is 3 % behind
  CHECK(between.rounds.at("a") == policy.rounds);
  CHECK(between.rounds.at("z") == 1);  // the default, screened 2x slower: one full timing
  CHECK(between.rule.find("within 2.0% of the best screen") != std::string::npos);

  FinalistPolicy tight = policy;
  tight.margin = 0.0;
  const auto alone = choose_finalists(kScreens, "z", true, false, tight);
  CHECK(alone.configs == std::vector<std::string>{"z", "a"});  // the best always goes on
}

TEST_CASE("finalists: an anchor, and an unscreened first pass, keep the fastest few") {
  const FinalistPolicy policy;
  const auto anchor = choose_finalists(kScreens, "z", true, true, policy);
  CHECK(anchor.configs == std::vector<std::string>{"z", "a", "b", "c"});
  const auto full = choose_finalists(kScreens, "z", false, false, policy);
  CHECK(full.configs == std::vector<std::string>{"z", "a", "b", "c"});
  CHECK(full.rounds.at("z") == policy.rounds);  // --exhaustive: as before, every round
}

TEST_CASE("finalists: a default close to the best is timed in every round") {
  std::map<std::string, double> close = kScreens;
  close["z"] = 105.0;  // within 10 %: the comparison may be close
  const auto chosen = choose_finalists(close, "z", true, false, FinalistPolicy{});
  CHECK(chosen.rounds.at("z") == FinalistPolicy{}.rounds);
  CHECK(chosen.rule.find("the default in every round") != std::string::npos);
  // The default is the fastest screen: it is still the first finalist, and "a" is compared.
  close["z"] = 90.0;
  const auto fastest = choose_finalists(close, "z", true, false, FinalistPolicy{});
  CHECK(fastest.configs.front() == "z");
  CHECK(fastest.configs.size() == 2);
}

TEST_CASE("finalists: the winner comes from full-protocol timings, a screen never stands in") {
  const auto finalists = choose_finalists(kScreens, "z", true, false, FinalistPolicy{});
  const std::map<std::string, Timing> full{{"z", at(200.0)}, {"b", at(99.0)}};  // "a" failed
  const auto fastest = tuner::fastest_finalist(finalists, full, {});
  REQUIRE(fastest.has_value());
  CHECK(fastest->params == "b");
  CHECK(fastest->timing.median_us == 99.0);
  CHECK(fastest->default_timing.median_us == 200.0);
  // Without the default's full timing there is nothing to compare against.
  CHECK_FALSE(tuner::fastest_finalist(finalists, {{"a", at(100.0)}}, {}).has_value());
  // A full first pass (--exhaustive) stands in for a finalist whose re-timing failed.
  const auto with_fallback = tuner::fastest_finalist(finalists, full, {{"a", at(95.0)}});
  REQUIRE(with_fallback.has_value());
  CHECK(with_fallback->params == "a");
}

TEST_CASE("finalists: configs named by --also-time join every round when screened here") {
  Finalists between = choose_finalists(kScreens, "z", true, false, FinalistPolicy{});
  REQUIRE(between.configs == std::vector<std::string>{"z", "a", "b"});
  // "d" (4 % behind: not a finalist) joins; "a" already is; "q" has no screen here.
  const auto missing = tuner::add_named_finalists({"d", "a", "q"}, kScreens, {}, 3, between);
  CHECK(missing == std::vector<std::string>{"q"});
  CHECK(between.configs == std::vector<std::string>{"z", "a", "b", "d"});
  CHECK(between.rounds.at("d") == 3);
  CHECK(between.rule.find("2 config(s) named by --also-time (1 not otherwise a finalist)") !=
        std::string::npos);
  // The default, screened far behind and timed once, is timed every round once it is named.
  REQUIRE(between.rounds.at("z") == 1);
  CHECK(tuner::add_named_finalists({"z"}, kScreens, {}, 3, between).empty());
  CHECK(between.rounds.at("z") == 3);
  CHECK(between.configs.size() == 4);
  // Nothing named that was screened here: the rule says nothing about it.
  Finalists untouched = choose_finalists(kScreens, "z", true, false, FinalistPolicy{});
  const std::string rule = untouched.rule;
  CHECK(tuner::add_named_finalists({"q"}, kScreens, {}, 3, untouched).size() == 1);
  CHECK(untouched.rule == rule);
  CHECK(untouched.configs.size() == 3);
}

TEST_CASE("finalists: a named config that is the same launch as another is timed once, as it") {
  // "a2" and "d2" were left unmeasured here as the same launch as "a" (a finalist) and "d" (4 %
  // behind, not one); their screens are copies of those. Naming them times "a" and "d" in every
  // round and gives the twins those timings, never a second full timing of one launch.
  std::map<std::string, double> screens = kScreens;
  screens["a2"] = screens.at("a");
  screens["d2"] = screens.at("d");
  const std::map<std::string, std::string> copies{{"a2", "a"}, {"d2", "d"}};
  Finalists finalists = choose_finalists(kScreens, "z", true, false, FinalistPolicy{});
  REQUIRE(finalists.configs == std::vector<std::string>{"z", "a", "b"});
  CHECK(tuner::add_named_finalists({"a2", "d2", "b"}, screens, copies, 3, finalists).empty());
  CHECK(finalists.configs == std::vector<std::string>{"z", "a", "b", "d"});
  CHECK(finalists.rounds.at("d") == 3);
  CHECK_FALSE(finalists.rounds.contains("a2"));
  CHECK(finalists.twins == std::map<std::string, std::string>{{"a2", "a"}, {"d2", "d"}});
  CHECK(finalists.rule.find("(1 not otherwise a finalist, 2 the same launch as a finalist") !=
        std::string::npos);
  // The twins take their finalist's full timing; a twin whose finalist has none gets none.
  const auto timings =
      tuner::with_twins({{"z", at(200.0)}, {"a", at(100.0)}, {"b", at(101.5)}}, finalists);
  REQUIRE(timings.contains("a2"));
  CHECK(timings.at("a2").median_us == 100.0);
  CHECK_FALSE(timings.contains("d2"));
  CHECK(timings.size() == 4);
}

TEST_CASE("finalists: between anchors the fastest screen of each parameter value joins") {
  // Batch 256 on the H200, by hand: three cluster-merge launches screened within 1 % of each
  // other, the per-row splits without a combine (merge 0) 2.6 % behind, a merge-1 launch 4 %
  // behind and a merge-0 launch 6 % behind. The margin rule keeps the three merge-2 launches;
  // merge 0's fastest joins (new values merge=0, target_ctas=128), then merge 1's (merge=1,
  // target_ctas=256); the 6 % one is past the 5 % value margin.
  const auto config = [](int merge, int target_ctas) {
    return "{\"merge\":" + std::to_string(merge) +
           ",\"target_ctas\":" + std::to_string(target_ctas) + "}";
  };
  const std::map<std::string, double> screens{{config(2, 512), 100.0}, {config(2, 1024), 100.5},
                                              {config(2, 128), 100.9}, {config(0, 128), 102.6},
                                              {config(1, 256), 104.0}, {config(0, 1024), 106.0},
                                              {config(0, 512), 190.0}};  // the default
  FinalistPolicy policy;
  policy.most = 3;
  const auto chosen = choose_finalists(screens, config(0, 512), true, false, policy);
  CHECK(chosen.configs == std::vector<std::string>{config(0, 512), config(2, 512), config(2, 1024),
                                                   config(2, 128), config(0, 128), config(1, 256)});
  CHECK(chosen.rounds.at(config(0, 128)) == policy.rounds);
  CHECK(chosen.rule.find("each parameter value within 5.0% (2 more)") != std::string::npos);

  policy.value_most = 1;  // at most one more: the fastest
  const auto one = choose_finalists(screens, config(0, 512), true, false, policy);
  CHECK(one.configs.back() == config(0, 128));
  CHECK(one.configs.size() == 5);

  policy.value_most = 2;
  const auto anchor = choose_finalists(screens, config(0, 512), true, true, policy);
  CHECK(anchor.configs.size() == 4);  // an anchor: the 3 fastest screens and the default only
}
