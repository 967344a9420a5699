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
// x load_part(s, row, dim) (a float4), stored as bf16 to out_rows[row * 512 + dim].
template <int BLOCK_H, int THREADS, int MAX_SPLITS, typename LoadPart>
__device__ __forceinline__ void merge_items(LoadPart&& load_part, unsigned short* out_rows,
                                            int num_splits, const float* weights, int heads_left,
                                            int rank) {
  constexpr int kItemsPerRow = smla::kLatentDim / 4;
  constexpr int kItems = BLOCK_H * kItemsPerRow;
  const int per_rank = (kItems + num_splits - 1) / num_splits;
  const int end = min(kItems, (rank + 1) * per_rank);
  for (int item = rank * per_rank + static_cast<int>(threadIdx.x); item < end; item += THREADS) {
    const int row = item / kItemsPerRow;
    if (row >= heads_left) continue;
    const int dim = (item % kItemsPerRow) * 4;
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int s = 0; s < MAX_SPLITS; ++s) {
      const float weight = s < num_splits ? weights[s * BLOCK_H + row] : 0.f;
      if (weight == 0.f) continue;  // an empty split's partial is not read
      const float4 part = load_part(s, row, dim);
      sum.x += weight * part.x;
      sum.y += weight * part.y;
      sum.z += weight * part.z;
      sum.w += weight * part.w;
    }
    *reinterpret_cast<uint2*>(out_rows + row * smla::kLatentDim + dim) =
        make_uint2(ptx::pack_bf16x2(sum.x, sum.y), ptx::pack_bf16x2(sum.z, sum.w));
  }
}

}  // namespace smla_slice
