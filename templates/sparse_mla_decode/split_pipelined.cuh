#pragma once
// Split-K sparse MLA decode, pipelined structure (mma_path 1: f16/bf16 MMA on fragments converted
// in registers; mma_path 2: e4m3 MMA). One CTA per (split, head group, batch item) as in split.cuh,
// or under the balanced schedule a range of tiles that may cross rows (pipelined_work.cuh);
// NUM_WARPS consumer warps compute, PRODUCERS extra warps (0, 1, 2) gather KV rows into a
// NUM_STAGES-deep ring with one bulk copy per row and hand stages over through mbarriers (full /
// empty per stage), so consumers never wait on a block-wide barrier in the token loop: one
// consumer-only barrier per tile publishes the scores. Without producer warps the consumers issue
// 16-byte cp.async copies themselves (two block barriers per tile).
#include "sparse_mla_decode/pipelined_output.cuh"
#include "sparse_mla_decode/pipelined_pv.cuh"
#include "sparse_mla_decode/pipelined_start.cuh"
#include "sparse_mla_decode/pipelined_work.cuh"
#include "sparse_mla_decode/split.cuh"
#include "sparse_mla_decode/split_merges.cuh"
#include "sparse_mla_decode/timeline.cuh"
#include "sparse_mla_decode/token_softmax.cuh"

namespace smla_pipe {

// P.V of one m-tile by e4m3 MMA: P (v-scaled) * 448 / rowmax as two e4m3 terms, one fp32 factor
// per row half and tile; `value` is the m-tile's accumulator, rescaled by alpha.
template <int BLOCK_T, int N_TILES>
__device__ __forceinline__ void pv_tile_fp8(const smla::SmemLayout& layout,
                                            const unsigned char* ring, int first_dim,
                                            float (&s)[BLOCK_T / 16][2][4], const float (&alpha)[2],
                                            float (&value)[N_TILES][4]) {
  constexpr int kKB = BLOCK_T / 16;
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
  float part[N_TILES][4];
#pragma unroll
  for (int n = 0; n < N_TILES; ++n) part[n][0] = part[n][1] = part[n][2] = part[n][3] = 0.f;
#pragma unroll
  for (int kb = 0; kb < kKB; kb += 2) {
    unsigned a_hi[4];
    unsigned a_lo[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      quantize_two_terms(s[kb + r / 2][r % 2], p_inv[r % 2], a_hi[r], a_lo[r]);
    }
    pv_block_fp8<N_TILES>(part, a_hi, a_lo, ring + kb * 16 * layout.ring_row_stride,
                          layout.ring_row_stride, first_dim);
  }
#pragma unroll
  for (int n = 0; n < N_TILES; ++n) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      value[n][j] = value[n][j] * alpha[j / 2] + part[n][j] * p_scale[j / 2];
    }
  }
}

// P.V of one m-tile by f16 / bf16 MMA on P packed to 16 bits; `value` is rescaled by alpha first
// (skipped when no row's maximum moved).
template <int BLOCK_T, int NUM_WARPS, int KV_FORMAT, int UNPACK, int N_TILES>
__device__ __forceinline__ void pv_tile_16bit(const smla::SmemLayout& layout,
                                              const unsigned char* ring, int first_dim,
                                              const float (&s)[BLOCK_T / 16][2][4],
                                              const float (&alpha)[2], float (&value)[N_TILES][4]) {
  rescale_if_moved(alpha, value);
#pragma unroll
  for (int kb = 0; kb < BLOCK_T / 16; ++kb) {
    const bool f16 = KV_FORMAT == smla::kFp8DsMla;
    const unsigned a[4] = {f16 ? ptx::pack_f16x2(s[kb][0][0], s[kb][0][1])
                               : ptx::pack_bf16x2(s[kb][0][0], s[kb][0][1]),
                           f16 ? ptx::pack_f16x2(s[kb][1][0], s[kb][1][1])
                               : ptx::pack_bf16x2(s[kb][1][0], s[kb][1][1]),
                           f16 ? ptx::pack_f16x2(s[kb][0][2], s[kb][0][3])
                               : ptx::pack_bf16x2(s[kb][0][2], s[kb][0][3]),
                           f16 ? ptx::pack_f16x2(s[kb][1][2], s[kb][1][3])
                               : ptx::pack_bf16x2(s[kb][1][2], s[kb][1][3])};
    pv_block_16bit<KV_FORMAT, NUM_WARPS, N_TILES, smla::unpack_v_bits(UNPACK)>(
        value, a, ring + kb * 16 * layout.ring_row_stride, layout.ring_row_stride, first_dim);
  }
}

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
      pv_tile_fp8<BLOCK_T, Acc::kNTiles>(layout, ring, first_dim, s, alpha, acc.value[m]);
    } else {
      pv_tile_16bit<BLOCK_T, NUM_WARPS, KV_FORMAT, UNPACK, Acc::kNTiles>(layout, ring, first_dim, s,
                                                                         alpha, acc.value[m]);
    }
  }
}

