#include "tuner/batch_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "tuner/param_values.hpp"

namespace tuner {

namespace {

// The requested batch nearest to `target` on a log scale (ties: the smaller).
int nearest(const std::vector<int>& batches, int target) {
  int best = batches.front();
  for (const int batch : batches) {
    if (std::abs(std::log(static_cast<double>(batch) / target)) <
        std::abs(std::log(static_cast<double>(best) / target))) {
      best = batch;
    }
  }
  return best;
}

// Configs by median, fastest first.
std::vector<std::pair<double, std::string>> ranked(const BatchTimings& timings) {
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [params, median] : timings.median_us) order.emplace_back(median, params);
  std::sort(order.begin(), order.end());
  return order;
}

// A neighbouring anchor ranked once per pick: every skipped config's reason names its rank there,
// and ranking the anchor again for each of them cost the H200's warm rerun 2 s of its 6.
struct RankedAnchor {
  int batch = 0;
  std::vector<std::pair<double, std::string>> order;  // fastest first
  std::map<std::string, std::size_t> rank;            // params -> index into order
  [[nodiscard]] double best() const { return order.front().first; }
};

RankedAnchor rank_anchor(const BatchTimings& timings) {
  RankedAnchor anchor{timings.batch, ranked(timings), {}};
  for (std::size_t i = 0; i < anchor.order.size(); ++i) anchor.rank[anchor.order[i].second] = i;
  return anchor;
}

const BatchTimings* find_done(const std::vector<BatchTimings>& done, int batch) {
  for (const BatchTimings& timings : done) {
    if (timings.batch == batch && !timings.median_us.empty()) return &timings;
  }
  return nullptr;
}

// The measured anchors nearest below and above `batch` (either may be missing).
std::vector<RankedAnchor> neighbours(int batch, const std::vector<int>& anchors,
                                     const std::vector<BatchTimings>& done) {
  const BatchTimings* below = nullptr;
  const BatchTimings* above = nullptr;
  for (const int anchor : anchors) {
    const BatchTimings* timings = find_done(done, anchor);
    if (timings == nullptr) continue;
    if (anchor < batch) below = timings;
    if (anchor > batch && above == nullptr) above = timings;
  }
  std::vector<RankedAnchor> found;
  if (below != nullptr) found.push_back(rank_anchor(*below));
  if (above != nullptr) found.push_back(rank_anchor(*above));
  return found;
}

// The nearest batch done below `batch` that is not an anchor (the previous step of the walk).
const BatchTimings* previous(int batch, const std::vector<int>& anchors,
                             const std::vector<BatchTimings>& done) {
  const BatchTimings* best = nullptr;
  for (const BatchTimings& timings : done) {
    if (timings.batch >= batch || timings.median_us.empty()) continue;
    if (std::binary_search(anchors.begin(), anchors.end(), timings.batch)) continue;
    if (best == nullptr || timings.batch > best->batch) best = &timings;
  }
  return best;
}

std::string where_at(const RankedAnchor& anchor, const std::string& params) {
  const auto found = anchor.rank.find(params);
  if (found == anchor.rank.end()) {
    return "no timing at anchor " + std::to_string(anchor.batch) + " (failed or not measured)";
  }
  char text[96];
  std::snprintf(text, sizeof text, "%+.1f%% vs the best at anchor %d (rank %zu)",
                100.0 * (anchor.order[found->second].first - anchor.best()) / anchor.best(),
                anchor.batch, found->second + 1);
  return text;
}

// `eligible` ordered by the relative gap to a neighbouring anchor's best, nearest first.
std::vector<std::string> by_closeness(const std::set<std::string>& eligible,
                                      const std::vector<RankedAnchor>& near) {
  std::vector<std::pair<double, std::string>> scored;
  for (const std::string& params : eligible) {
    double gap = 1e30;
    for (const RankedAnchor& anchor : near) {
      const auto found = anchor.rank.find(params);
      if (found == anchor.rank.end()) continue;
      gap = std::min(gap, anchor.order[found->second].first / anchor.best() - 1.0);
    }
    scored.emplace_back(gap, params);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> order;
  order.reserve(scored.size());
  for (const auto& [gap, params] : scored) order.push_back(params);
  return order;
}

// Adds to `keep` the fastest config with each parameter's value at each neighbouring anchor, when
// it is within `margin` of that anchor's best; returns how many it added. A structural choice can
// lose at every anchor and win between them: on the H200 the balanced schedule ran 15-26 % behind
// at anchors 1, 8, 64 and 512 and won at 88, 136-176 and 272-416 (BENCHMARKS.md section 9).
int add_value_representatives(const std::vector<RankedAnchor>& near, double margin,
                              std::set<std::string>& keep) {
  int added = 0;
  for (const RankedAnchor& anchor : near) {
    std::set<std::string> seen;  // "name=value" of a faster config at this anchor
    for (const auto& [median, params] : anchor.order) {
      if (median > anchor.best() * (1.0 + margin)) break;
      bool first_of_a_value = false;
      for (std::string& value : param_values(params)) {
        first_of_a_value |= seen.insert(std::move(value)).second;
      }
      if (first_of_a_value && keep.insert(params).second) ++added;
    }
  }
  return added;
}

// Adds to `keep` every config of `configs` in the groups of the first `most` groups met in
// `order` (launch-time variants of the kernels nearest a neighbour's best). Returns the groups.
int add_siblings(const std::vector<std::string>& order, const std::vector<std::string>& configs,
                 const ConfigGroups& groups, int most, std::set<std::string>& keep) {
  std::set<std::string> chosen;
  for (const std::string& params : order) {
    if (static_cast<int>(chosen.size()) >= most) break;
    const auto group = groups.find(params);
    if (group != groups.end()) chosen.insert(group->second);
  }
  for (const std::string& params : configs) {
    const auto group = groups.find(params);
    if (group != groups.end() && chosen.contains(group->second)) keep.insert(params);
  }
  return static_cast<int>(chosen.size());
}

// The keep rule in words, with its numbers (every skipped config's reason ends with it).
std::string keep_rule(double margin, bool disagree, int sibling_groups, int representatives,
                      const SearchPolicy& policy) {
  char rule[320];
  std::snprintf(rule, sizeof rule,
                "; kept: within %.0f%% of a neighbouring anchor's best (%s) or its %d fastest, "
                "at most the %d closest; the %d fastest at the batch below; the default",
                100.0 * margin, disagree ? "widened: their winners differ" : "their winners agree",
                policy.keep_top, policy.max_keep, policy.keep_top);
  std::string text = rule;
  if (sibling_groups > 0) {
    text += "; every launch-time variant (same compiled kernel) of the " +
            std::to_string(sibling_groups) + " kernels closest to a neighbour's best";
  }
  if (representatives > 0) {
    char values[160];
    std::snprintf(values, sizeof values,
                  "; the fastest config with each parameter value within %.0f%% of a neighbouring "
                  "anchor's best (%d more)",
                  100.0 * policy.value_margin, representatives);
    text += values;
  }
  return text;
}

}  // namespace

std::vector<int> anchor_batches(const std::vector<int>& batches, const SearchPolicy& policy) {
  if (batches.size() <= 2) return batches;
  std::set<int> anchors{batches.front(), batches.back()};
  for (const int target : policy.anchor_targets) anchors.insert(nearest(batches, target));
  return {anchors.begin(), anchors.end()};
}

std::vector<int> verify_batches(const std::vector<int>& anchors, const SearchPolicy& policy) {
  if (static_cast<int>(anchors.size()) <= policy.verify_batches) return anchors;
  std::set<int> chosen{anchors.front(), anchors.back()};
  if (policy.verify_batches >= 3) chosen.insert(anchors[anchors.size() / 2]);
  return {chosen.begin(), chosen.end()};
}

std::vector<int> search_order(const std::vector<int>& batches, const SearchPolicy& policy) {
  const std::vector<int> anchors = anchor_batches(batches, policy);
  std::vector<int> order = verify_batches(anchors, policy);
  for (const int batch : anchors) {
    if (std::find(order.begin(), order.end(), batch) == order.end()) order.push_back(batch);
  }
  for (const int batch : batches) {
    if (std::find(order.begin(), order.end(), batch) == order.end()) order.push_back(batch);
  }
  return order;
}

BatchPick pick_configs(int batch, const std::vector<std::string>& configs,
                       const std::string& default_params, const std::vector<int>& anchors,
                       const std::vector<BatchTimings>& done, const SearchPolicy& policy,
                       const ConfigGroups& groups) {
  BatchPick pick;
  const std::vector<RankedAnchor> near = neighbours(batch, anchors, done);
  if (std::binary_search(anchors.begin(), anchors.end(), batch) || near.empty()) {
    pick.measure = configs;  // an anchor (or nothing to go by): every config
    return pick;
  }
  const bool disagree =
      near.size() == 2 && near[0].order.front().second != near[1].order.front().second;
  const double margin = disagree ? policy.wide_margin : policy.margin;
  std::set<std::string> eligible;
  for (const RankedAnchor& anchor : near) {
    for (std::size_t rank = 0; rank < anchor.order.size(); ++rank) {
      if (static_cast<int>(rank) < policy.keep_top ||
          anchor.order[rank].first <= anchor.best() * (1.0 + margin)) {
        eligible.insert(anchor.order[rank].second);
      }
    }
  }
  const std::vector<std::string> order = by_closeness(eligible, near);
  std::set<std::string> keep(
      order.begin(),
      order.begin() +
          std::min<std::ptrdiff_t>(policy.max_keep, static_cast<std::ptrdiff_t>(order.size())));
  // A launch-time variant's best value follows the batch's waves, not the anchors: the nearest
  // kernel's launch-time variants always, more kernels' between disagreeing anchors.
  const int sibling_groups =
      add_siblings(order, configs, groups,
                   disagree ? policy.sibling_groups : policy.agreed_sibling_groups, keep);
  const int representatives = add_value_representatives(near, policy.value_margin, keep);
  keep.insert(default_params);
  if (const BatchTimings* before = previous(batch, anchors, done)) {
    const auto below = ranked(*before);
    for (std::size_t rank = 0; rank < below.size() && static_cast<int>(rank) < policy.keep_top;
         ++rank) {
      keep.insert(below[rank].second);
    }
  }
  const std::string rule = keep_rule(margin, disagree, sibling_groups, representatives, policy);
  for (const std::string& params : configs) {
    if (keep.contains(params)) {
      pick.measure.push_back(params);
      continue;
    }
    std::string reason = "skipped by the batch search at batch " + std::to_string(batch) + ": ";
    for (std::size_t i = 0; i < near.size(); ++i) {
      reason += (i > 0 ? ", " : "") + where_at(near[i], params);
    }
    pick.skipped.push_back({params, reason + rule});
  }
  return pick;
}

SearchRun run_batch_search(const std::vector<int>& batches, const std::vector<std::string>& configs,
                           const std::string& default_params, const SearchPolicy& policy,
                           bool exhaustive, const MeasureBatch& measure_batch,
                           const ConfigGroups& groups) {
  SearchRun run;
  run.anchors = exhaustive ? batches : anchor_batches(batches, policy);
  run.verified = exhaustive ? batches : verify_batches(run.anchors, policy);
  std::vector<BatchTimings> done;
  std::map<std::string, int> failed_at;  // config -> the batch where it failed
  for (const int batch : exhaustive ? batches : search_order(batches, policy)) {
    const auto began = std::chrono::steady_clock::now();
    std::vector<std::string> alive;
    BatchPick pick;
    for (const std::string& params : configs) {
      const auto failed = failed_at.find(params);
      if (exhaustive || failed == failed_at.end()) {  // --exhaustive measures failures again
        alive.push_back(params);
      } else {
        pick.skipped.push_back({params, "skipped by the batch search at batch " +
                                            std::to_string(batch) + ": it failed at batch " +
                                            std::to_string(failed->second) + " in this sweep"});
      }
    }
    BatchPick chosen =
        pick_configs(batch, alive, default_params, run.anchors, done, policy, groups);
    pick.measure = std::move(chosen.measure);
    pick.skipped.insert(pick.skipped.end(), chosen.skipped.begin(), chosen.skipped.end());
    run.skipped += static_cast<int>(pick.skipped.size());
    run.search_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    const bool verify = std::binary_search(run.verified.begin(), run.verified.end(), batch);
    BatchOutcome outcome = measure_batch(batch, pick, verify);
    for (const std::string& params : outcome.failed) failed_at.emplace(params, batch);
    outcome.timings.batch = batch;
    done.push_back(std::move(outcome.timings));
  }
  return run;
}

}  // namespace tuner
