#pragma once
// Plan run digests: a run's record of the plan rows it wrote for one problem, source hash and
// budget arch, under a digest the writer made of them in the planner's order. A warm sweep rerun
// checked whether the latest plan run holds its plan by reading back and comparing all of that
// run's ~500 000 rows (db/store/held_plan.hpp): 2.9-3.3 s of a 6.3 s rerun (BENCHMARKS.md section
// 7, seventeenth session). With a digest it compares one row. The digest is written after the
// rows it covers, and only the latest plan run's digest is trusted: a later plan run written
// without one (an older tuner, tuner merge) makes the check fall back to the rows.
#include <cstdint>
#include <string>

#include "db/store/records.hpp"

namespace tuner::db {

class Store;

struct PlanRunKey {
  std::int64_t problem_id = 0;
  std::string source_hash;
  std::string budget_arch;
};

struct PlanRunDigest {
  std::int64_t run_id = 0;
  PlanRunKey key;
  std::int64_t fates = 0;  // the plan's rows
  std::string digest;      // the writer's hash of its rows in its order, e.g. "sha256:..."
};

// The latest run that recorded plan rows for `key` (0: none).
std::int64_t latest_plan_run(const Store& store, const PlanRunKey& key);

// Records `digest` for its run, in place of one recorded before (the same rows in another order).
// Call it once the store holds every row it covers.
void record_plan_run_digest(const Store& store, const PlanRunDigest& digest);

// The latest plan run of `key` when the digest recorded with it has `fates` rows and `digest`;
// 0 when there is no plan run, the latest has no digest, or another one. A 0 decides nothing:
// the rows may still be equal (another order, no digest yet), which run_holding_plan tells.
std::int64_t run_holding_plan_digest(const Store& store, const PlanRunKey& key, std::int64_t fates,
                                     const std::string& digest);

}  // namespace tuner::db
