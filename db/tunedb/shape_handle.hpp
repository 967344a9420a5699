#pragma once
// A shape resolved once, then batch -> config in O(1): the serving stack resolves
// (family, arch, shape) at start-up and looks up each captured batch through a dense table.
//
// resolve_shape asks the TuningDb's one-call lookup for every batch 1..largest tuned batch, so the
// handle answers exactly what the one-call lookup answers (same exact / bucket / default rule, the
// same Config, Cubin and timings), only without the search: a batch above the largest tuned one
// gets the largest tuned batch's winner (how = bucket, tuned_batch < batch), an untuned shape the
// family default (how = default, miss says why). Batches below 1 are refused (the one-call lookup
// reads them as 1; a handle's caller asked for a batch that cannot exist).
//
// A handle is a small value (one shared pointer): copy it freely. It points into the TuningDb
// that resolved it, which must outlive it. lookup is allocation-free and thread-safe.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "db/tunedb/tunedb.hpp"

namespace tunedb {

class ShapeHandle {
 public:
  ShapeHandle() = default;  // resolves nothing: lookup throws DbInputError

  // The answer for `batch` (>= 1). Throws DbInputError for batch < 1 or an empty handle.
  Lookup lookup(int batch) const {
    if (batch < 1 || table_ == nullptr) refuse(batch);
    const Table& table = *table_;
    const std::size_t slot = static_cast<std::size_t>(batch) < table.by_batch.size()
                                 ? table.by_batch[static_cast<std::size_t>(batch)]
                                 : table.above;
    Lookup answer = table.answers[slot];
    if (answer.how == How::exact && answer.tuned_batch != batch) answer.how = How::bucket;
    return answer;
  }

  // The largest tuned batch (0 when the shape was not tuned): batches above it share its winner.
  int largest_tuned_batch() const noexcept;
  // The tuned batches, ascending (empty when the shape was not tuned).
  std::vector<int> tuned_batches() const;

  struct Table {
    std::vector<Lookup> answers;          // one per tuned batch (how = exact), or the default
    std::vector<std::uint16_t> by_batch;  // batch -> index into answers; [0] unused
    std::uint16_t above = 0;              // the answer for batches >= by_batch.size()
  };

 private:
  friend ShapeHandle resolve_shape(const TuningDb& db, std::string_view family,
                                   std::string_view arch, std::string_view shape);
  [[noreturn]] void refuse(int batch) const;
  std::shared_ptr<const Table> table_;
};

// Resolves (family, arch, shape text) into a handle. Throws DbInputError when `shape` is not
// canonical text (the message says why) or when the shape has more tuned batches than a handle
// indexes (65535).
ShapeHandle resolve_shape(const TuningDb& db, std::string_view family, std::string_view arch,
                          std::string_view shape);

}  // namespace tunedb
