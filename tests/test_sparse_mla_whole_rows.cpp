// The whole-rows schedule (templates/sparse_mla_decode/schedule.h, kScheduleWholeRows) and its
// split plan, without a GPU. Each CTA's tiles are walked as the kernel walks them
// (whole_rows_tiles, global_of, and segment_end where the kernel's row loop writes a row's output)
// and checked against the schedule's definition, written out here: W = floor(R / N) whole rows a
// CTA (CTA c: rows Rt + c W .. Rt + (c + 1) W - 1), run after its share of the first Rt = R - W N
// rows' tiles; the shares cover those tiles once, in order, floor or ceil of their count over
// min(N, Rt x tiles_per_row) CTAs each. Then the parts the combine counts for each row (row_parts
// over tail_balance) against the CTAs the walk found holding it, and the plan's fields and grids;
// and the sweep's trim of schedule 1.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "core/cluster_capacity.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "templates/sparse_mla_decode/schedule.h"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

// One CTA's walk as the kernel does it: the global tile of each of its tiles, and the tiles where a
// segment (a run of one row's tiles) ends.
struct Walk {
  std::vector<long long> globals;
  std::vector<int> segment_ends;
};

Walk walk_cta(int tail_rows, int whole_rows, int tiles_per_row, int ctas, int cta) {
  const smla::CtaTiles tiles =
      smla::whole_rows_tiles(tail_rows, whole_rows, tiles_per_row, ctas, cta);
  Walk walk;
  int tile = 0;
  while (tile < tiles.count) {  // the kernel's row loop: one segment a pass
    const int end =
        smla::segment_end(tiles, tile, smla::tail_balance(tail_rows, tiles_per_row, ctas));
    REQUIRE(end > tile);
    REQUIRE(end <= tiles.count);
    for (; tile < end; ++tile) walk.globals.push_back(smla::global_of(tiles, tile));
    walk.segment_ends.push_back(end);
  }
  return walk;
}

