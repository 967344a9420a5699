#pragma once
// The shards table: which slice (i of N) of which work a sharded run did. `work` names everything
// the shards of one job must agree on (command, family, shape, archs, batches), so that tuner merge
// can tell a complete set of shards from a missing or doubled one without knowing any family.
#include <cstdint>
#include <string>
#include <vector>

#include "db/store/store.hpp"

namespace tuner::db {

struct ShardRecord {
  std::int64_t run_id = 0;
  int index = 1;  // 1-based
  int count = 1;
  std::string work;
  bool ended = false;      // the run finished (read from runs.ended_at)
  std::string started_at;  // of the run, for messages
};

// Records that run `run_id` did shard index/count of `work`. Throws DbInputError when
// index is not in 1..count.
void record_shard(Store& store, std::int64_t run_id, int index, int count, const std::string& work);

// Every shard record, with its run's end state, by run id.
std::vector<ShardRecord> shard_records(const Store& store);

}  // namespace tuner::db
