#pragma once
// Split-K sparse MLA decode: one CTA per (split, head group, batch item). It walks its slice of the
// top-k index list in tiles of BLOCK_T tokens, gathers the KV rows with 16-byte cp.async into a
// NUM_STAGES-deep shared-memory ring, computes scores and P.V with mma.sync m16n8k16 (bf16 or f16
// in, fp32 accumulate) and keeps an online softmax. With one split it writes the final bf16 output;
// otherwise fp32 partials + lse per split, merged by sparse_mla_decode_combine.
#include "common/ptx.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"

namespace smla_detail {

// fp8 caches run the tensor cores in f16: e4m3 -> f16 is one exact cvt per pair, while there is no
// direct e4m3 -> bf16 conversion. q (bf16) is converted to f16 once per CTA, clamped to f16's
// range. bf16 caches stay bf16 throughout.
template <int KV_FORMAT>
struct KvTraits {
  static constexpr bool kFp8 = KV_FORMAT == smla::kFp8DsMla;
  static constexpr int kRowBytes = smla::kv_row_bytes(KV_FORMAT);
  static constexpr int kChunksPerRow = kRowBytes / 16;

  __device__ static __forceinline__ void mma(float (&acc)[4], const unsigned (&a)[4], unsigned b0,
                                             unsigned b1) {
    if (kFp8) {
      ptx::mma_f16_16816(acc, a, b0, b1);
    } else {
      ptx::mma_bf16_16816(acc, a, b0, b1);
    }
  }
  __device__ static __forceinline__ unsigned short pack(float value) {
    return static_cast<unsigned short>(
        (kFp8 ? ptx::pack_f16x2(value, 0.f) : ptx::pack_bf16x2(value, 0.f)) & 0xffffu);
  }
};

__device__ __forceinline__ float clamp_to_f16(float value) {
  return fminf(fmaxf(value, -65504.f), 65504.f);
}

// Eight bf16 (one uint4) -> eight f16, clamped to f16's finite range.
__device__ __forceinline__ uint4 bf16x8_to_f16x8(uint4 bf16) {
  const unsigned words[4] = {bf16.x, bf16.y, bf16.z, bf16.w};
  unsigned out[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[i] = ptx::pack_f16x2(clamp_to_f16(__uint_as_float(words[i] << 16)),
                             clamp_to_f16(__uint_as_float(words[i] & 0xffff0000u)));
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

// q rows in shared memory, bf16 -> f16 in place (fp8 caches only), once per CTA.
template <int BLOCK_H, int NUM_THREADS>
__device__ __forceinline__ void convert_q_to_f16(const smla::SmemLayout& layout,
                                                 unsigned char* smem) {
  constexpr int kUnits = smla::kHeadDim * 2 / 16;
  for (int i = threadIdx.x; i < BLOCK_H * kUnits; i += NUM_THREADS) {
    uint4* unit = reinterpret_cast<uint4*>(smem + layout.q_offset +
                                           (i / kUnits) * layout.q_row_stride + (i % kUnits) * 16);
    *unit = bf16x8_to_f16x8(*unit);
  }
}

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

// fp8 rows -> unscaled f16 rows (exact), rope bf16 -> f16; scales stay in the ring and are applied
// to the scores and to P.
template <int BLOCK_T, int NUM_THREADS>
__device__ __forceinline__ void dequantize_tile(const smla::SmemLayout& layout,
                                                const unsigned char* ring, unsigned char* dequant) {
  constexpr int kLatentUnits = smla::kLatentDim / 8;  // 8 fp8 bytes -> 16 bf16 bytes
  constexpr int kRopeUnits = smla::kRopeDim * 2 / 16;
  constexpr int kUnits = kLatentUnits + kRopeUnits;
  for (int i = threadIdx.x; i < BLOCK_T * kUnits; i += NUM_THREADS) {
    const int row = i / kUnits;
    const int unit = i % kUnits;
    const unsigned char* src = ring + row * layout.ring_row_stride;
    unsigned char* dst = dequant + row * smla::kBf16RowStride;
    if (unit < kLatentUnits) {
      const uint2 bytes = *reinterpret_cast<const uint2*>(src + unit * 8);
      uint4 out;
      ptx::e4m3x4_to_f16x4(bytes.x, out.x, out.y);
      ptx::e4m3x4_to_f16x4(bytes.y, out.z, out.w);
      *reinterpret_cast<uint4*>(dst + unit * 16) = out;
    } else {
      const int rope_unit = unit - kLatentUnits;
      *reinterpret_cast<uint4*>(dst + smla::kLatentDim * 2 + rope_unit * 16) = bf16x8_to_f16x8(
          *reinterpret_cast<const uint4*>(src + smla::kFp8RopeOffset + rope_unit * 16));
    }
  }
}

__device__ __forceinline__ float fp8_group_scale(const unsigned char* ring_row, int group) {
  return reinterpret_cast<const float*>(ring_row + smla::kFp8ScaleOffset)[group];
}

// Partial scores S[h][t] = q[h] . K[t] for this warp's (m-tile, n-tile, segment slice) items,
// written to the fp32 scores area, one slab per segment slice.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int KV_FORMAT>
__device__ __forceinline__ void compute_scores(const smla::SmemLayout& layout, unsigned char* smem,
                                               const unsigned char* ring,
                                               const unsigned char* k_tile, int k_row_stride) {
  using Kv = KvTraits<KV_FORMAT>;
  constexpr int kMTiles = BLOCK_H / smla::kMmaM;
  constexpr int kNTiles = BLOCK_T / smla::kMmaN;
  constexpr int kKSplit = smla::score_ksplit(BLOCK_T, BLOCK_H, NUM_WARPS);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const unsigned char* q_tile = smem + layout.q_offset;
  float* scores = reinterpret_cast<float*>(smem + layout.scores_offset);
  for (int item = warp; item < kMTiles * kNTiles * kKSplit; item += NUM_WARPS) {
    const int m_tile = item % kMTiles;
    const int n_tile = (item / kMTiles) % kNTiles;
    const int slice = item / (kMTiles * kNTiles);
    float total[4] = {0.f, 0.f, 0.f, 0.f};
    // ldmatrix row addresses: A (q) rows by lane%16, 8-column half by lane/16; B (K) rows are the
    // n-tile's 8 tokens, lane/8 picks which 8 of the 32 dims of two k-steps.
    const unsigned char* a_row =
        q_tile + (m_tile * 16 + lane % 16) * layout.q_row_stride + (lane / 16) * 16;
    const unsigned char* b_row = k_tile + (n_tile * 8 + lane % 8) * k_row_stride + (lane / 8) * 16;
    for (int segment = slice; segment < smla::kScoreSegments; segment += kKSplit) {
      float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int pair = 0; pair < smla::kKStepsPerSegment / 2; ++pair) {
        const int k_step = segment * smla::kKStepsPerSegment + pair * 2;
        unsigned b[4];
        ptx::ldmatrix_x4(b, b_row + k_step * 32);
        unsigned a0[4];
        ptx::ldmatrix_x4(a0, a_row + k_step * 32);
        Kv::mma(acc, a0, b[0], b[1]);
        unsigned a1[4];
        ptx::ldmatrix_x4(a1, a_row + (k_step + 1) * 32);
        Kv::mma(acc, a1, b[2], b[3]);
      }
      if (Kv::kFp8 && segment < 8) {
        // Columns of the C fragment are tokens: scale each by its row's group scale.
        const int group = segment / 2;
        const int col = n_tile * 8 + (lane % 4) * 2;
        const float scale0 = fp8_group_scale(ring + col * layout.ring_row_stride, group);
        const float scale1 = fp8_group_scale(ring + (col + 1) * layout.ring_row_stride, group);
        total[0] += acc[0] * scale0;
        total[1] += acc[1] * scale1;
        total[2] += acc[2] * scale0;
        total[3] += acc[3] * scale1;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) total[j] += acc[j];
      }
    }
    float* slab = scores + slice * BLOCK_H * BLOCK_T;
    const int row = m_tile * 16 + lane / 4;
    const int col = n_tile * 8 + (lane % 4) * 2;
    *reinterpret_cast<float2*>(slab + row * BLOCK_T + col) = make_float2(total[0], total[1]);
    *reinterpret_cast<float2*>(slab + (row + 8) * BLOCK_T + col) = make_float2(total[2], total[3]);
  }
}

// Online softmax over the tile: one warp per head row. Updates the running max/sum, stores the
// rescale factor for the accumulator, and writes P (times each group's scale for fp8) as bf16.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int KV_FORMAT>
__device__ __forceinline__ void softmax_tile(const smla::SmemLayout& layout, unsigned char* smem,
                                             const unsigned char* ring, const int* tokens,
                                             float scale_log2) {
  using Kv = KvTraits<KV_FORMAT>;
  constexpr int kKSplit = smla::score_ksplit(BLOCK_T, BLOCK_H, NUM_WARPS);
  constexpr int kColsPerLane = (BLOCK_T + 31) / 32;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const float* scores = reinterpret_cast<const float*>(smem + layout.scores_offset);
  float* running_max = reinterpret_cast<float*>(smem + layout.stats_offset);
  float* running_sum = running_max + BLOCK_H;
  float* rescale = running_sum + BLOCK_H;
  for (int row = warp; row < BLOCK_H; row += NUM_WARPS) {
    float s[kColsPerLane];
    float tile_max = ptx::neg_inf();
#pragma unroll
    for (int j = 0; j < kColsPerLane; ++j) {
      const int col = lane + j * 32;
      s[j] = ptx::neg_inf();
      if (col < BLOCK_T && tokens[col] >= 0) {
        float dot = 0.f;
#pragma unroll
        for (int slice = 0; slice < kKSplit; ++slice) {
          dot += scores[(slice * BLOCK_H + row) * BLOCK_T + col];
        }
        s[j] = dot * scale_log2;
      }
      tile_max = fmaxf(tile_max, s[j]);
    }
    tile_max = ptx::warp_max(tile_max);
    const float old_max = running_max[row];
    const float new_max = fmaxf(old_max, tile_max);
    const bool nothing_valid = new_max == ptx::neg_inf();
    const float alpha = nothing_valid ? 1.f : exp2f(old_max - new_max);
    float tile_sum = 0.f;
#pragma unroll
    for (int j = 0; j < kColsPerLane; ++j) {
      const int col = lane + j * 32;
      const float prob = nothing_valid ? 0.f : exp2f(s[j] - new_max);
      tile_sum += prob;
      if (col < BLOCK_T) {
#pragma unroll
        for (int copy = 0; copy < (Kv::kFp8 ? smla::kNumGroups : 1); ++copy) {
          const float scale =
              Kv::kFp8 ? fp8_group_scale(ring + col * layout.ring_row_stride, copy) : 1.f;
          const float value = prob * scale;
          unsigned short* probs = reinterpret_cast<unsigned short*>(
              smem + layout.probs_offset + (copy * BLOCK_H + row) * layout.probs_row_stride);
          probs[col] = Kv::pack(value);
        }
      }
    }
    tile_sum = ptx::warp_sum(tile_sum);
    __syncwarp();
    if (lane == 0) {
      running_max[row] = new_max;
      running_sum[row] = running_sum[row] * alpha + tile_sum;
      rescale[row] = alpha;
    }
  }
}

// acc = acc * rescale + P . V for this warp's 512 / NUM_WARPS output dims.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int KV_FORMAT>
__device__ __forceinline__ void accumulate_pv(
    const smla::SmemLayout& layout, const unsigned char* smem, const unsigned char* v_tile,
    int v_row_stride,
    float (&acc)[BLOCK_H / smla::kMmaM][smla::kLatentDim / NUM_WARPS / smla::kMmaN][4]) {
  using Kv = KvTraits<KV_FORMAT>;
  constexpr int kMTiles = BLOCK_H / smla::kMmaM;
  constexpr int kDimsPerWarp = smla::kLatentDim / NUM_WARPS;
  constexpr int kNTiles = kDimsPerWarp / smla::kMmaN;
  constexpr int kDimsPerCopy = Kv::kFp8 ? smla::kGroupDim : smla::kLatentDim;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int first_dim = warp * kDimsPerWarp;
  const float* rescale = reinterpret_cast<const float*>(smem + layout.stats_offset) + 2 * BLOCK_H;
#pragma unroll
  for (int m_tile = 0; m_tile < kMTiles; ++m_tile) {
    const float alpha_lo = rescale[m_tile * 16 + lane / 4];
    const float alpha_hi = rescale[m_tile * 16 + lane / 4 + 8];
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
      acc[m_tile][n][0] *= alpha_lo;
      acc[m_tile][n][1] *= alpha_lo;
      acc[m_tile][n][2] *= alpha_hi;
      acc[m_tile][n][3] *= alpha_hi;
    }
  }
#pragma unroll
  for (int k_step = 0; k_step < BLOCK_T / smla::kMmaK; ++k_step) {
    // B via ldmatrix.trans: lanes 0-7 / 8-15 address tokens k..k+7 / k+8..k+15 of dims n..n+7,
    // lanes 16-31 the same tokens for dims n+8..n+15: two n-tiles per load.
    const unsigned char* v_row =
        v_tile + (k_step * 16 + lane % 16) * v_row_stride + (lane / 16) * 16;
#pragma unroll
    for (int m_tile = 0; m_tile < kMTiles; ++m_tile) {
      unsigned a[4];
#pragma unroll
      for (int n = 0; n < kNTiles; n += 2) {
        const int dim = first_dim + n * 8;
        // A warp's dims never straddle a copy boundary except at multiples of kDimsPerCopy.
        if ((n * 8) % kDimsPerCopy == 0) {
          const int copy = dim / kDimsPerCopy;
          const unsigned char* p_row =
              smem + layout.probs_offset +
              (copy * BLOCK_H + m_tile * 16 + lane % 16) * layout.probs_row_stride + k_step * 32 +
              (lane / 16) * 16;
          ptx::ldmatrix_x4(a, p_row);
        }
        unsigned b[4];
        ptx::ldmatrix_x4_trans(b, v_row + dim * 2);
        Kv::mma(acc[m_tile][n], a, b[0], b[1]);
        Kv::mma(acc[m_tile][n + 1], a, b[2], b[3]);
      }
    }
  }
}

