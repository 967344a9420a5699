#pragma once
// Which tiles each CTA of the split kernel runs (the launch-time `schedule` parameter). Work is
// counted in rows, one per (batch item, head group), row = batch_item x head_groups + head_group,
// of tiles_per_row = ceil(topk / BLOCK_T) tiles; global tile g = row x tiles_per_row + tile.
//  kScheduleSplits:   the grid is (splits, head groups, batch); a CTA runs the tiles of one split
//                     of one row (TARGET_CTAS sets the splits, deploy.hpp's split_plan).
//  kScheduleBalanced: the grid is N CTAs, one wave of the kernel's resident CTAs; CTA c runs the
//                     global tiles [c G / N, (c + 1) G / N) of G = rows x tiles_per_row, crossing
//                     row boundaries, so every CTA gets the same tiles (+-1) at every batch. A row
//                     covered by one CTA is written out directly; a row cut across CTAs leaves one
//                     partial per CTA (its part) for the combine kernel.
//  kScheduleWholeRows: the balanced grid, but each CTA owns W = floor(R / N) of the R rows whole
//                     (CTA c: rows Rt + c W .. Rt + (c + 1) W - 1, Rt = R - W N), written out
//                     directly; only the first Rt rows (the remainder) are divided by tiles as
//                     kScheduleBalanced divides all of them, and a CTA runs its share of those
//                     first. At R < N it is the balanced division. Between one and two waves of
//                     rows it cuts Rt rows instead of all R: the balanced division at batch 256
//                     cut every row in two and was 1.23x the whole-row grid's time (BENCHMARKS.md
//                     section 7, twenty-fifth session), where the combine and the fp32 partials
//                     of every row are the difference.
// Included by the kernels and by the host (deploy.cpp): the combine finds a row's parts with the
// functions the split kernel wrote them with. Plain C++ only (NVRTC has no standard headers).
#include "layout.h"  // SMLA_HD (relative: the host includes this file as templates/...)

