#include "db/store/store.hpp"

#include <sqlite3.h>

#include <stdexcept>
#include <system_error>
#include <utility>

#include "db/store/schema.hpp"
#include "db/tunedb/format.hpp"
#include "db/tunedb/params.hpp"
#include "db/tunedb/shape.hpp"

namespace tuner::db {
namespace {

static_assert(kSchemaVersion == tunedb::kStoreSchemaVersion);

constexpr const char* kRunColumns =
    "id, started_at, ended_at, host, gpu_name, measured_arch, budget_arch, driver_version, "
    "cuda_version, nvrtc_version, tuner_version, command_line, kind, copy_bandwidth_gbs";

constexpr const char* kTrialColumns =
    "run_id, problem_id, source_hash, stage, budget_arch, measured_arch, device_name, "
    "params_json, compile_key, fate, reason, est_smem_bytes, est_regs, ptxas_regs, "
    "ptxas_spill_bytes, blocks_per_sm, occupancy_limiter, compile_ms, cached, median_us, p10_us, "
    "p90_us, samples, rel_spread, err_out, err_lse, bytes_moved, measure_env, launch_p10_us, "
    "launch_p90_us";
constexpr int kTrialColumnCount = 30;

constexpr const char* kWinnerColumns =
    "family, budget_arch, measured_arch, device_name, shape, batch, params_json, median_us, "
    "default_params_json, default_median_us, speedup_vs_default, noise_rel, decision, reason, "
    "source_hash, run_id, bytes_moved";
constexpr int kWinnerColumnCount = 17;

// "?1, ?2, ..., ?n"
std::string placeholders(int count) {
  std::string text;
  for (int i = 1; i <= count; ++i) text += (i > 1 ? ", ?" : "?") + std::to_string(i);
  return text;
}

// ---- opening ----

void check_directory(const std::filesystem::path& path) {
  std::error_code error;
  const std::filesystem::path parent =
      path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  if (!std::filesystem::is_directory(parent, error)) {
    throw DbInputError("cannot create tuning store " + path.string() + ": directory " +
                       parent.string() + " does not exist; create it or pass another --db path");
  }
  if (std::filesystem::is_directory(path, error)) {
    throw DbInputError("tuning store " + path.string() +
                       " is a directory: pass a file path such as " +
                       (path / "tuning.db").string());
  }
}

Connection open_writable(const std::filesystem::path& path) {
  try {
    Connection connection = Connection::open(path, OpenMode::read_write_create);
    // Several processes may share a store: wait for a writer instead of failing with SQLITE_BUSY.
    sqlite3_busy_timeout(connection.get(), 10000);
    if (sqlite3_db_readonly(connection.get(), "main") == 1) {
      throw DbInputError("tuning store " + path.string() +
                         " is read-only: make the file and its directory writable (SQLite "
                         "also writes -wal and -shm files next to it) or pass another --db path");
    }
    return connection;
  } catch (const DbError& error) {
    if (error.primary_code() != SQLITE_CANTOPEN) throw;
    throw DbInputError("cannot open tuning store " + path.string() + " for writing (" +
                       error.code_name() + "): check that the file and its directory " +
                       path.parent_path().string() + " are writable, or pass another --db path");
  }
}

// Refuses files the store must not write: other programs' SQLite files, frozen DBs, newer
// schemas.
void check_writable_kind(const Connection& connection, const std::string& path) {
  const std::int64_t application_id = connection.query_int64("PRAGMA application_id");
  if (application_id == tunedb::kFrozenApplicationId) {
    throw DbInputError(path +
                       " is a frozen tuning DB and is never written again: record into the "
                       "tuning store and freeze it anew");
  }
  if (application_id != 0 && application_id != tunedb::kApplicationId) {
    throw DbInputError(path + " is not a tuning store (SQLite application_id " +
                       std::to_string(application_id) +
                       " belongs to another program): pass another --db path");
  }
  Statement frozen =
      connection.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'metadata'");
  if (frozen.step()) {
    Statement flag = connection.prepare("SELECT value FROM metadata WHERE key = 'frozen'");
    if (flag.step() && flag.column_text(0) == "1") {
      throw DbInputError(path +
                         " is a frozen tuning DB (metadata frozen=1) and is never written "
                         "again: record into the tuning store and freeze it anew");
    }
  }
  const std::int64_t version = connection.query_int64("PRAGMA user_version");
  if (version > kSchemaVersion) {
    throw DbInputError(path + " has schema version " + std::to_string(version) +
                       ", newer than the version " + std::to_string(kSchemaVersion) +
                       " this tuner writes: use a newer tuner, or another --db path");
  }
  if (version != 0 && version < tunedb::kFirstShapeTextVersion) {
    throw DbInputError(tunedb::old_schema_message(path, version));
  }
}

void create_schema(const Connection& connection) {
  // journal_mode and foreign_keys cannot change inside a transaction.
  // WAL + synchronous=NORMAL: a commit survives a killed process (not always a power cut), and
  // readers (report, freeze) never block the sweep.
  connection.exec(
      "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON");
  Transaction transaction(connection);
  const int version = static_cast<int>(connection.query_int64("PRAGMA user_version"));
  begin_migration(connection, version);
  connection.exec(kStoreSchemaSql);
  finish_migration(connection, version);
  connection.exec("PRAGMA application_id = " + std::to_string(tunedb::kApplicationId) +
                  "; PRAGMA user_version = " + std::to_string(kSchemaVersion));
  transaction.commit();
}

// ---- rows ----

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

constexpr const char* kTrialFilterSql =
    "JOIN problems p ON p.id = t.problem_id WHERE (?1 IS NULL OR t.run_id = ?1) AND "
    "(?2 IS NULL OR p.family = ?2) AND (?3 IS NULL OR t.problem_id = ?3) AND "
    "(?4 IS NULL OR t.fate = ?4) AND (?5 IS NULL OR t.stage = ?5)";

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

// ---- checks on what callers hand in (programming errors: std::invalid_argument) ----

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

bool is_measure_only(Fate fate) {
  return fate == Fate::measured || fate == Fate::wrong_result || fate == Fate::fault ||
         fate == Fate::transient || fate == Fate::skipped_by_search;
}

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
                            placeholders(kTrialColumnCount) + ")");
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

// Shapes are the families' canonical text: a malformed one is a caller's bug, not user input.
void check_shape_text(const std::string& shape) {
  require(tunedb::is_canonical_shape(shape),
          "shape '" + shape +
              "' is not canonical text (name=value pairs sorted by name, joined "
              "by ',')");
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

}  // namespace

std::string canonical_params_json(std::string_view params_json) {
  std::optional<std::string> canonical = tunedb::canonical_params_json(params_json);
  if (!canonical) {
    throw DbInputError("params_json '" + std::string(params_json) +
                       "' is not a flat JSON object of integers (e.g. {\"block_t\":16})");
  }
  return *canonical;
}

// ---- Store ----

Store::Store(Connection connection, std::string path)
    : connection_(std::move(connection)), path_(std::move(path)) {}

Store Store::open(const std::filesystem::path& path) {
  check_directory(path);
  Connection connection = open_writable(path);
  try {
    check_writable_kind(connection, path.string());
    create_schema(connection);
  } catch (const DbError& error) {
    const int primary = error.primary_code();
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
      throw error.with_context("tuning store " + path.string() +
                               " is corrupted or not a SQLite database: move it away and pass "
                               "another --db path (or restore a good copy)");
    }
    throw error.with_context("opening tuning store " + path.string());
  }
  return Store(std::move(connection), path.string());
}

