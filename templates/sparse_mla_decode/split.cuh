#pragma once
// Split-K sparse MLA decode: one CTA per (split, head group, batch item). It walks its slice of the
// top-k index list in tiles of BLOCK_T tokens, gathers the KV rows with 16-byte cp.async into a
// NUM_STAGES-deep shared-memory ring, computes scores and P.V with mma.sync m16n8k16 (bf16 or f16
// in, fp32 accumulate) and keeps an online softmax. With one split it writes the final bf16 output;
// otherwise fp32 partials + lse per split, merged by sparse_mla_decode_combine.
// Its steps: kv_format.cuh (KV formats and conversions), tile_gather.cuh (the cp.async gather),
// split_scores.cuh (scores and softmax), split_output.cuh (P.V and the output).
#include "common/ptx.cuh"
#include "sparse_mla_decode/kv_format.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"
#include "sparse_mla_decode/split_output.cuh"
#include "sparse_mla_decode/split_scores.cuh"
#include "sparse_mla_decode/tile_gather.cuh"

namespace smla_detail {

// This head group's q rows into shared memory by cp.async (rows past n_local_heads are zero, so
// they cost nothing but time), and the softmax statistics of its rows reset.
template <int BLOCK_H, int NUM_THREADS>
__device__ __forceinline__ void start_q(const smla::SplitParams& p, const smla::SmemLayout& layout,
                                        unsigned char* smem, int batch_item, int first_head) {
  constexpr int kQChunks = smla::kHeadDim * 2 / 16;
  for (int i = threadIdx.x; i < BLOCK_H * kQChunks; i += NUM_THREADS) {
    const int row = i / kQChunks;
    const int chunk = i % kQChunks;
    const bool valid = first_head + row < p.n_local_heads;
    const long long q_row = static_cast<long long>(batch_item) * p.n_local_heads + first_head + row;
    const unsigned char* src = reinterpret_cast<const unsigned char*>(p.q) +
                               (valid ? q_row * smla::kHeadDim * 2 : 0) + chunk * 16;
    ptx::cp_async_16(smem + layout.q_offset + row * layout.q_row_stride + chunk * 16, src,
                     valid ? 16 : 0);
  }
  ptx::cp_async_commit();
  if (threadIdx.x < BLOCK_H) {
    float* stats = reinterpret_cast<float*>(smem + layout.stats_offset);
    stats[threadIdx.x] = ptx::neg_inf();
    stats[BLOCK_H + threadIdx.x] = 0.f;
  }
}

// One tile already in ring stage `stage`: fp8 rows dequantized (q converted once, at tile 0),
// scores, softmax and P.V into acc, with the block barriers between the steps.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int KV_FORMAT, int N_TILES>
__device__ __forceinline__ void compute_tile(const smla::SplitParams& p,
                                             const smla::SmemLayout& layout, unsigned char* smem,
                                             int tile, int stage,
                                             float (&acc)[BLOCK_H / smla::kMmaM][N_TILES][4]) {
  constexpr int kThreads = NUM_WARPS * 32;
  const unsigned char* ring = smem + layout.ring_offset + stage * layout.ring_stage_bytes;
  const int* tokens = reinterpret_cast<const int*>(smem + layout.token_offset) + stage * BLOCK_T;
  const unsigned char* kv_tile = ring;
  int kv_row_stride = layout.ring_row_stride;
  if (KvTraits<KV_FORMAT>::kFp8) {
    if (tile == 0) convert_q_to_f16<BLOCK_H, kThreads>(layout, smem);
    dequantize_tile<BLOCK_T, kThreads>(layout, ring, smem + layout.dequant_offset);
    __syncthreads();
    kv_tile = smem + layout.dequant_offset;
    kv_row_stride = smla::kBf16RowStride;
  }
  compute_scores<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT>(layout, smem, ring, kv_tile,
                                                         kv_row_stride);
  __syncthreads();
  softmax_tile<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT>(layout, smem, ring, tokens, p.scale_log2);
  __syncthreads();
  accumulate_pv<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT>(layout, smem, kv_tile, kv_row_stride, acc);
  __syncthreads();
}

}  // namespace smla_detail

