#pragma once
// The pipelined split kernel's scores (QK) for mma_path 1 and 2; q is prepared in
// pipelined_q.cuh. KV rows stay as they arrived in the ring; tensor-core fragments are made in
// registers:
//  - fp8 KV, f16 path: ldmatrix hands each lane 4 consecutive e4m3 bytes of one token, which two
//    cvts turn into the B fragment of an m16n8k16 MMA if the k order inside each 16-dim chunk is
//    (0,1,4,5,8,9,12,13, 2,3,6,7,10,11,14,15); q is stored in that order once per CTA. The bitwise
//    unpack (kUnpackBits) pairs bytes (0,2) and (1,3) instead, so its q order is the even dims
//    then the odd dims (0,2,4,...,14, 1,3,...,15).
//  - fp8 KV, fp8 path: the same ldmatrix bytes are exactly the e4m3 m16n8k32 B fragment; q is
//    quantized to e4m3 per (head, 128-group) with an fp32 scale, as a value plus its e4m3 residual
//    (one e4m3 term alone moves the output by ~1.7 %: BENCHMARKS.md), two MMAs per k-step.
//  - rope (bf16 in both caches) and bf16 caches use bf16 MMA in the natural order.
#include "sparse_mla_decode/pipelined_q.cuh"

namespace smla_pipe {

__device__ __forceinline__ float group_scale(const unsigned char* ring_row, int group) {
  return reinterpret_cast<const float*>(ring_row + smla::kFp8ScaleOffset)[group];
}

// n-tiles a warp computes together: each q fragment loaded from shared memory then feeds NG
// independent MMA chains (q traffic / NG, NG-fold ILP), as long as every warp still gets an item.
__host__ __device__ constexpr int score_n_group(int m_tiles, int n_tiles, int ksplit, int warps) {
  int group = 4;
  while (group > 1 && (n_tiles % group != 0 || m_tiles * (n_tiles / group) * ksplit < warps)) {
    group /= 2;
  }
  return group;
}

// One 64-dim latent segment of q . K for one m-tile and NG n-tiles, unscaled (and / 256 when
// K_BITS: see smla::kUnpackBits).
template <int KV_FORMAT, int MMA, int NG, bool K_BITS>
__device__ __forceinline__ void latent_segment(float (&acc)[NG][4], const unsigned char* a_row,
                                               const unsigned char* b_row, int b_tile_stride,
                                               int segment) {
  if (KV_FORMAT == smla::kFp8DsMla) {
    unsigned b[NG][4];
#pragma unroll
    for (int g = 0; g < NG; ++g) {
      ptx::ldmatrix_x4(b[g], b_row + g * b_tile_stride + segment * 64);  // 4 x (8 tok x 16 B)
    }
    if (MMA == smla::kMmaFp8) {
#pragma unroll
      for (int step = 0; step < 2; ++step) {
        unsigned a_hi[4];
        unsigned a_lo[4];
        ptx::ldmatrix_x4(a_hi, a_row + segment * 64 + step * 32);
        ptx::ldmatrix_x4(a_lo, a_row + smla::kPipelinedQResidualOffset + segment * 64 + step * 32);
#pragma unroll
        for (int g = 0; g < NG; ++g) {
          ptx::mma_e4m3_16832(acc[g], a_hi, b[g][step * 2], b[g][step * 2 + 1]);
          ptx::mma_e4m3_16832(acc[g], a_lo, b[g][step * 2], b[g][step * 2 + 1]);
        }
      }
    } else {
#pragma unroll
      for (int chunk = 0; chunk < 4; ++chunk) {
        unsigned a[4];
        ptx::ldmatrix_x4(a, a_row + (segment * 4 + chunk) * 32);
#pragma unroll
        for (int g = 0; g < NG; ++g) {
          unsigned b0;
          unsigned b1;
          if (K_BITS) {
            ptx::e4m3x4_to_f16x4_bits(b[g][chunk], b0, b1);
          } else {
            ptx::e4m3x4_to_f16x4(b[g][chunk], b0, b1);
          }
          ptx::mma_f16_16816(acc[g], a, b0, b1);
        }
      }
    }
  } else {
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {
      const int k_step = segment * 4 + pair * 2;
      unsigned a0[4];
      unsigned a1[4];
      ptx::ldmatrix_x4(a0, a_row + k_step * 32);
      ptx::ldmatrix_x4(a1, a_row + (k_step + 1) * 32);
#pragma unroll
      for (int g = 0; g < NG; ++g) {
        unsigned b[4];
        ptx::ldmatrix_x4(b, b_row + g * b_tile_stride + k_step * 32);
        ptx::mma_bf16_16816(acc[g], a0, b[0], b[1]);
        ptx::mma_bf16_16816(acc[g], a1, b[2], b[3]);
      }
    }
  }
}

// The 64 rope dims (bf16 in both caches): four bf16 k16 steps.
template <int NG>
__device__ __forceinline__ void rope_segment(float (&acc)[NG][4], const unsigned char* a_rope,
                                             const unsigned char* b_rope, int b_tile_stride) {
#pragma unroll
  for (int pair = 0; pair < 2; ++pair) {
    unsigned a0[4];
    unsigned a1[4];
    ptx::ldmatrix_x4(a0, a_rope + pair * 64);
    ptx::ldmatrix_x4(a1, a_rope + pair * 64 + 32);
#pragma unroll
    for (int g = 0; g < NG; ++g) {
      unsigned b[4];
      ptx::ldmatrix_x4(b, b_rope + g * b_tile_stride + pair * 64);
      ptx::mma_bf16_16816(acc[g], a0, b[0], b[1]);
      ptx::mma_bf16_16816(acc[g], a1, b[2], b[3]);
    }
  }
}

template <int V>
struct SliceTag {
  static constexpr int value = V;
};

// Calls f(SliceTag<slice>{}) for a run-time slice < KSPLIT, so that each slice's segment loop is
// compiled for its own segments: with a run-time slice the compiler kept a run-time switch over
// the segments with generic 64-bit addresses (BENCHMARKS.md section 7).
template <int S, int KSPLIT, typename F>
__device__ __forceinline__ void with_slice(int slice, F&& f) {
  if constexpr (S + 1 < KSPLIT) {
    if (slice != S) {
      with_slice<S + 1, KSPLIT>(slice, f);
      return;
    }
  }
  f(SliceTag<S>{});
}

// Latent segments per loop body of a score item. Measured on the H200 (BENCHMARKS.md section 7,
// same run): 1 / 2 / 4 bodies gave 65.19 / 63.54 / 70.14 us at batch 128 and 42.09 / 41.78 / 45.84
// at 64 (ptxas, sm_90: 133 / 147 / 182 registers for the batch-128 winner).
constexpr int kSegmentUnroll = 2;

// One score item's dot products: rows of m-tile m_tile x NG n-tiles from first_n, the segments of
// slice SLICE, in the MMA accumulator layout (lane g, c: rows g, g+8 x tokens 2c, 2c+1 of each
// n-tile), unscaled.
template <int SLICE, int KSPLIT, int NG, int KV_FORMAT, int MMA, int UNPACK>
__device__ __forceinline__ void score_totals(const smla::SmemLayout& layout,
                                             const unsigned char* smem, const unsigned char* ring,
                                             int m_tile, int first_n, float (&total)[NG][4]) {
  constexpr bool kFp8 = KV_FORMAT == smla::kFp8DsMla;
  constexpr unsigned kKRope = kFp8 ? smla::kFp8RopeOffset : smla::kLatentDim * 2;
  constexpr bool kKBits = smla::unpack_k_bits(UNPACK) && kFp8 && MMA == smla::kMmaRegF16;
  const int lane = threadIdx.x % 32;
  const int b_tile_stride = 8 * layout.ring_row_stride;
  const float* q_scale = reinterpret_cast<const float*>(smem + layout.q_scale_offset);
  const unsigned char* a_row =
      smem + layout.q_offset + (m_tile * 16 + lane % 16) * layout.q_row_stride + (lane / 16) * 16;
  const unsigned char* b_row =
      ring + (first_n * 8 + lane % 8) * layout.ring_row_stride + (lane / 8) * 16;
  const int row = m_tile * 16 + lane / 4;
#pragma unroll
  for (int g = 0; g < NG; ++g) total[g][0] = total[g][1] = total[g][2] = total[g][3] = 0.f;
    // The latent segments of this slice in a loop of kSegmentUnroll bodies (fully unrolled, the
    // hoisted loads of all 8 segments took the batch-128 winner from 168 to 245 registers), the
    // rope segment (the last) after it where it belongs to this slice.
#pragma unroll kSegmentUnroll
  for (int segment = SLICE; segment < smla::kScoreSegments - 1; segment += KSPLIT) {
    float acc[NG][4] = {};
    latent_segment<KV_FORMAT, MMA, NG, kKBits>(acc, a_row, b_row, b_tile_stride, segment);
    const int group = segment / 2;
    float q_lo = kKBits ? smla::kBitsUnpackScale : 1.f;
    float q_hi = q_lo;
    if (MMA == smla::kMmaFp8) {
      q_lo = q_scale[row * smla::kNumGroups + group];
      q_hi = q_scale[(row + 8) * smla::kNumGroups + group];
    }
#pragma unroll
    for (int g = 0; g < NG; ++g) {
      float k0 = 1.f;
      float k1 = 1.f;
      if (kFp8) {
        const int col = (first_n + g) * 8 + (lane % 4) * 2;
        k0 = group_scale(ring + col * layout.ring_row_stride, group);
        k1 = group_scale(ring + (col + 1) * layout.ring_row_stride, group);
      }
      total[g][0] += acc[g][0] * (k0 * q_lo);
      total[g][1] += acc[g][1] * (k1 * q_lo);
      total[g][2] += acc[g][2] * (k0 * q_hi);
      total[g][3] += acc[g][3] * (k1 * q_hi);
    }
  }
  if constexpr ((smla::kScoreSegments - 1) % KSPLIT == SLICE) {
    float acc[NG][4] = {};
    rope_segment<NG>(acc, a_row + smla::kPipelinedQRopeOffset, b_row + kKRope, b_tile_stride);
#pragma unroll
    for (int g = 0; g < NG; ++g) {
#pragma unroll
      for (int j = 0; j < 4; ++j) total[g][j] += acc[g][j];
    }
  }
}

// Dot products in log2 units (x scale_log2), -inf for the masked tokens (id -1).
template <int NG>
__device__ __forceinline__ void mask_and_scale(const int* tokens, int first_n, float scale_log2,
                                               float (&total)[NG][4]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    const int col = (first_n + g) * 8 + (lane % 4) * 2;
    const bool valid0 = tokens[col] >= 0;
    const bool valid1 = tokens[col + 1] >= 0;
    total[g][0] = valid0 ? total[g][0] * scale_log2 : ptx::neg_inf();
    total[g][1] = valid1 ? total[g][1] * scale_log2 : ptx::neg_inf();
    total[g][2] = valid0 ? total[g][2] * scale_log2 : ptx::neg_inf();
    total[g][3] = valid1 ? total[g][3] * scale_log2 : ptx::neg_inf();
  }
}

