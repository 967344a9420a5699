// The balanced schedule (templates/sparse_mla_decode/schedule.h) and its split plan, without a GPU.
// The closed forms (which CTA holds a tile, which CTAs hold a row) are checked against a
// brute-force walk over every tile; that walk takes each CTA's first tile from first_tile_of_cta,
// the formula the kernel uses, so the balance property (every CTA gets floor or ceil of G / N
// tiles, the ranges tile [0, G) in order) is checked on its own. max_parts_by_cta_starts (a walk
// over the CTA starts by additions) is checked against the most CTAs the walk over every tile finds
// in one row. The plans are computed by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "core/cluster_capacity.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "templates/sparse_mla_decode/schedule.h"

using namespace tuner;
using namespace tuner::smla_family;

TEST_CASE("balanced schedule: equal ranges, and the closed forms match a walk over every tile") {
  int checked_rows = 0;
  for (const int rows : {1, 3, 7, 64, 136, 2048}) {
    for (const int tiles_per_row : {1, 5, 32, 128}) {
      const long long total = static_cast<long long>(rows) * tiles_per_row;
      for (const int ctas : {1, 2, 7, 131, 263, 264, 1000}) {
        if (ctas > total) continue;
        CAPTURE(rows);
        CAPTURE(tiles_per_row);
        CAPTURE(ctas);
        const smla::Balance balance = smla::make_balance(total, ctas, tiles_per_row);
        std::vector<int> owner(static_cast<std::size_t>(total), -1);
        long long expected_first = 0;
        for (int cta = 0; cta < ctas; ++cta) {
          const long long first = smla::first_tile_of_cta(balance, cta);
          const long long end = smla::first_tile_of_cta(balance, cta + 1);
          REQUIRE(first == expected_first);  // in order, no gap, no overlap
          CHECK(end - first >= total / ctas);
          CHECK(end - first <= (total + ctas - 1) / ctas);
          for (long long tile = first; tile < end; ++tile) owner[tile] = cta;
          expected_first = end;
        }
        REQUIRE(expected_first == total);
        for (long long tile = 0; tile < total; ++tile) {
          REQUIRE(smla::cta_of_tile(balance, tile) == owner[tile]);
        }
        int most_parts = 0;
        for (int row = 0; row < rows; ++row) {
          const auto begin = owner.begin() + static_cast<long long>(row) * tiles_per_row;
          std::vector<int> ctas_of_row(begin, begin + tiles_per_row);
          ctas_of_row.erase(std::unique(ctas_of_row.begin(), ctas_of_row.end()), ctas_of_row.end());
          const smla::RowParts parts = smla::row_parts(balance, row);
          CHECK(parts.first_cta == ctas_of_row.front());
          CHECK(parts.count == static_cast<int>(ctas_of_row.size()));
          most_parts = std::max(most_parts, static_cast<int>(ctas_of_row.size()));
          ++checked_rows;
        }
        CHECK(max_parts_by_cta_starts(balance) == most_parts);
        CHECK(max_row_parts(balance) == most_parts);
      }
    }
  }
  CHECK(checked_rows > 1000);
}

