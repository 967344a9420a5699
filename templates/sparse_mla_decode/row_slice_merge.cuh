#pragma once
// merge 5 (layout.h's kMergeRowSlices): no combine kernel and no cluster. Each split CTA of a row
// writes its bf16 partial and lse to the workspace (as for merge 4's combine), counts itself in
// the row's arrival counter and waits until every split of the row has arrived; then split r
// merges the r-th slice of the row's BLOCK_H x 512 outputs (slice_merge.cuh), reading the
// partials through L2. So a row is merged as soon as its own splits are done (the combine waits
// for the whole grid and a second launch), by all of its CTAs at once (merge 3's last CTA merged
// it alone, bound by its loads' latency), and without the cluster merge's placement (a cluster
// stays inside one GPC: at batch 64 the H200 holds 62 clusters of 4, not the 64 needed).
// Waiting on other CTAs needs every CTA of the row resident: the host keeps the grid within one
// wave of the kernel's resident CTAs (deploy.cpp's split_plan). A wait that still outlives
// kSpinLimitNs traps, so a grid that cannot be co-resident fails its launch instead of hanging.
// The counters are merge 3's row tickets: zeroed by the combine kernel's reset mode, which runs
// first with the split as its programmatic dependent; no state outlives a launch.
#include "common/ptx.cuh"
#include "sparse_mla_decode/combine.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"
#include "sparse_mla_decode/slice_merge.cuh"

namespace smla_row_slices {

constexpr unsigned long long kSpinLimitNs = 1000000000ull;  // 1 s: far past any resident row

// Every consumer thread, after storing its share of the split's partial: the CTA counts itself
// in the row's arrivals, then waits for the row's other splits.
template <int CONSUMER_THREADS>
__device__ __forceinline__ void wait_for_row(unsigned* arrivals, int num_splits) {
  __threadfence();  // this thread's partial stores, device-wide before the arrival
  ptx::named_barrier_sync(1, CONSUMER_THREADS);
  if (threadIdx.x == 0) {
    ptx::grid_dependency_wait();  // the counters' reset (the launch's first kernel) is done
    __threadfence();              // the CTA's stores, seen through the barrier, before the arrival
    // The row's last split to arrive (the one that ends the row's wait) polls nothing.
    const unsigned arrived = atomicAdd(arrivals, 1u) + 1u;
    const unsigned long long start = ptx::global_timer_ns();
    while (arrived < static_cast<unsigned>(num_splits) &&
           ptx::ld_acquire_gpu(arrivals) < static_cast<unsigned>(num_splits)) {
      __nanosleep(64);
      if (ptx::global_timer_ns() - start > kSpinLimitNs) __trap();
    }
  }
  ptx::named_barrier_sync(1, CONSUMER_THREADS);
  __threadfence();  // the other splits' partials, seen after their arrivals
}

// The consumer warps' share of merge 5, after write_output: wait for the row, then merge slice
// `rank` of its heads [first_bh, first_bh + heads_left). `scratch` holds the weights
// (kMaxRowSliceSplits x BLOCK_H floats; shared memory the token loop is done with). Not inlined,
// and handed scalars, as merge_in_cluster (cluster_merge.cuh): the token loop's registers stay
// the kernel's own.
template <int BLOCK_H, int THREADS>
__device__ __noinline__ void merge_row_slice(const float* partial_out, const float* partial_lse,
                                             unsigned short* out, float* lse, unsigned* arrivals,
                                             int num_splits, long long first_bh, int heads_left,
                                             int rank, float* scratch) {
  wait_for_row<THREADS>(arrivals, num_splits);
  const float* row_lse = partial_lse + first_bh * num_splits;
  smla_slice::row_weights<BLOCK_H, smla::kMaxRowSliceSplits>(
      [&](int s, int row) { return __ldcg(row_lse + row * num_splits + s); }, num_splits,
      heads_left, scratch, rank == 0 ? lse + first_bh : nullptr);
  ptx::named_barrier_sync(1, THREADS);
  // Split s's partial of row `row`: element ((first_bh + row) x num_splits + s) x 512 + dim, bf16.
  const float* row_partials =
      reinterpret_cast<const float*>(reinterpret_cast<const unsigned short*>(partial_out) +
                                     first_bh * num_splits * smla::kLatentDim);
  smla_slice::merge_items<BLOCK_H, THREADS>(
      [&](int s, int row, int dim) {
        return smla_combine::load_part<true, true>(
            row_partials, (static_cast<long long>(row) * num_splits + s) * smla::kLatentDim + dim);
      },
      out + first_bh * smla::kLatentDim, num_splits, scratch, heads_left, rank);
}

}  // namespace smla_row_slices
