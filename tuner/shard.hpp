#pragma once
// `--shard i/N`: a deterministic slice of a job's work, so that N processes on N hosts (a Slurm
// job array) each do one part and `tuner merge` puts the parts together. An item belongs to shard
// (FNV-1a 64 of its key) mod N + 1: the same on every host and in every run, independent of the
// order the work is enumerated in, and a config never changes shard when another is added.
//
// A plan item is a compile key (the configs that share one compile stay together, so the cluster
// compiles each kernel once); a sweep item is (shape, batch, config).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tuner {

struct ShardSpec {
  int index = 1;  // 1-based
  int count = 1;
  bool sharded() const { return count > 1 || index != 1; }
  std::string text() const;  // "2/8"
};

// Parses "i/N" (1 <= i <= N). Throws InputError naming `option`, the text and the fix.
ShardSpec parse_shard(std::string_view text, std::string_view option = "--shard");

// The shard (1-based) of `count` that the item with this key belongs to.
int shard_of(std::string_view item_key, int count);

inline bool in_shard(const ShardSpec& shard, std::string_view item_key) {
  return shard_of(item_key, shard.count) == shard.index;
}

// What the shards of one job must agree on, recorded with each shard run (db/store/shards.hpp).
std::string plan_work(std::string_view family, std::string_view shape, std::string_view arch,
                      bool allow_spills);
std::string sweep_work(std::string_view family, std::string_view shape,
                       std::string_view budget_arch, const std::vector<int>& batches);

// The key of a sweep item.
std::string sweep_item_key(std::string_view shape, int batch, std::string_view params_json);

}  // namespace tuner