void check_division(long long rows, int tiles_per_row, int ctas) {
  CAPTURE(rows);
  CAPTURE(tiles_per_row);
  CAPTURE(ctas);
  const long long total = rows * tiles_per_row;
  const int whole = static_cast<int>(rows / ctas);
  const int tail_rows = static_cast<int>(rows - static_cast<long long>(whole) * ctas);
  const smla::WholeRows split = smla::whole_rows_of(rows, ctas);
  REQUIRE(split.per_cta == whole);
  REQUIRE(split.tail_rows == tail_rows);
  const long long tail_tiles = static_cast<long long>(tail_rows) * tiles_per_row;
  const long long tail_ctas = std::min<long long>(ctas, tail_tiles);

  std::vector<int> owner(static_cast<std::size_t>(total), -1);
  std::vector<long long> tail_share(static_cast<std::size_t>(ctas), 0);
  for (int cta = 0; cta < ctas; ++cta) {
    const Walk walk = walk_cta(tail_rows, whole, tiles_per_row, ctas, cta);
    for (std::size_t i = 0; i < walk.globals.size(); ++i) {
      const long long global = walk.globals[i];
      REQUIRE(global >= 0);
      REQUIRE(global < total);
      REQUIRE(owner[global] == -1);  // no tile twice
      owner[global] = cta;
      const long long row = global / tiles_per_row;
      if (row < tail_rows) {
        ++tail_share[cta];
        REQUIRE(i == static_cast<std::size_t>(tail_share[cta] - 1));  // the tail share runs first
      } else {
        // Whole rows: CTA c's own W rows, in order.
        CHECK((row - tail_rows) / std::max(whole, 1) == cta);
      }
      if (i > 0 && row == walk.globals[i - 1] / tiles_per_row) {
        REQUIRE(global == walk.globals[i - 1] + 1);  // inside a row, consecutive tiles
      }
    }
    // A segment ends exactly where the next tile is in another row or the CTA's tiles end.
    std::set<int> ends(walk.segment_ends.begin(), walk.segment_ends.end());
    for (std::size_t i = 0; i < walk.globals.size(); ++i) {
      const bool last = i + 1 == walk.globals.size() ||
                        walk.globals[i + 1] / tiles_per_row != walk.globals[i] / tiles_per_row ||
                        walk.globals[i + 1] != walk.globals[i] + 1;
      CHECK(ends.count(static_cast<int>(i + 1)) == (last ? 1u : 0u));
    }
    // The tail share: the balanced division's lengths over the first tail_ctas CTAs, none after.
    if (cta < tail_ctas) {
      CHECK(tail_share[cta] >= tail_tiles / tail_ctas);
      CHECK(tail_share[cta] <= (tail_tiles + tail_ctas - 1) / tail_ctas);
    } else {
      CHECK(tail_share[cta] == 0);
    }
  }
  REQUIRE(std::count(owner.begin(), owner.end(), -1) == 0);  // every tile once

  // Each tail row: its owners are the parts the combine counts, in CTA order from first_cta, one
  // slot each (part = cta - first_cta < count). Rows from tail_rows on: one CTA, one part.
  int most_parts = 1;
  for (long long row = 0; row < rows; ++row) {
    const auto begin = owner.begin() + row * tiles_per_row;
    std::vector<int> holders(begin, begin + tiles_per_row);
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
    REQUIRE(std::is_sorted(holders.begin(), holders.end()));
    if (row >= tail_rows) {
      CHECK(holders.size() == 1u);
      continue;
    }
    const smla::RowParts parts =
        smla::row_parts(smla::tail_balance(tail_rows, tiles_per_row, ctas), row);
    CHECK(parts.first_cta == holders.front());
    CHECK(parts.count == static_cast<int>(holders.size()));
    CHECK(holders.back() - holders.front() + 1 == static_cast<int>(holders.size()));
    most_parts = std::max(most_parts, static_cast<int>(holders.size()));
  }
  // The plan (16 local heads, BLOCK_H 16: one head group, so rows = batch items).
  if (rows <= 4096) {
    ClusterCapacity capacity;
    capacity.clusters[1] = ctas;
    const DecodeDims dims{static_cast<int>(rows), 16, tiles_per_row * 16};
    const SplitPlan plan = split_plan(dims, {16, 16, 1024, 1, smla::kScheduleWholeRows}, capacity);
    if (total >= ctas) {
      CHECK(plan.balanced_ctas == ctas);
      CHECK(plan.whole_rows == whole);
      CHECK(plan.tail_rows == tail_rows);
      CHECK(plan.num_splits == (tail_rows > 0 ? most_parts : 1));
      if (plan.runs_combine()) {
        CHECK(combine_grid(dims, plan)[1] == static_cast<unsigned>(tail_rows));
      }
    }
  }
}

}  // namespace

TEST_CASE("whole-rows schedule: every tile once, whole rows per CTA, the tail balanced") {
  for (const int ctas : {1, 2, 7, 131, 264}) {
    for (const int tiles_per_row : {1, 5, 32, 128}) {
      for (const long long rows :
           {1LL, 3LL, 7LL, 64LL, 263LL, 264LL, 265LL, 272LL, 400LL, 527LL, 528LL, 1000LL}) {
        if (rows * tiles_per_row < ctas) continue;  // the plan caps N at the tiles
        check_division(rows, tiles_per_row, ctas);
      }
    }
  }
}

