#pragma once
// Split-K sparse MLA decode, pipelined structure (mma_path 1: f16/bf16 MMA on fragments converted
// in registers; mma_path 2: e4m3 MMA). One CTA per (split, head group, batch item) as in split.cuh;
// NUM_WARPS consumer warps compute, PRODUCERS extra warps (0, 1, 2) gather KV rows into a
// NUM_STAGES-deep ring with one bulk copy per row and hand stages over through mbarriers (full /
// empty per stage), so consumers never wait on a block-wide barrier in the token loop: one
// consumer-only barrier per tile publishes the scores. Without producer warps the consumers issue
// 16-byte cp.async copies themselves (two block barriers per tile).
#include "sparse_mla_decode/cluster_merge.cuh"
#include "sparse_mla_decode/pipelined_pv.cuh"
#include "sparse_mla_decode/split.cuh"

namespace smla_pipe {

// Softmax + P.V of one tile for every m-tile of this warp (dims [first_dim, first_dim + 512/W)).
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int KV_FORMAT, int MMA, int UNPACK>
__device__ __forceinline__ void softmax_pv(const smla::SmemLayout& layout, const float* scores,
                                           const unsigned char* ring,
                                           Accumulator<BLOCK_H, NUM_WARPS>& acc) {
  using Acc = Accumulator<BLOCK_H, NUM_WARPS>;
  constexpr int kKB = BLOCK_T / 16;
  constexpr int kKSplit = smla::score_ksplit(BLOCK_T, BLOCK_H, NUM_WARPS);
  const int first_dim = (threadIdx.x / 32) * (smla::kLatentDim / NUM_WARPS);
  float v_scale[kKB][4];
  load_v_scales<BLOCK_T, KV_FORMAT>(layout, ring, first_dim / smla::kGroupDim, v_scale);
#pragma unroll
  for (int m = 0; m < Acc::kMTiles; ++m) {
    float s[kKB][2][4];
    load_scores<BLOCK_T, BLOCK_H, kKSplit>(layout, scores, m, s);
    float alpha[2];
    softmax_rows<kKB>(s, acc.row_max[m], acc.row_sum[m], alpha);
#pragma unroll
    for (int kb = 0; kb < kKB; ++kb) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
#pragma unroll
        for (int j = 0; j < 4; ++j) s[kb][half][j] *= v_scale[kb][j];
      }
    }
    if (MMA == smla::kMmaFp8) {
      // P * 448 / rowmax as two e4m3 terms: one fp32 factor per row half and tile.
      float p_scale[2];
      float p_inv[2];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float amax = 0.f;
#pragma unroll
        for (int kb = 0; kb < kKB; ++kb) {
#pragma unroll
          for (int j = 0; j < 4; ++j) amax = fmaxf(amax, s[kb][half][j]);
        }
        amax = quad_max(amax);
        p_scale[half] = amax / 448.f;
        p_inv[half] = amax > 0.f ? 448.f / amax : 0.f;
      }
      float part[Acc::kNTiles][4];
#pragma unroll
      for (int n = 0; n < Acc::kNTiles; ++n)
        part[n][0] = part[n][1] = part[n][2] = part[n][3] = 0.f;
#pragma unroll
      for (int kb = 0; kb < kKB; kb += 2) {
        unsigned a_hi[4];
        unsigned a_lo[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          quantize_two_terms(s[kb + r / 2][r % 2], p_inv[r % 2], a_hi[r], a_lo[r]);
        }
        pv_block_fp8<Acc::kNTiles>(part, a_hi, a_lo, ring + kb * 16 * layout.ring_row_stride,
                                   layout.ring_row_stride, first_dim);
      }
#pragma unroll
      for (int n = 0; n < Acc::kNTiles; ++n) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          acc.value[m][n][j] = acc.value[m][n][j] * alpha[j / 2] + part[n][j] * p_scale[j / 2];
        }
      }
    } else {
      if (any_rescale(alpha)) {
#pragma unroll
        for (int n = 0; n < Acc::kNTiles; ++n) {
#pragma unroll
          for (int j = 0; j < 4; ++j) acc.value[m][n][j] *= alpha[j / 2];
        }
      }
#pragma unroll
      for (int kb = 0; kb < kKB; ++kb) {
        const bool f16 = KV_FORMAT == smla::kFp8DsMla;
        const unsigned a[4] = {f16 ? ptx::pack_f16x2(s[kb][0][0], s[kb][0][1])
                                   : ptx::pack_bf16x2(s[kb][0][0], s[kb][0][1]),
                               f16 ? ptx::pack_f16x2(s[kb][1][0], s[kb][1][1])
                                   : ptx::pack_bf16x2(s[kb][1][0], s[kb][1][1]),
                               f16 ? ptx::pack_f16x2(s[kb][0][2], s[kb][0][3])
                                   : ptx::pack_bf16x2(s[kb][0][2], s[kb][0][3]),
                               f16 ? ptx::pack_f16x2(s[kb][1][2], s[kb][1][3])
                                   : ptx::pack_bf16x2(s[kb][1][2], s[kb][1][3])};
        pv_block_16bit<KV_FORMAT, NUM_WARPS, Acc::kNTiles, smla::unpack_v_bits(UNPACK)>(
            acc.value[m], a, ring + kb * 16 * layout.ring_row_stride, layout.ring_row_stride,
            first_dim);
      }
    }
  }
}

