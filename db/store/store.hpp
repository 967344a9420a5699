#pragma once
// The tuning store: one SQLite file holding every run, kernel source hash, problem, trial and
// winner. Each finished trial is committed on its own, so a killed sweep loses at most the trial
// in flight and resumes by asking find_measured_trial before timing a config.
//
// One Store per thread (it wraps one SQLite connection); several processes may share a file
// (WAL mode, busy timeout). Tables and rules: db/README.md.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/sqlite/error.hpp"
#include "db/sqlite/sqlite.hpp"
#include "db/store/records.hpp"
#include "db/store/winner_rule.hpp"

namespace tuner::db {

// PRAGMA user_version written by this build; a file with a larger one is refused.
inline constexpr int kSchemaVersion = 4;

// How record_trial treats a measured trial already stored under the same resume key.
enum class OnDuplicate {
  fail,     // throw DbError (SQLITE_CONSTRAINT_UNIQUE): resume should have skipped it
  replace,  // delete the old row and insert the new one in one transaction (--force)
};

// The canonical form of a parameter object ({"name_a":16,"name_b":4}: sorted, compact,
// integers only). Throws DbInputError naming the text when it is not a flat object of integers.
std::string canonical_params_json(std::string_view params_json);

class Store {
 public:
  // Opens or creates the store at `path` and brings its schema up to date. Throws DbInputError
  // when the directory is missing, the file is a frozen DB or has a newer schema, DbError when
  // the file is not a SQLite database or cannot be written.
  static Store open(const std::filesystem::path& path);
  // Opens an existing store for reading only (reports, diffs): the file is never modified, not
  // even its journal mode. Throws DbInputError when it is missing, not a store, frozen, or of
  // another schema version.
  static Store open_read_only(const std::filesystem::path& path);

  const std::string& path() const noexcept { return path_; }
  // For read-only queries the API does not cover (reports); keep writes in this class.
  const Connection& connection() const noexcept { return connection_; }

  std::int64_t begin_run(const RunInfo& run);
  void end_run(std::int64_t run_id);       // DbInputError for an unknown id
  std::vector<RunInfo> runs() const;       // oldest first
  RunInfo run(std::int64_t run_id) const;  // DbInputError for an unknown id

  // Registers a kernel source by content hash (idempotent).
  void add_source(const std::string& hash, const std::string& family);
  // Returns the id of `problem`, creating the row when missing.
  std::int64_t problem_id(const ProblemKey& problem);
  ProblemKey problem(std::int64_t problem_id) const;  // DbInputError for an unknown id

  // Commits one trial at once and returns its id. Stage::measure and retime need measured_arch
  // and device_name; measured/wrong_result/fault/transient need one of them, survivor needs
  // Stage::plan.
  std::int64_t record_trial(const TrialRecord& trial, OnDuplicate on_duplicate = OnDuplicate::fail);
  // Commits many trials in one transaction (all or none), e.g. a plan's fate of every config:
  // tens of thousands of rows, which one commit each made the warm rerun slow.
  void record_trials(const std::vector<TrialRecord>& trials);
  // The resume check: the measured trial stored under `key`, if any.
  std::optional<TrialRecord> find_measured_trial(const MeasureKey& key) const;
  std::vector<TrialRecord> trials(const TrialFilter& filter = {}) const;  // by id
  std::int64_t count_trials(const TrialFilter& filter = {}) const;

  // Inserts or replaces the winner of (family, budget arch, device, shape, batch).
  std::int64_t record_winner(const WinnerRecord& winner);
  std::vector<WinnerRecord> winners(const WinnerFilter& filter = {}) const;

  // PRAGMA integrity_check's answer: "ok" for a sound file, otherwise the problems found.
  std::string integrity_check() const;

 private:
  Store(Connection connection, std::string path);

  Connection connection_;
  std::string path_;
};

}  // namespace tuner::db
