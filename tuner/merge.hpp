#pragma once
// `tuner merge OUT IN...`: puts shard DBs (and any other stores of one tuner build) into one.
// Everything is checked before anything is written (merge_check.cpp): every input is a store of
// this schema version, all files agree on each family's kernel source hash, and the shards of
// each sharded job are all there, each finished, each in one file. The merge then runs on a copy
// of OUT (or a new file) that is renamed into place at the end, so a failure leaves OUT as it was.
// Winners are decided again from the merged trials (merge_winners.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "db/store/merge.hpp"

namespace tuner {

struct MergeRequest {
  std::string out_path;
  std::vector<std::string> inputs;
};

// One sharded job found complete in the inputs.
struct ShardSet {
  std::string work;  // db/store/shards.hpp
  int count = 0;
  int resumed = 0;  // shard runs that did not finish but were re-run to the end
};

struct MergeSummary {
  bool out_existed = false;
  std::vector<ShardSet> shard_sets;
  std::int64_t runs_added = 0;
  std::int64_t trials_added = 0;
  std::int64_t trials_already_there = 0;
  std::int64_t plan_fates_shared = 0;  // plan fates another input's run already recorded
  std::vector<db::MergeConflict> conflicts;
  int winners_decided = 0;         // from the merged trials
  int winners_kept = 0;            // decided by a sweep's interleaved re-timing, kept as they were
  std::vector<std::string> notes;  // groups without a measured default, unknown families
  double wall_s = 0.0;
};

// Throws InputError / db::DbInputError (exit 2) for bad inputs, naming the file and the fix.
MergeSummary run_merge(const MergeRequest& request);

// The checks run_merge does before writing (exposed for tests). Returns the complete shard sets.
std::vector<ShardSet> check_merge_inputs(const MergeRequest& request);

}  // namespace tuner
