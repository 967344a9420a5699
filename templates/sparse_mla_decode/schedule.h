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
// Included by the kernels and by the host (deploy.cpp): the combine finds a row's parts with the
// functions the split kernel wrote them with. Plain C++ only (NVRTC has no standard headers).
#include "layout.h"  // SMLA_HD (relative: the host includes this file as templates/...)

namespace smla {

enum Schedule : int { kScheduleSplits = 0, kScheduleBalanced = 1 };

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

SMLA_HD constexpr long long first_tile_of_cta(const Balance& balance, int cta) {
  return static_cast<long long>(cta) * balance.total_tiles / balance.ctas;
}

// The CTA whose range holds global tile g: the largest c with floor(c G / N) <= g, i.e.
// c = ceil((g + 1) N / G) - 1.
SMLA_HD constexpr int cta_of_tile(const Balance& balance, long long tile) {
  return static_cast<int>(
      ((tile + 1) * balance.ctas + balance.total_tiles - 1) / balance.total_tiles - 1);
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

}  // namespace smla