// The token softmax took the tile-dividing schedules' BLOCK_T 64 kernel past two CTAs an SM on
// sm_90 (169 registers; 179 with q loaded ahead): they take it under a bound of two (167, no
// spills) or with four producer warps, which never share an SM (165); else the whole-tile one.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int MMA, int KV_FORMAT, int PRODUCERS,
          int CTAS_PER_SM, int SCHEDULE>
constexpr bool takes_token_softmax() {
  return (SCHEDULE == smla::kScheduleSplits || CTAS_PER_SM >= 2 || PRODUCERS >= 4) &&
         smla::token_softmax(BLOCK_T, BLOCK_H, NUM_WARPS, MMA, KV_FORMAT);
}

// Whether the cluster merge's exchange overlaps the producers' mbarriers, which are then
// invalidated before it is written (smla_cluster::free_for_exchange).
constexpr bool exchange_over_barriers(const smla::SmemLayout& layout, int block_h, int producers) {
  return producers > 0 && smla::exchange_layout(block_h).total_bytes > layout.barrier_offset;
}

// One tile of the token loop for the consumer warps: wait for its ring stage (the producers'
// mbarrier, or the consumers' own cp.async group and a block barrier, after which they refill the
// stage freed last), scores, one consumer barrier, softmax + P.V, and the stage handed back.
// `frees_q`: the row's last tile before another row's, whose q the producers hand over.
// TOKEN_SOFTMAX: the tile the token softmax way (token_softmax.cuh; the kernel decides).
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int MMA,
          int PRODUCERS, int UNPACK, bool TOKEN_SOFTMAX, typename Ids, typename FetchIds>
