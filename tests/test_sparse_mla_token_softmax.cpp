// Token softmax (templates/sparse_mla_decode/token_softmax.cuh) on the host: which pipelined
// kernels take it, and where the layout puts its P copies and its row maxima / sums. The expected
// offsets and sizes are worked out here by hand from the kernel's description (16-bit P rows of
// BLOCK_T values + 16 B, one copy per V scale group on fp8 caches, [2][16][warps] fp32 after them),
// not with the layout's own arithmetic. The kernel runs on a GPU in gpu_sparse_mla_decode and
// gpu_sparse_mla_repeat (every pipelined launch variant of BLOCK_H 16, mma_path 1).
#include <doctest/doctest.h>

#include <set>

#include "templates/sparse_mla_decode/layout.h"

namespace {

constexpr int kFp8 = smla::kFp8DsMla;
constexpr int kBf16 = smla::kBf16;
constexpr int kRegF16 = smla::kMmaRegF16;

}  // namespace

TEST_CASE("token softmax is taken where each consumer warp scores whole rows of its own tokens") {
  // BLOCK_T 64: 8 n-tiles, 2 a warp at 4 warps, 1 at 8; BLOCK_T 32: 4 n-tiles, 1 a warp at 4.
  CHECK(smla::token_softmax(64, 16, 4, kRegF16, kFp8));
  CHECK(smla::token_softmax(64, 16, 8, kRegF16, kFp8));
  CHECK(smla::token_softmax(32, 16, 4, kRegF16, kFp8));
  // Fewer n-tiles than warps: the warps split the segments and sum the slabs (the old path).
  CHECK_FALSE(smla::token_softmax(32, 16, 8, kRegF16, kFp8));
  CHECK_FALSE(smla::token_softmax(16, 16, 4, kRegF16, kFp8));
  // Two m-tiles: a warp's tokens cover half the heads.
  CHECK_FALSE(smla::token_softmax(64, 32, 4, kRegF16, kFp8));
  // e4m3 MMA quantizes P per row over the whole tile; the smem path has its own softmax.
  CHECK_FALSE(smla::token_softmax(64, 16, 4, smla::kMmaFp8, kFp8));
  CHECK_FALSE(smla::token_softmax(64, 16, 4, smla::kMmaSmemF16, kFp8));
  // bf16 caches keep the whole-tile softmax (measured: slower at batch 1, see layout.h).
  CHECK_FALSE(smla::token_softmax(64, 16, 4, kRegF16, kBf16));
}

TEST_CASE("the token softmax layout: P copies and the warps' row statistics in the score buffer") {
  struct Case {
    int block_t, warps, kv, producers;
    unsigned copies, row_stride, region;
  };
  // region = the bytes between scores_offset and barrier_offset: the larger of the score buffer
  // (buffers x 16 x (BLOCK_T + 8) x 4 B) and P + statistics, rounded up to 128 B.
  const Case cases[] = {
      // fp8, 4 warps: P 4 x 16 x 144 = 9,216 + stats 2 x 16 x 4 x 4 = 512 > scores 9,216.
      {64, 4, kFp8, 2, 4, 144, 9728},
      // fp8, 8 warps: P 9,216 + stats 1,024.
      {64, 8, kFp8, 2, 4, 144, 10240},
      // fp8, BLOCK_T 32: P 4 x 16 x 80 = 5,120 + 512 > scores 2 x 16 x 40 x 4 = 5,120.
      {32, 4, kFp8, 2, 4, 80, 5632},
      // no producer warps: one score buffer (4,608) < P + stats (9,728).
      {64, 4, kFp8, 0, 4, 144, 9728},
  };
  for (const Case& c : cases) {
    CAPTURE(c.block_t);
    CAPTURE(c.warps);
    CAPTURE(c.kv);
    CAPTURE(c.producers);
    const smla::SmemLayout layout =
        smla::smem_layout(c.block_t, 16, c.warps, 2, c.kv, kRegF16, c.producers);
    CHECK(layout.probs_offset == layout.scores_offset);
    CHECK(layout.prob_copies == c.copies);
    CHECK(layout.probs_row_stride == c.row_stride);
    CHECK(layout.stats_offset == layout.probs_offset + c.copies * 16 * c.row_stride);
    CHECK(layout.stats_offset % 16 == 0);  // the row maxima are read as float4
    CHECK(layout.stats_offset + 2 * 16 * c.warps * 4 <= layout.barrier_offset);
    CHECK(layout.barrier_offset - layout.scores_offset == c.region);
    // The P copies start after the ring and its token ids.
    CHECK(layout.probs_offset >= layout.token_offset + 2 * c.block_t * 4);
  }
}

TEST_CASE("a P copy's rows feed ldmatrix without bank conflicts") {
  for (const int block_t : {32, 64}) {
    CAPTURE(block_t);
    const unsigned stride = smla::smem_layout(block_t, 16, 4, 2, kFp8, kRegF16, 2).probs_row_stride;
    CHECK(stride % 16 == 0);  // ldmatrix reads 16-byte rows
    // The 8 rows of one 8x8 matrix: 16 bytes each = 4 of the 32 banks; all 32 distinct.
    std::set<unsigned> banks;
    for (unsigned row = 0; row < 8; ++row) {
      for (unsigned word = 0; word < 4; ++word) banks.insert((row * stride / 4 + word) % 32);
    }
    CHECK(banks.size() == 32);
  }
}

TEST_CASE("kernels without token softmax keep the score buffer's layout") {
  // bf16 and mma_path 2, BLOCK_T 64, 4 warps, producers: 2 buffers x 16 x 72 x 4 B = 9,216.
  const smla::SmemLayout bf16 = smla::smem_layout(64, 16, 4, 2, kBf16, kRegF16, 2);
  CHECK(bf16.barrier_offset - bf16.scores_offset == 9216);
  const smla::SmemLayout fp8_mma = smla::smem_layout(64, 16, 4, 2, kFp8, smla::kMmaFp8, 2);
  CHECK(fp8_mma.barrier_offset - fp8_mma.scores_offset == 9216);
  // BLOCK_T 16 at 4 warps: 2 slabs (the segment split), 2 buffers, 16 x 24 x 4 B each.
  const smla::SmemLayout sliced = smla::smem_layout(16, 16, 4, 2, kFp8, kRegF16, 2);
  CHECK(sliced.barrier_offset - sliced.scores_offset == 6144);
}