Store Store::open_read_only(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw DbInputError("tuning store " + path.string() +
                       " does not exist: pass the --db file a sweep or plan wrote");
  }
  Connection connection = Connection::open(path, OpenMode::read_only);
  try {
    check_writable_kind(connection, path.string());
    const std::int64_t version = connection.query_int64("PRAGMA user_version");
    read_older_schema(connection, static_cast<int>(version));
    if (version != kSchemaVersion && version != 1 && version != 2) {
      throw DbInputError(path.string() + " has schema version " + std::to_string(version) +
                         ", not " + std::to_string(kSchemaVersion) +
                         ": open it once with a writing command (tuner plan --db) to upgrade it");
    }
  } catch (const DbError& failure) {
    const int primary = failure.primary_code();
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
      throw DbInputError("tuning store " + path.string() +
                         " is corrupted or not a SQLite database: pass another --db path");
    }
    throw failure.with_context("opening tuning store " + path.string() + " read-only");
  }
  return Store(std::move(connection), path.string());
}

std::int64_t Store::begin_run(const RunInfo& run) {
  require(!run.host.empty() && !run.budget_arch.empty() && !run.tuner_version.empty(),
          "begin_run: host, budget_arch and tuner_version must be set");
  Statement insert = connection_.prepare(
      "INSERT INTO runs (host, gpu_name, measured_arch, budget_arch, driver_version, "
      "cuda_version, nvrtc_version, tuner_version, command_line, kind, copy_bandwidth_gbs) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  insert.bind(1, run.host).bind(2, run.gpu_name).bind(3, run.measured_arch);
  insert.bind(4, run.budget_arch).bind(5, run.driver_version).bind(6, run.cuda_version);
  insert.bind(7, run.nvrtc_version).bind(8, run.tuner_version).bind(9, run.command_line);
  insert.bind(10, std::string_view(to_string(run.kind))).bind(11, run.copy_bandwidth_gbs);
  insert.run();
  return connection_.last_insert_rowid();
}

void Store::end_run(std::int64_t run_id) {
  Statement update = connection_.prepare(
      "UPDATE runs SET ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1");
  update.bind(1, run_id).run();
  if (sqlite3_changes(connection_.get()) == 0) {
    throw DbInputError("no run with id " + std::to_string(run_id) + " in " + path_ +
                       ": `tuner report --db` lists the runs");
  }
}

std::vector<RunInfo> Store::runs() const {
  Statement select =
      connection_.prepare(std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
  std::vector<RunInfo> runs;
  while (select.step()) runs.push_back(read_run(select));
  return runs;
}

RunInfo Store::run(std::int64_t run_id) const {
  Statement select =
      connection_.prepare(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?1");
  select.bind(1, run_id);
  if (!select.step()) {
    throw DbInputError("no run with id " + std::to_string(run_id) + " in " + path_ +
                       ": `tuner report --db` lists the runs");
  }
  return read_run(select);
}

void Store::add_source(const std::string& hash, const std::string& family) {
  require(!hash.empty() && !family.empty(), "add_source: hash and family must be set");
  Statement insert = connection_.prepare(
      "INSERT INTO sources (hash, family) VALUES (?1, ?2) ON CONFLICT (hash) DO NOTHING");
  insert.bind(1, hash).bind(2, family).run();
}

std::int64_t Store::problem_id(const ProblemKey& problem) {
  check_problem(problem);
  const char* const key = "family = ?1 AND shape = ?2 AND batch = ?3";
  const auto bind_key = [&](Statement& statement) {
    statement.bind(1, problem.family).bind(2, problem.shape).bind(3, problem.batch.value_or(0));
  };
  Transaction transaction(connection_);  // no other writer between the look and the insert
  Statement select = connection_.prepare(std::string("SELECT id FROM problems WHERE ") + key);
  bind_key(select);
  if (select.step()) return select.column_int64(0);
  Statement insert =
      connection_.prepare("INSERT INTO problems (family, shape, batch) VALUES (?1, ?2, ?3)");
  bind_key(insert);
  insert.run();
  const std::int64_t id = connection_.last_insert_rowid();
  transaction.commit();
  return id;
}

ProblemKey Store::problem(std::int64_t problem_id) const {
  Statement select = connection_.prepare("SELECT family, shape, batch FROM problems WHERE id = ?1");
  select.bind(1, problem_id);
  if (!select.step()) {
    throw DbInputError("no problem with id " + std::to_string(problem_id) + " in " + path_);
  }
  ProblemKey key;
  key.family = select.column_text(0);
  key.shape = select.column_text(1);
  if (const std::int64_t batch = select.column_int64(2); batch > 0) {
    key.batch = static_cast<int>(batch);
  }
  return key;
}

std::int64_t Store::record_trial(const TrialRecord& trial, OnDuplicate on_duplicate) {
  check_trial(trial);
  TrialRecord row = trial;
  row.params_json = canonical_params_json(trial.params_json);
  Transaction transaction(connection_);
  if (row.stage == Stage::measure && on_duplicate == OnDuplicate::replace &&
      row.fate != Fate::transient && row.fate != Fate::skipped_by_search) {
    const MeasureKey key = row.measure_key();
    Statement remove = connection_.prepare(
        "DELETE FROM trials WHERE stage = 'measure' AND fate NOT IN ('transient', "
        "'skipped_by_search') AND problem_id = ?1 "
        "AND params_json = ?2 AND source_hash = ?3 AND budget_arch = ?4 AND measured_arch = ?5 "
        "AND device_name = ?6 AND measure_env = ?7");
    remove.bind(1, key.problem_id).bind(2, key.params_json).bind(3, key.source_hash);
    remove.bind(4, key.budget_arch).bind(5, key.measured_arch).bind(6, key.device_name);
    remove.bind(7, key.measure_env).run();
  }
  Statement insert = prepare_trial_insert(connection_);
  insert_trial(insert, row, path_);
  const std::int64_t id = connection_.last_insert_rowid();
  transaction.commit();
  return id;
}

void Store::record_trials(const std::vector<TrialRecord>& trials) {
  for (const TrialRecord& trial : trials) check_trial(trial);
  Transaction transaction(connection_);
  Statement insert = prepare_trial_insert(connection_);
  for (const TrialRecord& trial : trials) {
    TrialRecord row = trial;
    row.params_json = canonical_params_json(trial.params_json);
    insert_trial(insert, row, path_);
  }
  transaction.commit();
}

std::optional<TrialRecord> Store::find_measured_trial(const MeasureKey& key) const {
  Statement select = connection_.prepare(
      trial_select("WHERE t.stage = 'measure' AND t.fate NOT IN ('transient', "
                   "'skipped_by_search') AND t.problem_id = ?1 AND "
                   "t.params_json = ?2 AND t.source_hash = ?3 AND t.budget_arch = ?4 AND "
                   "t.measured_arch = ?5 AND t.device_name = ?6 AND t.measure_env = ?7"));
  select.bind(1, key.problem_id).bind(2, canonical_params_json(key.params_json));
  select.bind(3, key.source_hash).bind(4, key.budget_arch).bind(5, key.measured_arch);
  select.bind(6, key.device_name).bind(7, key.measure_env);
  if (!select.step()) return std::nullopt;
  return read_trial(select);
}

std::vector<TrialRecord> Store::trials(const TrialFilter& filter) const {
  Statement select =
      connection_.prepare(trial_select(kTrialFilterSql) + std::string(" ORDER BY t.id"));
  bind_trial_filter(select, filter);
  std::vector<TrialRecord> trials;
  while (select.step()) trials.push_back(read_trial(select));
  return trials;
}

std::int64_t Store::count_trials(const TrialFilter& filter) const {
  Statement select =
      connection_.prepare(std::string("SELECT COUNT(*) FROM trials t ") + kTrialFilterSql);
  bind_trial_filter(select, filter);
  select.step();
  return select.column_int64(0);
}

std::int64_t Store::record_winner(const WinnerRecord& winner) {
  check_winner(winner);
  WinnerRecord row = winner;
  row.params_json = canonical_params_json(winner.params_json);
  row.default_params_json = canonical_params_json(winner.default_params_json);
  std::string update;
  std::string_view columns = kWinnerColumns;
  while (!columns.empty()) {
    const std::size_t comma = std::min(columns.find(", "), columns.size());
    const std::string column(columns.substr(0, comma));
    update += column;
    update += " = excluded.";
    update += column;
    update += ", ";
    columns.remove_prefix(std::min(comma + 2, columns.size()));
  }
  Statement upsert = connection_.prepare(
      std::string("INSERT INTO winners (") + kWinnerColumns + ") VALUES (" +
      placeholders(kWinnerColumnCount) +
      ") ON CONFLICT (family, budget_arch, device_name, shape, batch) DO UPDATE SET " + update +
      "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') RETURNING id");
  bind_winner(upsert, row);
  if (!upsert.step()) throw DbError("INSERT ... RETURNING id returned no row", path_);
  const std::int64_t id = upsert.column_int64(0);
  upsert.run();  // finish the statement so the write commits
  return id;
}

std::vector<WinnerRecord> Store::winners(const WinnerFilter& filter) const {
  Statement select = connection_.prepare(
      std::string("SELECT id, ") + kWinnerColumns +
      ", updated_at FROM winners WHERE (?1 IS NULL OR family = ?1) AND "
      "(?2 IS NULL OR budget_arch = ?2) AND (?3 IS NULL OR device_name = ?3) AND "
      "(?4 IS NULL OR run_id = ?4) ORDER BY family, budget_arch, device_name, shape, batch");
  select.bind(1, filter.family).bind(2, filter.budget_arch).bind(3, filter.device_name);
  select.bind(4, filter.run_id);
  std::vector<WinnerRecord> winners;
  while (select.step()) winners.push_back(read_winner(select));
  return winners;
}

std::string Store::integrity_check() const {
  Statement check = connection_.prepare("PRAGMA integrity_check");
  std::string result;
  while (check.step()) result += (result.empty() ? "" : "\n") + check.column_text(0);
  return result;
}

}  // namespace tuner::db
