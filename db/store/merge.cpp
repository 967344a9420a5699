// The merge is SQL over an ATTACHed input: rows travel inside SQLite, in one transaction, so a
// merge of many shard files costs one pass over their rows (BENCHMARKS.md: 16 shards).
#include "db/store/merge.hpp"

#include <cstdio>
#include <string_view>
#include <tuple>

namespace tuner::db {
namespace {

constexpr const char* kRunCopyColumns =
    "started_at, ended_at, host, gpu_name, measured_arch, budget_arch, driver_version, "
    "cuda_version, nvrtc_version, tuner_version, command_line, kind, copy_bandwidth_gbs";

constexpr const char* kTrialCopyColumns =
    "source_hash, stage, budget_arch, measured_arch, device_name, params_json, compile_key, fate, "
    "reason, est_smem_bytes, est_regs, ptxas_regs, ptxas_spill_bytes, blocks_per_sm, "
    "occupancy_limiter, compile_ms, cached, median_us, p10_us, p90_us, samples, rel_spread, "
    "err_out, err_lse, bytes_moved, created_at, measure_env, launch_p10_us, launch_p90_us, members";

constexpr const char* kWinnerCopyColumns =
    "family, budget_arch, measured_arch, device_name, shape, batch, params_json, median_us, "
    "default_params_json, default_median_us, speedup_vs_default, noise_rel, decision, reason, "
    "source_hash, bytes_moved, updated_at";

constexpr const char* kRunMatch =
    "m.host = s.host AND m.started_at = s.started_at AND m.command_line = s.command_line AND "
    "m.kind = s.kind";

// ATTACH cannot run inside a transaction; the input is detached again whatever happens.
class Attached {
 public:
  Attached(const Connection& connection, const std::filesystem::path& path)
      : connection_(connection) {
    connection_.prepare("ATTACH DATABASE ?1 AS src").bind(1, path.string()).run();
  }
  Attached(const Attached&) = delete;
  Attached& operator=(const Attached&) = delete;
  ~Attached() {
    try {
      connection_.exec("DETACH DATABASE src");
    } catch (...) {  // a destructor must not throw; the connection is closed soon after anyway
    }
  }

