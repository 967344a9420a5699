#pragma once
// Merges the fp32 (merge 4: bf16) partials of every split by their lse: out = sum_s w_s o_s / sum_s
// w_s with w_s = exp(lse_s - max lse), lse = max + log(sum_s w_s). One CTA per (head, batch item,
// chunk of the latent dims). Two kernels; the host picks one per launch (deploy.hpp's
// combine_whole_row). The general one merges any row, the whole-row one rows of at most kInFlight
// parts (it traps on others):
//  sparse_mla_decode_combine (general): a thread owns 4 dims of its chunk and one slice of the
//    splits (s = slice, slice + slices, ...): with dim_chunks = C a CTA covers 512 / C dims with C
//    slices, so a batch with many splits (small batches) spreads its loads over C times the CTAs
//    and the threads of a CTA keep up to kInFlight loads each in flight instead of one dependent
//    load per split (the earlier form took 7.6-8 us at batch 64 and 128 under Nsight Compute:
//    BENCHMARKS.md section 7). Its reset mode zeroes merge 3's row tickets before the split.
//  sparse_mla_decode_combine_whole_row: rows of one chunk and at most kInFlight parts (batch 32 and
//    up at 16 heads) in straight-line code: the general one issued ~1,000 instructions a warp there
//    and held batch 64's launch ~2 us past the split (BENCHMARKS.md section 7, twenty-third
//    session).
// Two kernels, not two paths of one: in one kernel under the 64-register bound the general path
// spilled when both were inlined, and as calls (419f545) batch 8 lost 2.5 % to the general one's.
// Launched as a programmatic dependent of the split kernel (config value pdl 1), the combine may
// start while the split grid's last CTAs run, and waits for the partials before its first read.
// Under merge 3 it runs before the split instead, in its ticket-reset mode (last_cta_merge.cuh).
#include "common/ptx.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"
#include "sparse_mla_decode/schedule.h"
#include "sparse_mla_decode/timeline.cuh"

namespace smla_combine {

constexpr int kInFlight = smla::kCombineInFlight;

// How many of the row's partial slots hold parts: every slot with per-row splits; under the
// tile-dividing schedules the CTAs that ran the row's tiles (1: the split kernel wrote the row
// out, as it does every row from tail_rows on).
__device__ __forceinline__ int parts_of_row(const smla::CombineParams& p) {
  if (p.balanced_ctas == 0) return p.num_splits;
  const long long row = static_cast<long long>(blockIdx.y) * p.head_groups + blockIdx.x / p.block_h;
  if (row >= p.tail_rows) return 1;
  return smla::row_parts(smla::tail_division(p.tail_rows, p.tiles_per_row, p.balanced_ctas,
                                             p.ctas_multiplier, p.row_multiplier),
                         row)
      .count;
}

// A load of the partials or their lse. THROUGH_L2 (ld.global.cg) for merge 3's last CTA, which
// reads what other CTAs of its own grid wrote (last_cta_merge.cuh): this SM's L1 must not answer.
// The combine kernel runs after the grid that wrote them, and keeps its plain loads.
template <bool THROUGH_L2, typename T>
__device__ __forceinline__ T load(const T* address) {
  if constexpr (THROUGH_L2) {
    return __ldcg(address);
  } else {
    return *address;
  }
}

// A row's lse maximum and sum_s exp(lse_s - max) over its `parts` splits, reduced by one warp
// (each lane a handful of loads: no block barrier); max_lse is -inf when no split saw a token.
struct LseWeights {
  float max_lse;
  float weight_sum;
};
template <bool THROUGH_L2>
__device__ __forceinline__ LseWeights lse_weights(const float* lse, int parts) {
  float max_lse = ptx::neg_inf();
  for (int s = threadIdx.x % 32; s < parts; s += 32)
    max_lse = fmaxf(max_lse, load<THROUGH_L2>(lse + s));
  max_lse = ptx::warp_max(max_lse);
  if (max_lse == ptx::neg_inf()) return {max_lse, 0.f};
  float weight_sum = 0.f;
  for (int s = threadIdx.x % 32; s < parts; s += 32)
    weight_sum += expf(load<THROUGH_L2>(lse + s) - max_lse);
  return {max_lse, ptx::warp_sum(weight_sum)};
}

// Four consecutive dims of a partial as stored: fp32, or bf16 (merge 4: 2 registers, not 4).
template <bool BF16>
struct StoredPartOf {
  using type = float4;
};
template <>
struct StoredPartOf<true> {
  using type = uint2;
};
template <bool BF16>
using StoredPart = typename StoredPartOf<BF16>::type;

template <bool BF16>
__device__ __forceinline__ float4 unpack_part(const StoredPart<BF16>& bits) {
  if constexpr (BF16) {
    return make_float4(__uint_as_float(bits.x << 16), __uint_as_float(bits.x & 0xffff0000u),
                       __uint_as_float(bits.y << 16), __uint_as_float(bits.y & 0xffff0000u));
  } else {
    return bits;
  }
}

// Four consecutive dims of a partial: fp32, or bf16 (merge 4) at the same element offset.
template <bool THROUGH_L2, bool BF16>
__device__ __forceinline__ float4 load_part(const float* partials, long long element) {
  if constexpr (BF16) {
    return unpack_part<true>(load<THROUGH_L2>(reinterpret_cast<const uint2*>(
        reinterpret_cast<const unsigned short*>(partials) + element)));
  } else {
    return load<THROUGH_L2>(reinterpret_cast<const float4*>(partials + element));
  }
}

// sum over this thread's slice of w_s * partial_s[dims], w_s = exp(lse_s - max_lse) / weight_sum.
template <bool THROUGH_L2, bool BF16 = false>
__device__ __forceinline__ float4 slice_sum(const float* partials, const float* lse, int first,
                                            int step, int num_splits, float max_lse,
                                            float inv_weight_sum) {
  float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int base = first; base < num_splits; base += kInFlight * step) {
    float weight[kInFlight];
    float4 part[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      const int s = base + j * step;
      weight[j] = s < num_splits ? expf(load<THROUGH_L2>(lse + s) - max_lse) * inv_weight_sum : 0.f;
      // An empty split (weight 0) is not read: its partial need not hold finite data.
      part[j] = weight[j] != 0.f ? load_part<THROUGH_L2, BF16>(
                                       partials, static_cast<long long>(s) * smla::kLatentDim)
                                 : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      sum.x += weight[j] * part[j].x;
      sum.y += weight[j] * part[j].y;
      sum.z += weight[j] * part[j].z;
      sum.w += weight[j] * part[j].w;
    }
  }
  return sum;
}

