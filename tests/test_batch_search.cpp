// tuner/batch_search: the search's choices on synthetic timings (no GPU). The landscape below is
// written here, independently of the search: configs differ in per-launch overhead and in how
// many CTAs they split the work into, so the fastest config changes with the batch size.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tuner/batch_search.hpp"
#include "tuner/batch_set.hpp"

using tuner::BatchPick;
using tuner::BatchTimings;
using tuner::SearchPolicy;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Synthetic {
  std::string params;
  double overhead_us;  // fixed cost per launch
  double per_item_us;  // cost per batch row at full occupancy
  int ctas;            // work is split into this many CTAs over 132 SMs
};

// 96 configs (as many as the default problem's survivors): 4 CTA targets x 24 overhead /
// throughput trade-offs.
std::vector<Synthetic> landscape() {
  std::vector<Synthetic> configs;
  for (const int ctas : {128, 256, 512, 1024}) {
    for (int variant = 0; variant < 24; ++variant) {
      configs.push_back(
          {"{\"ctas\":" + std::to_string(ctas) + ",\"v\":" + std::to_string(variant) + "}",
           4.0 + 0.4 * variant + ctas / 256.0, 1.3 - 0.012 * variant, ctas});
    }
  }
  return configs;
}

// Time of one config at one batch: the work quantized into waves of 132 SMs.
double time_us(const Synthetic& config, int batch) {
  const double rows_per_cta = std::ceil(batch * 16.0 / config.ctas);
  const double waves = std::ceil(config.ctas / 132.0);
  return config.overhead_us + config.per_item_us * rows_per_cta * waves * 8.0;
}

// The synthetic kernels: the configs of one variant differ only in their CTA target (a launch-time
// parameter, as sparse MLA's TARGET_CTAS), so they share a group.
tuner::ConfigGroups variant_groups() {
  tuner::ConfigGroups groups;
  for (const Synthetic& config : landscape()) {
    groups[config.params] = config.params.substr(config.params.find("\"v\""));
  }
  return groups;
}

std::vector<std::string> all_params() {
  std::vector<std::string> params;
  for (const Synthetic& config : landscape()) params.push_back(config.params);
  return params;
}

BatchTimings measure(int batch, const std::vector<std::string>& which) {
  BatchTimings timings{batch, {}};
  for (const Synthetic& config : landscape()) {
    if (std::find(which.begin(), which.end(), config.params) != which.end()) {
      timings.median_us[config.params] = time_us(config, batch);
    }
  }
  return timings;
}

}  // namespace

TEST_CASE("batch search: anchors, verification batches and the visiting order") {
  const SearchPolicy policy;
  CHECK(tuner::anchor_batches(tuner::cudagraph_batches(512), policy) ==
        std::vector<int>{1, 8, 64, 512});
  CHECK(tuner::anchor_batches({1, 2, 4, 8, 16, 32, 48, 64, 80, 96, 128}, policy) ==
        std::vector<int>{1, 8, 64, 128});
  CHECK(tuner::anchor_batches({3, 700}, policy) == std::vector<int>{3, 700});
  CHECK(tuner::anchor_batches({3, 5, 700}, policy) == std::vector<int>{3, 5, 700});
  CHECK(tuner::verify_batches({1, 8, 64, 512}, policy) == std::vector<int>{1, 64, 512});
  CHECK(tuner::verify_batches({1, 8}, policy) == std::vector<int>{1, 8});
  const std::vector<int> order = tuner::search_order({1, 2, 4, 8, 16, 64, 80, 512}, policy);
  CHECK(order == std::vector<int>{1, 64, 512, 8, 2, 4, 16, 80});  // verified anchors first
}

