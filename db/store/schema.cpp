// The store's schema: one idempotent script, run by every Store::open inside one transaction.
#include "db/store/schema.hpp"

namespace tuner::db {

const char* const kStoreSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  ended_at TEXT,
  host TEXT NOT NULL,
  gpu_name TEXT,
  measured_arch TEXT,
  budget_arch TEXT NOT NULL,
  driver_version TEXT,
  cuda_version TEXT,
  nvrtc_version TEXT,
  tuner_version TEXT NOT NULL,
  command_line TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('plan', 'sweep')),
  copy_bandwidth_gbs REAL CHECK (copy_bandwidth_gbs IS NULL OR copy_bandwidth_gbs > 0)
);

CREATE TABLE IF NOT EXISTS sources (
  hash TEXT PRIMARY KEY,
  family TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- shape: the family's canonical shape text, "name=value" pairs sorted by name joined by ','.
-- batch 0 is a plan-level problem (no batch): UNIQUE treats NULLs as distinct, 0 is not.
CREATE TABLE IF NOT EXISTS problems (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL,
  shape TEXT NOT NULL CHECK (shape <> '' AND shape NOT GLOB '*[ ;]*'),
  batch INTEGER NOT NULL CHECK (batch >= 0),
  UNIQUE (family, shape, batch)
);

CREATE TABLE IF NOT EXISTS trials (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs (id),
  problem_id INTEGER NOT NULL REFERENCES problems (id),
  source_hash TEXT NOT NULL REFERENCES sources (hash),
  stage TEXT NOT NULL CHECK (stage IN ('plan', 'measure', 'retime')),
  budget_arch TEXT NOT NULL,
  measured_arch TEXT,
  device_name TEXT,
  params_json TEXT NOT NULL,
  compile_key TEXT,
  fate TEXT NOT NULL CHECK (fate IN ('pruned_shape', 'pruned_budget', 'compile_failed',
                                     'pruned_after_compile', 'survivor', 'wrong_result', 'fault',
                                     'transient', 'measured', 'skipped_by_search')),
  reason TEXT NOT NULL,
  est_smem_bytes INTEGER,
  est_regs INTEGER,
  ptxas_regs INTEGER,
  ptxas_spill_bytes INTEGER,
  blocks_per_sm INTEGER,
  occupancy_limiter TEXT,
  compile_ms REAL,
  cached INTEGER CHECK (cached IN (0, 1)),
  median_us REAL,
  p10_us REAL,
  p90_us REAL,
  samples INTEGER,
  rel_spread REAL,
  err_out REAL,
  err_lse REAL,
  bytes_moved INTEGER,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  -- What else decides a measurement (NVRTC, driver, measurement protocol): part of the resume key.
  measure_env TEXT NOT NULL DEFAULT '',
  -- Per-launch 10th/90th percentiles (timing protocol 2), scaled to median_us (schema version 3).
  launch_p10_us REAL CHECK (launch_p10_us IS NULL OR launch_p10_us > 0),
  launch_p90_us REAL CHECK (launch_p90_us IS NULL OR launch_p90_us >= launch_p10_us),
  -- A plan row of one parameter value the shape rules out alone: the members it stands for
  -- (schema version 4; NULL for a row of one config).
  members INTEGER CHECK (members IS NULL OR (members >= 1 AND stage = 'plan')),
  CHECK (stage = 'plan' OR (measured_arch IS NOT NULL AND device_name IS NOT NULL)),
  CHECK (fate NOT IN ('wrong_result', 'fault', 'transient', 'measured', 'skipped_by_search')
         OR stage <> 'plan'),
  CHECK (fate <> 'survivor' OR stage = 'plan'),
  CHECK (fate <> 'measured' OR median_us IS NOT NULL)
);

-- The resume key. Plan-stage rows are recorded again by every plan run, a transient failure
-- (timeout, out of memory) is retried by the next sweep, and a config the batch search skipped
-- may be measured by the next one, so only the other measured rows are unique.
CREATE UNIQUE INDEX IF NOT EXISTS trials_resume_key_v3
  ON trials (problem_id, params_json, source_hash, budget_arch, measured_arch, device_name,
             measure_env)
  WHERE stage = 'measure' AND fate NOT IN ('transient', 'skipped_by_search');
CREATE INDEX IF NOT EXISTS trials_by_run ON trials (run_id);
-- tuner merge: a plan fate another shard's run already recorded is not copied again.
CREATE INDEX IF NOT EXISTS trials_plan_key ON trials (problem_id, params_json) WHERE stage = 'plan';
-- tuner merge: an input's measured rows without a pass over its ~100 000 plan rows.
CREATE INDEX IF NOT EXISTS trials_not_plan ON trials (run_id) WHERE stage <> 'plan';

-- A digest of the plan rows one run recorded, in the order the planner made them
-- (db/store/plan_run.hpp): written after the rows, so a rerun whose plan has the same digest
-- finds them held without reading them.
CREATE TABLE IF NOT EXISTS plan_run_digests (
  run_id INTEGER NOT NULL REFERENCES runs (id),
  problem_id INTEGER NOT NULL REFERENCES problems (id),
  source_hash TEXT NOT NULL,
  budget_arch TEXT NOT NULL,
  fates INTEGER NOT NULL CHECK (fates >= 0),
  digest TEXT NOT NULL CHECK (digest <> ''),
  PRIMARY KEY (run_id, problem_id, source_hash, budget_arch)
);

-- The plans this store holds in full (db/store/plan_digest.hpp): written after their rows, so
-- tuner merge can skip an input's plan rows unread when the output holds the same digest.
-- The key's columns come first: SQLite 3.40's integrity_check misreads a WITHOUT ROWID table
-- whose non-key column precedes a key column ("NULL value in plan_digests.fates").
CREATE TABLE IF NOT EXISTS plan_digests (
  problem_id INTEGER NOT NULL REFERENCES problems (id),
  source_hash TEXT NOT NULL,
  budget_arch TEXT NOT NULL,
  digest TEXT NOT NULL CHECK (digest <> ''),
  fates INTEGER NOT NULL CHECK (fates >= 0),
  PRIMARY KEY (problem_id, source_hash, budget_arch, digest)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS winners (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL,
  budget_arch TEXT NOT NULL,
  measured_arch TEXT NOT NULL,
  device_name TEXT NOT NULL,
  shape TEXT NOT NULL,
  batch INTEGER NOT NULL CHECK (batch >= 1),
  params_json TEXT NOT NULL,
  median_us REAL NOT NULL CHECK (median_us > 0),
  default_params_json TEXT NOT NULL,
  default_median_us REAL NOT NULL CHECK (default_median_us > 0),
  speedup_vs_default REAL NOT NULL,
  noise_rel REAL NOT NULL,
  decision TEXT NOT NULL CHECK (decision IN ('tuned', 'default_kept')),
  reason TEXT NOT NULL,
  source_hash TEXT NOT NULL REFERENCES sources (hash),
  run_id INTEGER NOT NULL REFERENCES runs (id),
  bytes_moved INTEGER,
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (family, budget_arch, device_name, shape, batch)
);

-- A sharded run (tuner plan|sweep --shard i/N): which slice of which work it did. tuner merge
-- checks that the shards of one work are all there, once each, before it writes anything.
CREATE TABLE IF NOT EXISTS shards (
  run_id INTEGER PRIMARY KEY REFERENCES runs (id),
  shard_index INTEGER NOT NULL CHECK (shard_index >= 1),
  shard_count INTEGER NOT NULL CHECK (shard_count >= shard_index),
  work TEXT NOT NULL CHECK (work <> '')
);
)sql";

}  // namespace tuner::db