// A slice's first kInFlight splits (s = first, first + step, ...): their lse values and partials,
// loaded together before the row's weights are known. The weights need the lse maximum, the loads
// need no weight: so the combine's reads take one trip to L2 instead of two (the lse, then the
// partials). An empty split's partial is read (the workspace holds it) and then not used.
struct SliceBatch {
  float lse[kInFlight];
  float4 part[kInFlight];
};
template <bool BF16>
__device__ __forceinline__ SliceBatch load_batch(const float* partials, const float* lse, int first,
                                                 int step, int parts) {
  SliceBatch batch;
#pragma unroll
  for (int j = 0; j < kInFlight; ++j) {
    const int s = first + j * step;
    batch.lse[j] = s < parts ? lse[s] : ptx::neg_inf();
    batch.part[j] =
        s < parts ? load_part<false, BF16>(partials, static_cast<long long>(s) * smla::kLatentDim)
                  : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  return batch;
}

// sum over the batch's splits of w_s * partial_s, w_s = exp(lse_s - max_lse) / weight_sum; a split
// of weight 0 (empty, or past the row's parts) is selected out, so its bits need not be finite.
__device__ __forceinline__ float4 weigh_batch(const SliceBatch& batch, float max_lse,
                                              float inv_weight_sum) {
  float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int j = 0; j < kInFlight; ++j) {
    const float weight = expf(batch.lse[j] - max_lse) * inv_weight_sum;
    const float4 part = weight != 0.f ? batch.part[j] : make_float4(0.f, 0.f, 0.f, 0.f);
    sum.x += weight * part.x;
    sum.y += weight * part.y;
    sum.z += weight * part.z;
    sum.w += weight * part.w;
  }
  return sum;
}

// This thread's slice of the row (splits slice, slice + step, ...): the first batch loaded before
// the weights, any further ones by slice_sum; 4 dims summed, or all zero for a row with no token
// (max_lse -inf, returned in `weights`).
template <bool BF16>
__device__ __forceinline__ float4 combine_slice(const float* partials, const float* lse, int slice,
                                                int step, int parts, LseWeights& weights) {
  const SliceBatch batch = load_batch<BF16>(partials, lse, slice, step, parts);
  weights = lse_weights<false>(lse, parts);  // every warp reduces the lse itself: no barrier
  if (weights.max_lse == ptx::neg_inf()) return make_float4(0.f, 0.f, 0.f, 0.f);
  const float inv_weight_sum = 1.f / weights.weight_sum;
  float4 sum = weigh_batch(batch, weights.max_lse, inv_weight_sum);
  const float4 rest = slice_sum<false, BF16>(partials, lse, slice + kInFlight * step, step, parts,
                                             weights.max_lse, inv_weight_sum);
  sum.x += rest.x;
  sum.y += rest.y;
  sum.z += rest.z;
  sum.w += rest.w;
  return sum;
}

