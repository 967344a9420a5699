#pragma once
// The split kernel's (split.cuh) scores of one tile through shared memory, and its online softmax
// over them.
#include "common/ptx.cuh"
#include "sparse_mla_decode/kv_format.cuh"
#include "sparse_mla_decode/layout.h"

namespace smla_detail {

// Partial scores S[h][t] = q[h] . K[t] for this warp's (m-tile, n-tile, segment slice) items,
// written to the fp32 scores area, one slab per segment slice.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int KV_FORMAT>
__device__ __forceinline__ void compute_scores(const smla::SmemLayout& layout, unsigned char* smem,
                                               const unsigned char* ring,
                                               const unsigned char* k_tile, int k_row_stride) {
  using Kv = KvTraits<KV_FORMAT>;
  constexpr int kMTiles = BLOCK_H / smla::kMmaM;
  constexpr int kNTiles = BLOCK_T / smla::kMmaN;
  constexpr int kKSplit = smla::score_ksplit(BLOCK_T, BLOCK_H, NUM_WARPS);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const unsigned char* q_tile = smem + layout.q_offset;
  float* scores = reinterpret_cast<float*>(smem + layout.scores_offset);
  for (int item = warp; item < kMTiles * kNTiles * kKSplit; item += NUM_WARPS) {
    const int m_tile = item % kMTiles;
    const int n_tile = (item / kMTiles) % kNTiles;
    const int slice = item / (kMTiles * kNTiles);
    float total[4] = {0.f, 0.f, 0.f, 0.f};
    // ldmatrix row addresses: A (q) rows by lane%16, 8-column half by lane/16; B (K) rows are the
    // n-tile's 8 tokens, lane/8 picks which 8 of the 32 dims of two k-steps.
    const unsigned char* a_row =
        q_tile + (m_tile * 16 + lane % 16) * layout.q_row_stride + (lane / 16) * 16;
    const unsigned char* b_row = k_tile + (n_tile * 8 + lane % 8) * k_row_stride + (lane / 8) * 16;
    for (int segment = slice; segment < smla::kScoreSegments; segment += kKSplit) {
      float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int pair = 0; pair < smla::kKStepsPerSegment / 2; ++pair) {
        const int k_step = segment * smla::kKStepsPerSegment + pair * 2;
        unsigned b[4];
        ptx::ldmatrix_x4(b, b_row + k_step * 32);
        unsigned a0[4];
        ptx::ldmatrix_x4(a0, a_row + k_step * 32);
        Kv::mma(acc, a0, b[0], b[1]);
        unsigned a1[4];
        ptx::ldmatrix_x4(a1, a_row + (k_step + 1) * 32);
        Kv::mma(acc, a1, b[2], b[3]);
      }
      if (Kv::kFp8 && segment < 8) {
        // Columns of the C fragment are tokens: scale each by its row's group scale.
        const int group = segment / 2;
        const int col = n_tile * 8 + (lane % 4) * 2;
        const float scale0 = fp8_group_scale(ring + col * layout.ring_row_stride, group);
        const float scale1 = fp8_group_scale(ring + (col + 1) * layout.ring_row_stride, group);
        total[0] += acc[0] * scale0;
        total[1] += acc[1] * scale1;
        total[2] += acc[2] * scale0;
        total[3] += acc[3] * scale1;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) total[j] += acc[j];
      }
    }
    float* slab = scores + slice * BLOCK_H * BLOCK_T;
    const int row = m_tile * 16 + lane / 4;
    const int col = n_tile * 8 + (lane % 4) * 2;
    *reinterpret_cast<float2*>(slab + row * BLOCK_T + col) = make_float2(total[0], total[1]);
    *reinterpret_cast<float2*>(slab + (row + 8) * BLOCK_T + col) = make_float2(total[2], total[3]);
  }
}

// Online softmax over the tile: one warp per head row. Updates the running max/sum, stores the
// rescale factor for the accumulator, and writes P (times each group's scale for fp8) as bf16.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int KV_FORMAT>
__device__ __forceinline__ void softmax_tile(const smla::SmemLayout& layout, unsigned char* smem,
                                             const unsigned char* ring, const int* tokens,
                                             float scale_log2) {
  using Kv = KvTraits<KV_FORMAT>;
  constexpr int kKSplit = smla::score_ksplit(BLOCK_T, BLOCK_H, NUM_WARPS);
  constexpr int kColsPerLane = (BLOCK_T + 31) / 32;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const float* scores = reinterpret_cast<const float*>(smem + layout.scores_offset);
  float* running_max = reinterpret_cast<float*>(smem + layout.stats_offset);
  float* running_sum = running_max + BLOCK_H;
  float* rescale = running_sum + BLOCK_H;
  for (int row = warp; row < BLOCK_H; row += NUM_WARPS) {
    float s[kColsPerLane];
    float tile_max = ptx::neg_inf();
#pragma unroll
    for (int j = 0; j < kColsPerLane; ++j) {
      const int col = lane + j * 32;
      s[j] = ptx::neg_inf();
      if (col < BLOCK_T && tokens[col] >= 0) {
        float dot = 0.f;
#pragma unroll
        for (int slice = 0; slice < kKSplit; ++slice) {
          dot += scores[(slice * BLOCK_H + row) * BLOCK_T + col];
        }
        s[j] = dot * scale_log2;
      }
      tile_max = fmaxf(tile_max, s[j]);
    }
    tile_max = ptx::warp_max(tile_max);
    const float old_max = running_max[row];
    const float new_max = fmaxf(old_max, tile_max);
    const bool nothing_valid = new_max == ptx::neg_inf();
    const float alpha = nothing_valid ? 1.f : exp2f(old_max - new_max);
    float tile_sum = 0.f;
#pragma unroll
    for (int j = 0; j < kColsPerLane; ++j) {
      const int col = lane + j * 32;
      const float prob = nothing_valid ? 0.f : exp2f(s[j] - new_max);
      tile_sum += prob;
      if (col < BLOCK_T) {
#pragma unroll
        for (int copy = 0; copy < (Kv::kFp8 ? smla::kNumGroups : 1); ++copy) {
          const float scale =
              Kv::kFp8 ? fp8_group_scale(ring + col * layout.ring_row_stride, copy) : 1.f;
          const float value = prob * scale;
          unsigned short* probs = reinterpret_cast<unsigned short*>(
              smem + layout.probs_offset + (copy * BLOCK_H + row) * layout.probs_row_stride);
          probs[col] = Kv::pack(value);
        }
      }
    }
    tile_sum = ptx::warp_sum(tile_sum);
    __syncwarp();
    if (lane == 0) {
      running_max[row] = new_max;
      running_sum[row] = running_sum[row] * alpha + tile_sum;
      rescale[row] = alpha;
    }
  }
}

}  // namespace smla_detail
