-- A tuning store as schema version 1 wrote it (db/store/schema.cpp before issue 11), with one
-- run, source, problem and measured trial: tests/test_store_resume.cpp and tests/test_merge.cpp
-- open it to check that it is refused.
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

-- batch 0 is a plan-level problem (no batch): UNIQUE treats NULLs as distinct, 0 is not.
CREATE TABLE IF NOT EXISTS problems (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL,
  n_heads INTEGER NOT NULL CHECK (n_heads > 0),
  attn_tp INTEGER NOT NULL CHECK (attn_tp > 0),
  topk INTEGER NOT NULL CHECK (topk > 0),
  kv_format TEXT NOT NULL,
  page_size INTEGER NOT NULL CHECK (page_size > 0),
  batch INTEGER NOT NULL CHECK (batch >= 0),
  UNIQUE (family, n_heads, attn_tp, topk, kv_format, page_size, batch)
);

CREATE TABLE IF NOT EXISTS trials (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs (id),
  problem_id INTEGER NOT NULL REFERENCES problems (id),
  source_hash TEXT NOT NULL REFERENCES sources (hash),
  stage TEXT NOT NULL CHECK (stage IN ('plan', 'measure')),
  budget_arch TEXT NOT NULL,
  measured_arch TEXT,
  device_name TEXT,
  params_json TEXT NOT NULL,
  compile_key TEXT,
  fate TEXT NOT NULL CHECK (fate IN ('pruned_shape', 'pruned_budget', 'compile_failed',
                                     'pruned_after_compile', 'survivor', 'wrong_result', 'fault',
                                     'measured')),
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
  CHECK (stage = 'plan' OR (measured_arch IS NOT NULL AND device_name IS NOT NULL)),
  CHECK (fate NOT IN ('wrong_result', 'fault', 'measured') OR stage = 'measure'),
  CHECK (fate <> 'survivor' OR stage = 'plan'),
  CHECK (fate <> 'measured' OR median_us IS NOT NULL)
);

-- The resume key. Plan-stage rows are recorded again by every plan run, so only measured rows
-- are unique.
CREATE UNIQUE INDEX IF NOT EXISTS trials_resume_key
  ON trials (problem_id, params_json, source_hash, budget_arch, measured_arch, device_name)
  WHERE stage = 'measure';
CREATE INDEX IF NOT EXISTS trials_by_run ON trials (run_id);

CREATE TABLE IF NOT EXISTS winners (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL,
  budget_arch TEXT NOT NULL,
  measured_arch TEXT NOT NULL,
  device_name TEXT NOT NULL,
  n_heads INTEGER NOT NULL,
  attn_tp INTEGER NOT NULL,
  topk INTEGER NOT NULL,
  kv_format TEXT NOT NULL,
  page_size INTEGER NOT NULL,
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
  UNIQUE (family, budget_arch, device_name, n_heads, attn_tp, topk, kv_format, page_size, batch)
);

INSERT INTO runs (id, host, budget_arch, tuner_version, command_line, kind, measured_arch,
                  gpu_name, driver_version, nvrtc_version)
  VALUES (1, 'v1-host', 'sm_120', '0.1.0', 'tuner sweep', 'sweep', 'sm_90', 'NVIDIA H200',
          '12080', '12.8');
INSERT INTO sources (hash, family) VALUES ('src-v1', 'sparse_mla_decode');
INSERT INTO problems (id, family, n_heads, attn_tp, topk, kv_format, page_size, batch)
  VALUES (1, 'sparse_mla_decode', 64, 4, 2048, 'fp8_ds_mla', 64, 8);
INSERT INTO trials (run_id, problem_id, source_hash, stage, budget_arch, measured_arch,
                    device_name, params_json, fate, reason, median_us, p10_us, p90_us, samples)
  VALUES (1, 1, 'src-v1', 'measure', 'sm_120', 'sm_90', 'NVIDIA H200', '{"block_t":32}',
          'measured', 'verified and timed (4 splits)', 20.5, 20.0, 21.0, 50);
PRAGMA application_id = 1414876754;
PRAGMA user_version = 1;