// After the token loop, a combine launched as a programmatic dependent (merge 1) may be scheduled
// once every CTA of this grid got there (or exited), so its launch overlaps the grid's last output
// writes; it waits for this grid's completion before reading the partials. At the kernel's start
// instead, the waiting combine CTAs cost 1-2.6 us at batches 8-64 (BENCHMARKS.md section 7, fourth
// session).
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT>
__global__ void __launch_bounds__(NUM_WARPS * 32, 1)
    sparse_mla_decode_split(const smla::SplitParams p) {
  static_assert(BLOCK_T % 16 == 0 && BLOCK_H % 16 == 0, "tiles are multiples of the mma shape");
  static_assert(smla::kLatentDim % (NUM_WARPS * 16) == 0, "each warp owns pairs of 8-dim n-tiles");
  constexpr smla::SmemLayout layout =
      smla::smem_layout(BLOCK_T, BLOCK_H, NUM_WARPS, NUM_STAGES, KV_FORMAT);
  constexpr int kThreads = NUM_WARPS * 32;
  extern __shared__ __align__(128) unsigned char smem[];

  const int split = blockIdx.x;
  const int first_head = blockIdx.y * BLOCK_H;
  const int batch_item = blockIdx.z;
  const int first_pos = split * p.tokens_per_split;
  const int end_pos = min(p.topk, first_pos + p.tokens_per_split);
  const int num_tiles = end_pos > first_pos ? (end_pos - first_pos + BLOCK_T - 1) / BLOCK_T : 0;
  const int* index_row = p.indices + static_cast<long long>(batch_item) * p.topk;

  smla_detail::start_q<BLOCK_H, kThreads>(p, layout, smem, batch_item, first_head);

  smla_detail::TileTokens<BLOCK_T, kThreads, KV_FORMAT> next_ids;
#pragma unroll
  for (int stage = 0; stage < NUM_STAGES - 1; ++stage) {
    if (stage < num_tiles) {
      next_ids.fetch(index_row, first_pos + stage * BLOCK_T, end_pos);
      smla_detail::load_tile<BLOCK_T, kThreads, KV_FORMAT>(p, layout, smem, next_ids, stage);
    }
    ptx::cp_async_commit();
  }
  // Ids of the first tile the main loop prefetches.
  next_ids.fetch(index_row, first_pos + (NUM_STAGES - 1) * BLOCK_T, end_pos);

  float acc[BLOCK_H / smla::kMmaM][smla::kLatentDim / NUM_WARPS / smla::kMmaN][4];
#pragma unroll
  for (int m = 0; m < BLOCK_H / smla::kMmaM; ++m) {
#pragma unroll
    for (int n = 0; n < smla::kLatentDim / NUM_WARPS / smla::kMmaN; ++n) {
      acc[m][n][0] = acc[m][n][1] = acc[m][n][2] = acc[m][n][3] = 0.f;
    }
  }

  for (int tile = 0; tile < num_tiles; ++tile) {
    const int prefetch = tile + NUM_STAGES - 1;
    if (prefetch < num_tiles) {
      smla_detail::load_tile<BLOCK_T, kThreads, KV_FORMAT>(p, layout, smem, next_ids,
                                                           prefetch % NUM_STAGES);
      // The ids of the tile after it load while this tile is computed.
      next_ids.fetch(index_row, first_pos + (prefetch + 1) * BLOCK_T, end_pos);
    }
    ptx::cp_async_commit();
    ptx::cp_async_wait<NUM_STAGES - 1>();
    __syncthreads();

    smla_detail::compute_tile<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT,
                              smla::kLatentDim / NUM_WARPS / smla::kMmaN>(p, layout, smem, tile,
                                                                          tile % NUM_STAGES, acc);
  }
  ptx::cp_async_wait<0>();
  ptx::launch_dependents();  // see the note above the kernel
  __syncthreads();
  smla_detail::write_output<BLOCK_H, NUM_WARPS>(p, layout, smem, batch_item, first_head, split,
                                                acc);
}
