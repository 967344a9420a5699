// Store schema upgrades, run by Store::open inside the schema transaction. SQLite cannot change a
// CHECK or a column order, so each upgrade moves the table aside, lets the schema script create
// the new one, and copies the rows over.
#include "db/sqlite/sqlite.hpp"
#include "db/store/schema.hpp"

namespace tuner::db {

namespace {

// The trials columns of schema version 1, in order.
constexpr const char* kTrialColumnsV1 =
    "id, run_id, problem_id, source_hash, stage, budget_arch, measured_arch, device_name, "
    "params_json, compile_key, fate, reason, est_smem_bytes, est_regs, ptxas_regs, "
    "ptxas_spill_bytes, blocks_per_sm, occupancy_limiter, compile_ms, cached, median_us, p10_us, "
    "p90_us, samples, rel_spread, err_out, err_lse, bytes_moved, created_at";

// A store of the fifth session of 2026-12-01 has plan_digests with `fates` before the key's
// `digest` column, which SQLite 3.40's integrity_check reports as NULL values (the rows are fine).
bool plan_digests_in_old_order(const Connection& connection) {
  return connection.query_int64(
             "SELECT COUNT(*) FROM pragma_table_info('plan_digests') WHERE cid = 3 AND "
             "name = 'fates'") == 1;
}

constexpr const char* kPlanDigestColumns = "problem_id, source_hash, budget_arch, digest, fates";

// Schema version 4's column, as kStoreSchemaSql declares it.
constexpr const char* kAddMembersColumn =
    "ALTER TABLE trials ADD COLUMN members INTEGER "
    "CHECK (members IS NULL OR (members >= 1 AND stage = 'plan'))";

}  // namespace

void begin_migration(const Connection& connection, int from_version) {
  if (plan_digests_in_old_order(connection)) {
    connection.exec("ALTER TABLE plan_digests RENAME TO plan_digests_old");
  }
  // The old indexes go first: their names would otherwise keep the new ones from being created.
  if (from_version == 1) {
    connection.exec(
        "DROP INDEX IF EXISTS trials_resume_key; DROP INDEX IF EXISTS trials_by_run; "
        "ALTER TABLE trials RENAME TO trials_old");
  } else if (from_version == 2) {
    // Version 3 adds the fate skipped_by_search (and leaves it out of the resume key) and the
    // per-launch quantiles (launch_p10_us, launch_p90_us: NULL for older rows, whose measure_env
    // names protocol 1, so a sweep measures them again anyway).
    connection.exec(
        "DROP INDEX IF EXISTS trials_resume_key_v2; DROP INDEX IF EXISTS trials_by_run; "
        "ALTER TABLE trials RENAME TO trials_old");
  } else if (from_version == 3) {
    // Version 4 adds `members` (a plan row of a value the shape rules out alone), as the last
    // column and NULL in every older row: the table keeps its rows.
    connection.exec(kAddMembersColumn);
  }
}

void finish_migration(const Connection& connection, int from_version) {
  if (connection.query_int64("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND "
                             "name = 'plan_digests_old'") == 1) {
    connection.exec(std::string("INSERT INTO plan_digests (") + kPlanDigestColumns + ") SELECT " +
                    kPlanDigestColumns + " FROM plan_digests_old; DROP TABLE plan_digests_old");
  }
  if (from_version == 1) {
    // Version 1 rows carry no measurement environment: '' never matches a sweep's, so they are
    // measured again rather than trusted under another NVRTC, driver or protocol.
    connection.exec(std::string("INSERT INTO trials (") + kTrialColumnsV1 +
                    ", measure_env) SELECT " + kTrialColumnsV1 +
                    ", '' FROM trials_old; DROP TABLE trials_old");
  } else if (from_version == 2) {
    connection.exec(std::string("INSERT INTO trials (") + kTrialColumnsV1 +
                    ", measure_env) SELECT " + kTrialColumnsV1 +
                    ", measure_env FROM trials_old; DROP TABLE trials_old");
  }
}

void read_older_schema(const Connection& connection, int version) {
  // A TEMP view shadows main.trials for unqualified names; the file itself is not touched.
  if (version == 1) {
    connection.exec(
        "CREATE TEMP VIEW trials AS SELECT *, '' AS measure_env, NULL AS launch_p10_us, "
        "NULL AS launch_p90_us, NULL AS members FROM main.trials");
  } else if (version == 2) {
    connection.exec(
        "CREATE TEMP VIEW trials AS SELECT *, NULL AS launch_p10_us, NULL AS launch_p90_us, "
        "NULL AS members FROM main.trials");
  } else if (version == 3) {
    connection.exec("CREATE TEMP VIEW trials AS SELECT *, NULL AS members FROM main.trials");
  }
}

}  // namespace tuner::db
