#include "tuner/merge_winners.hpp"

#include <map>
#include <set>
#include <tuple>

#include "core/config.hpp"
#include "db/store/winner_rule.hpp"
#include "kernels/registry.hpp"

namespace tuner {

namespace {

struct GroupKey {
  std::string family, budget_arch, device_name, shape, source_hash;
  int batch = 0;
  auto tie() const { return std::tie(family, budget_arch, device_name, shape, batch, source_hash); }
  bool operator<(const GroupKey& other) const { return tie() < other.tie(); }
};

struct Group {
  std::map<std::string, db::TrialRecord> best;  // params -> most precise timing
  std::set<std::string> failed;                 // params with a wrong result or fault
};

db::Timing timing_of(const db::TrialRecord& trial) {
  return db::Timing{trial.median_us.value_or(0.0), trial.p10_us.value_or(0.0),
                    trial.p90_us.value_or(0.0), static_cast<int>(trial.samples.value_or(0)),
                    trial.rel_spread.value_or(0.0)};
}

std::map<GroupKey, Group> measured_groups(const db::Store& store) {
  std::map<std::int64_t, db::ProblemKey> problems;
  std::map<GroupKey, Group> groups;
  db::TrialFilter filter;
  filter.stage = db::Stage::measure;
  for (const db::TrialRecord& trial : store.trials(filter)) {
    auto problem = problems.find(trial.problem_id);
    if (problem == problems.end())
      problem = problems.emplace(trial.problem_id, store.problem(trial.problem_id)).first;
    const GroupKey key{problem->second.family, trial.budget_arch,
                       *trial.device_name,     problem->second.shape,
                       trial.source_hash,      problem->second.batch.value_or(0)};
    Group& group = groups[key];
    if (trial.fate == db::Fate::wrong_result || trial.fate == db::Fate::fault) {
      group.failed.insert(trial.params_json);
    }
    if (trial.fate != db::Fate::measured) continue;
    const auto [slot, inserted] = group.best.emplace(trial.params_json, trial);
    if (!inserted && std::tie(trial.rel_spread, trial.median_us) <
                         std::tie(slot->second.rel_spread, slot->second.median_us)) {
      slot->second = trial;
    }
  }
  return groups;
}

db::WinnerRecord winner_of(const GroupKey& key, const db::TrialRecord& best,
                           const db::TrialRecord& fallback, std::size_t candidates) {
  const db::WinnerDecision decision = db::decide_winner(timing_of(best), timing_of(fallback));
  const bool tuned = decision.decision == db::Decision::tuned;
  const db::TrialRecord& chosen = tuned ? best : fallback;
  db::WinnerRecord winner;
  winner.family = key.family;
  winner.budget_arch = key.budget_arch;
  winner.measured_arch = *chosen.measured_arch;
  winner.device_name = key.device_name;
  winner.shape = key.shape;
  winner.batch = key.batch;
  winner.params_json = chosen.params_json;
  winner.median_us = *chosen.median_us;
  winner.default_params_json = fallback.params_json;
  winner.default_median_us = *fallback.median_us;
  winner.speedup_vs_default = decision.speedup_vs_default;
  winner.noise_rel = decision.noise_rel;
  winner.decision = decision.decision;
  winner.reason = std::string(kMergeReasonPrefix) + decision.reason + " (fastest of " +
                  std::to_string(candidates) + " measured configs)";
  winner.source_hash = key.source_hash;
  winner.run_id = std::max(best.run_id, fallback.run_id);
  winner.bytes_moved = chosen.bytes_moved;
  return winner;
}

}  // namespace

WinnerCounts decide_merged_winners(db::Store& store) {
  WinnerCounts counts;
  std::map<std::tuple<std::string, std::string, std::string, std::string, int>, db::WinnerRecord>
      existing;
  for (db::WinnerRecord& winner : store.winners()) {
    existing.emplace(std::tuple(winner.family, winner.budget_arch, winner.device_name, winner.shape,
                                winner.batch),
                     std::move(winner));
  }
  for (const auto& [key, group] : measured_groups(store)) {
    if (key.batch < 1) continue;
    const auto old = existing.find(
        std::tuple(key.family, key.budget_arch, key.device_name, key.shape, key.batch));
    if (old != existing.end() && old->second.source_hash == key.source_hash &&
        old->second.reason.rfind(kMergeReasonPrefix, 0) != 0) {
      ++counts.kept;
      continue;
    }
    const Family* family = nullptr;
    for (const Family* known : families()) family = known->name == key.family ? known : family;
    const std::string where = key.family + " " + key.shape + " batch " + std::to_string(key.batch) +
                              " on " + key.device_name;
    if (family == nullptr) {
      counts.notes.push_back(where + ": family unknown to this build, no winner decided");
      continue;
    }
    const std::string default_params = to_json(family->default_config());
    const auto fallback = group.best.find(default_params);
    if (fallback == group.best.end() || group.failed.contains(default_params)) {
      counts.notes.push_back(where + ": the default config was not measured, no winner decided");
      continue;
    }
    const db::TrialRecord* best = &fallback->second;
    for (const auto& [params, trial] : group.best) {
      if (!group.failed.contains(params) && *trial.median_us < *best->median_us) best = &trial;
    }
    store.record_winner(winner_of(key, *best, fallback->second, group.best.size()));
    ++counts.decided;
  }
  return counts;
}

}  // namespace tuner
