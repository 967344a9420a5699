#include "kernels/sparse_mla_decode/timing_sets.hpp"

#include "core/measure.hpp"

namespace tuner::smla_family {

TimingSets timing_sets(const Shape& shape, double memory_gib, long long l2_bytes, int min_launches,
                       const std::string& option) {
  const int row_bytes = kv_row_bytes(shape.kv_format);
  TimingSets sets;
  // One row more than the footprint's whole rows: never an empty cache.
  sets.kv_rows =
      static_cast<long long>(memory_gib * static_cast<double>(1LL << 30)) / row_bytes + 1;
  if (l2_bytes > 0) {
    check_memory_covers_l2(static_cast<double>(sets.kv_rows) * row_bytes, l2_bytes, option);
  }
  // A launch reads the rows its valid indices name (the -1 entries read nothing); q, the outputs
  // and the index set itself are small next to them.
  const double rows_per_launch =
      static_cast<double>(shape.batch) * shape.topk * (1000 - kInvalidPerMille) / 1000.0;
  sets.launches =
      l2_safe_launches(l2_bytes, sets.kv_rows, rows_per_launch, row_bytes, min_launches, option);
  return sets;
}

}  // namespace tuner::smla_family
