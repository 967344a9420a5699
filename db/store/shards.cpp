#include "db/store/shards.hpp"

namespace tuner::db {

void record_shard(Store& store, std::int64_t run_id, int index, int count,
                  const std::string& work) {
  if (index < 1 || index > count) {
    throw DbInputError("shard " + std::to_string(index) + "/" + std::to_string(count) +
                       " is out of range: use i/N with 1 <= i <= N");
  }
  Statement insert = store.connection().prepare(
      "INSERT INTO shards (run_id, shard_index, shard_count, work) VALUES (?1, ?2, ?3, ?4)");
  insert.bind(1, run_id).bind(2, index).bind(3, count).bind(4, work).run();
}

std::vector<ShardRecord> shard_records(const Store& store) {
  // A store written before the table existed, opened read-only, has no shards: it was not sharded.
  if (store.connection().query_int64(
          "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'shards'") == 0) {
    return {};
  }
  Statement select = store.connection().prepare(
      "SELECT s.run_id, s.shard_index, s.shard_count, s.work, r.ended_at IS NOT NULL, "
      "r.started_at FROM shards s JOIN runs r ON r.id = s.run_id ORDER BY s.run_id");
  std::vector<ShardRecord> records;
  while (select.step()) {
    ShardRecord record;
    record.run_id = select.column_int64(0);
    record.index = static_cast<int>(select.column_int64(1));
    record.count = static_cast<int>(select.column_int64(2));
    record.work = select.column_text(3);
    record.ended = select.column_int64(4) != 0;
    record.started_at = select.column_text(5);
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace tuner::db