// One score item into its slice's slab of the score buffer.
template <int SLICE, int BLOCK_H, int KSPLIT, int NG, int KV_FORMAT, int MMA, int UNPACK>
__device__ __forceinline__ void score_item(const smla::SmemLayout& layout,
                                           const unsigned char* smem, const unsigned char* ring,
                                           const int* tokens, float* scores, float scale_log2,
                                           int m_tile, int first_n) {
  const int lane = threadIdx.x % 32;
  float total[NG][4];
  score_totals<SLICE, KSPLIT, NG, KV_FORMAT, MMA, UNPACK>(layout, smem, ring, m_tile, first_n,
                                                          total);
  mask_and_scale<NG>(tokens, first_n, scale_log2, total);
  const int row = m_tile * 16 + lane / 4;
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    const int col = (first_n + g) * 8 + (lane % 4) * 2;
    float* slab = scores + (SLICE * BLOCK_H + row) * layout.scores_row_stride + col;
    *reinterpret_cast<float2*>(slab) = make_float2(total[g][0], total[g][1]);
    *reinterpret_cast<float2*>(slab + 8 * layout.scores_row_stride) =
        make_float2(total[g][2], total[g][3]);
  }
}

// Scores S[h][t] * scale_log2 (-inf for invalid tokens) into the score buffer, one slab per
// segment slice; warps take (m-tile, group of NG n-tiles, slice) items round-robin. The segment
// loop is unrolled so that consecutive segments' MMA chains interleave.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int KV_FORMAT, int MMA, int UNPACK>
__device__ __forceinline__ void compute_scores(const smla::SmemLayout& layout,
                                               const unsigned char* smem, const unsigned char* ring,
                                               const int* tokens, float* scores, float scale_log2) {
  constexpr int kMTiles = BLOCK_H / smla::kMmaM;
  constexpr int kNTiles = BLOCK_T / smla::kMmaN;
  constexpr int kKSplit = smla::score_ksplit(BLOCK_T, BLOCK_H, NUM_WARPS);
  constexpr int kNG = score_n_group(kMTiles, kNTiles, kKSplit, NUM_WARPS);
  constexpr int kGroups = kNTiles / kNG;
  const int warp = threadIdx.x / 32;
  for (int item = warp; item < kMTiles * kGroups * kKSplit; item += NUM_WARPS) {
    const int m_tile = item % kMTiles;
    const int first_n = ((item / kMTiles) % kGroups) * kNG;
    with_slice<0, kKSplit>(item / (kMTiles * kGroups), [&](auto slice) {
      score_item<decltype(slice)::value, BLOCK_H, kKSplit, kNG, KV_FORMAT, MMA, UNPACK>(
          layout, smem, ring, tokens, scores, scale_log2, m_tile, first_n);
    });
  }
}

}  // namespace smla_pipe