// Output dims of accumulator element j (0..3 -> rows g, g, g+8, g+8) of n-tile n: fp8 caches
// interleave even/odd dims per 16-dim chunk (see pv_block_16bit), bf16 caches are natural.
template <int KV_FORMAT>
__device__ __forceinline__ int output_dim(int first_dim, int n, int j) {
  const int c = threadIdx.x % 4;
  if (KV_FORMAT == smla::kFp8DsMla) return first_dim + (n / 2) * 16 + 4 * c + 2 * (j % 2) + n % 2;
  return first_dim + n * 8 + 2 * c + j % 2;
}

// Calls pair(row, dim, lo, hi) for each two adjacent output dims this thread holds and lse(row,
// value) once per row, normalised, for the rows below the local heads; value_scale undoes the
// bitwise unpack's 2^-8 on V (1 otherwise).
template <int BLOCK_H, int NUM_WARPS, int KV_FORMAT, typename Pair, typename Lse>
__device__ __forceinline__ void for_each_output(Accumulator<BLOCK_H, NUM_WARPS>& acc,
                                                int heads_left, float value_scale, Pair&& pair,
                                                Lse&& lse) {
  using Acc = Accumulator<BLOCK_H, NUM_WARPS>;
  const int lane = threadIdx.x % 32;
  const int first_dim = (threadIdx.x / 32) * (smla::kLatentDim / NUM_WARPS);
#pragma unroll
  for (int m = 0; m < Acc::kMTiles; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float sum = acc.row_sum[m][half];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int row = m * 16 + lane / 4 + half * 8;
      if (row >= heads_left) continue;
      const float inv_sum = sum > 0.f ? value_scale / sum : 0.f;
      // Two adjacent dims per store (8-byte partials, 4-byte bf16 pairs): n-tiles n, n + 1 of one
      // element on fp8 caches, elements j, j + 1 of one n-tile on bf16 (see output_dim).
      constexpr bool kPairTiles = KV_FORMAT == smla::kFp8DsMla;
#pragma unroll
      for (int n = 0; n < Acc::kNTiles; n += kPairTiles ? 2 : 1) {
#pragma unroll
        for (int j = half * 2; j < half * 2 + 2; j += kPairTiles ? 1 : 2) {
          const float hi = kPairTiles ? acc.value[m][n + 1][j] : acc.value[m][n][j + 1];
          pair(row, output_dim<KV_FORMAT>(first_dim, n, j), acc.value[m][n][j] * inv_sum,
               hi * inv_sum);
        }
      }
      if (threadIdx.x < 32 && lane % 4 == 0) {
        lse(row, sum > 0.f ? (acc.row_max[m][half] + log2f(sum)) * 0.69314718055994531f
                           : ptx::neg_inf());
      }
    }
  }
}

