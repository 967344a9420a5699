#include "db/tunedb/shape_handle.hpp"

#include <limits>
#include <map>
#include <string>

#include "db/tunedb/shape.hpp"

namespace tunedb {

namespace {

constexpr int kAbove = std::numeric_limits<int>::max();

// The table answers what the one-call lookup answers, batch by batch: the same rule, computed
// once. Tuned batches come from the lookup itself (an exact answer at b means b was tuned).
std::shared_ptr<ShapeHandle::Table> build_table(const TuningDb& db, std::string_view family,
                                                std::string_view arch, std::string_view shape) {
  auto table = std::make_shared<ShapeHandle::Table>();
  const Lookup largest = db.lookup(family, arch, shape, kAbove);
  if (largest.how != How::bucket) {  // untuned shape: the default (or not_found) for every batch
    table->answers.push_back(largest);
    table->by_batch.assign(1, 0);
    table->above = 0;
    return table;
  }
  std::map<int, std::uint16_t> slot_of_tuned;  // tuned batch -> index into answers
  for (int batch = 1; batch <= largest.tuned_batch; ++batch) {
    const Lookup answer = db.lookup(family, arch, shape, batch);
    if (answer.how != How::exact) continue;
    if (table->answers.size() >= std::numeric_limits<std::uint16_t>::max()) {
      throw DbInputError("shape '" + std::string(shape) + "' of family '" + std::string(family) +
                         "' has more than 65535 tuned batches: look it up with the one-call "
                         "TuningDb::lookup instead of a handle");
    }
    slot_of_tuned[batch] = static_cast<std::uint16_t>(table->answers.size());
    table->answers.push_back(answer);
  }
  table->by_batch.assign(static_cast<std::size_t>(largest.tuned_batch) + 1, 0);
  for (int batch = 1; batch <= largest.tuned_batch; ++batch) {
    const int tuned = db.lookup(family, arch, shape, batch).tuned_batch;
    table->by_batch[static_cast<std::size_t>(batch)] = slot_of_tuned.at(tuned);
  }
  table->above = slot_of_tuned.at(largest.tuned_batch);
  return table;
}

}  // namespace

ShapeHandle resolve_shape(const TuningDb& db, std::string_view family, std::string_view arch,
                          std::string_view shape) {
  if (!is_canonical_shape(shape)) {
    throw DbInputError("shape '" + std::string(shape) + "' is not canonical (" +
                       shape_problem(shape).value_or("?") +
                       "): write name=value pairs sorted by name, joined by ',' without spaces, "
                       "e.g. 'm=64,n=2048' (the text `tuner query` prints)");
  }
  ShapeHandle handle;
  handle.table_ = build_table(db, family, arch, shape);
  return handle;
}

int ShapeHandle::largest_tuned_batch() const noexcept {
  if (table_ == nullptr || table_->answers.front().how != How::exact) return 0;
  return table_->answers[table_->above].tuned_batch;
}

std::vector<int> ShapeHandle::tuned_batches() const {
  std::vector<int> batches;
  if (largest_tuned_batch() == 0) return batches;
  for (const Lookup& answer : table_->answers) batches.push_back(answer.tuned_batch);
  return batches;
}

void ShapeHandle::refuse(int batch) const {
  if (table_ == nullptr) {
    throw DbInputError("lookup on an empty tunedb::ShapeHandle: get one from resolve_shape");
  }
  throw DbInputError("batch " + std::to_string(batch) +
                     " is not a batch size: pass a batch of 1 or more (the number of sequences "
                     "the launch serves)");
}

}  // namespace tunedb
