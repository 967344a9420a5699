// Which rows of a tile the pipelined kernel's producer threads copy
// (templates/sparse_mla_decode/producer_rows.h), without a GPU: for every producer-warp count the
// kernel template takes (1-4) and every tile size of the space, the threads' rows, k below
// producer_rows_per_thread, cover each row of the tile exactly once; with two or more producer
// warps each warp copies at most its share, ceil(BLOCK_T / warps) rows, so that a tile's copies
// are issued by every warp (the properties the kernel needs, checked by enumeration, not by
// restating the formula).
#include <doctest/doctest.h>

#include <vector>

#include "templates/sparse_mla_decode/producer_rows.h"

namespace {

struct Coverage {
  std::vector<int> copies_of_row;  // per row of the tile: how many threads copy it
  std::vector<int> rows_of_warp;   // per producer warp: how many rows its threads copy
  int out_of_range = 0;            // rows at or past BLOCK_T that the kernel then skips
};

template <int BLOCK_T, int WARPS>
Coverage cover() {
  constexpr int kThreads = WARPS * 32;
  Coverage coverage{std::vector<int>(BLOCK_T, 0), std::vector<int>(WARPS, 0), 0};
  for (int thread = 0; thread < kThreads; ++thread) {
    for (int k = 0; k < smla::producer_rows_per_thread<BLOCK_T, kThreads>(); ++k) {
      const int row = smla::producer_row<BLOCK_T, kThreads>(thread, k);
      if (row < 0 || row >= BLOCK_T) {
        ++coverage.out_of_range;
        continue;
      }
      ++coverage.copies_of_row[static_cast<std::size_t>(row)];
      ++coverage.rows_of_warp[static_cast<std::size_t>(thread / 32)];
    }
  }
  return coverage;
}

template <int BLOCK_T, int WARPS>
void check_tile() {
  CAPTURE(BLOCK_T);
  CAPTURE(WARPS);
  const Coverage coverage = cover<BLOCK_T, WARPS>();
  for (int row = 0; row < BLOCK_T; ++row) {
    CAPTURE(row);
    CHECK(coverage.copies_of_row[static_cast<std::size_t>(row)] == 1);
  }
  if constexpr (WARPS > 1) {
    const int share = (BLOCK_T + WARPS - 1) / WARPS;
    for (int warp = 0; warp < WARPS; ++warp) {
      CAPTURE(warp);
      CHECK(coverage.rows_of_warp[static_cast<std::size_t>(warp)] <= share);
    }
  }
}

template <int WARPS>
void check_tiles() {
  check_tile<16, WARPS>();
  check_tile<32, WARPS>();
  check_tile<64, WARPS>();
  check_tile<128, WARPS>();
}

}  // namespace

TEST_CASE("every row of a tile is copied by exactly one producer thread, at 1-4 producer warps") {
  check_tiles<1>();
  check_tiles<2>();
  check_tiles<3>();
  check_tiles<4>();
}

TEST_CASE("two or more producer warps share a tile's copies: none takes over its share") {
  // Four warps and 64-token tiles (the measured variant): 16 rows a warp, none idle.
  const Coverage coverage = cover<64, 4>();
  for (const int rows : coverage.rows_of_warp) CHECK(rows == 16);
  // Two warps at 32- and 16-token tiles (the space's BLOCK_T 32 / 16 kernels): half each; the
  // rule thread + k x 64 they had left the second warp none.
  const Coverage two = cover<32, 2>();
  CHECK(two.rows_of_warp[0] == 16);
  CHECK(two.rows_of_warp[1] == 16);
  const Coverage two_small = cover<16, 2>();
  CHECK(two_small.rows_of_warp[0] == 8);
  CHECK(two_small.rows_of_warp[1] == 8);
}

TEST_CASE("two producer warps at 64-token tiles copy row `thread`, as before the warp split") {
  // The winners' kernels (BLOCK_T 64, two producer warps) keep their rows; that their SASS stayed
  // too was checked apart (md5 of nvdisasm, BENCHMARKS.md section 7, fortieth session).
  CHECK(smla::producer_rows_per_thread<64, 64>() == 1);
  for (int thread = 0; thread < 64; ++thread) {
    CAPTURE(thread);
    CHECK(smla::producer_row<64, 64>(thread, 0) == thread);
  }
}
