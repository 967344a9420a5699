#include "db/store/plan_run.hpp"

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"

namespace tuner::db {

std::int64_t latest_plan_run(const Store& store, const PlanRunKey& key) {
  // Newest run first along trials_by_run, so the walk passes only the rows of later runs (a
  // sweep's measured rows, other problems' plans) before it meets the newest plan row. Through
  // trials_plan_key, which the planner prefers, it took a pass over all ~500 000 plan rows of the
  // problem (0.7 s of a warm rerun on a 2-core machine, against 0.1 s).
  Statement latest = store.connection().prepare(
      "SELECT run_id FROM trials INDEXED BY trials_by_run WHERE stage = 'plan' AND "
      "problem_id = ?1 AND budget_arch = ?2 AND source_hash = ?3 ORDER BY run_id DESC LIMIT 1");
  latest.bind(1, key.problem_id).bind(2, key.budget_arch).bind(3, key.source_hash);
  return latest.step() ? latest.column_int64(0) : 0;
}

void record_plan_run_digest(const Store& store, const PlanRunDigest& digest) {
  Statement insert = store.connection().prepare(
      "INSERT OR REPLACE INTO plan_run_digests (run_id, problem_id, source_hash, budget_arch, "
      "fates, digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  insert.bind(1, digest.run_id).bind(2, digest.key.problem_id).bind(3, digest.key.source_hash);
  insert.bind(4, digest.key.budget_arch).bind(5, digest.fates).bind(6, digest.digest).run();
}

std::int64_t run_holding_plan_digest(const Store& store, const PlanRunKey& key, std::int64_t fates,
                                     const std::string& digest) {
  const std::int64_t latest = latest_plan_run(store, key);
  if (latest == 0) return 0;
  Statement held = store.connection().prepare(
      "SELECT 1 FROM plan_run_digests WHERE run_id = ?1 AND problem_id = ?2 AND "
      "source_hash = ?3 AND budget_arch = ?4 AND fates = ?5 AND digest = ?6");
  held.bind(1, latest).bind(2, key.problem_id).bind(3, key.source_hash);
  held.bind(4, key.budget_arch).bind(5, fates).bind(6, digest);
  return held.step() ? latest : 0;
}

}  // namespace tuner::db