// bf16 output + lse for one split; otherwise fp32 partials, for the combine kernel in global
// memory or, in a cluster launch, into this CTA's exchange (cluster_merge.cuh). One code path with
// generic pointers: a second copy of the loop for the exchange cost sm_120 registers and spills.
template <int BLOCK_H, int NUM_WARPS, int KV_FORMAT>
__device__ __forceinline__ void write_output(const smla::SplitParams& p,
                                             Accumulator<BLOCK_H, NUM_WARPS>& acc,
                                             unsigned char* smem, int batch_item, int first_head,
                                             int split, float value_scale) {
  constexpr smla::ExchangeLayout kExchange = smla::exchange_layout(BLOCK_H);
  const long long first_bh = static_cast<long long>(batch_item) * p.n_local_heads + first_head;
  const bool single_split = p.num_splits == 1;
  float* partial = p.partial_out + (first_bh * p.num_splits + split) * smla::kLatentDim;
  long long partial_row = static_cast<long long>(p.num_splits) * smla::kLatentDim;
  float* lse_out = p.partial_lse + first_bh * p.num_splits + split;
  int lse_row = p.num_splits;
  if (p.cluster_merge) {
    partial = reinterpret_cast<float*>(smem + kExchange.partial_offset);
    partial_row = smla::kLatentDim;
    lse_out = reinterpret_cast<float*>(smem + kExchange.lse_offset);
    lse_row = 1;
  }
  for_each_output<BLOCK_H, NUM_WARPS, KV_FORMAT>(
      acc, p.n_local_heads - first_head, value_scale,
      [&](int row, int dim, float lo, float hi) {
        if (single_split) {
          *reinterpret_cast<unsigned*>(p.out + (first_bh + row) * smla::kLatentDim + dim) =
              ptx::pack_bf16x2(lo, hi);
        } else {
          *reinterpret_cast<float2*>(partial + row * partial_row + dim) = make_float2(lo, hi);
        }
      },
      [&](int row, float value) {
        if (single_split) {
          p.lse[first_bh + row] = value;
        } else {
          lse_out[row * lse_row] = value;
        }
      });
}

}  // namespace smla_pipe

namespace smla_pipe {

// Producers wait for a free stage most of a tile's time; asleep, not polling (see
// ptx::mbarrier_wait_sleeping). The hint bounds one sleep; a completed phase wakes them sooner.
constexpr unsigned kProducerSuspendNs = 20000;

struct SplitRange {
  int first_pos;
  int end_pos;
  int num_tiles;
  const int* index_row;
};

// Producer warps: per tile, wait until the consumers released the stage, publish the token ids
// (zero rows for invalid ones, so no stale bytes reach a P.V of weight 0), announce the bytes and
// issue one bulk copy per valid row.
template <int BLOCK_T, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int PRODUCERS>
__device__ __forceinline__ void produce(const smla::SplitParams& p, const smla::SmemLayout& layout,
                                        unsigned char* smem, const SplitRange& range) {
  constexpr int kThreads = (PRODUCERS > 0 ? PRODUCERS : 1) * 32;
  constexpr int kRowsPerThread = (BLOCK_T + kThreads - 1) / kThreads;
  constexpr unsigned kRowBytes = smla::kv_row_bytes(KV_FORMAT);
  const int thread = static_cast<int>(threadIdx.x) - NUM_WARPS * 32;
  auto* full = reinterpret_cast<unsigned long long*>(smem + layout.barrier_offset);
  unsigned long long* empty = full + NUM_STAGES;
  int next[kRowsPerThread];
  auto fetch = [&](int tile) {
#pragma unroll
    for (int k = 0; k < kRowsPerThread; ++k) {
      const int row = thread + k * kThreads;
      const int pos = range.first_pos + tile * BLOCK_T + row;
      next[k] = row < BLOCK_T && pos < range.end_pos ? __ldg(range.index_row + pos) : -1;
    }
  };
  fetch(0);
  for (int tile = 0; tile < range.num_tiles; ++tile) {
    const int stage = tile % NUM_STAGES;
    if (tile >= NUM_STAGES) {
      ptx::mbarrier_wait_sleeping<kProducerSuspendNs>(&empty[stage], ((tile / NUM_STAGES) - 1) & 1);
    }
    int ids[kRowsPerThread];
    unsigned bytes = 0;
    unsigned char* ring = smem + layout.ring_offset + stage * layout.ring_stage_bytes;
    int* tokens = reinterpret_cast<int*>(smem + layout.token_offset) + stage * BLOCK_T;
#pragma unroll
    for (int k = 0; k < kRowsPerThread; ++k) {
      const int row = thread + k * kThreads;
      ids[k] = next[k];
      if (row >= BLOCK_T) continue;
      tokens[row] = ids[k];
      if (ids[k] >= 0) {
        bytes += kRowBytes;
      } else {
        for (unsigned offset = 0; offset < kRowBytes; offset += 16) {
          *reinterpret_cast<uint4*>(ring + row * layout.ring_row_stride + offset) =
              make_uint4(0, 0, 0, 0);
        }
      }
    }
    ptx::mbarrier_arrive_expect_tx(&full[stage], bytes);
#pragma unroll
    for (int k = 0; k < kRowsPerThread; ++k) {
      const int row = thread + k * kThreads;
      if (row >= BLOCK_T || ids[k] < 0) continue;
      ptx::bulk_copy_to_shared(ring + row * layout.ring_row_stride,
                               p.kv + static_cast<long long>(ids[k]) * kRowBytes, kRowBytes,
                               &full[stage]);
    }
    fetch(tile + 1);  // the next tile's ids load while this one's copies fly
  }
}

}  // namespace smla_pipe

