#pragma once
// Copies one tuning store into another inside one transaction: runs, sources, problems, trials,
// shard records and winners. Idempotent: a row already copied (same natural key) is not copied
// again, so merging a file twice changes nothing.
//
// Natural keys (ids differ between files): a run is (host, started_at, command_line, kind); a
// problem (family, shape, batch); a trial (its run, problem, stage, params, archs, device, fate,
// created_at); a winner (family, budget arch, device, shape, batch).
//
// Conflicting duplicates: two different measured trials under one resume key (problem, params,
// source, archs, device, measure_env), e.g. a config timed by two shards or by a re-run. Rule
// (kept row first): a wrong_result beats a fault beats a timing (a failure seen anywhere rules
// the config out; a timing never outvotes it); between two timings the one with the smaller
// relative spread (the more precise one) wins, then the smaller median; a full tie keeps the row
// already in the output. Every conflict is reported.
// Winners: for one key the winner of the most recently started run is kept.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "db/store/store.hpp"

namespace tuner::db {

struct MergeConflict {
  std::string problem;  // "family shape batch"
  std::string params_json;
  std::string device_name;
  std::string kept;      // "measured 12.3 us (spread 1.1%), run 2026-..."
  std::string replaced;  // the losing row, same form
};

struct MergeCounts {
  std::int64_t runs_added = 0;
  std::int64_t trials_added = 0;
  std::int64_t trials_already_there = 0;
  std::int64_t plan_fates_shared = 0;  // plan fates held already under another run: not copied
  std::int64_t winners_written = 0;
  std::vector<MergeConflict> conflicts;
};

// Merges the store at `in` into `out` in one transaction (rolled back on any error). `in` must
// have been validated by the caller (schema version, sources).
MergeCounts merge_store(Store& out, const std::filesystem::path& in);

}  // namespace tuner::db
