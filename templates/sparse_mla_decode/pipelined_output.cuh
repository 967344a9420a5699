#pragma once
// The pipelined split kernel's output (split_pipelined.cuh): the accumulator's rows normalised,
// as bf16 + lse for a row one CTA ran whole, otherwise as fp32 (merge 4: bf16) partials, for the
// combine kernel in global memory or, in a cluster launch, into this CTA's exchange
// (cluster_merge.cuh).
#include "sparse_mla_decode/pipelined_pv.cuh"
#include "sparse_mla_decode/pipelined_work.cuh"

namespace smla_pipe {

// Output dims of accumulator element j (0..3 -> rows g, g, g+8, g+8) of n-tile n: fp8 caches
// interleave even/odd dims per 16-dim chunk (see pv_block_16bit), bf16 caches are natural.
template <int KV_FORMAT>
__device__ __forceinline__ int output_dim(int first_dim, int n, int j) {
  const int c = threadIdx.x % 4;
  if (KV_FORMAT == smla::kFp8DsMla) return first_dim + (n / 2) * 16 + 4 * c + 2 * (j % 2) + n % 2;
  return first_dim + n * 8 + 2 * c + j % 2;
}

// A row's lse (natural log) from its running maximum (log2 units) and sum; -inf for no token.
__device__ __forceinline__ float row_lse(float row_max, float sum) {
  return sum > 0.f ? (row_max + log2f(sum)) * 0.69314718055994531f : ptx::neg_inf();
}

// bf16 caches: calls pair(row, dim, lo, hi) for each two adjacent output dims this thread holds and
// lse(row, value) once per row, normalised, for the rows below the local heads; value_scale undoes
// the bitwise unpack's 2^-8 on V (1 otherwise). fp8 caches store 4 dims at a time: for_each_quad.
template <int BLOCK_H, int NUM_WARPS, int KV_FORMAT, typename Pair, typename Lse>
__device__ __forceinline__ void for_each_output(Accumulator<BLOCK_H, NUM_WARPS>& acc,
                                                int heads_left, float value_scale, Pair&& pair,
                                                Lse&& lse) {
  static_assert(KV_FORMAT != smla::kFp8DsMla, "fp8 caches: for_each_quad");
  using Acc = Accumulator<BLOCK_H, NUM_WARPS>;
  const int lane = threadIdx.x % 32;
  const int first_dim = (threadIdx.x / 32) * (smla::kLatentDim / NUM_WARPS);
#pragma unroll
  for (int m = 0; m < Acc::kMTiles; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float sum = acc.row_sum[m][half];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int row = m * 16 + lane / 4 + half * 8;
      if (row >= heads_left) continue;
      const float inv_sum = sum > 0.f ? value_scale / sum : 0.f;
      // Two adjacent dims per store (8-byte partials, 4-byte bf16 pairs): elements j, j + 1 of
      // one n-tile (see output_dim). The j loop runs once; as a plain j = half * 2, ptxas
      // schedules the bf16 kernels differently from the SASS the device verified.
#pragma unroll
      for (int n = 0; n < Acc::kNTiles; ++n) {
#pragma unroll
        for (int j = half * 2; j < half * 2 + 2; j += 2) {
          pair(row, output_dim<KV_FORMAT>(first_dim, n, j), acc.value[m][n][j] * inv_sum,
               acc.value[m][n][j + 1] * inv_sum);
        }
      }
      if (threadIdx.x < 32 && lane % 4 == 0) lse(row, row_lse(acc.row_max[m][half], sum));
    }
  }
}

// fp8 caches: a lane's n-tiles n, n + 1 of elements j, j + 1 are 4 adjacent output dims (see
// output_dim), stored at once (8 bytes of bf16, 16 of fp32) instead of as two pairs. Calls
// quad(row, dim, v0..v3) for each 4 this thread holds and lse(row, value) once per row, normalised
// as for_each_output's. Both rows' sums and reciprocals come first (the fast reciprocal, no
// slow-path branch: a row's sum is 0 or >= 1, its maximum's term), then every store. The output
// took >= 1 us a CTA as pairs, 0.6-0.8 us so (H100; BENCHMARKS.md section 7, thirty-first session).
template <int BLOCK_H, int NUM_WARPS, typename Quad, typename Lse>
__device__ __forceinline__ void for_each_quad(Accumulator<BLOCK_H, NUM_WARPS>& acc, int heads_left,
                                              float value_scale, Quad&& quad, Lse&& lse) {
  using Acc = Accumulator<BLOCK_H, NUM_WARPS>;
  const int lane = threadIdx.x % 32;
  const int first_dim = (threadIdx.x / 32) * (smla::kLatentDim / NUM_WARPS) + 4 * (lane % 4);
#pragma unroll
  for (int m = 0; m < Acc::kMTiles; ++m) {
    float sum[2];
    float inv_sum[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      sum[half] = acc.row_sum[m][half];
      sum[half] += __shfl_xor_sync(0xffffffffu, sum[half], 1);
      sum[half] += __shfl_xor_sync(0xffffffffu, sum[half], 2);
      inv_sum[half] = sum[half] > 0.f ? __fdividef(value_scale, sum[half]) : 0.f;
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = m * 16 + lane / 4 + half * 8;
      if (row >= heads_left) continue;
      const float scale = inv_sum[half];
#pragma unroll
      for (int n = 0; n < Acc::kNTiles; n += 2) {
        const int j = half * 2;
        quad(row, first_dim + (n / 2) * 16, acc.value[m][n][j] * scale,
             acc.value[m][n + 1][j] * scale, acc.value[m][n][j + 1] * scale,
             acc.value[m][n + 1][j + 1] * scale);
      }
      if (threadIdx.x < 32 && lane % 4 == 0) lse(row, row_lse(acc.row_max[m][half], sum[half]));
    }
  }
}

