#pragma once
// Merges the fp32 partials of every split by their lse: out = sum_s w_s o_s / sum_s w_s with
// w_s = exp(lse_s - max lse), lse = max + log(sum_s w_s). One CTA per (head, batch item).
#include "common/ptx.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"

template <int NUM_THREADS>
__global__ void __launch_bounds__(NUM_THREADS)
    sparse_mla_decode_combine(const smla::CombineParams p) {
  static_assert(smla::kLatentDim % (NUM_THREADS * 4) == 0, "each thread owns groups of 4 dims");
  const float kNegInf = ptx::neg_inf();
  const long long bh = static_cast<long long>(blockIdx.y) * p.n_local_heads + blockIdx.x;
  const float* lse = p.partial_lse + bh * p.num_splits;
  float max_lse = kNegInf;
  for (int s = 0; s < p.num_splits; ++s) max_lse = fmaxf(max_lse, lse[s]);
  if (max_lse == kNegInf) {
    for (int dim = threadIdx.x * 4; dim < smla::kLatentDim; dim += NUM_THREADS * 4) {
      *reinterpret_cast<uint2*>(p.out + bh * smla::kLatentDim + dim) = make_uint2(0u, 0u);
    }
    if (threadIdx.x == 0) p.lse[bh] = kNegInf;
    return;
  }
  for (int dim = threadIdx.x * 4; dim < smla::kLatentDim; dim += NUM_THREADS * 4) {
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
    float weight_sum = 0.f;
    for (int s = 0; s < p.num_splits; ++s) {
      const float weight = expf(lse[s] - max_lse);
      if (weight == 0.f) continue;  // empty split: its partial is zeros, never NaN-poisoned data
      const float4 part = *reinterpret_cast<const float4*>(
          p.partial_out + (bh * p.num_splits + s) * smla::kLatentDim + dim);
      sum.x += weight * part.x;
      sum.y += weight * part.y;
      sum.z += weight * part.z;
      sum.w += weight * part.w;
      weight_sum += weight;
    }
    const float inv = 1.f / weight_sum;
    *reinterpret_cast<uint2*>(p.out + bh * smla::kLatentDim + dim) = make_uint2(
        ptx::pack_bf16x2(sum.x * inv, sum.y * inv), ptx::pack_bf16x2(sum.z * inv, sum.w * inv));
  }
  if (threadIdx.x == 0) {
    float weight_sum = 0.f;
    for (int s = 0; s < p.num_splits; ++s) weight_sum += expf(lse[s] - max_lse);
    p.lse[bh] = max_lse + logf(weight_sum);
  }
}