 private:
  const Connection& connection_;
};

std::int64_t changes(const Connection& connection) {
  return connection.query_int64("SELECT changes()");
}

void copy_runs_and_problems(const Connection& c, MergeCounts& counts) {
  const std::string runs(kRunCopyColumns);
  c.exec("INSERT INTO main.runs (" + runs + ") SELECT " + runs +
         " FROM src.runs s WHERE NOT EXISTS (SELECT 1 FROM main.runs m WHERE " + kRunMatch + ")");
  counts.runs_added = changes(c);
  // A run copied while it was still going has ended since.
  c.exec(std::string("UPDATE main.runs AS m SET ended_at = s.ended_at FROM src.runs s WHERE ") +
         kRunMatch + " AND m.ended_at IS NULL AND s.ended_at IS NOT NULL");
  c.exec(
      "CREATE TEMP TABLE IF NOT EXISTS merge_run_map (src_id INTEGER PRIMARY KEY, dst_id INTEGER);"
      "CREATE TEMP TABLE IF NOT EXISTS merge_problem_map (src_id INTEGER PRIMARY KEY, "
      "dst_id INTEGER); DELETE FROM temp.merge_run_map; DELETE FROM temp.merge_problem_map;");
  c.exec(std::string("INSERT INTO temp.merge_run_map SELECT s.id, (SELECT m.id FROM main.runs m "
                     "WHERE ") +
         kRunMatch + " ORDER BY m.id LIMIT 1) FROM src.runs s");
  c.exec(
      "INSERT OR IGNORE INTO main.sources (hash, family, created_at) "
      "SELECT hash, family, created_at FROM src.sources");
  c.exec(
      "INSERT OR IGNORE INTO main.problems (family, shape, batch) "
      "SELECT family, shape, batch FROM src.problems");
  c.exec(
      "INSERT INTO temp.merge_problem_map SELECT s.id, m.id FROM src.problems s "
      "JOIN main.problems m ON m.family = s.family AND m.shape = s.shape AND m.batch = s.batch");
}

bool input_has_table(const Connection& c, std::string_view table) {
  Statement count =
      c.prepare("SELECT COUNT(*) FROM src.sqlite_schema WHERE type = 'table' AND name = ?1");
  count.bind(1, table);
  return count.step() && count.column_int64(0) != 0;
}

// All rows less the measured ones: both counts read small indexes (trials_by_run,
// trials_not_plan), not the plan rows' index of ~20 MB a shard, which a cold page cache made
// seconds of reading for 16 shards.
std::int64_t input_plan_rows(const Connection& c) {
  return c.query_int64(
      "SELECT (SELECT COUNT(*) FROM src.trials) - (SELECT COUNT(*) FROM src.trials WHERE "
      "stage <> 'plan')");
}

// Whether the output holds every plan fate of the input already, by their digests (plan_digest):
// the input's digests account for all of its plan rows, and the output holds each of them.
bool input_plans_held(const Connection& c, std::int64_t plan_rows) {
  if (!input_has_table(c, "plan_digests")) return false;  // written before digests existed
  if (plan_rows != c.query_int64("SELECT COALESCE(SUM(fates), 0) FROM src.plan_digests")) {
    return false;  // a plan recorded twice, or rows without a digest: probed row by row
  }
  return c.query_int64(
             "SELECT COUNT(*) FROM src.plan_digests d JOIN temp.merge_problem_map pm ON "
             "pm.src_id = d.problem_id WHERE NOT EXISTS (SELECT 1 FROM main.plan_digests m "
             "WHERE m.problem_id = pm.dst_id AND m.source_hash = d.source_hash AND "
             "m.budget_arch = d.budget_arch AND m.digest = d.digest AND m.fates = d.fates)") == 0;
}

// The incoming trials under the output's ids, less those the output already holds.
void stage_trials(const Connection& c, MergeCounts& counts) {
  c.exec("DROP TABLE IF EXISTS temp.merge_trials");
  // Every sweep shard records the whole plan: a plan fate the output already holds under another
  // run (same problem, config, source, budget arch, fate and reason) is kept once, and is not
  // even staged (BENCHMARKS.md section 10: 99 % of 16 shards' rows were such copies). When the
  // digests say the output holds all of them, the plan rows are not even read.
  const std::string select = std::string("CREATE TEMP TABLE merge_trials AS SELECT ") +
                             kTrialCopyColumns +
                             ", rm.dst_id AS run_id, pm.dst_id AS problem_id FROM src.trials t "
                             "JOIN temp.merge_run_map rm ON rm.src_id = t.run_id "
                             "JOIN temp.merge_problem_map pm ON pm.src_id = t.problem_id ";
  const std::int64_t plan_rows = input_plan_rows(c);
  if (input_plans_held(c, plan_rows)) {
    c.exec(select + "WHERE t.stage <> 'plan'");
  } else {
    c.exec(select +
           "WHERE t.stage <> 'plan' OR NOT EXISTS (SELECT 1 FROM main.trials m INDEXED BY "
           "trials_plan_key WHERE m.problem_id = pm.dst_id AND m.params_json = t.params_json AND "
           "m.stage = 'plan' AND m.source_hash = t.source_hash AND m.budget_arch = t.budget_arch "
           "AND m.fate = t.fate AND m.reason = t.reason)");
  }
  counts.plan_fates_shared =
      plan_rows - c.query_int64("SELECT COUNT(*) FROM temp.merge_trials WHERE stage = 'plan'");
  // Only runs the output held before can hold these trials already; their rows are looked up
  // through a temp index on the natural key (main.trials has none, and needs none otherwise).
  c.exec("DROP TABLE IF EXISTS temp.merge_existing");
  c.exec(
      "CREATE TEMP TABLE merge_existing AS SELECT run_id, problem_id, stage, params_json, "
      "budget_arch, measured_arch, device_name, fate, created_at FROM main.trials WHERE run_id IN "
      "(SELECT dst_id FROM temp.merge_run_map)");
  c.exec(
      "CREATE INDEX temp.merge_existing_key ON merge_existing (run_id, problem_id, params_json, "
      "created_at)");
  c.exec(
      "DELETE FROM temp.merge_trials AS i WHERE EXISTS (SELECT 1 FROM temp.merge_existing m "
      "WHERE m.run_id = i.run_id AND m.problem_id = i.problem_id AND m.stage = i.stage AND "
      "m.params_json = i.params_json AND m.budget_arch = i.budget_arch AND "
      "m.measured_arch IS i.measured_arch AND m.device_name IS i.device_name AND "
      "m.fate = i.fate AND m.created_at = i.created_at)");
  counts.trials_already_there = changes(c);
  c.exec("DROP TABLE temp.merge_existing");
}

struct Contender {
  std::string fate;
  double median_us = 0.0;
  double rel_spread = 0.0;
  std::string run_started_at;
};

// The stated rule: wrong_result > fault > measured; then smaller spread, then smaller median.
bool incoming_wins(const Contender& kept, const Contender& incoming) {
  auto severity = [](const std::string& fate) {
    return fate == "wrong_result" ? 2 : fate == "fault" ? 1 : 0;
  };
  if (severity(incoming.fate) != severity(kept.fate))
    return severity(incoming.fate) > severity(kept.fate);
  return std::tie(incoming.rel_spread, incoming.median_us) <
         std::tie(kept.rel_spread, kept.median_us);
}

std::string describe(const Contender& c) {
  if (c.fate != "measured") return c.fate + " (run of " + c.run_started_at + ")";
  char text[160];
  std::snprintf(text, sizeof text, "measured %.3f us (spread %.2f%%), run of %s", c.median_us,
                100.0 * c.rel_spread, c.run_started_at.c_str());
  return text;
}

// Measured trials that collide with a different row on the resume key: one of the two stays.
// Exactly the rows trials_resume_key_v3 keeps unique: a transient failure or a config the batch
// search skipped is no verdict, competes with nothing, and is copied as it is (a skipped row once
// displaced a timing here, winning the spread comparison with no spread at all).
void resolve_conflicts(const Connection& c, MergeCounts& counts) {
  Statement pairs = c.prepare(
      "SELECT i.rowid, m.id, i.fate, i.median_us, i.rel_spread, ri.started_at, m.fate, "
      "m.median_us, m.rel_spread, rm.started_at, p.family || ' ' || p.shape || ' batch ' || "
      "p.batch, i.params_json, i.device_name FROM temp.merge_trials i JOIN main.trials m ON "
      "m.problem_id = i.problem_id AND m.params_json = i.params_json AND "
      "m.source_hash = i.source_hash AND m.budget_arch = i.budget_arch AND "
      "m.measured_arch = i.measured_arch AND m.device_name = i.device_name AND "
      "m.measure_env = i.measure_env AND m.stage = 'measure' AND "
      "m.fate NOT IN ('transient', 'skipped_by_search') "
      "JOIN main.runs ri ON ri.id = i.run_id JOIN main.runs rm ON rm.id = m.run_id "
      "JOIN main.problems p ON p.id = i.problem_id "
      "WHERE i.stage = 'measure' AND i.fate NOT IN ('transient', 'skipped_by_search')");
  std::vector<std::pair<std::int64_t, std::int64_t>> drop_incoming;
  std::vector<std::pair<std::int64_t, std::int64_t>> drop_kept;
  while (pairs.step()) {
    const Contender incoming{pairs.column_text(2), pairs.column_optional_double(3).value_or(0.0),
                             pairs.column_optional_double(4).value_or(0.0), pairs.column_text(5)};
    const Contender kept{pairs.column_text(6), pairs.column_optional_double(7).value_or(0.0),
                         pairs.column_optional_double(8).value_or(0.0), pairs.column_text(9)};
    const bool replace = incoming_wins(kept, incoming);
    counts.conflicts.push_back(
        MergeConflict{pairs.column_text(10), pairs.column_text(11), pairs.column_text(12),
                      describe(replace ? incoming : kept), describe(replace ? kept : incoming)});
    (replace ? drop_kept : drop_incoming)
        .emplace_back(pairs.column_int64(0), pairs.column_int64(1));
  }
  Statement delete_incoming = c.prepare("DELETE FROM temp.merge_trials WHERE rowid = ?1");
  for (const auto& pair : drop_incoming) {
    delete_incoming.bind(1, pair.first).run();
    delete_incoming.reset();
  }
  Statement delete_kept = c.prepare("DELETE FROM main.trials WHERE id = ?1");
  for (const auto& pair : drop_kept) {
    delete_kept.bind(1, pair.second).run();
    delete_kept.reset();
  }
}

void copy_shards_and_winners(const Connection& c, MergeCounts& counts) {
  if (input_has_table(c, "shards")) {
    c.exec(
        "INSERT OR IGNORE INTO main.shards (run_id, shard_index, shard_count, work) "
        "SELECT rm.dst_id, s.shard_index, s.shard_count, s.work FROM src.shards s "
        "JOIN temp.merge_run_map rm ON rm.src_id = s.run_id");
  }
  const std::string winners(kWinnerCopyColumns);
  std::string update;
  for (const char* column : {"measured_arch", "params_json", "median_us", "default_params_json",
                             "default_median_us", "speedup_vs_default", "noise_rel", "decision",
                             "reason", "source_hash", "run_id", "bytes_moved", "updated_at"}) {
    update += std::string(update.empty() ? "" : ", ") + column + " = excluded." + column;
  }
  c.exec("INSERT INTO main.winners (" + winners + ", run_id) SELECT w." +
         std::string("family, w.budget_arch, w.measured_arch, w.device_name, w.shape, w.batch, "
                     "w.params_json, w.median_us, w.default_params_json, w.default_median_us, "
                     "w.speedup_vs_default, w.noise_rel, w.decision, w.reason, w.source_hash, "
                     "w.bytes_moved, w.updated_at") +
         ", rm.dst_id FROM src.winners w JOIN temp.merge_run_map rm ON rm.src_id = w.run_id "
         "WHERE true ON CONFLICT (family, budget_arch, device_name, shape, batch) DO UPDATE SET " +
         update +
         " WHERE (SELECT started_at FROM main.runs WHERE id = excluded.run_id) > "
         "(SELECT started_at FROM main.runs WHERE id = winners.run_id)");
  counts.winners_written = changes(c);
}

}  // namespace

MergeCounts merge_store(Store& out, const std::filesystem::path& in) {
  const Connection& c = out.connection();
  MergeCounts counts;
  Attached attached(c, in);
  Transaction transaction(c);
  copy_runs_and_problems(c, counts);
  stage_trials(c, counts);
  resolve_conflicts(c, counts);
  c.exec(std::string("INSERT INTO main.trials (run_id, problem_id, ") + kTrialCopyColumns +
         ") SELECT run_id, problem_id, " + kTrialCopyColumns + " FROM temp.merge_trials");
  counts.trials_added = changes(c);
  if (input_has_table(c, "plan_digests")) {  // every plan row the input holds, the output holds
    c.exec(
        "INSERT OR IGNORE INTO main.plan_digests (problem_id, source_hash, budget_arch, fates, "
        "digest) SELECT pm.dst_id, d.source_hash, d.budget_arch, d.fates, d.digest FROM "
        "src.plan_digests d JOIN temp.merge_problem_map pm ON pm.src_id = d.problem_id");
  }
  copy_shards_and_winners(c, counts);
  c.exec("DROP TABLE temp.merge_trials");
  transaction.commit();
  return counts;
}

}  // namespace tuner::db