TEST_CASE("whole-rows split plan on the H200's 264 resident CTAs, by hand") {
  // 16 local heads, BLOCK_H 16, BLOCK_T 64, topk 2048: 32 tiles per row; merge 1.
  ClusterCapacity h200;
  h200.clusters[1] = 264;
  const GeometryParams whole_rows{64, 16, 128, 1, smla::kScheduleWholeRows};
  const GeometryParams balanced{64, 16, 128, 1, smla::kScheduleBalanced};
  // Batch 272: each CTA one row whole, the 8 rows left (256 tiles) one tile each over 256 CTAs:
  // 8 rows of 32 parts, against every row of 272 cut in two by the balanced division.
  SplitPlan plan = split_plan({272, 16, 2048}, whole_rows, h200);
  CHECK(plan.whole_rows == 1);
  CHECK(plan.tail_rows == 8);
  CHECK(plan.num_splits == 32);
  CHECK(plan.runs_combine());
  CHECK(combine_grid({272, 16, 2048}, plan) == std::array<unsigned, 3>{16, 8, 4});
  const SplitPlan cut = split_plan({272, 16, 2048}, balanced, h200);
  CHECK(cut.num_splits == 2);
  CHECK(combine_grid({272, 16, 2048}, cut) == std::array<unsigned, 3>{16, 272, 1});
  // Batch 400: 136 rows left, 4352 tiles over 264 CTAs (16 or 17 each): 3 parts at most, as the
  // balanced plan of batch 136 (test_sparse_mla_schedule.cpp).
  plan = split_plan({400, 16, 2048}, whole_rows, h200);
  CHECK(plan.tail_rows == 136);
  CHECK(plan.num_splits == 3);
  // Batch 528: two whole rows a CTA, nothing left: no partials, no combine.
  plan = split_plan({528, 16, 2048}, whole_rows, h200);
  CHECK(plan.whole_rows == 2);
  CHECK(plan.num_splits == 1);
  CHECK_FALSE(plan.runs_combine());
  // Under one wave of rows it is the balanced plan.
  plan = split_plan({132, 16, 2048}, whole_rows, h200);
  const SplitPlan same = split_plan({132, 16, 2048}, balanced, h200);
  CHECK(plan.whole_rows == 0);
  CHECK(plan.tail_rows == 132);
  CHECK(plan.num_splits == same.num_splits);
  CHECK(split_grid({132, 16, 2048}, plan) == split_grid({132, 16, 2048}, same));
  // The kernel parameters carry the division; the balanced plan's say W = 0 (so Rt = every row,
  // which the kernel derives: 272 x 1 - 0 x 264), with the divisors of its 264 CTAs, of the 32
  // tiles a row and of the one head group.
  const smla::SplitParams packed = pack_split({}, {272, 16, 2048}, cut, 0.1f);
  CHECK(packed.whole_rows == 0);
  CHECK(packed.balanced_ctas == 264);
  CHECK(packed.ctas_multiplier == smla::fast_divisor(264).multiplier);
  CHECK(packed.row_multiplier == smla::fast_divisor(32).multiplier);
  CHECK(packed.head_group_multiplier == smla::fast_divisor(1).multiplier);
  const smla::CombineParams combined =
      pack_combine({}, {272, 16, 2048}, split_plan({272, 16, 2048}, whole_rows, h200));
  CHECK(combined.whole_rows == 1);
  CHECK(combined.tail_rows == 8);
  // Its division: 8 rows x 32 tiles over min(256, 264) = 256 CTAs.
  CHECK(combined.ctas_multiplier == smla::fast_divisor(256).multiplier);
}

TEST_CASE(
    "the sweep times schedule 2 (at one TARGET_CTAS) and trims schedule 1, whose division it keeps "
    "below a wave") {
  // The winners' structure: BLOCK_T 64, 4 consumer + 2 producer warps, 2 stages, f16 in registers.
  KernelConfig config{.block_t = 64,
                      .num_warps = 4,
                      .num_stages = 2,
                      .mma_path = 1,
                      .producers = 2,
                      .target_ctas = 128,
                      .merge = smla::kMergeCombineBf16};
  for (const int ctas_per_sm : {1, 2}) {  // 2: the token softmax's bound (space.cpp)
    CAPTURE(ctas_per_sm);
    config.ctas_per_sm = ctas_per_sm;
    config.schedule = smla::kScheduleWholeRows;
    CHECK(measured_trim(config).empty());
    // Its grid ignores TARGET_CTAS on a device: one value is swept, the others are that launch.
    for (const int target : {0, 256, 512, 1024}) {
      CAPTURE(target);
      config.target_ctas = target;
      CHECK(measured_trim(config).rfind("left out as one launch: the tile-dividing", 0) == 0);
    }
    config.target_ctas = 128;
    config.schedule = smla::kScheduleSplits;
    CHECK(measured_trim(config).empty() == (ctas_per_sm == 1));
    config.schedule = smla::kScheduleBalanced;
    CHECK(measured_trim(config).rfind("measured to lose: schedule 2 (whole rows) divides as", 0) ==
          0);
    CHECK(shape_mismatch(config, Shape{}).empty());  // trimmed, not refused: --trimmed times it
  }
}
