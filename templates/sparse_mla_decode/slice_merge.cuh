#pragma once
// A row's splits merged by the row's own CTAs, each merging one slice of the BLOCK_H x 512
// outputs: the cluster merge (merge 2, cluster_merge.cuh, partials in the cluster's shared
// memory) and the row-slice merge (merge 5, row_slice_merge.cuh, partials in global memory). The
// formulas are combine.cuh's: out = sum_s w_s o_s with w_s = exp(lse_s - max lse) / sum, lse =
// max + log(sum). Where the partials live is the caller's loader.
#include "common/ptx.cuh"
#include "sparse_mla_decode/layout.h"

namespace smla_slice {

// Threads [0, BLOCK_H), one row each: split s's normalised weight of the row into weights[s *
// BLOCK_H + row] (0 for s >= num_splits), and the merged lse to lse_out[row] when lse_out is not
// null. load_lse(s, row) reads split s's lse of the row.
template <int BLOCK_H, int MAX_SPLITS, typename LoadLse>
__device__ __forceinline__ void row_weights(LoadLse&& load_lse, int num_splits, int heads_left,
                                            float* weights, float* lse_out) {
  const int row = threadIdx.x;
  if (row >= BLOCK_H || row >= heads_left) return;
  float weight[MAX_SPLITS];
  float max_lse = ptx::neg_inf();
#pragma unroll
  for (int s = 0; s < MAX_SPLITS; ++s) {
    weight[s] = s < num_splits ? load_lse(s, row) : ptx::neg_inf();
    max_lse = fmaxf(max_lse, weight[s]);
  }
  float sum = 0.f;
#pragma unroll
  for (int s = 0; s < MAX_SPLITS; ++s) {
    weight[s] = max_lse == ptx::neg_inf() ? 0.f : expf(weight[s] - max_lse);
    sum += weight[s];
  }
  const float inv_sum = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
  for (int s = 0; s < MAX_SPLITS; ++s) weights[s * BLOCK_H + row] = weight[s] * inv_sum;
  if (lse_out != nullptr) lse_out[row] = sum > 0.f ? max_lse + logf(sum) : ptx::neg_inf();
}

// This CTA's slice (`rank` of num_splits) of the merged outputs: 4 dims per item, sum_s weight_s
// x load_part(s, row, dim) (a float4), stored as bf16 to out_rows[row * 512 + dim]. A thread
// takes kItemBatch of its items at a time and loads all their parts before it stores any: one
// trip to the partials per batch instead of one per item (a store between two items' loads
// keeps the second behind the first), and up to 4 splits a trip. A split of weight 0 is read and
// selected out, as in the combine (its partial is written, but need not be finite).
template <int BLOCK_H, int THREADS, typename LoadPart>
__device__ __forceinline__ void merge_items(LoadPart&& load_part, unsigned short* out_rows,
                                            int num_splits, const float* weights, int heads_left,
                                            int rank) {
  constexpr int kItemsPerRow = smla::kLatentDim / 4;
  constexpr int kItems = BLOCK_H * kItemsPerRow;
  constexpr int kItemBatch = 2;
  constexpr int kSplitBatch = 4;
  const int per_rank = (kItems + num_splits - 1) / num_splits;
  const int end = min(kItems, (rank + 1) * per_rank);
  for (int base = rank * per_rank + static_cast<int>(threadIdx.x); base < end;
       base += kItemBatch * THREADS) {
    // Every load of the batch at a valid address (an item past the slice or a row past the heads
    // reads the slice's last item of the last head, weighted 0): no branch between the loads.
    int row[kItemBatch];
    int dim[kItemBatch];
    bool valid[kItemBatch];
    float4 sum[kItemBatch];
#pragma unroll
    for (int k = 0; k < kItemBatch; ++k) {
      const int item = base + k * THREADS;
      valid[k] = item < end && item / kItemsPerRow < heads_left;
      row[k] = min(min(item, end - 1) / kItemsPerRow, heads_left - 1);
      dim[k] = (min(item, end - 1) % kItemsPerRow) * 4;
      sum[k] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    // Splits kSplitBatch at a time, each batch's loads unconditional (a split past num_splits
    // reads the last one again, weighted 0): one trip for up to 4 splits.
    for (int first = 0; first < num_splits; first += kSplitBatch) {
#pragma unroll
      for (int j = 0; j < kSplitBatch; ++j) {
        const int s = first + j;
#pragma unroll
        for (int k = 0; k < kItemBatch; ++k) {
          const float weight = valid[k] && s < num_splits ? weights[s * BLOCK_H + row[k]] : 0.f;
          const float4 loaded = load_part(min(s, num_splits - 1), row[k], dim[k]);
          const float4 part = weight != 0.f ? loaded : make_float4(0.f, 0.f, 0.f, 0.f);
          sum[k].x += weight * part.x;
          sum[k].y += weight * part.y;
          sum[k].z += weight * part.z;
          sum[k].w += weight * part.w;
        }
      }
    }
#pragma unroll
    for (int k = 0; k < kItemBatch; ++k) {
      if (!valid[k]) continue;
      *reinterpret_cast<uint2*>(out_rows + row[k] * smla::kLatentDim + dim[k]) =
          make_uint2(ptx::pack_bf16x2(sum[k].x, sum[k].y), ptx::pack_bf16x2(sum[k].z, sum[k].w));
    }
  }
}

}  // namespace smla_slice