// CTAS_PER_SM is the launch bound's minimum of resident CTAs: ptxas keeps registers to what that
// many CTAs allow, so that smaller tiles run three CTAs per SM instead of two.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int MMA,
          int PRODUCERS, int UNPACK, int CTAS_PER_SM>
__global__ void __launch_bounds__((NUM_WARPS + PRODUCERS) * 32, CTAS_PER_SM)
    sparse_mla_decode_split_pipelined(const smla::SplitParams p) {
  static_assert(BLOCK_T % 16 == 0 && BLOCK_H % 16 == 0, "tiles are multiples of the mma shape");
  static_assert(MMA != smla::kMmaFp8 || (BLOCK_T % 32 == 0 && KV_FORMAT == smla::kFp8DsMla),
                "e4m3 MMA takes 32 tokens per k-step of an fp8 cache");
  static_assert(NUM_WARPS >= 4 && NUM_STAGES >= 2, "one scale group per warp; a ring to overlap");
  static_assert(
      UNPACK == smla::kUnpackCvt || (MMA == smla::kMmaRegF16 && KV_FORMAT == smla::kFp8DsMla),
      "the bitwise unpack makes f16 fragments of an fp8 cache");
  constexpr smla::SmemLayout layout =
      smla::smem_layout(BLOCK_T, BLOCK_H, NUM_WARPS, NUM_STAGES, KV_FORMAT, MMA, PRODUCERS);
  constexpr int kConsumerThreads = NUM_WARPS * 32;
  constexpr int kThreads = (NUM_WARPS + PRODUCERS) * 32;
  extern __shared__ __align__(128) unsigned char smem[];

  const int split = blockIdx.x;
  const int first_head = blockIdx.y * BLOCK_H;
  const int batch_item = blockIdx.z;
  smla_pipe::SplitRange range;
  range.first_pos = split * p.tokens_per_split;
  range.end_pos = min(p.topk, range.first_pos + p.tokens_per_split);
  range.num_tiles = range.end_pos > range.first_pos
                        ? (range.end_pos - range.first_pos + BLOCK_T - 1) / BLOCK_T
                        : 0;
  range.index_row = p.indices + static_cast<long long>(batch_item) * p.topk;
  auto* full = reinterpret_cast<unsigned long long*>(smem + layout.barrier_offset);
  unsigned long long* empty = full + NUM_STAGES;

  smla_detail::TileTokens<BLOCK_T, kConsumerThreads, KV_FORMAT> next_ids;
  if (PRODUCERS > 0) {
    if (threadIdx.x == 0) {
      for (int s = 0; s < NUM_STAGES; ++s) {
        ptx::mbarrier_init(&full[s], PRODUCERS * 32);
        ptx::mbarrier_init(&empty[s], NUM_WARPS);
      }
      ptx::mbarrier_init_fence();
    }
  } else {
#pragma unroll
    for (int stage = 0; stage < NUM_STAGES - 1; ++stage) {
      if (stage < range.num_tiles) {
        next_ids.fetch(range.index_row, range.first_pos + stage * BLOCK_T, range.end_pos);
        smla_detail::load_tile<BLOCK_T, kConsumerThreads, KV_FORMAT>(p, layout, smem, next_ids,
                                                                     stage);
      }
      ptx::cp_async_commit();
    }
    next_ids.fetch(range.index_row, range.first_pos + (NUM_STAGES - 1) * BLOCK_T, range.end_pos);
  }
  if (MMA == smla::kMmaFp8) {
    smla_pipe::prepare_q_fp8<BLOCK_H, kThreads>(p, layout, smem, batch_item, first_head);
  } else {
    smla_pipe::prepare_q_16bit<BLOCK_H, kThreads, KV_FORMAT, smla::unpack_k_bits(UNPACK)>(
        p, layout, smem, batch_item, first_head);
  }
  __syncthreads();
  if constexpr (PRODUCERS > 0) {
    if (threadIdx.x >= kConsumerThreads) {
      smla_pipe::produce<BLOCK_T, NUM_WARPS, NUM_STAGES, KV_FORMAT, PRODUCERS>(p, layout, smem,
                                                                               range);
      if (p.cluster_merge) smla_cluster::cluster_producer_exit();
      return;
    }
  }

  smla_pipe::Accumulator<BLOCK_H, NUM_WARPS> acc;
#pragma unroll
  for (int m = 0; m < BLOCK_H / 16; ++m) {
    acc.row_max[m][0] = acc.row_max[m][1] = ptx::neg_inf();
    acc.row_sum[m][0] = acc.row_sum[m][1] = 0.f;
#pragma unroll
    for (int n = 0; n < smla::kLatentDim / NUM_WARPS / 8; ++n) {
      acc.value[m][n][0] = acc.value[m][n][1] = acc.value[m][n][2] = acc.value[m][n][3] = 0.f;
    }
  }
  for (int tile = 0; tile < range.num_tiles; ++tile) {
    const int stage = tile % NUM_STAGES;
    if (PRODUCERS > 0) {
      ptx::mbarrier_wait(&full[stage], (tile / NUM_STAGES) & 1);
    } else {
      ptx::cp_async_wait<NUM_STAGES - 2>();
      __syncthreads();  // the tile is visible; every warp is done with the stage refilled next
      const int prefetch = tile + NUM_STAGES - 1;
      if (prefetch < range.num_tiles) {
        smla_detail::load_tile<BLOCK_T, kConsumerThreads, KV_FORMAT>(p, layout, smem, next_ids,
                                                                     prefetch % NUM_STAGES);
        next_ids.fetch(range.index_row, range.first_pos + (prefetch + 1) * BLOCK_T, range.end_pos);
      }
      ptx::cp_async_commit();
    }
    const unsigned char* ring = smem + layout.ring_offset + stage * layout.ring_stage_bytes;
    const int* tokens = reinterpret_cast<const int*>(smem + layout.token_offset) + stage * BLOCK_T;
    float* scores =
        reinterpret_cast<float*>(smem + layout.scores_offset) +
        (tile % layout.score_buffers) * layout.ksplit * BLOCK_H * layout.scores_row_stride;
    smla_pipe::compute_scores<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT, MMA, UNPACK>(
        layout, smem, ring, tokens, scores, p.scale_log2);
    ptx::named_barrier_sync(1, kConsumerThreads);
    smla_pipe::softmax_pv<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT, MMA, UNPACK>(layout, scores, ring,
                                                                               acc);
    if (PRODUCERS > 0) {
      __syncwarp();
      if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&empty[stage]);
    }
  }
  const float value_scale = smla::unpack_v_bits(UNPACK) ? smla::kBitsUnpackScale : 1.f;
  if (p.cluster_merge) {
    constexpr bool kExchangeOverBarriers =
        PRODUCERS > 0 && smla::exchange_layout(BLOCK_H).total_bytes > layout.barrier_offset;
    smla_cluster::free_for_exchange<kConsumerThreads>(full, 2 * NUM_STAGES, kExchangeOverBarriers);
  } else {
    // A combine launched as a programmatic dependent (merge 1) may be scheduled once every CTA of
    // this grid got here (or exited), so its launch overlaps the grid's last output writes; it
    // waits for this grid's completion before reading the partials. At the kernel's start instead,
    // the waiting combine CTAs cost 1-2.6 us at batches 8-64 (BENCHMARKS.md section 7, 4th
    // session).
    ptx::launch_dependents();
  }
  smla_pipe::write_output<BLOCK_H, NUM_WARPS, KV_FORMAT>(p, acc, smem, batch_item, first_head,
                                                         split, value_scale);
  if (p.cluster_merge) {
    smla_cluster::merge_in_cluster<BLOCK_H, kConsumerThreads>(smem, p.out, p.lse, p.n_local_heads,
                                                              p.num_splits, batch_item, first_head);
  }
}