__device__ __forceinline__ void consume_tile(const smla::SplitParams& p,
                                             const smla::SmemLayout& layout, unsigned char* smem,
                                             unsigned long long* full, unsigned long long* empty,
                                             int tile, int num_tiles, bool frees_q,
                                             const Ids& next_ids, FetchIds&& fetch_ids,
                                             Accumulator<BLOCK_H, NUM_WARPS>& acc) {
  constexpr int kConsumerThreads = NUM_WARPS * 32;
  const int stage = tile % NUM_STAGES;
  if (PRODUCERS > 0) {
    ptx::mbarrier_wait(&full[stage], (tile / NUM_STAGES) & 1);
    SMLA_TL_MARK(threadIdx.x == 0 && tile == 0, kFirstFull);
    SMLA_TL_MARK(threadIdx.x == 0 && tile + 1 == num_tiles, kLastFull);
    SMLA_TL_MARK_FIRST(threadIdx.x == 0 && frees_q, kCrossLastFull);
  } else {
    ptx::cp_async_wait<NUM_STAGES - 2>();
    __syncthreads();  // the tile is visible; every warp is done with the stage refilled next
    const int prefetch = tile + NUM_STAGES - 1;
    if (prefetch < num_tiles) {
      smla_detail::load_tile<BLOCK_T, kConsumerThreads, KV_FORMAT>(p, layout, smem, next_ids,
                                                                   prefetch % NUM_STAGES);
      fetch_ids(prefetch + 1);
    }
    ptx::cp_async_commit();
  }
  const unsigned char* ring = smem + layout.ring_offset + stage * layout.ring_stage_bytes;
  const int* tokens = reinterpret_cast<const int*>(smem + layout.token_offset) + stage * BLOCK_T;
  float* scores =
      reinterpret_cast<float*>(smem + layout.scores_offset) +
      (tile % layout.score_buffers) * layout.ksplit * BLOCK_H * layout.scores_row_stride;
  if constexpr (TOKEN_SOFTMAX) {
    token_softmax_tile<BLOCK_T, NUM_WARPS, KV_FORMAT, UNPACK>(
        layout, smem, ring, tokens, p.scale_log2, q_free_barrier(full, NUM_STAGES), frees_q, acc);
  } else {
    compute_scores<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT, MMA, UNPACK>(layout, smem, ring, tokens,
                                                                        scores, p.scale_log2);
    ptx::named_barrier_sync(1, kConsumerThreads);
    if (frees_q && threadIdx.x % 32 == 0) ptx::mbarrier_arrive(q_free_barrier(full, NUM_STAGES));
    softmax_pv<BLOCK_T, BLOCK_H, NUM_WARPS, KV_FORMAT, MMA, UNPACK>(layout, scores, ring, acc);
  }
  if (PRODUCERS > 0) {
    // Every lane's reads of the stage done before the producers may bulk-copy into it (the
    // generic -> async proxy order of a write after read; see ptx::fence_proxy_async_shared).
    ptx::fence_proxy_async_shared();
    __syncwarp();
    if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&empty[stage]);
  }
}

}  // namespace smla_pipe

// CTAS_PER_SM is the launch bound's minimum of resident CTAs: ptxas keeps registers to what that
// many CTAs allow, so that smaller tiles run three CTAs per SM instead of two.
// SCHEDULE (schedule.h) is compiled in: a loop over rows around the token loop keeps the token
// loop's invariants live across each row's output, +14-16 registers on sm_90, which cost the bf16
// kernels their second CTA per SM; per-row splits compile to one pass, as before.
// After the range's last tile (not a cluster launch) a combine launched as a programmatic
// dependent (merge 1) may be scheduled once every CTA of this grid got there (or exited), so its
// launch overlaps the grid's last output writes; it waits for this grid's completion before
// reading the partials. At the kernel's start instead, the waiting combine CTAs cost 1-2.6 us at
// batches 8-64 (BENCHMARKS.md section 7, 4th session).
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int MMA,
          int PRODUCERS, int UNPACK, int CTAS_PER_SM, int SCHEDULE>