// Final normalization; bf16 output + lse for one split, fp32 partials otherwise.
template <int BLOCK_H, int NUM_WARPS>
__device__ __forceinline__ void write_output(
    const smla::SplitParams& p, const smla::SmemLayout& layout, const unsigned char* smem,
    int batch_item, int first_head, int split,
    const float (&acc)[BLOCK_H / smla::kMmaM][smla::kLatentDim / NUM_WARPS / smla::kMmaN][4]) {
  constexpr int kMTiles = BLOCK_H / smla::kMmaM;
  constexpr int kDimsPerWarp = smla::kLatentDim / NUM_WARPS;
  constexpr int kNTiles = kDimsPerWarp / smla::kMmaN;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const float* running_max = reinterpret_cast<const float*>(smem + layout.stats_offset);
  const float* running_sum = running_max + BLOCK_H;
  const bool single_split = p.num_splits == 1;
#pragma unroll
  for (int m_tile = 0; m_tile < kMTiles; ++m_tile) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = m_tile * 16 + lane / 4 + half * 8;
      const int head = first_head + row;
      if (head >= p.n_local_heads) continue;
      const float sum = running_sum[row];
      const float inv_sum = sum > 0.f ? 1.f / sum : 0.f;
      const long long bh = static_cast<long long>(batch_item) * p.n_local_heads + head;
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
        const int dim = warp * kDimsPerWarp + n * 8 + (lane % 4) * 2;
        const float v0 = acc[m_tile][n][half * 2] * inv_sum;
        const float v1 = acc[m_tile][n][half * 2 + 1] * inv_sum;
        if (single_split) {
          *reinterpret_cast<unsigned*>(p.out + bh * smla::kLatentDim + dim) =
              ptx::pack_bf16x2(v0, v1);
        } else {
          *reinterpret_cast<float2*>(p.partial_out +
                                     (bh * p.num_splits + split) * smla::kLatentDim + dim) =
              make_float2(v0, v1);
        }
      }
    }
  }
  if (threadIdx.x < BLOCK_H && first_head + static_cast<int>(threadIdx.x) < p.n_local_heads) {
    const int row = threadIdx.x;
    const float sum = running_sum[row];
    const float lse =
        sum > 0.f ? (running_max[row] + log2f(sum)) * 0.69314718055994531f : ptx::neg_inf();
    const long long bh = static_cast<long long>(batch_item) * p.n_local_heads + first_head + row;
    if (single_split) {
      p.lse[bh] = lse;
    } else {
      p.partial_lse[bh * p.num_splits + split] = lse;
    }
  }
}

}  // namespace smla_detail

