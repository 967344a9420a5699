#pragma once
// A consumer tile of the token-softmax structure (token_softmax.cuh: 4 consumer warps, BLOCK_T 64,
// BLOCK_H 16, fp8 cache) whose scores come from warpgroup MMAs (sm_90a) instead of f16 mma.sync:
//  - K stays e4m3: each warp's ldmatrix of its 16 tokens' ring rows (656 bytes, as the producers
//    copied them) is the A fragment of an m64n32k32 e4m3 MMA; no conversion, no f16 MMA;
//  - q is e4m3 value + e4m3 residual per (head, 128-group) scale, as mma_path 2, stacked as the
//    32 rows of one B ([value; residual]) in the canonical K-major layout (WgmmaQ below);
//  - one accumulator per scale group (scaled in fp32 by the token's and the head's scales), the
//    rope dims by bf16 MMA (m64n16k16).
// The result is S transposed (rows: tokens, columns: heads), so the softmax runs in that frame
// (stats per head in TransposedStats) and P goes to the probs slab through a transposing matrix
// store; P.V is token_softmax.cuh's (pv_from_probs). Not a kernel path: bench/device/qk_wgmma.cu
// measures it against the production tile (BENCHMARKS.md section 7, thirtieth session: the scores
// 34 % faster, the tile 4 %, at 210 registers); a kernel would also need sm_90a NVRTC targets.
#include "sparse_mla_decode/token_softmax.cuh"
#include "wgmma.cuh"

namespace smla_wgmma {

// q in shared memory: [32 latent chunks][32 rows: 16 values, 16 residuals][16 B] e4m3, then
// [8 rope chunks][16 heads][16 B] bf16, then [16 heads][4 groups] fp32 scales: 18,688 bytes, the
// mma_path 1 q rows' size (16 x kBf16RowStride).
struct WgmmaQ {
  static constexpr int kRows = 2 * smla::kMmaM;
  static constexpr unsigned kRopeOffset = smla::kLatentDim / 16 * kRows * 16;
  static constexpr unsigned kScaleOffset = kRopeOffset + smla::kRopeDim * 2 / 16 * smla::kMmaM * 16;
  static constexpr unsigned kBytes = kScaleOffset + smla::kMmaM * smla::kNumGroups * 4;
};
static_assert(WgmmaQ::kBytes == smla::kMmaM * smla::kBf16RowStride, "fits mma_path 1's q rows");

// This thread's 8 score elements j: token 16 warp + lane / 4 + 8 ((j / 2) % 2) of the tile, head
// 8 (j / 4) + 2 (lane % 4) + j % 2; head slot h (0..3) is elements j = (h / 2) 4 + h % 2 and j + 2.
__device__ __forceinline__ int head_of_slot(int slot) {
  return 8 * (slot / 2) + 2 * (threadIdx.x % 4) + slot % 2;
}
__device__ __forceinline__ int first_element(int slot) { return (slot / 2) * 4 + slot % 2; }
__device__ __forceinline__ int token_of_half(int half) {
  return 16 * static_cast<int>(threadIdx.x / 32) + static_cast<int>(threadIdx.x % 32) / 4 +
         8 * half;
}

// The online softmax's running maxima and partial sums of this thread's 4 heads (the scores'
// frame); the maxima equal the accumulator frame's (both take the same tile maxima).
struct TransposedStats {
  float max[4];
  float sum[4];
};
__device__ __forceinline__ void clear(TransposedStats& stats) {
#pragma unroll
  for (int h = 0; h < 4; ++h) {
    stats.max[h] = ptx::neg_inf();
    stats.sum[h] = 0.f;
  }
}

// The row's q scales of this thread's 4 heads (registers for the whole row).
__device__ __forceinline__ void load_q_scales(const unsigned char* q, float (&q_scale)[4][4]) {
  const float* scales = reinterpret_cast<const float*>(q + WgmmaQ::kScaleOffset);
#pragma unroll
  for (int h = 0; h < 4; ++h) {
#pragma unroll
    for (int g = 0; g < 4; ++g) q_scale[h][g] = scales[head_of_slot(h) * 4 + g];
  }
}

// The tile's unscaled dot products: per scale group, 4 k-steps of [value; residual] products
// (columns 0-15 and 16-31 of acc[group]); the rope's in rope. A group's fragments load into one
// of two register buffers while the previous group's MMAs run. (Two groups' MMAs interleaved, so
// that no two consecutive MMAs share an accumulator, took as long: BENCHMARKS.md section 7,
// thirtieth session.)
__device__ __forceinline__ void dot_products(const unsigned char* ring, int row_stride,
                                             const unsigned char* q, float (&acc)[4][16],
                                             float (&rope)[8]) {
  const int lane = threadIdx.x % 32;
  const unsigned char* rows =
      ring + (16 * (threadIdx.x / 32) + lane % 8 + 8 * ((lane / 8) % 2)) * row_stride +
      16 * (lane / 16);
  const unsigned long long q_desc = wgmma::descriptor(q, WgmmaQ::kRows * 16, 128);
  const unsigned long long rope_desc =
      wgmma::descriptor(q + WgmmaQ::kRopeOffset, smla::kMmaM * 16, 128);
  unsigned a[2][4][4];
#pragma unroll
  for (int group = 0; group < 4; ++group) {
    if (group >= 2) wgmma::wait<1>();  // group - 2 done: its buffer is free
#pragma unroll
    for (int step = 0; step < 4; ++step) {
      ptx::ldmatrix_x4(a[group % 2][step], rows + (group * 4 + step) * 32);
    }
    wgmma::fence();
#pragma unroll
    for (int step = 0; step < 4; ++step) {
      const int chunk = (group * 4 + step) * 2;  // two 16-byte chunks a k-step
      wgmma::mma_e4m3_n32(acc[group], a[group % 2][step], q_desc + chunk * WgmmaQ::kRows, step);
    }
    wgmma::commit();
  }
  wgmma::wait<1>();
#pragma unroll
  for (int step = 0; step < 4; ++step) {
    ptx::ldmatrix_x4(a[0][step], rows + smla::kFp8RopeOffset + step * 32);
  }
  wgmma::fence();
#pragma unroll
  for (int step = 0; step < 4; ++step) {
    wgmma::mma_bf16_n16(rope, a[0][step], rope_desc + step * 2 * smla::kMmaM, step);
  }
  wgmma::commit();
  wgmma::wait<0>();
}

// Scores in log2 units (x scale_log2; -inf for masked tokens) of this thread's elements, and the
// group scales of its two tokens (the K and V scales: one per token and group).
__device__ __forceinline__ void scores(const unsigned char* ring, int row_stride,
                                       const unsigned char* q, const float (&q_scale)[4][4],
                                       const int* tokens, float scale_log2, float (&s)[8],
                                       float4 (&token_scale)[2]) {
  float acc[4][16];
  float rope[8];
  dot_products(ring, row_stride, q, acc, rope);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int token = token_of_half(half);
    token_scale[half] =
        *reinterpret_cast<const float4*>(ring + token * row_stride + smla::kFp8ScaleOffset);
    const float k[4] = {token_scale[half].x, token_scale[half].y, token_scale[half].z,
                        token_scale[half].w};
    const bool valid = tokens[token] >= 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int j = (i / 2) * 4 + half * 2 + i % 2;
      float value = rope[j];
#pragma unroll
      for (int g = 0; g < 4; ++g) {
        value += (acc[g][j] + acc[g][j + 8]) * (k[g] * q_scale[(j / 4) * 2 + j % 2][g]);
      }
      s[j] = valid ? value * scale_log2 : ptx::neg_inf();
    }
  }
}