namespace smla {

enum Schedule : int { kScheduleSplits = 0, kScheduleBalanced = 1, kScheduleWholeRows = 2 };

// The schedules that run one wave of CTAs over the tiles, crossing rows (1 and 2).
SMLA_HD constexpr bool divides_tiles(int schedule) { return schedule != kScheduleSplits; }

// The balanced schedule's division of G global tiles over N CTAs (1 <= N <= G).
struct Balance {
  long long total_tiles;  // G
  int ctas;               // N
  int tiles_per_row;
};

// The division of `batch` x head_groups rows of tiles_per_row tiles over `ctas` CTAs.
SMLA_HD constexpr Balance balance_of(int batch, int head_groups, int tiles_per_row, int ctas) {
  return {static_cast<long long>(batch) * head_groups * tiles_per_row, ctas, tiles_per_row};
}

// floor(c G / N) without a 64-bit division, which the kernel ran at its start and before each
// row's output (two __cuda_sm20_div_s64 calls of ~90 dependent instructions each, where a 32-bit
// division is ~15): G = q N + r, so c G / N = c q + c r / N with c r < N^2. Holds for G < 2^31
// (the host plans no launch of more tiles: deploy.cpp) and N <= 65536 (one wave of resident CTAs).
SMLA_HD constexpr long long first_tile_of_cta(const Balance& balance, int cta) {
  const unsigned total = static_cast<unsigned>(balance.total_tiles);
  const unsigned ctas = static_cast<unsigned>(balance.ctas);
  const unsigned c = static_cast<unsigned>(cta);
  return static_cast<long long>(c * (total / ctas) + c * (total % ctas) / ctas);
}

// The division's CTA index of the grid's CTA `cta` (of N = `ctas`): CTAs c and c + ceil(N / 2)
// take neighbouring ranges 2c and 2c + 1, which hold floor or ceil(2 G / N) tiles together, where
// ranges c and c + N / 2 of the plain order hold the same count each. Why: a wave of two CTAs an
// SM is expected to be placed c and c + N / 2 on one SM (the block scheduler handing the first
// half out one an SM, then the second in the same order), and the SM with most tiles sets the
// launch's end: at 92 rows of 32 tiles over 264 CTAs, 23 tiles an SM at most instead of 24. Under
// any other placement each CTA still holds floor or ceil(G / N) tiles.
SMLA_HD constexpr int division_cta(int cta, int ctas) {
  const int half = (ctas + 1) / 2;
  return cta < half ? 2 * cta : 2 * (cta - half) + 1;
}

// The CTA whose range holds global tile g: the largest c with floor(c G / N) <= g, i.e.
// c = ceil((g + 1) N / G) - 1, whose product needs 64 bits. Estimated in float instead (relative
// error < 2^-21, so within one of c for N <= 65536) and set by one exact step each way.
SMLA_HD constexpr int cta_of_tile(const Balance& balance, long long tile) {
  const float ratio = static_cast<float>(balance.ctas) / static_cast<float>(balance.total_tiles);
  int cta = static_cast<int>(static_cast<float>(tile + 1) * ratio);
  cta = cta < balance.ctas - 1 ? cta : balance.ctas - 1;
  if (first_tile_of_cta(balance, cta) > tile) return cta - 1;
  return cta + 1 < balance.ctas && first_tile_of_cta(balance, cta + 1) <= tile ? cta + 1 : cta;
}

// The CTAs that hold a row's tiles: parts first_cta .. first_cta + count - 1; a CTA's part index
// in the row is cta - first_cta.
struct RowParts {
  int first_cta;
  int count;
};
SMLA_HD constexpr RowParts row_parts(const Balance& balance, long long row) {
  const long long first = row * balance.tiles_per_row;
  const int first_cta = cta_of_tile(balance, first);
  return {first_cta, cta_of_tile(balance, first + balance.tiles_per_row - 1) - first_cta + 1};
}

// kScheduleWholeRows' rows over `ctas` CTAs: W whole rows per CTA and the Rt rows left over.
struct WholeRows {
  int per_cta;    // W = floor(R / N)
  int tail_rows;  // Rt = R - W N, the first rows, divided by tiles
};
SMLA_HD constexpr WholeRows whole_rows_of(long long rows, int ctas) {
  return {static_cast<int>(rows / ctas), static_cast<int>(rows % ctas)};
}

// The division of the first `tail_rows` rows' tiles over at most `ctas` CTAs: one CTA per tile at
// most, so that every CTA of the division holds a tile (row_parts counts CTAs, each a part). With
// no tail rows it holds no CTA: nothing may be asked of it then.
SMLA_HD constexpr Balance tail_balance(int tail_rows, int tiles_per_row, int ctas) {
  const long long tiles = static_cast<long long>(tail_rows) * tiles_per_row;
  return {tiles, static_cast<int>(tiles < ctas ? tiles : ctas), tiles_per_row};
}

// Under kScheduleWholeRows CTA `cta` runs two pieces as one run of tiles 0 .. count - 1: its share
// of the tail rows' tiles (global tiles first .. first + jump_tile - 1), then its whole rows
// (tile t >= jump_tile is global tile first + t + jump). Host and kernel share these (pipelined_
// work.cuh); tests/test_sparse_mla_schedule.cpp checks them against a division built by hand.
struct CtaTiles {
  int first;
  int count;
  int jump_tile;
  int jump;
};
SMLA_HD constexpr CtaTiles whole_rows_tiles(int tail_rows, int whole_rows, int tiles_per_row,
                                            int ctas, int cta) {
  const Balance tail = tail_balance(tail_rows, tiles_per_row, ctas);
  const long long tail_first = cta < tail.ctas ? first_tile_of_cta(tail, cta) : tail.total_tiles;
  const long long tail_end = cta < tail.ctas ? first_tile_of_cta(tail, cta + 1) : tail.total_tiles;
  const long long rows_first =
      (tail_rows + static_cast<long long>(cta) * whole_rows) * tiles_per_row;
  return {static_cast<int>(tail_first),
          static_cast<int>(tail_end - tail_first) + whole_rows * tiles_per_row,
          static_cast<int>(tail_end - tail_first), static_cast<int>(rows_first - tail_end)};
}

SMLA_HD constexpr int global_of(const CtaTiles& tiles, int tile) {
  return tiles.first + tile + (tile >= tiles.jump_tile ? tiles.jump : 0);
}

// The end (in the CTA's tiles) of the segment that tile `tile` is in: its row's end, or the tail
// share's end where that comes first (the row goes on in the next CTA).
SMLA_HD constexpr int segment_end(const CtaTiles& tiles, int tile, int tiles_per_row) {
  const int global = global_of(tiles, tile);
  const int row_end = tile + (global / tiles_per_row + 1) * tiles_per_row - global;
  return tile < tiles.jump_tile && tiles.jump_tile < row_end ? tiles.jump_tile : row_end;
}

}  // namespace smla
