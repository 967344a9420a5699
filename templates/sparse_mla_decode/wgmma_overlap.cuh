#pragma once
// wgmma_tile.cuh's tile with the next tile's score MMAs in flight during this tile's softmax and
// P.V (FlashAttention-3's intra-warpgroup overlap). So that no fragment registers stay live across
// the P.V, both MMA operands come from shared memory: the ring stage holds the tile chunk-major,
// [41 16-byte chunks of a 656-byte row][64 tokens][16 B] (chunks 0-31 the e4m3 latent, 32 the
// scales, 33-40 the bf16 rope: the canonical no-swizzle K-major layout, 8 tokens a core matrix),
// and q as OverlapQ below. The value and the residual of q take two N = 16 MMAs into one
// accumulator per scale group (32 registers, not 64). P.V reads V from the same chunk-major
// stage. Not a kernel path: bench/device/qk_wgmma.cu measures it (BENCHMARKS.md section 7).
#include "sparse_mla_decode/wgmma_tile.cuh"

namespace smla_wgmma {

// [32 chunks][16 heads][16 B] e4m3 values, the same for the residuals, [8][16][16 B] bf16 rope,
// [16 heads][4] fp32 scales: WgmmaQ's 18,688 bytes in another order.
struct OverlapQ {
  static constexpr unsigned kResidualOffset = smla::kLatentDim / 16 * smla::kMmaM * 16;
  static constexpr unsigned kRopeOffset = 2 * kResidualOffset;
  static constexpr unsigned kScaleOffset = WgmmaQ::kScaleOffset;
};
static_assert(OverlapQ::kRopeOffset == WgmmaQ::kRopeOffset, "the same bytes, another order");

constexpr unsigned kChunkBytes = 64 * 16;  // one 16-byte chunk of every token of the tile
constexpr int kScaleChunk = smla::kFp8ScaleOffset / 16;
constexpr int kRopeChunk = smla::kFp8RopeOffset / 16;

// The score MMAs of one stage, issued and committed (not waited for): per scale group 4 k-steps
// of value and residual into acc[group], the rope's into rope.
__device__ __forceinline__ void issue_scores(const unsigned char* stage, const unsigned char* q,
                                             float (&acc)[4][8], float (&rope)[8]) {
  const unsigned long long k_desc = wgmma::descriptor(stage, kChunkBytes, 128);
  const unsigned long long q_desc = wgmma::descriptor(q, smla::kMmaM * 16, 128);
  constexpr unsigned kResidual = OverlapQ::kResidualOffset >> 4;  // descriptor units
  constexpr unsigned kQRope = OverlapQ::kRopeOffset >> 4;
  wgmma::fence();
#pragma unroll
  for (int group = 0; group < 4; ++group) {
#pragma unroll
    for (int step = 0; step < 4; ++step) {
      const int chunk = (group * 4 + step) * 2;
      const unsigned long long a = k_desc + chunk * (kChunkBytes >> 4);
      wgmma::mma_e4m3_n16_ss(acc[group], a, q_desc + chunk * smla::kMmaM, step);
      wgmma::mma_e4m3_n16_ss(acc[group], a, q_desc + kResidual + chunk * smla::kMmaM, 1);
    }
  }
#pragma unroll
  for (int step = 0; step < 4; ++step) {
    wgmma::mma_bf16_n16_ss(rope, k_desc + (kRopeChunk + 2 * step) * (kChunkBytes >> 4),
                           q_desc + kQRope + 2 * step * smla::kMmaM, step);
  }
  wgmma::commit();
}

// After the wait: scores in log2 units (-inf for masked tokens) and the two tokens' group scales.
__device__ __forceinline__ void finish_scores(const unsigned char* stage,
                                              const float (&q_scale)[4][4], const int* tokens,
                                              float scale_log2, const float (&acc)[4][8],
                                              const float (&rope)[8], float (&s)[8],
                                              float4 (&token_scale)[2]) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int token = token_of_half(half);
    token_scale[half] =
        *reinterpret_cast<const float4*>(stage + kScaleChunk * kChunkBytes + token * 16);
    const float k[4] = {token_scale[half].x, token_scale[half].y, token_scale[half].z,
                        token_scale[half].w};
    const bool valid = tokens[token] >= 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int j = (i / 2) * 4 + half * 2 + i % 2;
      float value = rope[j];
#pragma unroll
      for (int g = 0; g < 4; ++g) value += acc[g][j] * (k[g] * q_scale[(j / 4) * 2 + j % 2][g]);
      s[j] = valid ? value * scale_log2 : ptx::neg_inf();
    }
  }
}