// Step 1 in this frame: each head's maximum over this warp's 16 tokens, into max_slab[head][warp].
template <int NUM_WARPS>
__device__ __forceinline__ void publish_head_max(const float (&s)[8], float* max_slab) {
#pragma unroll
  for (int h = 0; h < 4; ++h) {
    float value = fmaxf(s[first_element(h)], s[first_element(h) + 2]);
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 4));
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 8));
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 16));
    if (threadIdx.x % 32 < 4) max_slab[head_of_slot(h) * NUM_WARPS + threadIdx.x / 32] = value;
  }
}

// Step 2: s becomes P against the tile's maxima (this thread's heads), the partial sums move on;
// the accumulator frame's alpha (rows g, g + 8) from the same maxima.
template <int NUM_WARPS>
__device__ __forceinline__ void softmax(float (&s)[8], const float* max_slab,
                                        TransposedStats& stats, float (&row_max)[2],
                                        float (&alpha)[2]) {
#pragma unroll
  for (int h = 0; h < 4; ++h) {
    float head_alpha;
    const float base = smla_pipe::online_max_step(
        stats.max[h], smla_pipe::tile_row_max<NUM_WARPS>(max_slab, head_of_slot(h)), head_alpha);
    const int j = first_element(h);
    s[j] = ptx::exp2_approx(s[j] - base);
    s[j + 2] = ptx::exp2_approx(s[j + 2] - base);
    stats.sum[h] = stats.sum[h] * head_alpha + s[j] + s[j + 2];
  }
  const int g = static_cast<int>(threadIdx.x % 32) / 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    smla_pipe::online_max_step(
        row_max[half], smla_pipe::tile_row_max<NUM_WARPS>(max_slab, g + 8 * half), alpha[half]);
  }
}

