#pragma once
// Gathering one tile of KV rows into a ring stage: the token ids fetched a tile ahead, then one
// 16-byte cp.async per chunk (split.cuh, and the cp.async path of split_pipelined.cuh).
#include "common/ptx.cuh"
#include "sparse_mla_decode/kv_format.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"

namespace smla_detail {

// The token ids one thread's copies of one tile need, loaded one tile ahead of use so that the
// index loads never sit on the gather's critical path (a dependent global load per copy would).
template <int BLOCK_T, int NUM_THREADS, int KV_FORMAT>
struct TileTokens {
  static constexpr int kChunks = BLOCK_T * KvTraits<KV_FORMAT>::kChunksPerRow;
  static constexpr int kPerThread = (kChunks + NUM_THREADS - 1) / NUM_THREADS;
  int token[kPerThread];

  // Issues the index loads (no wait: the registers fill while the current tile is computed).
  __device__ __forceinline__ void fetch(const int* index_row, int first_pos, int end_pos) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int i = static_cast<int>(threadIdx.x) + k * NUM_THREADS;
      const int pos = first_pos + i / KvTraits<KV_FORMAT>::kChunksPerRow;
      token[k] = i < kChunks && pos < end_pos ? __ldg(index_row + pos) : -1;
    }
  }
};

// Issues the cp.async copies of one tile (BLOCK_T rows) into ring stage `stage` and records each
// row's token id (-1 for invalid entries and positions past the split's end).
template <int BLOCK_T, int NUM_THREADS, int KV_FORMAT>
__device__ __forceinline__ void load_tile(const smla::SplitParams& p,
                                          const smla::SmemLayout& layout, unsigned char* smem,
                                          const TileTokens<BLOCK_T, NUM_THREADS, KV_FORMAT>& ids,
                                          int stage) {
  using Kv = KvTraits<KV_FORMAT>;
  using Tokens = TileTokens<BLOCK_T, NUM_THREADS, KV_FORMAT>;
  unsigned char* ring = smem + layout.ring_offset + stage * layout.ring_stage_bytes;
  int* tokens = reinterpret_cast<int*>(smem + layout.token_offset) + stage * BLOCK_T;
#pragma unroll
  for (int k = 0; k < Tokens::kPerThread; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * NUM_THREADS;
    if (i >= Tokens::kChunks) break;
    const int row = i / Kv::kChunksPerRow;
    const int chunk = i % Kv::kChunksPerRow;
    const int token = ids.token[k];
    if (chunk == 0) tokens[row] = token;
    // 64-bit row offsets: caches past 2^31 bytes are normal (4M tokens x 656 B).
    const long long row_offset = token >= 0 ? static_cast<long long>(token) * Kv::kRowBytes : 0;
    ptx::cp_async_16(ring + row * layout.ring_row_stride + chunk * 16,
                     p.kv + row_offset + chunk * 16, token >= 0 ? 16 : 0);
  }
}

}  // namespace smla_detail
