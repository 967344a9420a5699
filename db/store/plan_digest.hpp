#pragma once
// Plan digests: a store's record that it holds every fate of one plan (problem, source hash,
// budget arch), under a digest of those fates. Every shard of a sweep records the same whole plan
// (104,976 fates since pdl); `tuner merge` read and probed each of those rows per shard, 10.3 s
// for 16 shards (BENCHMARKS.md section 10). With digests it skips a shard's plan rows unread when
// the output holds their digest already. The digest is written after the rows it covers (never
// before), so a store that holds a digest holds its rows; plan rows are never deleted.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "db/store/records.hpp"

namespace tuner::db {

class Store;

struct PlanDigest {
  std::int64_t problem_id = 0;
  std::string source_hash;
  std::string budget_arch;
  std::int64_t fates = 0;  // the plan's rows
  std::string digest;      // the writer's hash of plan_fate_text, e.g. "sha256:..."
};

// One plan row as a comparable key: the config, the fate and the reason, which are what makes two
// plan rows the same fate (tuner merge keeps such rows once). Fields are joined by the unit
// separator, which occurs in neither JSON nor a reason.
std::string plan_fate_key(std::string_view params_json, std::string_view fate,
                          std::string_view reason);

// One row's key, its params canonical (a JSON parse: callers with many rows may spread them).
std::string plan_fate_key(const TrialRecord& row);

// The plan_fate_key of every row of one plan (canonical params), sorted: the plan as a set of
// fates, in any order of its rows.
std::vector<std::string> plan_fate_keys(const std::vector<TrialRecord>& plan);

// What a plan's digest hashes: its sorted keys joined by the record separator.
std::string joined_plan_fate_keys(const std::vector<std::string>& sorted_keys);
std::string plan_fate_text(const std::vector<TrialRecord>& plan);  // of plan_fate_keys(plan)

// Records `digest` (idempotent). Call it once the store holds every row it covers.
void record_plan_digest(const Store& store, const PlanDigest& digest);

}  // namespace tuner::db