// P.V over the tile for this warp's dims (token_softmax.cuh's pv_from_probs, V from the
// chunk-major stage: ldmatrix.trans of 8 tokens x one 16-byte chunk reads 128 contiguous bytes).
template <int N_TILES>
__device__ __forceinline__ void pv_chunked(const smla::SmemLayout& layout,
                                           const unsigned char* smem, const unsigned char* stage,
                                           const float (&alpha)[2], float (&value)[N_TILES][4]) {
  const int lane = threadIdx.x % 32;
  const int first_dim = (threadIdx.x / 32) * (smla::kLatentDim / 4);
  smla_pipe::rescale_if_moved(alpha, value);
  const unsigned char* a_rows =
      smem + layout.probs_offset +
      ((first_dim / smla::kGroupDim) * smla::kMmaM + lane % 16) * layout.probs_row_stride +
      (lane / 16) * 16;
  const unsigned char* v_rows = stage + ((first_dim + (lane / 16) * 16) / 16) * kChunkBytes +
                                ((lane / 8) % 2 * 8 + lane % 8) * 16;
#pragma unroll
  for (int kb = 0; kb < 4; ++kb) {
    unsigned a[4];
    ptx::ldmatrix_x4(a, a_rows + kb * 32);
#pragma unroll
    for (int n = 0; n < N_TILES; n += 4) {
      unsigned r[4];
      ptx::ldmatrix_x4_trans(r, v_rows + kb * 256 + (n / 2) * kChunkBytes);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        unsigned b0;
        unsigned b1;
        smla_pipe::v_fragment<false, false>(r[half * 2], r[half * 2 + 1], b0, b1);
        ptx::mma_f16_16816(value[n + half * 2], a, b0, b1);
        smla_pipe::v_fragment<false, true>(r[half * 2], r[half * 2 + 1], b0, b1);
        ptx::mma_f16_16816(value[n + half * 2 + 1], a, b0, b1);
      }
    }
  }
}

// Tile t's softmax, P and P.V from its scores s while stage `next`'s score MMAs run (HAS_NEXT:
// the range's last tile has none), then their scores into s. Stats and barriers as
// wgmma_tile.cuh's tile.
template <bool HAS_NEXT>
__device__ __forceinline__ void overlapped_tile(const smla::SmemLayout& layout, unsigned char* smem,
                                                const unsigned char* stage,
                                                const unsigned char* next, const int* next_tokens,
                                                const float (&q_scale)[4][4], float scale_log2,
                                                float (&s)[8], float4 (&token_scale)[2],
                                                TransposedStats& stats,
                                                smla_pipe::Accumulator<smla::kMmaM, 4>& acc) {
  float* max_slab = reinterpret_cast<float*>(smem + layout.stats_offset);
  float scores_acc[4][8];
  float rope[8];
  if constexpr (HAS_NEXT) issue_scores(next, smem + layout.q_offset, scores_acc, rope);
  publish_head_max<4>(s, max_slab);
  ptx::named_barrier_sync(1, 128);
  float alpha[2];
  softmax<4>(s, max_slab, stats, acc.row_max[0], alpha);
  store_probs(layout, smem, s, token_scale);
  ptx::named_barrier_sync(1, 128);
  pv_chunked(layout, smem, stage, alpha, acc.value[0]);
  if constexpr (HAS_NEXT) {
    wgmma::wait<0>();
    finish_scores(next, q_scale, next_tokens, scale_log2, scores_acc, rope, s, token_scale);
  }
}

}  // namespace smla_wgmma
