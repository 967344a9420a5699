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

// x / d for 0 <= x < 2^31 by a multiply and a shift: with p = 31 + ceil(log2 d) and
// m = ceil(2^p / d) < 2^32, floor(x m / 2^p) = floor(x / d) (the error x (m d - 2^p) / (d 2^p)
// stays under 1 / d). The kernels divide by launch constants (CTAs, tiles a row, head groups) on
// their start and output paths, where a 32-bit division is ~15 dependent instructions and a 64-bit
// one a call of ~90 (the thirty-third session's timeline: schedule 2 spent 0.5 us more than
// schedule 0 on its start and again on each output); the host computes m and p (deploy.cpp).
struct FastDivisor {
  unsigned multiplier;  // m (0 for a divisor of 0: nothing may be divided by it)
  int shift;            // p
};
// p = 31 + ceil(log2 d): the kernels derive it from d (a count leading zeros) and take only m
// from the host, so that the split's parameter block stays within 128 bytes (past that NVVM
// compiled the per-row splits' kernels differently: 159 -> 153 registers on sm_90).
SMLA_HD constexpr int divisor_shift(int divisor) {
#ifdef __CUDA_ARCH__
  return 63 - __clz(divisor - 1);
#else
  int log2 = 0;
  while ((1LL << log2) < divisor) ++log2;
  return 31 + log2;
#endif
}
SMLA_HD constexpr FastDivisor fast_divisor(int divisor) {
  if (divisor <= 0) return {0, 0};
  const int shift = divisor_shift(divisor);
  return {static_cast<unsigned>(((1ULL << shift) + static_cast<unsigned>(divisor) - 1) /
                                static_cast<unsigned>(divisor)),
          shift};
}
// The divisor of d from its host-made multiplier.
SMLA_HD constexpr FastDivisor divisor_of(int divisor, unsigned multiplier) {
  return {multiplier, divisor > 0 ? divisor_shift(divisor) : 0};
}
SMLA_HD constexpr int quotient(const FastDivisor& divisor, int x) {
  return static_cast<int>((static_cast<unsigned long long>(x) * divisor.multiplier) >>
                          divisor.shift);
}

// The most CTAs a division may have: c (G mod N) < N^2 must stay under 2^31 (first_tile_of_cta).
// One wave of resident CTAs is far below it (32 an SM).
constexpr int kMaxBalancedCtas = 46340;

// The balanced schedule's division of G global tiles over N CTAs (1 <= N <= G < 2^31,
// N <= kMaxBalancedCtas), with its quotient and divisors: made by make_balance on the host, and
// by tail_division in the kernels from the launch's parameters and the host's multipliers.
struct Balance {
  long long total_tiles;  // G
  int ctas;               // N
  int tiles_per_row;
  int per_cta;          // G / N
  int rest;             // G mod N
  FastDivisor by_ctas;  // x / N
  FastDivisor by_row;   // x / tiles_per_row: a global tile's row
};
SMLA_HD constexpr Balance make_balance(long long total_tiles, int ctas, int tiles_per_row) {
  return {total_tiles,
          ctas,
          tiles_per_row,
          ctas > 0 ? static_cast<int>(total_tiles / ctas) : 0,
          ctas > 0 ? static_cast<int>(total_tiles % ctas) : 0,
          fast_divisor(ctas),
          fast_divisor(tiles_per_row)};
}

// The division of `batch` x head_groups rows of tiles_per_row tiles over `ctas` CTAs.
SMLA_HD constexpr Balance balance_of(int batch, int head_groups, int tiles_per_row, int ctas) {
  return make_balance(static_cast<long long>(batch) * head_groups * tiles_per_row, ctas,
                      tiles_per_row);
}

// floor(c G / N) = c (G / N) + c (G mod N) / N, with c (G mod N) < N^2 <= 2^31.
SMLA_HD constexpr long long first_tile_of_cta(const Balance& balance, int cta) {
  return static_cast<long long>(cta) * balance.per_cta +
         quotient(balance.by_ctas, cta * balance.rest);
}

