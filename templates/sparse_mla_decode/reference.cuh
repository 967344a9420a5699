#pragma once
// The reference: plain fp32 CUDA, one block per (head, batch item), no tensor cores, no tiling.
// It decodes fp8 e4m3 with integer arithmetic (not the cvt path the fast kernel uses), so the two
// share no conversion code. Checked itself against a CPU fp64 computation (tests/).
#include "common/ptx.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"

namespace smla_reference {

__device__ __forceinline__ float e4m3_to_float(unsigned char bits) {
  const int exponent = (bits >> 3) & 0xf;
  const int mantissa = bits & 0x7;
  const float magnitude = exponent == 0 ? ldexpf(static_cast<float>(mantissa), -9)
                                        : ldexpf(1.f + mantissa / 8.f, exponent - 7);
  return (bits & 0x80) ? -magnitude : magnitude;
}

__device__ __forceinline__ float bf16_bits_to_float(unsigned short bits) {
  return __uint_as_float(static_cast<unsigned>(bits) << 16);
}

template <int KV_FORMAT>
__device__ __forceinline__ float kv_value(const unsigned char* row, int dim) {
  if (KV_FORMAT == smla::kFp8DsMla) {
    if (dim < smla::kLatentDim) {
      const float scale =
          reinterpret_cast<const float*>(row + smla::kFp8ScaleOffset)[dim / smla::kGroupDim];
      return e4m3_to_float(row[dim]) * scale;
    }
    return bf16_bits_to_float(reinterpret_cast<const unsigned short*>(
        row + smla::kFp8RopeOffset)[dim - smla::kLatentDim]);
  }
  return bf16_bits_to_float(reinterpret_cast<const unsigned short*>(row)[dim]);
}

template <int NUM_THREADS>
__device__ float block_reduce(float value, float* scratch, bool is_max) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (int stride = NUM_THREADS / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      const float other = scratch[threadIdx.x + stride];
      scratch[threadIdx.x] =
          is_max ? fmaxf(scratch[threadIdx.x], other) : scratch[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float result = scratch[0];
  __syncthreads();
  return result;
}

}  // namespace smla_reference

// Dynamic shared memory: topk floats (scores) + NUM_THREADS floats (reduction scratch).
template <int KV_FORMAT, int NUM_THREADS>
__global__ void __launch_bounds__(NUM_THREADS)
    sparse_mla_decode_reference(const smla::ReferenceParams p) {
  const float kNegInf = ptx::neg_inf();
  constexpr int kRowBytes = smla::kv_row_bytes(KV_FORMAT);
  extern __shared__ float shared[];
  float* scores = shared;
  float* scratch = shared + p.topk;
  const int head = blockIdx.x;
  const int batch_item = blockIdx.y;
  const long long bh = static_cast<long long>(batch_item) * p.n_local_heads + head;
  const unsigned short* q = p.q + bh * smla::kHeadDim;
  const int* indices = p.indices + static_cast<long long>(batch_item) * p.topk;

  // Scores, a warp per token: lane l takes dims l, l + 32, ..., so each step of the warp reads 32
  // consecutive elements of one row, and shuffles sum the lanes' parts. (A thread per token walked
  // its own row alone, one element a load: 32 rows per warp load, ~32x the L1 wavefronts. By my
  // estimate, not profiled, that made it most of the correctness matrix's time at 64 heads.)
  constexpr int kWarps = NUM_THREADS / 32;
  constexpr int kDimsPerLane = smla::kHeadDim / 32;
  static_assert(smla::kHeadDim % 32 == 0, "a lane takes every 32nd dim");
  const int lane = threadIdx.x % 32;
  float q_lane[kDimsPerLane];
#pragma unroll
  for (int k = 0; k < kDimsPerLane; ++k)
    q_lane[k] = smla_reference::bf16_bits_to_float(q[lane + 32 * k]);
  float local_max = kNegInf;
  for (int t = threadIdx.x / 32; t < p.topk; t += kWarps) {
    const int token = indices[t];  // the same for the whole warp
    float score = kNegInf;
    if (token >= 0) {
      const unsigned char* row = p.kv + static_cast<long long>(token) * kRowBytes;
      float dot = 0.f;
#pragma unroll
      for (int k = 0; k < kDimsPerLane; ++k)
        dot += q_lane[k] * smla_reference::kv_value<KV_FORMAT>(row, lane + 32 * k);
      score = ptx::warp_sum(dot) * p.softmax_scale;  // every lane holds the sum
    }
    if (lane == 0) scores[t] = score;
    local_max = fmaxf(local_max, score);
  }
  const float max_score = smla_reference::block_reduce<NUM_THREADS>(local_max, scratch, true);
  float local_sum = 0.f;
  for (int t = threadIdx.x; t < p.topk; t += NUM_THREADS) {
    const float weight = max_score == kNegInf ? 0.f : expf(scores[t] - max_score);
    scores[t] = weight;
    local_sum += weight;
  }
  const float sum = smla_reference::block_reduce<NUM_THREADS>(local_sum, scratch, false);
  for (int dim = threadIdx.x; dim < smla::kLatentDim; dim += NUM_THREADS) {
    float acc = 0.f;
    for (int t = 0; t < p.topk; ++t) {
      const int token = indices[t];
      if (token < 0) continue;
      acc += scores[t] * smla_reference::kv_value<KV_FORMAT>(
                             p.kv + static_cast<long long>(token) * kRowBytes, dim);
    }
    p.out[bh * smla::kLatentDim + dim] = sum > 0.f ? acc / sum : 0.f;
  }
  if (threadIdx.x == 0) p.lse[bh] = sum > 0.f ? max_score + logf(sum) : kNegInf;
}
