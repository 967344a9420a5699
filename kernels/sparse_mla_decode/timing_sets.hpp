#pragma once
// How many independent index sets (one per launch of a timing graph) a prepared batch needs so that
// one graph replay reads >= kL2Factor x the L2 in distinct KV rows, and how many KV rows the
// footprint holds. Pure: the session allocates what this says; tests check it on the CPU.
#include <string>

#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner::smla_family {

// Share of index entries drawn as -1 (skipped rows) in timing and verification inputs.
inline constexpr int kInvalidPerMille = 30;

struct TimingSets {
  long long kv_rows = 0;  // KV cache rows filling the footprint
  int launches = 0;       // launches per timing graph = independent index sets
};

// For `shape` (its batch, topk, kv_format) and a KV cache of `memory_gib`: refuses (InputError
// naming `option`) a cache smaller than kL2Factor x `l2_bytes`; `l2_bytes` 0 (L2 flushed between
// replays) asks only for `min_launches`.
TimingSets timing_sets(const Shape& shape, double memory_gib, long long l2_bytes, int min_launches,
                       const std::string& option);

}  // namespace tuner::smla_family
