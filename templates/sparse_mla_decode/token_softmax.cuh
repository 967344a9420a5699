#pragma once
// Token softmax (smla::token_softmax): the pipelined f16 tile of fp8 caches when each consumer
// warp scores all 16 heads of its own NG n-tiles of tokens (warp w: tokens [8 NG w, 8 NG (w + 1))).
// Instead of publishing the scores and having every warp re-read and exponentiate the whole tile
// (pipelined_pv.cuh's softmax_pv), a warp:
//  1. publishes its row maxima ([row][warp] in the stats slab), then the consumers' barrier;
//  2. takes the tile's row maxima from every warp's, rescales as the online softmax does (the same
//     maxima in every warp, so the same alpha and running max), exponentiates its own tokens only
//     and adds them to its own partial row sums;
//  3. stores its P as 16-bit values, one copy per V scale group (x that group's scale of each
//     token); then the consumers' barrier again;
//  4. reads its dims' copy back as A fragments (ldmatrix) for P.V.
// A warp exponentiates 16 x 8 NG scores instead of 16 x BLOCK_T, and the scores never go through
// shared memory. At a row's end the warps' partial row sums are added through the stats slab
// (gather_row_sums). Both slabs are single-buffered: a warp writes the next tile's maxima or P only
// after a barrier that every warp passes once done reading this tile's.
#include "sparse_mla_decode/pipelined_pv.cuh"

namespace smla_pipe {

// This warp's first n-tile of scores (item = warp: one m-tile, kNTiles / NUM_WARPS n-tiles each).
template <int NG>
__device__ __forceinline__ int own_first_n() {
  return static_cast<int>(threadIdx.x / 32) * NG;
}

// Step 1: the maxima of rows g and g+8 over this warp's tokens, into max_slab[row][warp].
template <int NUM_WARPS, int NG>
__device__ __forceinline__ void publish_row_max(const float (&s)[NG][4], float* max_slab) {
  float lo = ptx::neg_inf();
  float hi = ptx::neg_inf();
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    lo = fmaxf(lo, fmaxf(s[g][0], s[g][1]));
    hi = fmaxf(hi, fmaxf(s[g][2], s[g][3]));
  }
  lo = quad_max(lo);
  hi = quad_max(hi);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane % 4 == 0) {
    max_slab[(lane / 4) * NUM_WARPS + warp] = lo;
    max_slab[(lane / 4 + 8) * NUM_WARPS + warp] = hi;
  }
}

// The tile's maximum of `row` over every warp's tokens (NUM_WARPS is 4 or 8: float4 reads).
template <int NUM_WARPS>
__device__ __forceinline__ float tile_row_max(const float* max_slab, int row) {
  static_assert(NUM_WARPS % 4 == 0, "the row's maxima are read as float4");
  const float4* maxima = reinterpret_cast<const float4*>(max_slab + row * NUM_WARPS);
  float value = ptx::neg_inf();
#pragma unroll
  for (int i = 0; i < NUM_WARPS / 4; ++i) {
    const float4 four = maxima[i];
    value = fmaxf(value, fmaxf(fmaxf(four.x, four.y), fmaxf(four.z, four.w)));
  }
  return value;
}

// Step 2, softmax_rows for this warp's tokens against the tile's maxima: s becomes P, alpha the
// accumulator's rescale; row_sum is this lane's share of the warp's partial sum.
template <int NUM_WARPS, int NG>
__device__ __forceinline__ void softmax_own_tokens(float (&s)[NG][4], const float* max_slab,
                                                   float (&row_max)[2], float (&row_sum)[2],
                                                   float (&alpha)[2]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float base = online_max_step(
        row_max[half], tile_row_max<NUM_WARPS>(max_slab, lane / 4 + half * 8), alpha[half]);
    float sum = 0.f;
#pragma unroll
    for (int g = 0; g < NG; ++g) {
#pragma unroll
      for (int j = half * 2; j < half * 2 + 2; ++j) {
        s[g][j] = ptx::exp2_approx(s[g][j] - base);
        sum += s[g][j];
      }
    }
    row_sum[half] = row_sum[half] * alpha[half] + sum;
  }
}

// Step 3: this warp's P into the probs slab, rows g and g+8, its tokens' columns; per copy (V scale
// group) x the group's scale of each token, as f16 (the f16 MMA's type).
template <int NG>
__device__ __forceinline__ void store_probs(const smla::SmemLayout& layout, unsigned char* smem,
                                            const unsigned char* ring, const float (&p)[NG][4]) {
  const int lane = threadIdx.x % 32;
  const int first_n = own_first_n<NG>();
#pragma unroll
  for (int copy = 0; copy < smla::kNumGroups; ++copy) {
    unsigned char* rows =
        smem + layout.probs_offset + (copy * smla::kMmaM + lane / 4) * layout.probs_row_stride;
#pragma unroll
    for (int g = 0; g < NG; ++g) {
      const int col = (first_n + g) * 8 + (lane % 4) * 2;
      const float v0 = group_scale(ring + col * layout.ring_row_stride, copy);
      const float v1 = group_scale(ring + (col + 1) * layout.ring_row_stride, copy);
      *reinterpret_cast<unsigned*>(rows + col * 2) = ptx::pack_f16x2(p[g][0] * v0, p[g][1] * v1);
      *reinterpret_cast<unsigned*>(rows + 8 * layout.probs_row_stride + col * 2) =
          ptx::pack_f16x2(p[g][2] * v0, p[g][3] * v1);
    }
  }
}