// Step 3: P x each token's V scale, one copy per V scale group, as f16 into the probs slab
// ([copy][head][token], as token_softmax.cuh's store_probs): the four 8x8 blocks of this warp's
// 16 tokens x 16 heads, stored transposed.
__device__ __forceinline__ void store_probs(const smla::SmemLayout& layout, unsigned char* smem,
                                            const float (&p)[8], const float4 (&token_scale)[2]) {
  const int lane = threadIdx.x % 32;
  const int block = lane / 8;  // the matrix whose row this lane addresses: tokens block % 2,
                               // heads block / 2
  unsigned char* row = smem + layout.probs_offset +
                       (8 * (block / 2) + lane % 8) * layout.probs_row_stride +
                       (16 * (threadIdx.x / 32) + 8 * (block % 2)) * 2;
#pragma unroll
  for (int copy = 0; copy < smla::kNumGroups; ++copy) {
    const float v0 = reinterpret_cast<const float*>(&token_scale[0])[copy];
    const float v1 = reinterpret_cast<const float*>(&token_scale[1])[copy];
    const unsigned regs[4] = {
        ptx::pack_f16x2(p[0] * v0, p[1] * v0), ptx::pack_f16x2(p[2] * v1, p[3] * v1),
        ptx::pack_f16x2(p[4] * v0, p[5] * v0), ptx::pack_f16x2(p[6] * v1, p[7] * v1)};
    wgmma::stmatrix_x4_trans(row + copy * smla::kMmaM * layout.probs_row_stride, regs);
  }
}

// One tile: scores by wgmma, the maxima's barrier, softmax and P, P's barrier, P.V
// (token_softmax.cuh's pv_from_probs).
template <int NUM_WARPS>
__device__ __forceinline__ void tile(const smla::SmemLayout& layout, unsigned char* smem,
                                     const unsigned char* ring, const int* tokens,
                                     const float (&q_scale)[4][4], float scale_log2,
                                     TransposedStats& stats,
                                     smla_pipe::Accumulator<smla::kMmaM, NUM_WARPS>& acc) {
  static_assert(NUM_WARPS == 4, "one warpgroup: 64 tokens, 16 a warp");
  float* max_slab = reinterpret_cast<float*>(smem + layout.stats_offset);
  float s[8];
  float4 token_scale[2];
  scores(ring, static_cast<int>(layout.ring_row_stride), smem + layout.q_offset, q_scale, tokens,
         scale_log2, s, token_scale);
  publish_head_max<NUM_WARPS>(s, max_slab);
  ptx::named_barrier_sync(1, NUM_WARPS * 32);
  float alpha[2];
  softmax<NUM_WARPS>(s, max_slab, stats, acc.row_max[0], alpha);
  store_probs(layout, smem, s, token_scale);
  ptx::named_barrier_sync(1, NUM_WARPS * 32);
  smla_pipe::pv_from_probs<64, NUM_WARPS, smla::kFp8DsMla, smla::kUnpackCvt>(layout, smem, ring,
                                                                             alpha, acc.value[0]);
}

// At a row's end: the row sums over every warp's tokens into the accumulator frame (each quad's
// first lane holds the row's total, as token_softmax.cuh's gather_row_sums leaves them).
template <int NUM_WARPS>
__device__ __forceinline__ void gather_row_sums(
    const smla::SmemLayout& layout, unsigned char* smem, const TransposedStats& stats,
    smla_pipe::Accumulator<smla::kMmaM, NUM_WARPS>& acc) {
  float* sum_slab = reinterpret_cast<float*>(smem + layout.stats_offset) + smla::kMmaM * NUM_WARPS;
#pragma unroll
  for (int h = 0; h < 4; ++h) {
    float sum = stats.sum[h];
    sum += __shfl_xor_sync(0xffffffffu, sum, 4);
    sum += __shfl_xor_sync(0xffffffffu, sum, 8);
    sum += __shfl_xor_sync(0xffffffffu, sum, 16);
    if (threadIdx.x % 32 < 4) sum_slab[head_of_slot(h) * NUM_WARPS + threadIdx.x / 32] = sum;
  }
  ptx::named_barrier_sync(1, NUM_WARPS * 32);
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float* sums = sum_slab + (lane / 4 + half * 8) * NUM_WARPS;
    float total = 0.f;
#pragma unroll
    for (int w = 0; w < NUM_WARPS; ++w) total += sums[w];
    acc.row_sum[0][half] = lane % 4 == 0 ? total : 0.f;
  }
}

}  // namespace smla_wgmma