TEST_CASE("batch search: an anchor measures everything, elsewhere the margin rule skips") {
  const SearchPolicy policy;
  const std::vector<int> anchors{1, 8, 64, 512};
  const std::vector<std::string> configs{"a", "b", "c", "d", "e", "f", "g", "h"};
  const BatchPick at_anchor = tuner::pick_configs(8, configs, "h", anchors, {}, policy);
  CHECK(at_anchor.measure == configs);
  CHECK(at_anchor.skipped.empty());

  // Neighbours 8 and 64 agree on "a"; "b" is 3 % behind (kept), "e".."g" far behind.
  const BatchTimings at8{
      8,
      {{"a", 10}, {"b", 10.3}, {"c", 11}, {"d", 12}, {"e", 15}, {"f", 16}, {"g", 17}, {"h", 20}}};
  const BatchTimings at64{
      64,
      {{"a", 50}, {"b", 51.5}, {"c", 60}, {"d", 61}, {"e", 62}, {"f", 63}, {"g", 64}, {"h", 90}}};
  SearchPolicy narrow = policy;
  narrow.keep_top = 2;
  const BatchPick between = tuner::pick_configs(16, configs, "h", anchors, {at8, at64}, narrow);
  CHECK(between.measure == std::vector<std::string>{"a", "b", "h"});  // h: the default
  REQUIRE(between.skipped.size() == 5);
  CHECK(between.skipped[0].params_json == "c");
  CHECK(contains(between.skipped[0].reason, "+10.0% vs the best at anchor 8 (rank 3)"));
  CHECK(contains(between.skipped[0].reason, "+20.0% vs the best at anchor 64 (rank 3)"));
  CHECK(contains(between.skipped[0].reason, "within 5%"));

  // When the neighbours' winners differ the margin widens: c (+10 % at 8, 4th at 64) is measured.
  BatchTimings flipped = at64;
  flipped.median_us["d"] = 40;
  const BatchPick wide = tuner::pick_configs(16, configs, "h", anchors, {at8, flipped}, narrow);
  CHECK(std::count(wide.measure.begin(), wide.measure.end(), "c") == 1);
  CHECK(contains(wide.skipped.front().reason, "widened"));
}

TEST_CASE("batch search: disagreeing anchors widen to every launch-time variant of the nearest") {
  // Three kernels, each with four launch-time variants (t1..t4); at anchor 8 kernel K1's t1 is
  // best, at 64 kernel K2's t2: the anchors disagree. K1/t3 is 30 % behind at both anchors (the
  // batch's waves may still favour it in between), K3 is far behind everywhere.
  std::vector<std::string> configs;
  tuner::ConfigGroups groups;
  BatchTimings at8{8, {}};
  BatchTimings at64{64, {}};
  for (const std::string kernel : {"K1", "K2", "K3"}) {
    for (const std::string variant : {"t1", "t2", "t3", "t4"}) {
      std::string params = kernel;
      params.append("/").append(variant);
      configs.push_back(params);
      groups[params] = kernel;
      at8.median_us[params] = kernel == "K3" ? 50.0 : 13.0;
      at64.median_us[params] = kernel == "K3" ? 250.0 : 65.0;
    }
  }
  at8.median_us["K1/t1"] = 10.0;
  at8.median_us["K2/t1"] = 10.5;
  at64.median_us["K2/t2"] = 50.0;
  at64.median_us["K1/t2"] = 51.0;
  SearchPolicy policy;
  policy.keep_top = 2;
  policy.wide_margin = 0.05;
  const std::vector<int> anchors{1, 8, 64, 512};
  const BatchPick plain = tuner::pick_configs(48, configs, "K3/t1", anchors, {at8, at64}, policy);
  CHECK(std::count(plain.measure.begin(), plain.measure.end(), "K1/t3") == 0);
  const BatchPick wide =
      tuner::pick_configs(48, configs, "K3/t1", anchors, {at8, at64}, policy, groups);
  for (const std::string variant : {"t1", "t2", "t3", "t4"}) {
    CHECK(std::count(wide.measure.begin(), wide.measure.end(), "K1/" + variant) == 1);
    CHECK(std::count(wide.measure.begin(), wide.measure.end(), "K2/" + variant) == 1);
  }
  CHECK(std::count(wide.measure.begin(), wide.measure.end(), "K3/t2") == 0);  // not near
  REQUIRE_FALSE(wide.skipped.empty());
  CHECK(contains(wide.skipped.front().reason, "every launch-time variant"));
  // Anchors that agree (K1/t1 best at both) do not widen: only the nearest kernel's launch-time
  // variants are added (K1's), not K2's beyond those within the margin.
  BatchTimings agree = at64;
  agree.median_us["K1/t1"] = 49.0;
  const BatchPick narrow =
      tuner::pick_configs(48, configs, "K3/t1", anchors, {at8, agree}, policy, groups);
  for (const std::string variant : {"t1", "t2", "t3", "t4"}) {
    CHECK(std::count(narrow.measure.begin(), narrow.measure.end(), "K1/" + variant) == 1);
  }
  CHECK(std::count(narrow.measure.begin(), narrow.measure.end(), "K2/t3") == 0);
  CHECK(std::count(narrow.measure.begin(), narrow.measure.end(), "K2/t4") == 0);
  CHECK(contains(narrow.skipped.front().reason, "of the 1 kernels closest"));
  policy.agreed_sibling_groups = 0;  // the rule before: agreeing anchors add no variants
  const BatchPick before =
      tuner::pick_configs(48, configs, "K3/t1", anchors, {at8, agree}, policy, groups);
  CHECK(std::count(before.measure.begin(), before.measure.end(), "K1/t3") == 0);
}

