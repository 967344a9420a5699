#pragma once
// Merges the fp32 partials of every split by their lse: out = sum_s w_s o_s / sum_s w_s with
// w_s = exp(lse_s - max lse), lse = max + log(sum_s w_s). Run by the combine kernel (one CTA per
// (head, batch item)) or, with merge 1, by the last split CTA of a (batch item, head group) to
// finish (split_pipelined.cuh): one implementation for both.
#include "common/ptx.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"

namespace smla {

// One (batch item, head) row `bh` by NUM_THREADS threads (`thread` = this one's index). Partials
// are read through the L2 (ld.global.cg): with merge 1 other CTAs wrote them in this launch, and
// the L1 is not coherent with their writes.
template <int NUM_THREADS>
__device__ __forceinline__ void merge_splits(const float* partial_out, const float* partial_lse,
                                             unsigned short* out, float* lse_out, long long bh,
                                             int num_splits, int thread) {
  static_assert(kLatentDim % (NUM_THREADS * 4) == 0, "each thread owns groups of 4 dims");
  const float kNegInf = ptx::neg_inf();
  const float* lse = partial_lse + bh * num_splits;
  float max_lse = kNegInf;
  for (int s = 0; s < num_splits; ++s) max_lse = fmaxf(max_lse, __ldcg(lse + s));
  if (max_lse == kNegInf) {
    for (int dim = thread * 4; dim < kLatentDim; dim += NUM_THREADS * 4) {
      *reinterpret_cast<uint2*>(out + bh * kLatentDim + dim) = make_uint2(0u, 0u);
    }
    if (thread == 0) lse_out[bh] = kNegInf;
    return;
  }
  for (int dim = thread * 4; dim < kLatentDim; dim += NUM_THREADS * 4) {
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
    float weight_sum = 0.f;
    for (int s = 0; s < num_splits; ++s) {
      const float weight = expf(__ldcg(lse + s) - max_lse);
      if (weight == 0.f) continue;  // empty split: its partial is zeros, never NaN-poisoned data
      const float4 part = __ldcg(
          reinterpret_cast<const float4*>(partial_out + (bh * num_splits + s) * kLatentDim + dim));
      sum.x += weight * part.x;
      sum.y += weight * part.y;
      sum.z += weight * part.z;
      sum.w += weight * part.w;
      weight_sum += weight;
    }
    const float inv = 1.f / weight_sum;
    *reinterpret_cast<uint2*>(out + bh * kLatentDim + dim) = make_uint2(
        ptx::pack_bf16x2(sum.x * inv, sum.y * inv), ptx::pack_bf16x2(sum.z * inv, sum.w * inv));
  }
  if (thread == 0) {
    float weight_sum = 0.f;
    for (int s = 0; s < num_splits; ++s) weight_sum += expf(__ldcg(lse + s) - max_lse);
    lse_out[bh] = max_lse + logf(weight_sum);
  }
}

}  // namespace smla

template <int NUM_THREADS>
__global__ void __launch_bounds__(NUM_THREADS)
    sparse_mla_decode_combine(const smla::CombineParams p) {
  const long long bh = static_cast<long long>(blockIdx.y) * p.n_local_heads + blockIdx.x;
  smla::merge_splits<NUM_THREADS>(p.partial_out, p.partial_lse, p.out, p.lse, bh, p.num_splits,
                                  static_cast<int>(threadIdx.x));
}
