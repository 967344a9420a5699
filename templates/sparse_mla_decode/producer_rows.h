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
// none. Rows thread + k * THREADS where that gives each warp its share of the tile's bulk copies
// (one warp; two at tiles of a multiple of 64 tokens, the winners' kernels, whose SASS this rule
// keeps). Else the rows split warp by warp: a warp issues its lanes' copies one lane a round (a
// copy's operands are uniform registers), ~45 ns a round on sm_90 (BENCHMARKS.md section 7,
// thirty-ninth session), and the rule above left the second of two warps idle at 16- and 32-token
// tiles, the first issuing every copy.
template <int BLOCK_T, int THREADS>
SMLA_HD constexpr int producer_row(int thread, int k) {
  if constexpr (THREADS <= 32 || (THREADS <= 64 && BLOCK_T % THREADS == 0)) {
    return thread + k * THREADS;
  } else {
    constexpr int kPerWarp = (BLOCK_T + THREADS / 32 - 1) / (THREADS / 32);
    const int local = (thread & 31) + 32 * k;
    return local < kPerWarp ? (thread >> 5) * kPerWarp + local : BLOCK_T;
  }
}

}  // namespace smla
