#pragma once
// The split kernel's (split.cuh) P.V accumulation in registers, and its normalised output: bf16 +
// lse for one split, fp32 partials otherwise.
#include "common/ptx.cuh"
#include "sparse_mla_decode/kv_format.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"

namespace smla_detail {

// acc = acc * rescale + P . V for this warp's 512 / NUM_WARPS output dims.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int KV_FORMAT>
__device__ __forceinline__ void accumulate_pv(
    const smla::SmemLayout& layout, const unsigned char* smem, const unsigned char* v_tile,
    int v_row_stride,
    float (&acc)[BLOCK_H / smla::kMmaM][smla::kLatentDim / NUM_WARPS / smla::kMmaN][4]) {
  using Kv = KvTraits<KV_FORMAT>;
  constexpr int kMTiles = BLOCK_H / smla::kMmaM;
  constexpr int kDimsPerWarp = smla::kLatentDim / NUM_WARPS;
  constexpr int kNTiles = kDimsPerWarp / smla::kMmaN;
  constexpr int kDimsPerCopy = Kv::kFp8 ? smla::kGroupDim : smla::kLatentDim;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int first_dim = warp * kDimsPerWarp;
  const float* rescale = reinterpret_cast<const float*>(smem + layout.stats_offset) + 2 * BLOCK_H;
#pragma unroll
  for (int m_tile = 0; m_tile < kMTiles; ++m_tile) {
    const float alpha_lo = rescale[m_tile * 16 + lane / 4];
    const float alpha_hi = rescale[m_tile * 16 + lane / 4 + 8];
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
      acc[m_tile][n][0] *= alpha_lo;
      acc[m_tile][n][1] *= alpha_lo;
      acc[m_tile][n][2] *= alpha_hi;
      acc[m_tile][n][3] *= alpha_hi;
    }
  }
#pragma unroll
  for (int k_step = 0; k_step < BLOCK_T / smla::kMmaK; ++k_step) {
    // B via ldmatrix.trans: lanes 0-7 / 8-15 address tokens k..k+7 / k+8..k+15 of dims n..n+7,
    // lanes 16-31 the same tokens for dims n+8..n+15: two n-tiles per load.
    const unsigned char* v_row =
        v_tile + (k_step * 16 + lane % 16) * v_row_stride + (lane / 16) * 16;
#pragma unroll
    for (int m_tile = 0; m_tile < kMTiles; ++m_tile) {
      unsigned a[4];
#pragma unroll
      for (int n = 0; n < kNTiles; n += 2) {
        const int dim = first_dim + n * 8;
        // A warp's dims never straddle a copy boundary except at multiples of kDimsPerCopy.
        if ((n * 8) % kDimsPerCopy == 0) {
          const int copy = dim / kDimsPerCopy;
          const unsigned char* p_row =
              smem + layout.probs_offset +
              (copy * BLOCK_H + m_tile * 16 + lane % 16) * layout.probs_row_stride + k_step * 32 +
              (lane / 16) * 16;
          ptx::ldmatrix_x4(a, p_row);
        }
        unsigned b[4];
        ptx::ldmatrix_x4_trans(b, v_row + dim * 2);
        Kv::mma(acc[m_tile][n], a, b[0], b[1]);
        Kv::mma(acc[m_tile][n + 1], a, b[2], b[3]);
      }
    }
  }
}

// Final normalization; bf16 output + lse for one split, fp32 partials otherwise.
template <int BLOCK_H, int NUM_WARPS>
__device__ __forceinline__ void write_output(
    const smla::SplitParams& p, const smla::SmemLayout& layout, const unsigned char* smem,
    int batch_item, int first_head, int split,
    const float (&acc)[BLOCK_H / smla::kMmaM][smla::kLatentDim / NUM_WARPS / smla::kMmaN][4]) {
  constexpr int kMTiles = BLOCK_H / smla::kMmaM;
  constexpr int kDimsPerWarp = smla::kLatentDim / NUM_WARPS;
  constexpr int kNTiles = kDimsPerWarp / smla::kMmaN;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const float* running_max = reinterpret_cast<const float*>(smem + layout.stats_offset);
  const float* running_sum = running_max + BLOCK_H;
  const bool single_split = p.num_splits == 1;
#pragma unroll
  for (int m_tile = 0; m_tile < kMTiles; ++m_tile) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = m_tile * 16 + lane / 4 + half * 8;
      const int head = first_head + row;
      if (head >= p.n_local_heads) continue;
      const float sum = running_sum[row];
      const float inv_sum = sum > 0.f ? 1.f / sum : 0.f;
      const long long bh = static_cast<long long>(batch_item) * p.n_local_heads + head;
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
        const int dim = warp * kDimsPerWarp + n * 8 + (lane % 4) * 2;
        const float v0 = acc[m_tile][n][half * 2] * inv_sum;
        const float v1 = acc[m_tile][n][half * 2 + 1] * inv_sum;
        if (single_split) {
          *reinterpret_cast<unsigned*>(p.out + bh * smla::kLatentDim + dim) =
              ptx::pack_bf16x2(v0, v1);
        } else {
          *reinterpret_cast<float2*>(p.partial_out +
                                     (bh * p.num_splits + split) * smla::kLatentDim + dim) =
              make_float2(v0, v1);
        }
      }
    }
  }
  if (threadIdx.x < BLOCK_H && first_head + static_cast<int>(threadIdx.x) < p.n_local_heads) {
    const int row = threadIdx.x;
    const float sum = running_sum[row];
    const float lse =
        sum > 0.f ? (running_max[row] + log2f(sum)) * 0.69314718055994531f : ptx::neg_inf();
    const long long bh = static_cast<long long>(batch_item) * p.n_local_heads + first_head + row;
    if (single_split) {
      p.lse[bh] = lse;
    } else {
      p.partial_lse[bh * p.num_splits + split] = lse;
    }
  }
}

}  // namespace smla_detail
