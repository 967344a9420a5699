#pragma once
// The global tiles one CTA of the pipelined split kernel runs (schedule.h): a split of one row, or
// under the balanced schedule a range that may cross rows, or under kScheduleWholeRows two pieces:
// its share of the tail rows' tiles, then its whole rows. Producers and consumers walk the same
// tiles, so the ring's stage and phase run on across rows and pieces. Tiles count in int: the host
// refuses launches of 2^31 or more tiles (deploy.cpp's split_plan), and 32-bit indices keep the
// token loop's registers where they were before rows could change inside it.
#include "sparse_mla_decode/params.h"
#include "sparse_mla_decode/schedule.h"

namespace smla_pipe {

// The CTA's tiles count from 0 to end_tile - first_tile; tile t is global tile first_tile + t, plus
// `jump` from tile `jump_tile` on (kScheduleWholeRows: the whole rows after the tail's share).
struct WorkRange {
  int first_tile;
  int end_tile;
  // Per-row splits: the row's index row and this split's first position, so that the tiles'
  // positions need no division (schedule 0 then compiles to what it was before rows could change).
  const int* index_row;
  int first_pos;
  int jump_tile;  // kScheduleWholeRows only
  int jump;
};

// The tile-dividing schedules' division (schedule.h), rebuilt from the launch's parameters with
// the host's divisors: rows below tail_rows are divided by tiles (all of them when balanced).
__device__ __forceinline__ int tail_rows_of(const smla::SplitParams& p) {
  return p.batch * p.head_groups - p.whole_rows * p.balanced_ctas;
}
__device__ __forceinline__ smla::Balance division_of(const smla::SplitParams& p) {
  return smla::tail_division(tail_rows_of(p), p.tiles_per_row, p.balanced_ctas, p.ctas_multiplier,
                             p.row_multiplier);
}
// A row's batch item.
__device__ __forceinline__ int batch_item_of(const smla::SplitParams& p, int row) {
  return smla::quotient(smla::divisor_of(p.head_groups, p.head_group_multiplier), row);
}

// This CTA's index in the tile-dividing schedules' division (schedule.h's division_cta).
__device__ __forceinline__ int division_cta(const smla::SplitParams& p) {
  return smla::division_cta(static_cast<int>(blockIdx.x), p.balanced_ctas);
}

// kScheduleWholeRows: CTA c's share of the tail rows' tiles, then its whole rows (schedule.h).
__device__ __forceinline__ WorkRange whole_rows_range(const smla::SplitParams& p) {
  const smla::CtaTiles tiles =
      smla::whole_rows_tiles(division_of(p), p.whole_rows, division_cta(p));
  return {tiles.first, tiles.first + tiles.count, nullptr, 0, tiles.jump_tile, tiles.jump};
}

__device__ __forceinline__ smla::CtaTiles cta_tiles(const WorkRange& range) {
  return {range.first_tile, range.end_tile - range.first_tile, range.jump_tile, range.jump};
}

// Per-row splits: this CTA's split of its row.
template <int BLOCK_T>
__device__ __forceinline__ WorkRange splits_range(const smla::SplitParams& p) {
  const int row = static_cast<int>(blockIdx.z) * p.head_groups + static_cast<int>(blockIdx.y);
  const int tiles_per_split = p.tokens_per_split / BLOCK_T;
  const int first = row * p.tiles_per_row + static_cast<int>(blockIdx.x) * tiles_per_split;
  return {first,
          min(first + tiles_per_split, (row + 1) * p.tiles_per_row),
          p.indices + static_cast<long long>(blockIdx.z) * p.topk,
          static_cast<int>(blockIdx.x) * p.tokens_per_split,
          0,
          0};
}

template <int BLOCK_T, int SCHEDULE>
__device__ __forceinline__ WorkRange work_range(const smla::SplitParams& p) {
  // if constexpr: each schedule's kernel instantiates its own path only.
  if constexpr (SCHEDULE == smla::kScheduleWholeRows) {
    return whole_rows_range(p);
  } else if constexpr (SCHEDULE == smla::kScheduleBalanced) {
    const int cta = division_cta(p);
    const smla::Balance balance = division_of(p);
    return {static_cast<int>(smla::first_tile_of_cta(balance, cta)),
            static_cast<int>(smla::first_tile_of_cta(balance, cta + 1)),
            nullptr,
            0,
            0,
            0};
  } else {
    return splits_range<BLOCK_T>(p);
  }
}

// The global tile of the range's tile `tile` (the tile-dividing schedules).
template <int SCHEDULE>
__device__ __forceinline__ int global_tile(const WorkRange& range, int tile) {
  if (SCHEDULE == smla::kScheduleWholeRows) return smla::global_of(cta_tiles(range), tile);
  return range.first_tile + tile;
}

// Where the token ids of the range's tile `tile` (counted from the range's first) start: its batch
// item's index row and the tile's first position.
struct TileSource {
  const int* index_row;
  int first_pos;
};
template <int BLOCK_T, int SCHEDULE>
__device__ __forceinline__ TileSource tile_source(const smla::SplitParams& p,
                                                  const WorkRange& range, int tile) {
  if constexpr (SCHEDULE == smla::kScheduleSplits) {
    return {range.index_row, range.first_pos + tile * BLOCK_T};
  } else {
    const int global = global_tile<SCHEDULE>(range, tile);
    const int row = smla::row_of_tile(division_of(p), global);
    return {p.indices + static_cast<long long>(batch_item_of(p, row)) * p.topk,
            (global - row * p.tiles_per_row) * BLOCK_T};
  }
}

// The end (counted from the range's first tile) of the row that the range's tile `tile` is in.
template <int SCHEDULE>
__device__ __forceinline__ int row_end_tile(const smla::SplitParams& p, const WorkRange& range,
                                            int tile) {
  if constexpr (SCHEDULE == smla::kScheduleSplits) {
    return range.end_tile - range.first_tile;
  } else if constexpr (SCHEDULE == smla::kScheduleWholeRows) {
    return smla::segment_end(cta_tiles(range), tile, division_of(p));
  } else {
    const int global = range.first_tile + tile;
    return min((smla::row_of_tile(division_of(p), global) + 1) * p.tiles_per_row, range.end_tile) -
           range.first_tile;
  }
}

// The row of the range's tile `tile` as this CTA's output: the batch item, the head group's first
// head, this CTA's part of the row, and whether it is the row's only part (written out as bf16).
struct RowWork {
  int batch_item;
  int first_head;
  int part;
  bool whole_row;
};
// A row's batch item and its head group's first head (part 0, not known whole: the caller says).
template <int BLOCK_H>
__device__ __forceinline__ RowWork row_origin(const smla::SplitParams& p, int row) {
  const int batch_item = batch_item_of(p, row);
  return {batch_item, (row - batch_item * p.head_groups) * BLOCK_H, 0, false};
}

// row_work under the tile-dividing schedules.
template <int BLOCK_H, int SCHEDULE>
__device__ __forceinline__ RowWork divided_row_work(const smla::SplitParams& p,
                                                    const WorkRange& range, int tile) {
  const smla::Balance balance = division_of(p);
  const int row = smla::row_of_tile(balance, global_tile<SCHEDULE>(range, tile));
  RowWork work = row_origin<BLOCK_H>(p, row);
  // Rows from tail_rows on are whole rows (kScheduleWholeRows); the division covers those below.
  if (SCHEDULE == smla::kScheduleWholeRows && row >= tail_rows_of(p)) {
    work.whole_row = true;
    return work;
  }
  const smla::RowParts parts = smla::row_parts(balance, row);
  work.part = division_cta(p) - parts.first_cta;
  work.whole_row = parts.count == 1;
  return work;
}

template <int BLOCK_H, int SCHEDULE>
__device__ __forceinline__ RowWork row_work(const smla::SplitParams& p, const WorkRange& range,
                                            int tile) {
  if constexpr (SCHEDULE == smla::kScheduleSplits) {
    return {static_cast<int>(blockIdx.z), static_cast<int>(blockIdx.y) * BLOCK_H,
            static_cast<int>(blockIdx.x), p.num_splits == 1};
  } else {
    return divided_row_work<BLOCK_H, SCHEDULE>(p, range, tile);
  }
}

}  // namespace smla_pipe