TEST_CASE("batch search: a config that failed at an anchor is skipped, saying so") {
  const SearchPolicy policy;
  const BatchTimings at1{1, {{"a", 5}}};
  const BatchTimings at8{8, {{"a", 7}}};
  const BatchPick pick = tuner::pick_configs(4, {"a", "broken"}, "a", {1, 8}, {at1, at8}, policy);
  CHECK(pick.measure == std::vector<std::string>{"a"});
  REQUIRE(pick.skipped.size() == 1);
  CHECK(contains(pick.skipped[0].reason, "no timing at anchor 1 (failed or not measured)"));
}

TEST_CASE(
    "batch search: every captured size, complete fates, near-oracle winners, far fewer "
    "measurements") {
  const SearchPolicy policy;
  const std::vector<int> batches = tuner::cudagraph_batches(512);
  const std::vector<std::string> configs = all_params();
  // With the launch-time groups (as the sweep passes them) and without.
  for (const bool grouped : {true, false}) {
    CAPTURE(grouped);
    std::size_t measured = 0;
    std::vector<int> visited;
    const auto measure_batch = [&](int batch, const BatchPick& pick, bool verify) {
      CAPTURE(batch);
      visited.push_back(batch);
      CHECK(verify == (batch == 1 || batch == 64 || batch == 512));
      // Every config gets exactly one fate at every batch: measured or skipped_by_search.
      std::set<std::string> seen(pick.measure.begin(), pick.measure.end());
      for (const auto& skipped : pick.skipped) seen.insert(skipped.params_json);
      CHECK(seen.size() == configs.size());
      CHECK(pick.measure.size() + pick.skipped.size() == configs.size());
      measured += pick.measure.size();
      const BatchTimings found = measure(batch, pick.measure);
      // Regret against the oracle: the best of all configs at this batch.
      double oracle = 1e30;
      for (const Synthetic& config : landscape()) oracle = std::min(oracle, time_us(config, batch));
      double searched = 1e30;
      for (const auto& [params, median] : found.median_us) searched = std::min(searched, median);
      CHECK(searched <= oracle * 1.02);
      return tuner::BatchOutcome{found, {}};
    };
    const tuner::SearchRun run =
        tuner::run_batch_search(batches, configs, configs.front(), policy, false, measure_batch,
                                grouped ? variant_groups() : tuner::ConfigGroups{});
    std::sort(visited.begin(), visited.end());
    CHECK(visited == batches);
    CHECK(run.verified == std::vector<int>{1, 64, 512});
    CHECK(run.skipped == static_cast<int>(configs.size() * batches.size() - measured));
    CHECK(measured < configs.size() * batches.size() * 4 / 10);
  }
}

