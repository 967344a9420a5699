#pragma once
// Which rows of a tile each producer thread of the pipelined split kernel copies
// (pipelined_producer.cuh, producer_ids.cuh). Included by the kernels and by the host's tests.
// Plain C++ only (NVRTC has no standard headers).
#include "layout.h"  // SMLA_HD (relative: the host includes this file as templates/...)

namespace smla {

// How many rows of a tile one of THREADS producer threads may copy.
template <int BLOCK_T, int THREADS>
SMLA_HD constexpr int producer_rows_per_thread() {
  return (BLOCK_T + THREADS - 1) / THREADS;
}

// Row k (k < producer_rows_per_thread) of a tile for producer thread `thread`; BLOCK_T or more:
// none. One or two producer warps take rows thread + k * THREADS. More split the tile's rows warp
// by warp, so that each warp issues its share of the bulk copies: a warp issues its lanes' copies
// one lane a round (a copy's operands are uniform registers), ~45 ns a round on sm_90
// (BENCHMARKS.md section 7, thirty-ninth session).
template <int BLOCK_T, int THREADS>
SMLA_HD constexpr int producer_row(int thread, int k) {
  if constexpr (THREADS <= 64) {
    return thread + k * THREADS;
  } else {
    constexpr int kPerWarp = (BLOCK_T + THREADS / 32 - 1) / (THREADS / 32);
    const int local = (thread & 31) + 32 * k;
    return local < kPerWarp ? (thread >> 5) * kPerWarp + local : BLOCK_T;
  }
}

}  // namespace smla
