#include "tuner/finalists.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

#include "tuner/param_values.hpp"

namespace tuner {

namespace {

std::vector<std::pair<double, std::string>> fastest_first(const std::map<std::string, double>& m) {
  std::vector<std::pair<double, std::string>> order;
  order.reserve(m.size());
  for (const auto& [params, median] : m) order.emplace_back(median, params);
  std::sort(order.begin(), order.end());
  return order;
}

// Adds the fastest screen of each parameter value the finalists (not the default) lack, within
// policy.value_margin of the best, at most policy.value_most; returns how many.
int add_value_finalists(const std::vector<std::pair<double, std::string>>& order,
                        const std::string& default_params, const FinalistPolicy& policy,
                        Finalists& chosen) {
  std::set<std::string> seen;
  for (std::size_t i = 1; i < chosen.configs.size(); ++i) {
    for (std::string& value : param_values(chosen.configs[i])) seen.insert(std::move(value));
  }
  int added = 0;
  for (const auto& [median, params] : order) {
    if (added >= policy.value_most || median > order.front().first * (1.0 + policy.value_margin)) {
      break;
    }
    if (params == default_params || chosen.rounds.contains(params)) continue;
    bool new_value = false;
    for (std::string& value : param_values(params))
      new_value |= seen.insert(std::move(value)).second;
    if (!new_value) continue;
    chosen.configs.push_back(params);
    chosen.rounds[params] = policy.rounds;
    ++added;
  }
  return added;
}

}  // namespace

Finalists choose_finalists(const std::map<std::string, double>& screened,
                           const std::string& default_params, bool screening, bool at_anchor,
                           const FinalistPolicy& policy) {
  Finalists chosen;
  chosen.configs.push_back(default_params);
  chosen.rounds[default_params] = policy.rounds;
  const auto order = fastest_first(screened);
  if (order.empty()) return chosen;
  const double best = order.front().first;
  // Between anchors (screening) only configs the screen cannot tell from the best go on: the
  // first is always one of them.
  const bool narrow = screening && !at_anchor;
  for (const auto& [median, params] : order) {
    if (static_cast<int>(chosen.configs.size()) > policy.most) break;
    if (params == default_params) continue;
    if (narrow && chosen.configs.size() > 1 && median > best * (1.0 + policy.margin)) break;
    chosen.configs.push_back(params);
    chosen.rounds[params] = policy.rounds;
  }
  const int value_finalists =
      narrow ? add_value_finalists(order, default_params, policy, chosen) : 0;
  const auto found = screened.find(default_params);
  const bool default_far =
      found != screened.end() && found->second > best * (1.0 + policy.default_close);
  if (screening && default_far) chosen.rounds[default_params] = 1;
  char rule[256];
  if (!screening) {
    std::snprintf(rule, sizeof rule, "the %d fastest first-pass timings and the default, %d rounds",
                  policy.most, policy.rounds);
  } else {
    char which[64];
    std::snprintf(which, sizeof which, "within %.1f%% of the best screen", 100.0 * policy.margin);
    std::snprintf(rule, sizeof rule,
                  "finalists of the screen (%s), at most %d, %d rounds; the default in %s",
                  narrow ? which : "the fastest: an anchor", policy.most, policy.rounds,
                  default_far ? "one round (screened far behind)" : "every round");
  }

  chosen.rule = rule;
  if (value_finalists > 0) {
    char values[128];
    std::snprintf(values, sizeof values,
                  "; the fastest screen of each parameter value within %.1f%% (%d more)",
                  100.0 * policy.value_margin, value_finalists);
    chosen.rule += values;
  }
  return chosen;
}

std::vector<std::string> add_named_finalists(const std::vector<std::string>& named,
                                             const std::map<std::string, double>& screened,
                                             const std::map<std::string, std::string>& copies,
                                             int rounds, Finalists& finalists) {
  std::vector<std::string> missing;
  int joined = 0;
  for (const std::string& params : named) {
    if (!screened.contains(params)) {
      missing.push_back(params);
      continue;
    }
    const auto copy = copies.find(params);
    const std::string& timed = copy == copies.end() ? params : copy->second;
    if (timed != params) finalists.twins[params] = timed;
    if (!finalists.rounds.contains(timed)) {
      finalists.configs.push_back(timed);
      ++joined;
    }
    finalists.rounds[timed] = rounds;
  }
  if (named.size() > missing.size()) {
    finalists.rule +=
        "; also timed in full, every round: " + std::to_string(named.size() - missing.size()) +
        " config(s) named by --also-time (" + std::to_string(joined) + " not otherwise a finalist";
    if (!finalists.twins.empty()) {
      finalists.rule += ", " + std::to_string(finalists.twins.size()) +
                        " the same launch as a finalist, timed once as it";
    }
    finalists.rule += ")";
  }
  return missing;
}

std::map<std::string, Timing> with_twins(std::map<std::string, Timing> timings,
                                         const Finalists& finalists) {
  for (const auto& [twin, timed] : finalists.twins) {
    if (const auto found = timings.find(timed); found != timings.end()) {
      timings[twin] = found->second;
    }
  }
  return timings;
}

std::optional<Fastest> fastest_finalist(const Finalists& finalists,
                                        const std::map<std::string, Timing>& timings,
                                        const std::map<std::string, Timing>& fallback) {
  auto timing_of = [&](const std::string& params) -> std::optional<Timing> {
    if (const auto found = timings.find(params); found != timings.end()) return found->second;
    if (const auto found = fallback.find(params); found != fallback.end()) return found->second;
    return std::nullopt;
  };
  const std::optional<Timing> default_timing = timing_of(finalists.configs.front());
  if (!default_timing || !(default_timing->median_us > 0)) return std::nullopt;
  Fastest fastest{finalists.configs.front(), *default_timing, *default_timing};
  for (const std::string& params : finalists.configs) {
    const std::optional<Timing> timing = timing_of(params);
    if (timing && timing->median_us > 0 && timing->median_us < fastest.timing.median_us) {
      fastest.params = params;
      fastest.timing = *timing;
    }
  }
  return fastest;
}

}  // namespace tuner