TEST_CASE("batch search: a failed config is not measured again, --exhaustive measures all") {
  const std::vector<std::string> configs{"a", "b", "broken"};
  std::map<int, std::vector<std::string>> measured;
  std::map<int, bool> verified;
  const auto measure_batch = [&](int batch, const BatchPick& pick, bool verify) {
    measured[batch] = pick.measure;
    verified[batch] = verify;
    tuner::BatchOutcome outcome;
    for (const std::string& params : pick.measure) {
      if (params == "broken") {
        outcome.failed.push_back(params);
      } else {
        outcome.timings.median_us[params] = params == "a" ? 10.0 : 11.0;
      }
    }
    return outcome;
  };
  const std::vector<int> batches{1, 2, 4, 8, 64};
  const tuner::SearchRun searched =
      tuner::run_batch_search(batches, configs, "a", SearchPolicy{}, false, measure_batch);
  CHECK(searched.skipped == 4);       // "broken" at 2, 4, 8 and 64
  CHECK(measured.at(1).size() == 3);  // the first verified batch measures everything
  for (const int batch : {2, 4, 8, 64}) {
    CAPTURE(batch);
    CHECK(std::count(measured.at(batch).begin(), measured.at(batch).end(), "broken") == 0);
  }
  CHECK_FALSE(verified.at(4));  // anchors 1, 8, 64 are verified; 2 and 4 are timed only
  const tuner::SearchRun exhaustive =
      tuner::run_batch_search(batches, configs, "a", SearchPolicy{}, true, measure_batch);
  CHECK(exhaustive.skipped == 0);
  for (const int batch : batches) {
    CHECK(measured.at(batch).size() == 3);
    CHECK(verified.at(batch));
  }
}

TEST_CASE("batch search: the fastest config with each parameter value near an anchor's best") {
  // Two schedules of one kernel: schedule 1 is 16-18 % behind at both anchors (a structural
  // choice that may still win between them, as the balanced schedule did on the H200), and its
  // split-3 variant 32-35 % behind. Expected by hand: schedule 1's fastest at 8 (split 1) and its
  // fastest at 64 (split 2) are measured at 16; split 3 is not.
  const auto config = [](int schedule, int split) {
    return "{\"schedule\":" + std::to_string(schedule) + ",\"split\":" + std::to_string(split) +
           "}";
  };
  std::vector<std::string> configs;
  BatchTimings at8{8, {}};
  BatchTimings at64{64, {}};
  for (int split = 1; split <= 4; ++split) {
    configs.push_back(config(0, split));
    at8.median_us[config(0, split)] = 10.0 + 0.1 * (split - 1);
    at64.median_us[config(0, split)] = 50.0 + 0.2 * (split - 1);
  }
  const std::vector<double> behind8{11.8, 12.3, 13.5};
  const std::vector<double> behind64{59.0, 58.0, 66.0};
  for (int split = 1; split <= 3; ++split) {
    configs.push_back(config(1, split));
    at8.median_us[config(1, split)] = behind8[split - 1];
    at64.median_us[config(1, split)] = behind64[split - 1];
  }
  SearchPolicy policy;
  policy.keep_top = 1;
  const std::vector<int> anchors{8, 64};
  const auto measured = [&](const BatchPick& pick, const std::string& params) {
    return std::count(pick.measure.begin(), pick.measure.end(), params) == 1;
  };
  const BatchPick with =
      tuner::pick_configs(16, configs, config(0, 1), anchors, {at8, at64}, policy);
  CHECK(measured(with, config(1, 1)));
  CHECK(measured(with, config(1, 2)));
  CHECK_FALSE(measured(with, config(1, 3)));
  for (int split = 1; split <= 4; ++split) CHECK(measured(with, config(0, split)));
  REQUIRE(with.skipped.size() == 1);
  CHECK(contains(with.skipped[0].reason, "each parameter value within 25%"));
  CHECK(contains(with.skipped[0].reason, "(2 more)"));

  policy.value_margin = 0.0;  // off: only the margin rule, so schedule 1 is never measured
  const BatchPick without =
      tuner::pick_configs(16, configs, config(0, 1), anchors, {at8, at64}, policy);
  CHECK_FALSE(measured(without, config(1, 1)));
  CHECK_FALSE(measured(without, config(1, 2)));
  CHECK(without.skipped.size() == 3);
}