template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT>
__global__ void __launch_bounds__(NUM_WARPS * 32, 1)
    sparse_mla_decode_split(const smla::SplitParams p) {
  static_assert(BLOCK_T % 16 == 0 && BLOCK_H % 16 == 0, "tiles are multiples of the mma shape");
  static_assert(smla::kLatentDim % (NUM_WARPS * 16) == 0, "each warp owns pairs of 8-dim n-tiles");
  using Kv = smla_detail::KvTraits<KV_FORMAT>;
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

  // q rows of this head group; rows past n_local_heads are zero so they cost nothing but time.
  constexpr int kQChunks = smla::kHeadDim * 2 / 16;
  for (int i = threadIdx.x; i < BLOCK_H * kQChunks; i += kThreads) {
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

    const int stage = tile % NUM_STAGES;
    const unsigned char* ring = smem + layout.ring_offset + stage * layout.ring_stage_bytes;
    const int* tokens = reinterpret_cast<const int*>(smem + layout.token_offset) + stage * BLOCK_T;
    const unsigned char* kv_tile = ring;
    int kv_row_stride = layout.ring_row_stride;
    if (Kv::kFp8) {
      if (tile == 0) smla_detail::convert_q_to_f16<BLOCK_H, kThreads>(layout, smem);
      smla_detail::dequantize_tile<BLOCK_T, kThreads>(layout, ring, smem + layout.dequant_offset);
      __syncthreads();
      kv_tile = smem + layout.dequant_offset;
      kv_row_stride = smla::kBf16RowStride;
    }
    smla_detail::compute_scores<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT>(layout, smem, ring, kv_tile,
                                                                        kv_row_stride);
    __syncthreads();
    smla_detail::softmax_tile<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT>(layout, smem, ring, tokens,
                                                                      p.scale_log2);
    __syncthreads();
    smla_detail::accumulate_pv<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT>(layout, smem, kv_tile,
                                                                       kv_row_stride, acc);
    __syncthreads();
  }
  ptx::cp_async_wait<0>();
  // A combine launched as a programmatic dependent (pdl 1) may be scheduled once every CTA of this
  // grid got here (or exited), so its launch overlaps the grid's last output writes; it waits for
  // this grid's completion before reading the partials. At the kernel's start instead, the waiting
  // combine CTAs cost 1-2.6 us at batches 8-64 (BENCHMARKS.md section 7, fourth session).
  ptx::launch_dependents();
  __syncthreads();
  smla_detail::write_output<BLOCK_H, NUM_WARPS>(p, layout, smem, batch_item, first_head, split,
                                                acc);
}
