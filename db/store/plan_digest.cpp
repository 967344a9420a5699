#include "db/store/plan_digest.hpp"

#include <algorithm>

#include "db/store/store.hpp"

namespace tuner::db {

std::string plan_fate_key(std::string_view params_json, std::string_view fate,
                          std::string_view reason) {
  std::string key(params_json);
  key.append(1, '\x1f').append(fate).append(1, '\x1f').append(reason);
  return key;
}

std::string plan_fate_key(const TrialRecord& row) {
  return plan_fate_key(canonical_params_json(row.params_json), to_string(row.fate), row.reason);
}

std::vector<std::string> plan_fate_keys(const std::vector<TrialRecord>& plan) {
  std::vector<std::string> keys;
  keys.reserve(plan.size());
  for (const TrialRecord& row : plan) keys.push_back(plan_fate_key(row));
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string joined_plan_fate_keys(const std::vector<std::string>& sorted_keys) {
  std::string text;
  for (const std::string& key : sorted_keys) text.append(key).append(1, '\x1e');
  return text;
}

std::string plan_fate_text(const std::vector<TrialRecord>& plan) {
  return joined_plan_fate_keys(plan_fate_keys(plan));
}

void record_plan_digest(const Store& store, const PlanDigest& digest) {
  Statement insert = store.connection().prepare(
      "INSERT OR IGNORE INTO plan_digests (problem_id, source_hash, budget_arch, fates, digest) "
      "VALUES (?1, ?2, ?3, ?4, ?5)");
  insert.bind(1, digest.problem_id).bind(2, digest.source_hash).bind(3, digest.budget_arch);
  insert.bind(4, digest.fates).bind(5, digest.digest).run();
}

}  // namespace tuner::db