__global__ void __launch_bounds__((NUM_WARPS + PRODUCERS) * 32, CTAS_PER_SM)
    sparse_mla_decode_split_pipelined(const smla::SplitParams p) {
  constexpr smla::SmemLayout layout =
      smla::smem_layout(BLOCK_T, BLOCK_H, NUM_WARPS, NUM_STAGES, KV_FORMAT, MMA, PRODUCERS);
  constexpr int kConsumerThreads = NUM_WARPS * 32;
  extern __shared__ __align__(128) unsigned char smem[];
  SMLA_TL_ENTER_SPLIT();  // timeline.cuh: nothing unless the diagnostic build
  const smla_pipe::WorkRange range = smla_pipe::work_range<BLOCK_T, SCHEDULE>(p);
  const int num_tiles = range.end_tile - range.first_tile;
  auto* full = reinterpret_cast<unsigned long long*>(smem + layout.barrier_offset);
  smla_detail::TileTokens<BLOCK_T, kConsumerThreads, KV_FORMAT> next_ids;
  const smla_pipe::IdsFetch<BLOCK_T, SCHEDULE, decltype(next_ids)> fetch_ids{p, range, next_ids};
  if (smla_pipe::start_split<BLOCK_T, BLOCK_H, NUM_WARPS, NUM_STAGES, KV_FORMAT, MMA, PRODUCERS,
                             UNPACK, SCHEDULE>(p, layout, smem, range, full, next_ids, fetch_ids))
    return;  // a producer warp, done
  constexpr bool kHandoff = smla_pipe::hands_q_over<BLOCK_H, MMA, PRODUCERS, SCHEDULE>();
  constexpr bool kTokenSoftmax =
      smla_pipe::takes_token_softmax<BLOCK_T, BLOCK_H, NUM_WARPS, MMA, KV_FORMAT, PRODUCERS,
                                     CTAS_PER_SM, SCHEDULE>();
  const float value_scale = smla::unpack_v_bits(UNPACK) ? smla::kBitsUnpackScale : 1.f;
  int handoffs = 0;  // rows whose q the producers handed over
  int tile = 0;      // the ring's running tile: stages and phases run on across rows
  for (;;) {         // one row of the range per pass
    smla_pipe::Accumulator<BLOCK_H, NUM_WARPS> acc;
    smla_pipe::clear(acc);
    const int row_end = smla_pipe::row_end_tile<SCHEDULE>(p, range, tile);
    SMLA_TL_ROW_START(tile);
    for (; tile < row_end; ++tile) {
      const bool frees_q = kHandoff && tile + 1 == row_end && row_end < num_tiles;
      smla_pipe::consume_tile<BLOCK_T, BLOCK_H, NUM_WARPS, NUM_STAGES, KV_FORMAT, MMA, PRODUCERS,
                              UNPACK, kTokenSoftmax>(p, layout, smem, full, full + NUM_STAGES, tile,
                                                     num_tiles, frees_q, next_ids, fetch_ids, acc);
      SMLA_TL_MARK_CROSS_DONE(threadIdx.x == 0 && handoffs == 1, tile);  // the new row's tiles
    }
    SMLA_TL_MARK(threadIdx.x == 0 && tile == num_tiles, kComputed);
    SMLA_TL_MARK_FIRST(threadIdx.x == 0 && kHandoff && tile < num_tiles, kCrossComputed);
    if constexpr (kTokenSoftmax) {
      smla_pipe::gather_row_sums<NUM_WARPS>(layout, smem, acc);  // the warps' partial sums
    }
    SMLA_TL_MARK(threadIdx.x == 0 && tile == num_tiles, kRowSums);
    const bool last_row = SCHEDULE == smla::kScheduleSplits || tile == num_tiles;
    const smla_pipe::RowWork work = smla_pipe::row_work<BLOCK_H, SCHEDULE>(p, range, tile - 1);
    if (last_row && p.partials == smla::kPartialsCluster) {
      smla_cluster::free_for_exchange<kConsumerThreads>(
          full, smla::producer_barriers(NUM_STAGES),
          smla_pipe::exchange_over_barriers(layout, BLOCK_H, PRODUCERS));
    } else if (last_row) {
      ptx::launch_dependents();  // see the note above the kernel
      SMLA_TL_MARK(threadIdx.x == 0, kDependents);
    }
    smla_pipe::write_output<BLOCK_H, NUM_WARPS, KV_FORMAT>(p, acc, smem, work, value_scale);
    if (last_row) break;
    SMLA_TL_MARK_FIRST(threadIdx.x == 0 && kHandoff, kCrossWritten);
    smla_pipe::next_row_q<BLOCK_H, NUM_WARPS, NUM_STAGES, KV_FORMAT, MMA, PRODUCERS, UNPACK,
                          SCHEDULE>(p, layout, smem, full, range, tile, handoffs);
  }
  if constexpr (SCHEDULE == smla::kScheduleSplits) {
    smla_pipe::merge_in_split<BLOCK_T, BLOCK_H, kConsumerThreads>(p, layout, smem);
  }
  SMLA_TL_LEAVE_SPLIT();
}
