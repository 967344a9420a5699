#pragma once
// merge 3 (layout.h's kMergeLastCta): no combine after the split. Each split CTA of a row writes
// its fp32 partial as for the combine kernel, then takes a ticket from the row's counter; the CTA
// that takes the last ticket merges the row's partials itself (out = sum_s w_s o_s / sum_s w_s,
// w_s = exp(lse_s - max lse), as combine.cuh), while the other rows' CTAs still run. So the launch
// ends with the last row's merge instead of a grid-wide wait and a second kernel's reads.
// The counters live in the workspace; the combine kernel, launched before the split in its
// ticket-reset mode (combine.cuh), zeroes them, and the split is its programmatic dependent: a
// ticket is taken only after ptx::grid_dependency_wait, i.e. after the reset, which the CTA's tiles
// have long outlasted. No state outlives a launch, so a workspace needs no zeroing by its owner.
#include "common/async.cuh"
#include "common/ptx.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"

namespace smla_last_cta {

// True in every consumer thread of the CTA that took the row's last ticket. Every consumer thread
// calls it after storing its share of the partial (a consumer barrier inside).
template <int CONSUMER_THREADS>
__device__ __forceinline__ bool took_last_ticket(const smla::SplitParams& p, int row,
                                                 unsigned* flag) {
  __threadfence();  // this thread's partial stores, visible device-wide before the ticket
  ptx::named_barrier_sync(1, CONSUMER_THREADS);
  if (threadIdx.x == 0) {
    ptx::grid_dependency_wait();  // the tickets' reset (the launch's first kernel) is done
    __threadfence();              // the CTA's stores, seen through the barrier, before the ticket
    const unsigned ticket = atomicAdd(p.row_tickets + row, 1u);
    *flag = ticket + 1 == static_cast<unsigned>(p.num_splits) ? 1u : 0u;
  }
  ptx::named_barrier_sync(1, CONSUMER_THREADS);
  const bool last = *flag != 0u;
  if (last) __threadfence();  // the other CTAs' partials, seen after their tickets
  return last;
}

// The row's heads [first_bh, first_bh + heads): one warp per head at a time, each lane 4 dims x 4.
// An empty split (weight 0) is not read: its partial need not hold finite data (combine.cuh).
template <int CONSUMER_THREADS>
__device__ __forceinline__ void merge_row(const smla::SplitParams& p, long long first_bh,
                                          int heads) {
  constexpr int kWarps = CONSUMER_THREADS / 32;
  const int lane = threadIdx.x % 32;
  for (int head = threadIdx.x / 32; head < heads; head += kWarps) {
    const long long bh = first_bh + head;
    const float* lse = p.partial_lse + bh * p.num_splits;
    float max_lse = ptx::neg_inf();
    for (int s = lane; s < p.num_splits; s += 32) max_lse = fmaxf(max_lse, __ldcg(lse + s));
    max_lse = ptx::warp_max(max_lse);
    unsigned short* out = p.out + bh * smla::kLatentDim;
    if (max_lse == ptx::neg_inf()) {  // no valid token in the row
      for (int dim = lane * 2; dim < smla::kLatentDim; dim += 64) {
        *reinterpret_cast<unsigned*>(out + dim) = 0u;
      }
      if (lane == 0) p.lse[bh] = max_lse;
      continue;
    }
    float weight_sum = 0.f;
    for (int s = lane; s < p.num_splits; s += 32) weight_sum += expf(__ldcg(lse + s) - max_lse);
    weight_sum = ptx::warp_sum(weight_sum);
    const float inv_sum = 1.f / weight_sum;
    const float* partials = p.partial_out + bh * p.num_splits * smla::kLatentDim;
#pragma unroll
    for (int part = 0; part < smla::kLatentDim / 128; ++part) {
      const int dim = part * 128 + lane * 4;
      float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
      for (int s = 0; s < p.num_splits; ++s) {
        const float weight = expf(__ldcg(lse + s) - max_lse) * inv_sum;
        if (weight == 0.f) continue;
        const float4 value =
            __ldcg(reinterpret_cast<const float4*>(partials + s * smla::kLatentDim + dim));
        sum.x += weight * value.x;
        sum.y += weight * value.y;
        sum.z += weight * value.z;
        sum.w += weight * value.w;
      }
      *reinterpret_cast<uint2*>(out + dim) =
          make_uint2(ptx::pack_bf16x2(sum.x, sum.y), ptx::pack_bf16x2(sum.z, sum.w));
    }
    if (lane == 0) p.lse[bh] = max_lse + logf(weight_sum);
  }
}

}  // namespace smla_last_cta
