#pragma once
// merge 2 (layout.h's kMergeCluster): the splits of one (head group, batch item) run as one
// thread-block cluster of num_splits CTAs (<= 8) and merge their outputs through distributed shared
// memory, so no fp32 partials reach global memory and no combine kernel is launched. Each CTA
// writes its normalised partial output and lse rows into its own shared memory (the exchange of
// layout.h; split_pipelined.cuh's write_output), a cluster barrier makes them visible, CTA r merges
// the r-th slice of the BLOCK_H x 512 outputs by reading every CTA's exchange, and a second cluster
// barrier keeps each CTA's shared memory alive until the others have read it. Producer warps take
// part in both barriers (cluster_producer_exit), so every thread of the cluster arrives.
#include "common/async.cuh"
#include "common/cluster.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/slice_merge.cuh"

namespace smla_cluster {

// Producer warps of a cluster launch: the two cluster barriers of the consumers' merge.
__device__ __forceinline__ void cluster_producer_exit() {
  ptx::cluster_sync();
  ptx::cluster_sync();
}

// Per row: every split's weight exp(lse_s - max) / sum into this CTA's weights, the merged lse to
// global memory (rank 0). Threads [0, BLOCK_H) work, one row each.
template <int BLOCK_H>
__device__ __forceinline__ void merge_weights(float* lse_out, int num_splits, unsigned char* smem,
                                              long long first_bh, int heads_left, unsigned rank) {
  constexpr smla::ExchangeLayout kExchange = smla::exchange_layout(BLOCK_H);
  const unsigned lse_local = ptx::smem_address(smem + kExchange.lse_offset);
  smla_slice::row_weights<BLOCK_H, smla::kMaxClusterSplits>(
      [&](int s, int row) {
        return ptx::ld_cluster_f32(ptx::cluster_map(lse_local + row * 4u, s));
      },
      num_splits, heads_left, reinterpret_cast<float*>(smem + kExchange.weights_offset),
      rank == 0 ? lse_out + first_bh : nullptr);
}

// This CTA's slice of the merged outputs: 4 dims per item, sum_s weight_s x partial_s (read from
// CTA s), stored as bf16.
template <int BLOCK_H, int THREADS>
__device__ __forceinline__ void merge_slice(unsigned short* out, int num_splits,
                                            unsigned char* smem, long long first_bh, int heads_left,
                                            unsigned rank) {
  constexpr smla::ExchangeLayout kExchange = smla::exchange_layout(BLOCK_H);
  const unsigned partials = ptx::smem_address(smem + kExchange.partial_offset);
  smla_slice::merge_items<BLOCK_H, THREADS>(
      [&](int s, int row, int dim) {
        const unsigned local = partials + static_cast<unsigned>(row * smla::kLatentDim + dim) * 4u;
        return ptx::ld_cluster_f32x4(ptx::cluster_map(local, s));
      },
      out + first_bh * smla::kLatentDim, num_splits,
      reinterpret_cast<const float*>(smem + kExchange.weights_offset), heads_left,
      static_cast<int>(rank));
}

// Before the consumer warps write their rows into the exchange (split_pipelined.cuh's
// write_output): every consumer warp is done with the ring and the scores, and the mbarriers the
// exchange overlaps, if any, are invalidated.
template <int THREADS>
__device__ __forceinline__ void free_for_exchange(unsigned long long* barriers, int barrier_count,
                                                  bool exchange_overlaps_barriers) {
  ptx::named_barrier_sync(1, THREADS);
  if (exchange_overlaps_barriers) {
    if (static_cast<int>(threadIdx.x) < barrier_count) ptx::mbarrier_inval(&barriers[threadIdx.x]);
    ptx::named_barrier_sync(1, THREADS);
  }
}

// The consumer warps' merge, once every CTA's exchange holds its rows. Not inlined, and handed
// scalars: inlined into the split kernel it moved sm_120's register allocation of the token loop
// (28 bytes of spills at 255 registers for e4m3 MMA, BLOCK_T 32, 4 warps).
template <int BLOCK_H, int THREADS>
__device__ __noinline__ void merge_in_cluster(unsigned char* smem, unsigned short* out,
                                              float* lse_out, int n_local_heads, int num_splits,
                                              int batch_item, int first_head) {
  ptx::cluster_sync();
  const unsigned rank = ptx::cluster_ctarank();
  const long long first_bh = static_cast<long long>(batch_item) * n_local_heads + first_head;
  const int heads_left = n_local_heads - first_head;
  merge_weights<BLOCK_H>(lse_out, num_splits, smem, first_bh, heads_left, rank);
  ptx::named_barrier_sync(1, THREADS);
  merge_slice<BLOCK_H, THREADS>(out, num_splits, smem, first_bh, heads_left, rank);
  ptx::cluster_sync();  // the other CTAs have read this CTA's exchange
}

}  // namespace smla_cluster
