#include "db/store/store_rows.hpp"

#include <sqlite3.h>

#include <stdexcept>

#include "db/tunedb/params.hpp"
#include "db/tunedb/shape.hpp"

namespace tuner::db::rows {

std::string sql_parameters(int count) {
  std::string text;
  for (int i = 1; i <= count; ++i) text += (i > 1 ? ", ?" : "?") + std::to_string(i);
  return text;
}

RunInfo read_run(const Statement& row) {
  RunInfo run;
  run.id = row.column_int64(0);
  run.started_at = row.column_text(1);
  run.ended_at = row.column_optional_text(2);
  run.host = row.column_text(3);
  run.gpu_name = row.column_optional_text(4);
  run.measured_arch = row.column_optional_text(5);
  run.budget_arch = row.column_text(6);
  run.driver_version = row.column_optional_text(7);
  run.cuda_version = row.column_optional_text(8);
  run.nvrtc_version = row.column_optional_text(9);
  run.tuner_version = row.column_text(10);
  run.command_line = row.column_text(11);
  run.kind = parse_run_kind(row.column_text(12));
  run.copy_bandwidth_gbs = row.column_optional_double(13);
  return run;
}

void bind_trial(Statement& insert, const TrialRecord& trial) {
  int index = 0;
  const auto next = [&](const auto& value) { insert.bind(++index, value); };
  next(trial.run_id);
  next(trial.problem_id);
  next(trial.source_hash);
  next(std::string_view(to_string(trial.stage)));
  next(trial.budget_arch);
  next(trial.measured_arch);
  next(trial.device_name);
  next(trial.params_json);
  next(trial.compile_key);
  next(std::string_view(to_string(trial.fate)));
  next(trial.reason);
  next(trial.est_smem_bytes);
  next(trial.est_regs);
  next(trial.ptxas_regs);
  next(trial.ptxas_spill_bytes);
  next(trial.blocks_per_sm);
  next(trial.occupancy_limiter);
  next(trial.compile_ms);
  next(trial.cached);
  next(trial.median_us);
  next(trial.p10_us);
  next(trial.p90_us);
  next(trial.samples);
  next(trial.rel_spread);
  next(trial.err_out);
  next(trial.err_lse);
  next(trial.bytes_moved);
  next(trial.measure_env);
  next(trial.launch_p10_us);
  next(trial.launch_p90_us);
  next(trial.members);
}

// Reads a row of "id, <kTrialColumns>, created_at".
TrialRecord read_trial(const Statement& row) {
  TrialRecord trial;
  int i = 0;
  trial.id = row.column_int64(i++);
  trial.run_id = row.column_int64(i++);
  trial.problem_id = row.column_int64(i++);
  trial.source_hash = row.column_text(i++);
  trial.stage = parse_stage(row.column_text(i++));
  trial.budget_arch = row.column_text(i++);
  trial.measured_arch = row.column_optional_text(i++);
  trial.device_name = row.column_optional_text(i++);
  trial.params_json = row.column_text(i++);
  trial.compile_key = row.column_optional_text(i++);
  trial.fate = parse_fate(row.column_text(i++));
  trial.reason = row.column_text(i++);
  trial.est_smem_bytes = row.column_optional_int64(i++);
  trial.est_regs = row.column_optional_int64(i++);
  trial.ptxas_regs = row.column_optional_int64(i++);
  trial.ptxas_spill_bytes = row.column_optional_int64(i++);
  trial.blocks_per_sm = row.column_optional_int64(i++);
  trial.occupancy_limiter = row.column_optional_text(i++);
  trial.compile_ms = row.column_optional_double(i++);
  if (const auto cached = row.column_optional_int64(i++)) trial.cached = *cached != 0;
  trial.median_us = row.column_optional_double(i++);
  trial.p10_us = row.column_optional_double(i++);
  trial.p90_us = row.column_optional_double(i++);
  trial.samples = row.column_optional_int64(i++);
  trial.rel_spread = row.column_optional_double(i++);
  trial.err_out = row.column_optional_double(i++);
  trial.err_lse = row.column_optional_double(i++);
  trial.bytes_moved = row.column_optional_int64(i++);
  trial.measure_env = row.column_text(i++);
  trial.launch_p10_us = row.column_optional_double(i++);
  trial.launch_p90_us = row.column_optional_double(i++);
  trial.members = row.column_optional_int64(i++);
  trial.created_at = row.column_text(i++);
  return trial;
}

std::string trial_select(const char* where) {
  return std::string("SELECT t.id, ") +
         [] {
           std::string prefixed;
           std::string_view columns = kTrialColumns;
           while (!columns.empty()) {
             const std::size_t comma = std::min(columns.find(", "), columns.size());
             prefixed += (prefixed.empty() ? "t." : ", t.") + std::string(columns.substr(0, comma));
             columns.remove_prefix(std::min(comma + 2, columns.size()));
           }
           return prefixed;
         }() +
         ", t.created_at FROM trials t " + where;
}

void bind_trial_filter(Statement& statement, const TrialFilter& filter) {
  statement.bind(1, filter.run_id).bind(2, filter.family).bind(3, filter.problem_id);
  if (filter.fate) statement.bind(4, std::string_view(to_string(*filter.fate)));
  if (filter.stage) statement.bind(5, std::string_view(to_string(*filter.stage)));
}

void bind_winner(Statement& insert, const WinnerRecord& w) {
  int index = 0;
  const auto next = [&](const auto& value) { insert.bind(++index, value); };
  next(w.family);
  next(w.budget_arch);
  next(w.measured_arch);
  next(w.device_name);
  next(w.shape);
  next(w.batch);
  next(w.params_json);
  next(w.median_us);
  next(w.default_params_json);
  next(w.default_median_us);
  next(w.speedup_vs_default);
  next(w.noise_rel);
  next(std::string_view(to_string(w.decision)));
  next(w.reason);
  next(w.source_hash);
  next(w.run_id);
  next(w.bytes_moved);
}

// Reads a row of "id, <kWinnerColumns>, updated_at".
WinnerRecord read_winner(const Statement& row) {
  WinnerRecord w;
  int i = 0;
  w.id = row.column_int64(i++);
  w.family = row.column_text(i++);
  w.budget_arch = row.column_text(i++);
  w.measured_arch = row.column_text(i++);
  w.device_name = row.column_text(i++);
  w.shape = row.column_text(i++);
  w.batch = static_cast<int>(row.column_int64(i++));
  w.params_json = row.column_text(i++);
  w.median_us = row.column_double(i++);
  w.default_params_json = row.column_text(i++);
  w.default_median_us = row.column_double(i++);
  w.speedup_vs_default = row.column_double(i++);
  w.noise_rel = row.column_double(i++);
  w.decision = parse_decision(row.column_text(i++));
  w.reason = row.column_text(i++);
  w.source_hash = row.column_text(i++);
  w.run_id = row.column_int64(i++);
  w.bytes_moved = row.column_optional_int64(i++);
  w.updated_at = row.column_text(i++);
  return w;
}

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

namespace {

bool is_measure_only(Fate fate) {
  return fate == Fate::measured || fate == Fate::wrong_result || fate == Fate::fault ||
         fate == Fate::transient || fate == Fate::skipped_by_search;
}

// Shapes are the families' canonical text: a malformed one is a caller's bug, not user input.
void check_shape_text(const std::string& shape) {
  require(tunedb::is_canonical_shape(shape),
          "shape '" + shape +
              "' is not canonical text (name=value pairs sorted by name, joined "
              "by ',')");
}

}  // namespace

void check_trial(const TrialRecord& trial) {
  const std::string what = std::string("record_trial (") + to_string(trial.fate) + ", " +
                           to_string(trial.stage) + " stage): ";
  require(trial.run_id > 0 && trial.problem_id > 0, what + "run_id and problem_id must be set");
  require(!trial.source_hash.empty() && !trial.budget_arch.empty(),
          what + "source_hash and budget_arch must be set");
  if (trial.stage != Stage::plan) {
    require(trial.measured_arch.has_value() && trial.device_name.has_value(),
            what + "a measured trial needs measured_arch and device_name");
  }
  require(!is_measure_only(trial.fate) || trial.stage != Stage::plan,
          what + "this fate only exists at the measure and retime stages");
  require(trial.fate != Fate::survivor || trial.stage == Stage::plan,
          what + "survivor is a plan-stage fate");
  require(trial.fate != Fate::measured || trial.median_us.has_value(),
          what + "a measured trial needs median_us");
}

// The INSERT every trial goes through (reused, reset, by Store::record_trials).
Statement prepare_trial_insert(const Connection& connection) {
  return connection.prepare(std::string("INSERT INTO trials (") + kTrialColumns + ") VALUES (" +
                            sql_parameters(kTrialColumnCount) + ")");
}

// Inserts `row` (canonical params) with `insert`; a constraint error names the row and the fix.
void insert_trial(Statement& insert, const TrialRecord& row, const std::string& path) {
  bind_trial(insert, row);
  try {
    insert.run();
  } catch (const DbError& error) {
    if (error.code() == SQLITE_CONSTRAINT_UNIQUE) {
      throw error.with_context(
          "a measured trial with this resume key is already stored (problem " +
          std::to_string(row.problem_id) + ", params " + row.params_json + ", source " +
          row.source_hash + ", " + row.budget_arch + " on " + row.device_name.value_or("") +
          "): skip it when resuming, or re-measure with --force (OnDuplicate::replace)");
    }
    if (error.code() == SQLITE_CONSTRAINT_FOREIGNKEY) {
      throw error.with_context("the trial names run " + std::to_string(row.run_id) + ", problem " +
                               std::to_string(row.problem_id) + " or source " + row.source_hash +
                               " that " + path +
                               " does not hold: call begin_run, problem_id and add_source first");
    }
    throw;
  }
  insert.reset();
}

void check_winner(const WinnerRecord& w) {
  const std::string what = "record_winner (" + w.family + " " + w.budget_arch + " batch " +
                           std::to_string(w.batch) + "): ";
  require(!w.family.empty() && !w.budget_arch.empty() && !w.measured_arch.empty() &&
              !w.device_name.empty() && !w.source_hash.empty(),
          what + "family, archs, device and source_hash must be set");
  check_shape_text(w.shape);
  require(w.batch >= 1 && w.median_us > 0.0 && w.default_median_us > 0.0 && w.run_id > 0,
          what + "batch >= 1, positive times and a run_id are required");
  require(w.decision == Decision::tuned || w.params_json == w.default_params_json,
          what +
              "a default_kept winner runs the default config: params_json must equal "
              "default_params_json");
}

void check_problem(const ProblemKey& p) {
  require(!p.family.empty() && (!p.batch || *p.batch >= 1),
          "problem_id: family must be set, batch >= 1 when given");
  check_shape_text(p.shape);
}

}  // namespace tuner::db::rows
