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
#include "sparse_mla_decode/combine.cuh"
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
  // The other CTAs' partials, seen after their tickets (read through L2: combine.cuh).
  if (last) __threadfence();
  return last;
}

// The row's heads [first_bh, first_bh + heads): one warp per head at a time, each lane 4 dims x 4,
// by the combine kernel's formulas (combine.cuh: the lse weights, then each lane's sum over the
// splits with 8 partial loads in flight; an empty split is not read).
template <int CONSUMER_THREADS>
__device__ __forceinline__ void merge_row(const smla::SplitParams& p, long long first_bh,
                                          int heads) {
  constexpr int kWarps = CONSUMER_THREADS / 32;
  const int lane = threadIdx.x % 32;
  for (int head = threadIdx.x / 32; head < heads; head += kWarps) {
    const long long bh = first_bh + head;
    const float* lse = p.partial_lse + bh * p.num_splits;
    const smla_combine::LseWeights weights = smla_combine::lse_weights<true>(lse, p.num_splits);
    unsigned short* out = p.out + bh * smla::kLatentDim;
    if (weights.max_lse == ptx::neg_inf()) {  // no valid token in the row
      for (int dim = lane * 2; dim < smla::kLatentDim; dim += 64) {
        *reinterpret_cast<unsigned*>(out + dim) = 0u;
      }
      if (lane == 0) p.lse[bh] = weights.max_lse;
      continue;
    }
    const float* partials = p.partial_out + bh * p.num_splits * smla::kLatentDim;
#pragma unroll
    for (int part = 0; part < smla::kLatentDim / 128; ++part) {
      const int dim = part * 128 + lane * 4;
      const float4 sum = smla_combine::slice_sum<true>(partials + dim, lse, 0, 1, p.num_splits,
                                                       weights.max_lse, 1.f / weights.weight_sum);
      *reinterpret_cast<uint2*>(out + dim) =
          make_uint2(ptx::pack_bf16x2(sum.x, sum.y), ptx::pack_bf16x2(sum.z, sum.w));
    }
    if (lane == 0) p.lse[bh] = weights.max_lse + logf(weights.weight_sum);
  }
}

}  // namespace smla_last_cta