// Step 4: P.V over the tile for this warp's dims, P from its V group's copy as m16n8k16 A fragments
// (ldmatrix x4: rows 0-7 / 8-15 x tokens 0-7 / 8-15 of each 16-token block); the accumulator is
// rescaled by alpha first (skipped when no row's maximum moved).
template <int BLOCK_T, int NUM_WARPS, int KV_FORMAT, int UNPACK, int N_TILES>
__device__ __forceinline__ void pv_from_probs(const smla::SmemLayout& layout,
                                              const unsigned char* smem, const unsigned char* ring,
                                              const float (&alpha)[2], float (&value)[N_TILES][4]) {
  const int lane = threadIdx.x % 32;
  const int first_dim = (threadIdx.x / 32) * (smla::kLatentDim / NUM_WARPS);
  rescale_if_moved(alpha, value);
  const int copy = first_dim / smla::kGroupDim;
  const unsigned char* a_rows = smem + layout.probs_offset +
                                (copy * smla::kMmaM + lane % 16) * layout.probs_row_stride +
                                (lane / 16) * 16;
#pragma unroll
  for (int kb = 0; kb < BLOCK_T / 16; ++kb) {
    unsigned a[4];
    ptx::ldmatrix_x4(a, a_rows + kb * 32);
    pv_block_16bit<KV_FORMAT, NUM_WARPS, N_TILES, smla::unpack_v_bits(UNPACK)>(
        value, a, ring + kb * 16 * layout.ring_row_stride, layout.ring_row_stride, first_dim);
  }
}

// One tile the token-softmax way (steps 1-4): scores of this warp's tokens, the maxima's barrier,
// softmax and P, P's barrier, P.V. `frees_q` as in consume_tile: after the first barrier every
// warp is past the tile's scores, so q may be replaced.
template <int BLOCK_T, int NUM_WARPS, int KV_FORMAT, int UNPACK>
__device__ __forceinline__ void token_softmax_tile(const smla::SmemLayout& layout,
                                                   unsigned char* smem, const unsigned char* ring,
                                                   const int* tokens, float scale_log2,
                                                   unsigned long long* q_free, bool frees_q,
                                                   Accumulator<smla::kMmaM, NUM_WARPS>& acc) {
  constexpr int kNG = BLOCK_T / smla::kMmaN / NUM_WARPS;
  static_assert(smla::token_softmax(BLOCK_T, smla::kMmaM, NUM_WARPS, smla::kMmaRegF16, KV_FORMAT) &&
                    score_n_group(1, BLOCK_T / smla::kMmaN, 1, NUM_WARPS) == kNG,
                "one score item a warp: all 16 heads of its own kNG n-tiles");
  constexpr int kThreads = NUM_WARPS * 32;
  float* max_slab = reinterpret_cast<float*>(smem + layout.stats_offset);
  float s[kNG][4];
  score_totals<0, 1, kNG, KV_FORMAT, smla::kMmaRegF16, UNPACK>(layout, smem, ring, 0,
                                                               own_first_n<kNG>(), s);
  mask_and_scale<kNG>(tokens, own_first_n<kNG>(), scale_log2, s);
  publish_row_max<NUM_WARPS, kNG>(s, max_slab);
  ptx::named_barrier_sync(1, kThreads);
  if (frees_q && threadIdx.x % 32 == 0) ptx::mbarrier_arrive(q_free);
  float alpha[2];
  softmax_own_tokens<NUM_WARPS, kNG>(s, max_slab, acc.row_max[0], acc.row_sum[0], alpha);
  store_probs<kNG>(layout, smem, ring, s);
  ptx::named_barrier_sync(1, kThreads);
  pv_from_probs<BLOCK_T, NUM_WARPS, KV_FORMAT, UNPACK>(layout, smem, ring, alpha, acc.value[0]);
}

// At a row's end: the row sums over every warp's tokens. Each warp's quad-summed partial goes to
// the sum slab ([row][warp], after the maxima); after the consumers' barrier each quad's first lane
// holds the row's total and the others 0, so for_each_output's quad sum gives the total.
template <int NUM_WARPS>
__device__ __forceinline__ void gather_row_sums(const smla::SmemLayout& layout, unsigned char* smem,
                                                Accumulator<smla::kMmaM, NUM_WARPS>& acc) {
  float* sum_slab = reinterpret_cast<float*>(smem + layout.stats_offset) + smla::kMmaM * NUM_WARPS;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float sum = acc.row_sum[0][half];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    if (lane % 4 == 0) sum_slab[(lane / 4 + half * 8) * NUM_WARPS + warp] = sum;
  }
  ptx::named_barrier_sync(1, NUM_WARPS * 32);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float* sums = sum_slab + (lane / 4 + half * 8) * NUM_WARPS;
    float total = 0.f;
#pragma unroll
    for (int w = 0; w < NUM_WARPS; ++w) total += sums[w];
    acc.row_sum[0][half] = lane % 4 == 0 ? total : 0.f;
  }
}

}  // namespace smla_pipe
