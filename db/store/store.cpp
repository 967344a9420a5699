#include "db/store/store.hpp"

#include <sqlite3.h>

#include <stdexcept>
#include <utility>

#include "db/store/schema.hpp"
#include "db/store/store_rows.hpp"
#include "db/tunedb/format.hpp"
#include "db/tunedb/params.hpp"

namespace tuner::db {

static_assert(kSchemaVersion == tunedb::kStoreSchemaVersion);

using rows::bind_trial_filter;
using rows::bind_winner;
using rows::check_problem;
using rows::check_trial;
using rows::check_winner;
using rows::insert_trial;
using rows::kRunColumns;
using rows::kTrialColumns;
using rows::kTrialFilterSql;
using rows::kWinnerColumnCount;
using rows::kWinnerColumns;
using rows::prepare_trial_insert;
using rows::read_run;
using rows::read_trial;
using rows::read_winner;
using rows::require;
using rows::sql_parameters;
using rows::trial_select;

std::string canonical_params_json(std::string_view params_json) {
  std::optional<std::string> canonical = tunedb::canonical_params_json(params_json);
  if (!canonical) {
    throw DbInputError("params_json '" + std::string(params_json) +
                       "' is not a flat JSON object of integers (e.g. {\"name_a\":16})");
  }
  return *canonical;
}

// ---- Store ----

Store::Store(Connection connection, std::string path)
    : connection_(std::move(connection)), path_(std::move(path)) {}

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
      sql_parameters(kWinnerColumnCount) +
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