// first_tile_of_cta and cta_of_tile run on make_balance's divisors and a float estimate (the
// kernel's 64-bit divisions cost its start and each row's output); checked here against the
// 64-bit forms they replace, floor(c G / N) and ceil((g + 1) N / G) - 1, written out
// independently, up to the largest division the host plans (G < 2^31, N <= kMaxBalancedCtas),
// with the tiles next to each CTA start.
TEST_CASE("balanced schedule: the divisor forms equal the 64-bit ones up to 2^31 tiles") {
  long long checked = 0;
  for (const long long total : {1LL, 97LL, 2944LL, 65535LL, 1000003LL, (1LL << 31) - 1}) {
    for (const int ctas : {1, 2, 131, 264, 4224, 46339, smla::kMaxBalancedCtas}) {
      if (ctas > total) continue;
      CAPTURE(total);
      CAPTURE(ctas);
      const smla::Balance balance = smla::make_balance(total, ctas, 1);
      const int step = ctas > 5000 ? 7 : 1;
      for (int cta = 0; cta <= ctas; cta = cta == ctas ? ctas + 1 : std::min(ctas, cta + step)) {
        const long long first = static_cast<long long>(cta) * total / ctas;
        REQUIRE(smla::first_tile_of_cta(balance, cta) == first);
        if (cta == ctas) continue;
        for (const long long tile : {first - 1, first, first + 1}) {
          if (tile < 0 || tile >= total) continue;
          const long long owner = ((tile + 1) * ctas + total - 1) / total - 1;
          REQUIRE(smla::cta_of_tile(balance, tile) == owner);
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 10000);
}

// quotient(fast_divisor(d), x) against x / d: every x below 2^16 for small divisors, and for
// divisors across the range the dividends next to multiples of d and next to 2^31.
TEST_CASE("fast divisor: x / d by a multiply and a shift for 0 <= x < 2^31") {
  long long checked = 0;
  for (int d = 1; d <= 300; ++d) {
    const smla::FastDivisor divisor = smla::fast_divisor(d);
    for (int x = 0; x < (1 << 16); ++x) {
      if (smla::quotient(divisor, x) != x / d) {
        FAIL("quotient(" << x << ") by " << d << " is " << smla::quotient(divisor, x));
      }
      ++checked;
    }
  }
  constexpr int kLast = 2147483647;
  for (const int d :
       {301, 1000, 46340, 65535, 65536, 1 << 20, 1000003, 1 << 30, kLast - 1, kLast}) {
    CAPTURE(d);
    const smla::FastDivisor divisor = smla::fast_divisor(d);
    for (const long long base :
         {0LL, 1LL * d, 7LL * d, 12345LL * d, kLast / d * 1LL * d, 1LL * kLast}) {
      for (long long x = base - 3; x <= base + 3; ++x) {
        if (x < 0 || x > kLast) continue;
        REQUIRE(smla::quotient(divisor, static_cast<int>(x)) == x / d);
        ++checked;
      }
    }
  }
  CHECK(checked > 19000000);
}

// tail_division (the kernels' division, from the parameters and the host's multipliers) against
// tail_balance (the host's, by division), field by field, with the tail rows as the kernel derives
// them from batch x head groups, the whole rows and the CTAs.
TEST_CASE("whole rows: the kernels' division from the parameters equals the host's") {
  int checked = 0;
  for (const int rows : {1, 7, 66, 92, 264, 272, 416, 2048}) {
    for (const int tiles_per_row : {1, 5, 32, 128}) {
      for (const int ctas : {1, 132, 188, 264, 1000}) {
        CAPTURE(rows);
        CAPTURE(tiles_per_row);
        CAPTURE(ctas);
        const smla::WholeRows whole = smla::whole_rows_of(rows, ctas);
        const int tail_rows = rows - whole.per_cta * ctas;  // as tail_rows_of in the kernel
        REQUIRE(tail_rows == whole.tail_rows);
        const smla::Balance host = smla::tail_balance(tail_rows, tiles_per_row, ctas);
        const smla::Balance kernel =
            smla::tail_division(tail_rows, tiles_per_row, ctas, host.by_ctas.multiplier,
                                smla::fast_divisor(tiles_per_row).multiplier);
        CHECK(kernel.total_tiles == host.total_tiles);
        CHECK(kernel.ctas == host.ctas);
        CHECK(kernel.tiles_per_row == host.tiles_per_row);
        CHECK(kernel.per_cta == host.per_cta);
        CHECK(kernel.rest == host.rest);
        CHECK(kernel.by_ctas.shift == host.by_ctas.shift);
        CHECK(kernel.by_row.multiplier == host.by_row.multiplier);
        CHECK(kernel.by_row.shift == host.by_row.shift);
        ++checked;
      }
    }
  }
  CHECK(checked == 160);
}

// division_cta: a bijection of the grid's CTAs onto the division's, and CTAs c and c + ceil(N / 2)
// (one SM's pair under the placement schedule.h expects) hold floor or ceil(2 G / N) tiles
// together. Counted here from first_tile_of_cta, whose ranges the case above checks; the pair
// bound is what the plain order (c -> c) misses: at 92 rows of 32 tiles over 264 CTAs its pairs
// hold 24 tiles where ceil(2 G / N) is 23 (checked below as a case that could fail).
TEST_CASE("balanced schedule: the division order pairs an SM's two CTAs to even loads") {
  const auto tiles_of = [](const smla::Balance& balance, int cta) {
    return smla::first_tile_of_cta(balance, cta + 1) - smla::first_tile_of_cta(balance, cta);
  };
  for (const long long total : {1LL, 7LL, 2208LL, 2944LL, 4352LL, 65536LL}) {
    for (const int ctas : {1, 2, 3, 131, 132, 263, 264, 1000}) {
      if (ctas > total) continue;
      CAPTURE(total);
      CAPTURE(ctas);
      const smla::Balance balance = smla::make_balance(total, ctas, 32);
      std::vector<int> seen(static_cast<std::size_t>(ctas), 0);
      for (int cta = 0; cta < ctas; ++cta) {
        const int index = smla::division_cta(cta, ctas);
        REQUIRE(index >= 0);
        REQUIRE(index < ctas);
        ++seen[static_cast<std::size_t>(index)];
      }
      CHECK(std::count(seen.begin(), seen.end(), 1) == ctas);
      const int half = (ctas + 1) / 2;
      const long long most = (2 * total + ctas - 1) / ctas;
      for (int cta = 0; cta + half < ctas; ++cta) {
        const long long pair = tiles_of(balance, smla::division_cta(cta, ctas)) +
                               tiles_of(balance, smla::division_cta(cta + half, ctas));
        CHECK(pair <= most);
        CHECK(pair >= 2 * total / ctas);
      }
    }
  }
  const smla::Balance batch92 = smla::make_balance(92 * 32, 264, 32);
  long long plain_most = 0;
  for (int cta = 0; cta < 132; ++cta) {
    plain_most = std::max(plain_most, tiles_of(batch92, cta) + tiles_of(batch92, cta + 132));
  }
  CHECK(plain_most == 24);
}

namespace {

ClusterCapacity resident(int ctas) {
  ClusterCapacity capacity;
  capacity.clusters[1] = ctas;
  return capacity;
}

}  // namespace

TEST_CASE("balanced split plan: one wave of resident CTAs, parts per row by hand") {
  // 16 local heads, BLOCK_H 16 (one head group), BLOCK_T 64, topk 2048: 32 tiles per row.
  const GeometryParams balanced{64, 16, 1024, 0, 1};
  const ClusterCapacity h200 = resident(264);
  // Batch 132: 4224 tiles over 264 CTAs = 16 each, two CTAs per row.
  SplitPlan plan = split_plan({132, 16, 2048}, balanced, h200);
  CHECK(plan.balanced_ctas == 264);
  CHECK(plan.num_splits == 2);
  CHECK(plan.runs_combine());
  CHECK(split_grid({132, 16, 2048}, plan) == std::array<unsigned, 3>{264, 1, 1});
  // Batch 264: one row per CTA, every row whole: no partials, no combine.
  plan = split_plan({264, 16, 2048}, balanced, h200);
  CHECK(plan.num_splits == 1);
  CHECK_FALSE(plan.runs_combine());
  CHECK(workspace_layout({264, 16, 2048}, plan).bytes == 0);
  // Batch 528: two whole rows per CTA.
  plan = split_plan({528, 16, 2048}, balanced, h200);
  CHECK(plan.balanced_ctas == 264);
  CHECK(plan.num_splits == 1);
  // Batch 4: 128 tiles, fewer than the resident CTAs: one tile per CTA, 32 parts per row.
  plan = split_plan({4, 16, 2048}, balanced, h200);
  CHECK(plan.balanced_ctas == 128);
  CHECK(plan.num_splits == 32);
  // Batch 136: 4352 tiles over 264 CTAs, 16 or 17 each (CTA c starts at floor(c x 16.48): 0, 16,
  // 32, 49, 65, 82, 98, ...). Row 2 = tiles [64, 96) spans CTA 3 [49, 65), 4 [65, 82) and
  // 5 [82, 98): three parts.
  plan = split_plan({136, 16, 2048}, balanced, h200);
  CHECK(plan.num_splits == 3);
  // Without a device the resident count is unknown: TARGET_CTAS stands in for it.
  plan = split_plan({132, 16, 2048}, balanced);
  CHECK(plan.balanced_ctas == 1024);
  // Two head groups (32 local heads) double the rows.
  plan = split_plan({132, 32, 2048}, balanced, h200);
  CHECK(plan.head_groups == 2);
  CHECK(plan.num_splits == 1);  // 8448 tiles = 264 x 32: one whole row per CTA
  CHECK(split_grid({132, 32, 2048}, plan) == std::array<unsigned, 3>{264, 1, 1});
  // Per-row splits are untouched by the resident count.
  const SplitPlan per_row = split_plan({132, 16, 2048}, {64, 16, 1024, 0, 0}, h200);
  CHECK(per_row.balanced_ctas == 0);
  // floor(1024 / 132) = 7 splits of ceil(32 / 7) = 5 tiles: 7 splits.
  CHECK(split_grid({132, 16, 2048}, per_row) == std::array<unsigned, 3>{7, 1, 132});
}
