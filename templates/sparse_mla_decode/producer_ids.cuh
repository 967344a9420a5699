#pragma once
// Where the pipelined kernel's producer warps (pipelined_producer.cuh) get each tile's token ids.
// In registers a tile ahead, loaded after the tile's copies: under per-row splits ptxas waits for
// that load after the free stage's wait. Under the tile-dividing schedules it waited before it
// (hoisting the ids' test, or a scoreboard wait at the loop's top, above the wait loop), so each
// tile's copies waited out an id load issued a tile before, which with the memory system saturated
// takes about a tile's time (ncu at batch 264, BENCHMARKS.md section 7, twenty-sixth session).
// Staged, the ids come two tiles ahead by 4-byte cp.async into two shared-memory slots (one commit
// group a tile) and are read back, each thread its own rows, before the stage's wait: no register
// load is outstanding across the loop's top. Measured on the H200 (same session): 2-3 % faster for
// schedule 2 at batch 264-432 and 11-18 % for bf16 caches; fp8 under per-row splits 0-1 % slower,
// so it keeps the registers.
#include "common/ptx.cuh"
#include "sparse_mla_decode/params.h"
#include "sparse_mla_decode/pipelined_work.cuh"
#include "sparse_mla_decode/producer_rows.h"

namespace smla_pipe {

template <int KV_FORMAT, int SCHEDULE>
__host__ __device__ constexpr bool stages_ids() {
  return KV_FORMAT == smla::kBf16 || smla::divides_tiles(SCHEDULE);
}

// One producer thread's rows of a tile: producer_row(thread, k) for k < ROWS (those < BLOCK_T).
template <int BLOCK_T, int THREADS, int ROWS, int SCHEDULE, bool STAGED>
struct ProducerIds {
  int next[ROWS];  // registers: the next tile's ids
  int* staged;     // staged: [2][BLOCK_T] in shared memory (SmemLayout::staged_ids_offset)
  int thread;

  // Issues the ids of the range's tile `tile` (-1 past the range or past topk).
  __device__ __forceinline__ void fetch(const smla::SplitParams& p, const WorkRange& range,
                                        int tile) {
    const bool in_range = tile < range.end_tile - range.first_tile;
    const TileSource source = tile_source<BLOCK_T, SCHEDULE>(p, range, in_range ? tile : 0);
    int* slot = staged + (tile % 2) * BLOCK_T;
#pragma unroll
    for (int k = 0; k < ROWS; ++k) {
      const int row = smla::producer_row<BLOCK_T, THREADS>(thread, k);
      const int pos = source.first_pos + row;
      if constexpr (STAGED) {
        if (row >= BLOCK_T) continue;
        if (in_range && pos < p.topk) {
          ptx::cp_async_4(slot + row, source.index_row + pos);
        } else {
          slot[row] = -1;
        }
      } else {
        next[k] = in_range && row < BLOCK_T && pos < p.topk ? __ldg(source.index_row + pos) : -1;
      }
    }
    if constexpr (STAGED) ptx::cp_async_commit();
  }

  __device__ __forceinline__ void start(const smla::SplitParams& p, const WorkRange& range) {
    fetch(p, range, 0);
    if constexpr (STAGED) fetch(p, range, 1);
  }

  // Staged: tile `tile`'s ids (copied a tile ago; the next tile's may still fly), before the
  // stage's wait, so that a freed stage costs no shared-memory round trip before its copies.
  __device__ __forceinline__ void take_before_wait(int tile, int (&ids)[ROWS]) {
    if constexpr (STAGED) {
      ptx::cp_async_wait<1>();
      const int* slot = staged + (tile % 2) * BLOCK_T;
#pragma unroll
      for (int k = 0; k < ROWS; ++k) {
        const int row = smla::producer_row<BLOCK_T, THREADS>(thread, k);
        ids[k] = row < BLOCK_T ? slot[row] : -1;
      }
    }
  }

  // Registers: row k's id, after the stage's wait.
  __device__ __forceinline__ void take_after_wait(int k, int (&ids)[ROWS]) {
    if constexpr (!STAGED) ids[k] = next[k];
  }

  // After tile `tile`'s copies: the ids a tile (registers) or two (staged: into the slot read at
  // this tile's top, whose ids the copies used) ahead.
  __device__ __forceinline__ void fetch_ahead(const smla::SplitParams& p, const WorkRange& range,
                                              int tile) {
    fetch(p, range, tile + (STAGED ? 2 : 1));
  }
};

}  // namespace smla_pipe
