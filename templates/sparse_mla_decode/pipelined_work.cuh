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

__device__ __forceinline__ smla::Balance balance_of(const smla::SplitParams& p) {
  return smla::balance_of(p.batch, p.head_groups, p.tiles_per_row, p.balanced_ctas);
}

// This CTA's index in the tile-dividing schedules' division (schedule.h's division_cta).
__device__ __forceinline__ int division_cta(const smla::SplitParams& p) {
  return smla::division_cta(static_cast<int>(blockIdx.x), p.balanced_ctas);
}

// kScheduleWholeRows: CTA c's share of the tail rows' tiles, then its whole rows (schedule.h).
__device__ __forceinline__ WorkRange whole_rows_range(const smla::SplitParams& p) {
  const smla::CtaTiles tiles = smla::whole_rows_tiles(p.tail_rows, p.whole_rows, p.tiles_per_row,
                                                      p.balanced_ctas, division_cta(p));
  return {tiles.first, tiles.first + tiles.count, nullptr, 0, tiles.jump_tile, tiles.jump};
}

__device__ __forceinline__ smla::CtaTiles cta_tiles(const WorkRange& range) {
  return {range.first_tile, range.end_tile - range.first_tile, range.jump_tile, range.jump};
}

template <int BLOCK_T, int SCHEDULE>
__device__ __forceinline__ WorkRange work_range(const smla::SplitParams& p) {
  if (SCHEDULE == smla::kScheduleWholeRows) return whole_rows_range(p);
  if (SCHEDULE == smla::kScheduleBalanced) {
    const smla::Balance balance = balance_of(p);
    const int cta = division_cta(p);
    return {static_cast<int>(smla::first_tile_of_cta(balance, cta)),
            static_cast<int>(smla::first_tile_of_cta(balance, cta + 1)),
            nullptr,
            0,
            0,
            0};
  }
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
  if (SCHEDULE == smla::kScheduleSplits) return {range.index_row, range.first_pos + tile * BLOCK_T};
  const int global = global_tile<SCHEDULE>(range, tile);
  const int row = global / p.tiles_per_row;
  return {p.indices + static_cast<long long>(row / p.head_groups) * p.topk,
          (global - row * p.tiles_per_row) * BLOCK_T};
}

// The end (counted from the range's first tile) of the row that the range's tile `tile` is in.
template <int SCHEDULE>
__device__ __forceinline__ int row_end_tile(const smla::SplitParams& p, const WorkRange& range,
                                            int tile) {
  if (SCHEDULE == smla::kScheduleSplits) return range.end_tile - range.first_tile;
  if (SCHEDULE == smla::kScheduleWholeRows) {
    return smla::segment_end(cta_tiles(range), tile, p.tiles_per_row);
  }
  const int global = range.first_tile + tile;
  return min((global / p.tiles_per_row + 1) * p.tiles_per_row, range.end_tile) - range.first_tile;
}

// The row of the range's tile `tile` as this CTA's output: the batch item, the head group's first
// head, this CTA's part of the row, and whether it is the row's only part (written out as bf16).
struct RowWork {
  int batch_item;
  int first_head;
  int part;
  bool whole_row;
};
template <int BLOCK_H, int SCHEDULE>
__device__ __forceinline__ RowWork row_work(const smla::SplitParams& p, const WorkRange& range,
                                            int tile) {
  if (SCHEDULE == smla::kScheduleSplits) {
    return {static_cast<int>(blockIdx.z), static_cast<int>(blockIdx.y) * BLOCK_H,
            static_cast<int>(blockIdx.x), p.num_splits == 1};
  }
  const int row = global_tile<SCHEDULE>(range, tile) / p.tiles_per_row;
  if (SCHEDULE == smla::kScheduleWholeRows) {
    if (row >= p.tail_rows) return {row / p.head_groups, (row % p.head_groups) * BLOCK_H, 0, true};
    const smla::RowParts parts =
        smla::row_parts(smla::tail_balance(p.tail_rows, p.tiles_per_row, p.balanced_ctas), row);
    return {row / p.head_groups, (row % p.head_groups) * BLOCK_H, division_cta(p) - parts.first_cta,
            parts.count == 1};
  }
  const smla::RowParts parts = smla::row_parts(balance_of(p), row);
  return {row / p.head_groups, (row % p.head_groups) * BLOCK_H, division_cta(p) - parts.first_cta,
          parts.count == 1};
}

}  // namespace smla_pipe