// The row of global tile `tile`.
SMLA_HD constexpr int row_of_tile(const Balance& balance, long long tile) {
  return quotient(balance.by_row, static_cast<int>(tile));
}

// The division's CTA index of the grid's CTA `cta` (of N = `ctas`): CTAs c and c + ceil(N / 2)
// take neighbouring ranges 2c and 2c + 1, which hold floor or ceil(2 G / N) tiles together, where
// ranges c and c + N / 2 of the plain order hold the same count each. Why: a wave of two CTAs an
// SM is mostly placed c and c + N / 2 on one SM (the block scheduler hands the second half out in
// the first half's order: on ~60 % of the SMs of a 264-CTA launch on an H100, the thirty-third
// session's timeline), and the SM with most tiles sets the launch's end where the SMs' rate is the
// bound: at 92 rows of 32 tiles over 264 CTAs, 23 tiles an SM at most instead of 24. Under any
// other placement each CTA still holds floor or ceil(G / N) tiles.
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
  return make_balance(tiles, static_cast<int>(tiles < ctas ? tiles : ctas), tiles_per_row);
}

// tail_balance without a division, from the multipliers of fast_divisor(min(G, ctas)) and
// fast_divisor(tiles_per_row) (the kernels' parameters; tests/test_sparse_mla_schedule.cpp checks
// it against tail_balance).
SMLA_HD constexpr Balance tail_division(int tail_rows, int tiles_per_row, int ctas,
                                        unsigned ctas_multiplier, unsigned row_multiplier) {
  const int tiles = tail_rows * tiles_per_row;
  const int division_ctas = tiles < ctas ? tiles : ctas;
  const FastDivisor by_ctas = divisor_of(division_ctas, ctas_multiplier);
  const int per_cta = division_ctas > 0 ? quotient(by_ctas, tiles) : 0;
  return {tiles,
          division_ctas,
          tiles_per_row,
          per_cta,
          tiles - per_cta * division_ctas,
          by_ctas,
          divisor_of(tiles_per_row, row_multiplier)};
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
// `tail`: the launch's tail_balance (in the kernel, pipelined_work.cuh's division_of); the whole
// rows follow its tiles.
SMLA_HD constexpr CtaTiles whole_rows_tiles(const Balance& tail, int whole_rows, int cta) {
  const long long tail_first = cta < tail.ctas ? first_tile_of_cta(tail, cta) : tail.total_tiles;
  const long long tail_end = cta < tail.ctas ? first_tile_of_cta(tail, cta + 1) : tail.total_tiles;
  const long long rows_first =
      tail.total_tiles + static_cast<long long>(cta) * whole_rows * tail.tiles_per_row;
  return {static_cast<int>(tail_first),
          static_cast<int>(tail_end - tail_first) + whole_rows * tail.tiles_per_row,
          static_cast<int>(tail_end - tail_first), static_cast<int>(rows_first - tail_end)};
}
SMLA_HD constexpr CtaTiles whole_rows_tiles(int tail_rows, int whole_rows, int tiles_per_row,
                                            int ctas, int cta) {
  return whole_rows_tiles(tail_balance(tail_rows, tiles_per_row, ctas), whole_rows, cta);
}

SMLA_HD constexpr int global_of(const CtaTiles& tiles, int tile) {
  return tiles.first + tile + (tile >= tiles.jump_tile ? tiles.jump : 0);
}

// The end (in the CTA's tiles) of the segment that tile `tile` is in: its row's end, or the tail
// share's end where that comes first (the row goes on in the next CTA).
SMLA_HD constexpr int segment_end(const CtaTiles& tiles, int tile, const Balance& rows) {
  const int global = global_of(tiles, tile);
  const int row_end = tile + (row_of_tile(rows, global) + 1) * rows.tiles_per_row - global;
  return tile < tiles.jump_tile && tiles.jump_tile < row_end ? tiles.jump_tile : row_end;
}

}  // namespace smla