// A row of one dim chunk and at most kInFlight parts: thread t owns dims 4t..4t+3 of every part.
// Every lse and partial is loaded at once (one trip to L2), then weighed, in straight-line code:
// none of the general path's slices, chunk arithmetic, warp reductions or block barrier. (Nsight
// Compute at batch 64, the general path: 0.67 instructions issued a cycle per scheduler over
// 12,031 cycles, ~1,000 a warp.) The parts stay in their stored form until weighed (bf16: 2
// registers each, not 4).
template <bool BF16>
__device__ __forceinline__ void combine_whole_row(const float* partial_out,
                                                  const float* partial_lse,
                                                  unsigned short* out_rows, float* out_lse,
                                                  int n_local_heads, int num_splits, int parts) {
  const long long bh = static_cast<long long>(blockIdx.y) * n_local_heads + blockIdx.x;
  const float* lse = partial_lse + bh * num_splits;
  const long long first_element = bh * num_splits * smla::kLatentDim + threadIdx.x * 4;
  const StoredPart<BF16>* parts_at = reinterpret_cast<const StoredPart<BF16>*>(
      BF16 ? static_cast<const void*>(reinterpret_cast<const unsigned short*>(partial_out) +
                                      first_element)
           : static_cast<const void*>(partial_out + first_element));
  constexpr int kPartStride = smla::kLatentDim / 4;  // StoredPart elements from part to part
  float part_lse[kInFlight];
  StoredPart<BF16> part[kInFlight];
#pragma unroll
  for (int s = 0; s < kInFlight; ++s) {
    part_lse[s] = s < parts ? lse[s] : ptx::neg_inf();
    if (s < parts) part[s] = parts_at[s * kPartStride];
  }
  float max_lse = part_lse[0];
#pragma unroll
  for (int s = 1; s < kInFlight; ++s) max_lse = fmaxf(max_lse, part_lse[s]);
  unsigned short* out = out_rows + bh * smla::kLatentDim + threadIdx.x * 4;
  if (max_lse == ptx::neg_inf()) {  // no split saw a token
    *reinterpret_cast<uint2*>(out) = make_uint2(0u, 0u);
    if (threadIdx.x == 0) out_lse[bh] = max_lse;
    return;
  }
  float weight_sum = 0.f;
#pragma unroll
  for (int s = 0; s < kInFlight; ++s) {
    part_lse[s] = expf(part_lse[s] - max_lse);  // from here on, the part's weight
    weight_sum += part_lse[s];
  }
  const float inv_weight_sum = 1.f / weight_sum;
  float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int s = 0; s < kInFlight; ++s) {
    // An empty split (weight 0) is selected out: its partial's bits need not be finite.
    if (s < parts && part_lse[s] != 0.f) {
      const float w = part_lse[s] * inv_weight_sum;
      const float4 v = unpack_part<BF16>(part[s]);
      sum.x += w * v.x;
      sum.y += w * v.y;
      sum.z += w * v.z;
      sum.w += w * v.w;
    }
  }
  *reinterpret_cast<uint2*>(out) =
      make_uint2(ptx::pack_bf16x2(sum.x, sum.y), ptx::pack_bf16x2(sum.z, sum.w));
  if (threadIdx.x == 0) out_lse[bh] = max_lse + logf(weight_sum);
}