// bf16 output + lse for one split; otherwise fp32 partials (bf16 under merge 4), for the combine
// kernel in global memory or, in a cluster launch, into this CTA's exchange (cluster_merge.cuh).
// One code path with generic pointers: a second copy of the loop for the exchange cost sm_120
// registers and spills.
template <int BLOCK_H, int NUM_WARPS, int KV_FORMAT>
__device__ __forceinline__ void write_output(const smla::SplitParams& p,
                                             Accumulator<BLOCK_H, NUM_WARPS>& acc,
                                             unsigned char* smem, const RowWork& work,
                                             float value_scale) {
  constexpr smla::ExchangeLayout kExchange = smla::exchange_layout(BLOCK_H);
  const long long first_bh =
      static_cast<long long>(work.batch_item) * p.n_local_heads + work.first_head;
  const bool single_split = work.whole_row;
  float* partial = p.partial_out + (first_bh * p.num_splits + work.part) * smla::kLatentDim;
  long long partial_row = static_cast<long long>(p.num_splits) * smla::kLatentDim;
  float* lse_out = p.partial_lse + first_bh * p.num_splits + work.part;
  int lse_row = p.num_splits;
  // bf16 partials (merge 4): the same element offsets into half-width storage.
  const bool bf16_partials = p.partials == smla::kPartialsBf16;
  if (p.partials == smla::kPartialsCluster) {
    partial = reinterpret_cast<float*>(smem + kExchange.partial_offset);
    partial_row = smla::kLatentDim;
    lse_out = reinterpret_cast<float*>(smem + kExchange.lse_offset);
    lse_row = 1;
  }
  const auto store_lse = [&](int row, float value) {
    if (single_split) {
      p.lse[first_bh + row] = value;
    } else {
      lse_out[row * lse_row] = value;
    }
  };
  if constexpr (KV_FORMAT == smla::kFp8DsMla) {
    for_each_quad<BLOCK_H, NUM_WARPS>(
        acc, p.n_local_heads - work.first_head, value_scale,
        [&](int row, int dim, float v0, float v1, float v2, float v3) {
          const uint2 packed = make_uint2(ptx::pack_bf16x2(v0, v1), ptx::pack_bf16x2(v2, v3));
          if (single_split) {
            *reinterpret_cast<uint2*>(p.out + (first_bh + row) * smla::kLatentDim + dim) = packed;
          } else if (bf16_partials) {
            *reinterpret_cast<uint2*>(reinterpret_cast<unsigned short*>(p.partial_out) +
                                      (first_bh + row) * partial_row +
                                      work.part * smla::kLatentDim + dim) = packed;
          } else {  // 16-byte aligned: dim is a multiple of 4, rows 512 floats apart
            *reinterpret_cast<float4*>(partial + row * partial_row + dim) =
                make_float4(v0, v1, v2, v3);
          }
        },
        store_lse);
  } else {
    for_each_output<BLOCK_H, NUM_WARPS, KV_FORMAT>(
        acc, p.n_local_heads - work.first_head, value_scale,
        [&](int row, int dim, float lo, float hi) {
          if (single_split) {
            *reinterpret_cast<unsigned*>(p.out + (first_bh + row) * smla::kLatentDim + dim) =
                ptx::pack_bf16x2(lo, hi);
          } else if (bf16_partials) {
            *reinterpret_cast<unsigned*>(
                reinterpret_cast<unsigned short*>(p.partial_out) + (first_bh + row) * partial_row +
                work.part * smla::kLatentDim + dim) = ptx::pack_bf16x2(lo, hi);
          } else {
            *reinterpret_cast<float2*>(partial + row * partial_row + dim) = make_float2(lo, hi);
          }
        },
        store_lse);
  }
}

}  // namespace smla_pipe
