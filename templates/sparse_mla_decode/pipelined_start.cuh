#pragma once
// What the pipelined split kernel (split_pipelined.cuh) runs outside its token loop's tiles: the
// checks of its template arguments, the ring's start, the producer warps leaving for their loop
// (pipelined_producer.cuh), and each row's q in shared memory, the first row's at the start and the
// next row's after a row's output (by the consumers, or handed over by the producers:
// q_handoff.cuh).
#include "sparse_mla_decode/cluster_merge.cuh"
#include "sparse_mla_decode/pipelined_producer.cuh"
#include "sparse_mla_decode/pipelined_q.cuh"
#include "sparse_mla_decode/pipelined_work.cuh"
#include "sparse_mla_decode/q_handoff.cuh"
#include "sparse_mla_decode/tile_gather.cuh"
#include "sparse_mla_decode/timeline.cuh"

namespace smla_pipe {

// The row's q in shared memory, in the form the MMA path reads (NUM_THREADS threads take part).
template <int BLOCK_H, int NUM_THREADS, int KV_FORMAT, int MMA, int UNPACK>
__device__ __forceinline__ void prepare_q(const smla::SplitParams& p,
                                          const smla::SmemLayout& layout, unsigned char* smem,
                                          const RowWork& work) {
  if (MMA == smla::kMmaFp8) {
    prepare_q_fp8<BLOCK_H, NUM_THREADS>(p, layout, smem, work.batch_item, work.first_head);
  } else {
    prepare_q_16bit<BLOCK_H, NUM_THREADS, KV_FORMAT, smla::unpack_k_bits(UNPACK)>(
        p, layout, smem, work.batch_item, work.first_head);
  }
}

// The template arguments the pipelined kernel accepts.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int MMA,
          int PRODUCERS, int UNPACK, int SCHEDULE>
constexpr bool accepts() {
  static_assert(BLOCK_T % 16 == 0 && BLOCK_H % 16 == 0, "tiles are multiples of the mma shape");
  static_assert(MMA != smla::kMmaFp8 || (BLOCK_T % 32 == 0 && KV_FORMAT == smla::kFp8DsMla),
                "e4m3 MMA takes 32 tokens per k-step of an fp8 cache");
  static_assert(NUM_WARPS >= 4 && NUM_STAGES >= 2, "one scale group per warp; a ring to overlap");
  static_assert(
      UNPACK == smla::kUnpackCvt || (MMA == smla::kMmaRegF16 && KV_FORMAT == smla::kFp8DsMla),
      "the bitwise unpack makes f16 fragments of an fp8 cache");
  static_assert(SCHEDULE == smla::kScheduleSplits || PRODUCERS > 0,
                "the balanced schedule runs on producer-warp kernels");
  return true;
}

// Producer warps fill the ring for the whole range (and take part in a cluster merge's barriers);
// true for them, false for the consumer warps.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int MMA,
          int PRODUCERS, int UNPACK, int SCHEDULE>
__device__ __forceinline__ bool ran_producer(const smla::SplitParams& p,
                                             const smla::SmemLayout& layout, unsigned char* smem,
                                             const WorkRange& range) {
  if constexpr (PRODUCERS > 0) {
    if (threadIdx.x >= NUM_WARPS * 32) {
      produce<BLOCK_T, BLOCK_H, NUM_WARPS, NUM_STAGES, KV_FORMAT, MMA, PRODUCERS, UNPACK, SCHEDULE>(
          p, layout, smem, range);
      if (p.partials == smla::kPartialsCluster) smla_cluster::cluster_producer_exit();
      return true;
    }
  }
  return false;
}

// Without producer warps: fetch_ids(tile) loads the ids of the range's tile `tile` (none past the
// range) into `ids`.
template <int BLOCK_T, int SCHEDULE, typename Ids>
struct IdsFetch {
  const smla::SplitParams& p;
  const WorkRange& range;
  Ids& ids;
  __device__ __forceinline__ void operator()(int tile) const {
    const bool in_range = tile < range.end_tile - range.first_tile;
    const TileSource source = tile_source<BLOCK_T, SCHEDULE>(p, range, in_range ? tile : 0);
    ids.fetch(source.index_row, source.first_pos, in_range ? p.topk : 0);
  }
};

// The ring before the token loop: with producer warps, its full / empty mbarriers (thread 0);
// without, the consumers' cp.async copies of the first NUM_STAGES - 1 tiles and the ids of the
// next. fetch_ids(tile) loads a tile's ids into `next_ids`.
template <int BLOCK_T, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int PRODUCERS, typename Ids,
          typename FetchIds>
__device__ __forceinline__ void start_ring(const smla::SplitParams& p,
                                           const smla::SmemLayout& layout, unsigned char* smem,
                                           unsigned long long* full, unsigned long long* empty,
                                           int num_tiles, const Ids& next_ids,
                                           FetchIds&& fetch_ids) {
  if (PRODUCERS > 0) {
    if (threadIdx.x == 0) {
      for (int s = 0; s < NUM_STAGES; ++s) {
        ptx::mbarrier_init(&full[s], PRODUCERS * 32);
        ptx::mbarrier_init(&empty[s], NUM_WARPS);
      }
      unsigned long long* q_free = q_free_barrier(full, NUM_STAGES);  // q_handoff.cuh
      ptx::mbarrier_init(q_free, NUM_WARPS);
      ptx::mbarrier_init(q_free + 1, PRODUCERS * 32);  // q_full
      ptx::mbarrier_init_fence();
    }
    return;
  }
#pragma unroll
  for (int stage = 0; stage < NUM_STAGES - 1; ++stage) {
    if (stage < num_tiles) {
      fetch_ids(stage);
      smla_detail::load_tile<BLOCK_T, NUM_WARPS * 32, KV_FORMAT>(p, layout, smem, next_ids, stage);
    }
    ptx::cp_async_commit();
  }
  fetch_ids(NUM_STAGES - 1);
}

// The kernel's start, before the token loop: the ring (start_ring); with producer warps, they
// start gathering once the mbarriers are initialized and stay in their loop (true: the caller
// returns), while the consumers load the first row's q, so that the q load's latency and the first
// tiles' overlap instead of adding up.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int MMA,
          int PRODUCERS, int UNPACK, int SCHEDULE, typename Ids, typename FetchIds>
__device__ __forceinline__ bool start_split(const smla::SplitParams& p,
                                            const smla::SmemLayout& layout, unsigned char* smem,
                                            const WorkRange& range, unsigned long long* full,
                                            const Ids& next_ids, FetchIds&& fetch_ids) {
  static_assert(accepts<BLOCK_T, BLOCK_H, NUM_WARPS, NUM_STAGES, KV_FORMAT, MMA, PRODUCERS, UNPACK,
                        SCHEDULE>());
  constexpr int kConsumerThreads = NUM_WARPS * 32;
  start_ring<BLOCK_T, NUM_WARPS, NUM_STAGES, KV_FORMAT, PRODUCERS>(
      p, layout, smem, full, full + NUM_STAGES, range.end_tile - range.first_tile, next_ids,
      fetch_ids);
  if constexpr (PRODUCERS > 0) {
    __syncthreads();
    if (ran_producer<BLOCK_T, BLOCK_H, NUM_WARPS, NUM_STAGES, KV_FORMAT, MMA, PRODUCERS, UNPACK,
                     SCHEDULE>(p, layout, smem, range)) {
      return true;
    }
    prepare_q<BLOCK_H, kConsumerThreads, KV_FORMAT, MMA, UNPACK>(
        p, layout, smem, row_work<BLOCK_H, SCHEDULE>(p, range, 0));
    ptx::named_barrier_sync(1, kConsumerThreads);
    SMLA_TL_MARK(threadIdx.x == 0, kQReady);
  } else {  // every thread is a consumer
    prepare_q<BLOCK_H, kConsumerThreads, KV_FORMAT, MMA, UNPACK>(
        p, layout, smem, row_work<BLOCK_H, SCHEDULE>(p, range, 0));
    __syncthreads();
  }
  return false;
}

// The next row's q, after this row's output: handed over by the producers (q_handoff.cuh), or
// loaded by the consumers once every one is past this row's last scores (the tile's barrier).
template <int BLOCK_H, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int MMA, int PRODUCERS,
          int UNPACK, int SCHEDULE>
__device__ __forceinline__ void next_row_q(const smla::SplitParams& p,
                                           const smla::SmemLayout& layout, unsigned char* smem,
                                           unsigned long long* full, const WorkRange& range,
                                           int tile, int& handoffs) {
  if constexpr (hands_q_over<BLOCK_H, MMA, PRODUCERS, SCHEDULE>()) {
    ptx::mbarrier_wait(q_free_barrier(full, NUM_STAGES) + 1, handoffs & 1);  // q_full
    SMLA_TL_MARK_FIRST(threadIdx.x == 0, kCrossQFull);
    ++handoffs;
  } else {
    prepare_q<BLOCK_H, NUM_WARPS * 32, KV_FORMAT, MMA, UNPACK>(
        p, layout, smem, row_work<BLOCK_H, SCHEDULE>(p, range, tile));
    ptx::named_barrier_sync(1, NUM_WARPS * 32);
  }
}

}  // namespace smla_pipe