// The general path: a chunk of the row's dims, its splits cut into slices (see the file's
// comment).
template <int NUM_THREADS>
__device__ __forceinline__ void combine_chunk(const float* partial_out, const float* partial_lse,
                                              unsigned short* out_rows, float* out_lse,
                                              int n_local_heads, int num_splits, int dim_chunks,
                                              int bf16_partials, int parts) {
  __shared__ float4 slice_sums[NUM_THREADS];
  const long long bh = static_cast<long long>(blockIdx.y) * n_local_heads + blockIdx.x;
  const float* lse = partial_lse + bh * num_splits;
  const int groups = NUM_THREADS / dim_chunks;  // 4-dim groups per chunk
  const int group = threadIdx.x % groups;
  const int slice = threadIdx.x / groups;
  const int dim = (blockIdx.z * groups + group) * 4;
  unsigned short* out = out_rows + bh * smla::kLatentDim + dim;
  // The row's first partial: element bh * num_splits * 512 + dim, fp32 or bf16.
  const long long first_element = bh * num_splits * smla::kLatentDim + dim;
  LseWeights weights;
  slice_sums[threadIdx.x] =
      bf16_partials != 0
          ? combine_slice<true>(
                reinterpret_cast<const float*>(
                    reinterpret_cast<const unsigned short*>(partial_out) + first_element),
                lse, slice, dim_chunks, parts, weights)
          : combine_slice<false>(partial_out + first_element, lse, slice, dim_chunks, parts,
                                 weights);
  const float max_lse = weights.max_lse;
  if (max_lse == ptx::neg_inf()) {  // every thread of the CTA sees the same row: no barrier wait
    if (slice == 0) *reinterpret_cast<uint2*>(out) = make_uint2(0u, 0u);
    if (threadIdx.x == 0 && blockIdx.z == 0) out_lse[bh] = max_lse;
    return;
  }
  const float weight_sum = weights.weight_sum;
  __syncthreads();
  if (slice != 0) return;
  float4 sum = slice_sums[group];
  for (int other = 1; other < dim_chunks; ++other) {
    const float4 part = slice_sums[other * groups + group];
    sum.x += part.x;
    sum.y += part.y;
    sum.z += part.z;
    sum.w += part.w;
  }
  *reinterpret_cast<uint2*>(out) =
      make_uint2(ptx::pack_bf16x2(sum.x, sum.y), ptx::pack_bf16x2(sum.z, sum.w));
  if (threadIdx.x == 0 && blockIdx.z == 0) out_lse[bh] = max_lse + logf(weight_sum);
}

}  // namespace smla_combine

// At least 8 CTAs an SM (64 registers): batch 64's 1,024 CTAs (16 heads, 4 splits, one chunk) stay
// one wave on 132 SMs. load_batch's registers took the kernel from 32 to 72 without the bound.
template <int NUM_THREADS>
__global__ void __launch_bounds__(NUM_THREADS, 8)
    sparse_mla_decode_combine(const smla::CombineParams p) {
  static_assert(smla::kLatentDim == NUM_THREADS * 4, "a chunk's threads own 4 dims each");
  SMLA_TL_ENTER_COMBINE();           // timeline.cuh: nothing unless the diagnostic build
  if (p.reset_tickets != nullptr) {  // merge 3: before the split, its programmatic dependent
    ptx::launch_dependents();        // the split waits for this grid's completion before any ticket
    const int ticket = static_cast<int>(blockIdx.x) * NUM_THREADS + static_cast<int>(threadIdx.x);
    if (ticket < p.reset_count) p.reset_tickets[ticket] = 0u;
    return;
  }
  const int parts = smla_combine::parts_of_row(p);
  if (parts == 1) return;  // a row one CTA ran: written out by the split kernel
  ptx::grid_dependency_wait();
  SMLA_TL_MARK(threadIdx.x == 0, kFirstFull);  // timeline.cuh: the partials may be read
  smla_combine::combine_chunk<NUM_THREADS>(p.partial_out, p.partial_lse, p.out, p.lse,
                                           p.n_local_heads, p.num_splits, p.dim_chunks,
                                           p.bf16_partials, parts);
  SMLA_TL_LEAVE_COMBINE();
}

// The same bound. Launched only for plans whose rows have at most kInFlight parts (one dim chunk);
// any other launch is a host bug, and traps rather than merge part of a row.
template <int NUM_THREADS>
__global__ void __launch_bounds__(NUM_THREADS, 8)
    sparse_mla_decode_combine_whole_row(const smla::CombineParams p) {
  static_assert(smla::kLatentDim == NUM_THREADS * 4, "a thread owns 4 dims of every part");
  SMLA_TL_ENTER_COMBINE();
  if (p.num_splits > smla_combine::kInFlight || p.dim_chunks != 1) __trap();
  const int parts = smla_combine::parts_of_row(p);
  if (parts == 1) return;
  ptx::grid_dependency_wait();
  SMLA_TL_MARK(threadIdx.x == 0, kFirstFull);
  if (p.bf16_partials != 0) {
    smla_combine::combine_whole_row<true>(p.partial_out, p.partial_lse, p.out, p.lse,
                                          p.n_local_heads, p.num_splits, parts);
  } else {
    smla_combine::combine_whole_row<false>(p.partial_out, p.partial_lse, p.out, p.lse,
                                           p.n_local_heads, p.num_splits, parts);
  }
  SMLA_TL_LEAVE_COMBINE();
}
