#pragma once
// The tuning store's rows, shared by the Store's methods (store.cpp, store_open.cpp): the column
// lists, binding a record to an INSERT and reading a row back, and the checks on what callers
// hand in (programming errors: std::invalid_argument). Internal to db/store.
#include <string>

#include "db/store/store.hpp"

namespace tuner::db::rows {

inline constexpr const char* kRunColumns =
    "id, started_at, ended_at, host, gpu_name, measured_arch, budget_arch, driver_version, "
    "cuda_version, nvrtc_version, tuner_version, command_line, kind, copy_bandwidth_gbs";

inline constexpr const char* kTrialColumns =
    "run_id, problem_id, source_hash, stage, budget_arch, measured_arch, device_name, "
    "params_json, compile_key, fate, reason, est_smem_bytes, est_regs, ptxas_regs, "
    "ptxas_spill_bytes, blocks_per_sm, occupancy_limiter, compile_ms, cached, median_us, p10_us, "
    "p90_us, samples, rel_spread, err_out, err_lse, bytes_moved, measure_env, launch_p10_us, "
    "launch_p90_us, members";
inline constexpr int kTrialColumnCount = 31;

inline constexpr const char* kWinnerColumns =
    "family, budget_arch, measured_arch, device_name, shape, batch, params_json, median_us, "
    "default_params_json, default_median_us, speedup_vs_default, noise_rel, decision, reason, "
    "source_hash, run_id, bytes_moved";

inline constexpr int kWinnerColumnCount = 17;

// The trial filter's WHERE clause (parameters ?1..?5: run, family, problem, fate, stage; NULL
// matches any), bound by bind_trial_filter.
inline constexpr const char* kTrialFilterSql =
    "JOIN problems p ON p.id = t.problem_id WHERE (?1 IS NULL OR t.run_id = ?1) AND "
    "(?2 IS NULL OR p.family = ?2) AND (?3 IS NULL OR t.problem_id = ?3) AND "
    "(?4 IS NULL OR t.fate = ?4) AND (?5 IS NULL OR t.stage = ?5)";

// The SQL parameter list "?1, ?2, ..., ?n" of an INSERT with n columns.
std::string sql_parameters(int count);

RunInfo read_run(const Statement& row);
void bind_trial(Statement& insert, const TrialRecord& trial);
// Reads a row of "id, <kTrialColumns>, created_at".
TrialRecord read_trial(const Statement& row);
// SELECT of every trial column, with `where` appended.
std::string trial_select(const char* where);
void bind_trial_filter(Statement& statement, const TrialFilter& filter);
void bind_winner(Statement& insert, const WinnerRecord& w);
// Reads a row of "id, <kWinnerColumns>, updated_at".
WinnerRecord read_winner(const Statement& row);

void require(bool condition, const std::string& message);
void check_trial(const TrialRecord& trial);
void check_winner(const WinnerRecord& w);
void check_problem(const ProblemKey& p);

// The INSERT every trial goes through (reused, reset, by Store::record_trials).
Statement prepare_trial_insert(const Connection& connection);
// Inserts `row` (canonical params) with `insert`; a constraint error names the row and the fix.
void insert_trial(Statement& insert, const TrialRecord& row, const std::string& path);

}  // namespace tuner::db::rows
