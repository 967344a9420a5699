#include "tuner/plan_row_digest.hpp"

#include <cstddef>
#include <vector>

#include "core/hash.hpp"
#include "core/parallel.hpp"
#include "tuner/plan_record.hpp"

namespace tuner {

std::string recorded_reason(const PlanRow& row) {
  return row.fate == Fate::compile_failed ? row.reason + "\n" + row.compile_log : row.reason;
}

namespace {

// Fields end with the unit separator and rows with the record separator, which occur in neither
// a parameter name nor a reason, so no two plans join to the same text.
void append_row(std::string& text, const PlanRow& row) {
  for (const auto& [name, value] : row.config.values) {
    text.append(name).append(1, '=').append(std::to_string(value)).append(1, '\x1f');
  }
  text.append(db::to_string(to_db_fate(row.fate))).append(1, '\x1f');
  text.append(recorded_reason(row)).append(1, '\x1e');
}

}  // namespace

std::string plan_row_digest(const PlanResult& plan) {
  // A fixed number of chunks, hashed on every core, then the chunks' digests: the same text and
  // so the same digest on a machine of any core count.
  constexpr std::size_t kChunks = 64;
  const std::size_t rows = plan.rows.size();
  std::vector<std::string> chunk_digests(kChunks);
  parallel_for(kChunks, 0, [&](std::size_t chunk) {
    const std::size_t begin = rows * chunk / kChunks;
    const std::size_t end = rows * (chunk + 1) / kChunks;
    std::string text;
    for (std::size_t index = begin; index < end; ++index) append_row(text, plan.rows[index]);
    chunk_digests[chunk] = sha256_hex(text);
  });
  std::string joined = std::to_string(rows);
  for (const std::string& digest : chunk_digests) joined.append(1, '\x1e').append(digest);
  // The narrowed values' rows (none in a plan of a family without a value_rule, whose digest is
  // then the one stores already hold).
  for (const NarrowedValue& value : plan.narrowed) {
    PlanRow row;
    row.config = narrowed_config(value);
    row.fate = Fate::pruned_shape;
    row.reason = value.reason + "\x1f" + std::to_string(value.members);
    joined.append(1, '\x1d');
    append_row(joined, row);
  }
  return "sha256:" + sha256_hex(joined);
}

}  // namespace tuner
