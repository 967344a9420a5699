#pragma once
// The merges a split CTA of the pipelined kernel runs itself once its row's output is written
// (per-row splits only): merge 2 in the thread-block cluster, merge 5 by row slices, merge 3 by
// the row's last ticket. Under merges 0, 1 and 4 the combine kernel merges the partials instead.
#include "sparse_mla_decode/cluster_merge.cuh"
#include "sparse_mla_decode/last_cta_merge.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"
#include "sparse_mla_decode/row_slice_merge.cuh"

namespace smla_pipe {

template <int BLOCK_T, int BLOCK_H, int CONSUMER_THREADS>
__device__ __forceinline__ void merge_in_split(const smla::SplitParams& p,
                                               const smla::SmemLayout& layout,
                                               unsigned char* smem) {
  if (p.partials == smla::kPartialsCluster) {  // one row
    smla_cluster::merge_in_cluster<BLOCK_H, CONSUMER_THREADS>(
        smem, p.out, p.lse, p.n_local_heads, p.num_splits, blockIdx.z, blockIdx.y * BLOCK_H);
  }
  if (p.row_arrivals != nullptr && p.num_splits > 1) {
    static_assert(BLOCK_T >= smla::kMaxRowSliceSplits, "merge 5's weights fit the scores buffer");
    const int first_head = static_cast<int>(blockIdx.y) * BLOCK_H;  // merge 5
    smla_row_slices::merge_row_slice<BLOCK_H, CONSUMER_THREADS>(
        p.partial_out, p.partial_lse, p.out, p.lse,
        p.row_arrivals + blockIdx.z * p.head_groups + blockIdx.y, p.num_splits,
        static_cast<long long>(blockIdx.z) * p.n_local_heads + first_head,
        min(BLOCK_H, p.n_local_heads - first_head), static_cast<int>(blockIdx.x),
        reinterpret_cast<float*>(smem + layout.scores_offset));
  }
  if (p.row_tickets != nullptr && p.num_splits > 1) {
    // merge 3. The ticket's flag word: the scores buffer, dead once every consumer is past the
    // last tile (took_last_ticket's first barrier).
    const int first_head = static_cast<int>(blockIdx.y) * BLOCK_H;
    if (smla_last_cta::took_last_ticket<CONSUMER_THREADS>(
            p, static_cast<int>(blockIdx.z) * p.head_groups + static_cast<int>(blockIdx.y),
            reinterpret_cast<unsigned*>(smem + layout.scores_offset))) {
      smla_last_cta::merge_row<CONSUMER_THREADS>(
          p, static_cast<long long>(blockIdx.z) * p.n_local_heads + first_head,
          min(BLOCK_H, p.n_local_heads - first_head));
    }
  }
}

}  // namespace smla_pipe
