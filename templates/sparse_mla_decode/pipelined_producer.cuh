#pragma once
// The pipelined split kernel's producer warps (split_pipelined.cuh): they walk the CTA's global
// tiles (pipelined_work.cuh) and fill the ring with one bulk copy per row, handing stages over
// through the full / empty mbarriers.
#include "common/async.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/pipelined_work.cuh"
#include "sparse_mla_decode/producer_ids.cuh"
#include "sparse_mla_decode/q_handoff.cuh"
#include "sparse_mla_decode/timeline.cuh"

namespace smla_pipe {

// Producers wait for a free stage most of a tile's time; asleep, not polling (see
// ptx::mbarrier_wait_sleeping). The hint bounds one sleep; a completed phase wakes them sooner.
constexpr unsigned kProducerSuspendNs = 20000;

// One producer thread's rows of a tile after the stage's wait: their token ids into the stage's
// list, and zero rows for invalid ids (so no stale bytes reach a P.V of weight 0). Returns the
// bytes its valid rows' copies will bring; `zeroed` says whether it wrote a zero row.
template <int BLOCK_T, int THREADS, int ROWS, unsigned ROW_BYTES, typename Ids>
__device__ __forceinline__ unsigned publish_rows(const smla::SmemLayout& layout,
                                                 unsigned char* ring, int* tokens, Ids& source_ids,
                                                 int thread, int (&ids)[ROWS], bool& zeroed) {
  unsigned bytes = 0;
#pragma unroll
  for (int k = 0; k < ROWS; ++k) {
    const int row = smla::producer_row<BLOCK_T, THREADS>(thread, k);
    source_ids.take_after_wait(k, ids);
    if (row >= BLOCK_T) continue;
    tokens[row] = ids[k];
    if (ids[k] >= 0) {
      bytes += ROW_BYTES;
    } else {
      zeroed = true;
      for (unsigned offset = 0; offset < ROW_BYTES; offset += 16) {
        *reinterpret_cast<uint4*>(ring + row * layout.ring_row_stride + offset) =
            make_uint4(0, 0, 0, 0);
      }
    }
  }
  return bytes;
}

// One bulk copy per valid row of this thread's, completing on the stage's full mbarrier.
template <int BLOCK_T, int THREADS, int ROWS, unsigned ROW_BYTES>
__device__ __forceinline__ void issue_copies(const smla::SplitParams& p,
                                             const smla::SmemLayout& layout, unsigned char* ring,
                                             const int (&ids)[ROWS], int thread,
                                             unsigned long long* full_stage) {
#pragma unroll
  for (int k = 0; k < ROWS; ++k) {
    const int row = smla::producer_row<BLOCK_T, THREADS>(thread, k);
    if (row >= BLOCK_T || ids[k] < 0) continue;
    ptx::bulk_copy_to_shared(ring + row * layout.ring_row_stride,
                             p.kv + static_cast<long long>(ids[k]) * ROW_BYTES, ROW_BYTES,
                             full_stage);
  }
}

// The q handoff after a tile's copies (q_handoff.cuh): if this tile began a row, its q goes in
// once the last row's scores are done; if the next tile begins a row, that row's q is pending.
template <int BLOCK_H, int NUM_STAGES, int KV_FORMAT, int PRODUCERS, int UNPACK, int SCHEDULE>
__device__ __forceinline__ void hand_q_over(const smla::SplitParams& p,
                                            const smla::SmemLayout& layout, unsigned char* smem,
                                            const WorkRange& range, int tile, int num_tiles,
                                            int thread, unsigned long long* full,
                                            PendingQ<BLOCK_H, PRODUCERS>& pending_q,
                                            bool& q_pending, int& handoffs) {
  unsigned long long* q_free = q_free_barrier(full, NUM_STAGES);
  if (q_pending) {
    ptx::mbarrier_wait(q_free, handoffs & 1);
    SMLA_TL_MARK_FIRST(thread == 0, kCrossQFree);
    pending_q.template store<KV_FORMAT, smla::unpack_k_bits(UNPACK)>(layout, smem, thread);
    SMLA_TL_MARK_FIRST(thread == 0, kCrossQStored);
    ptx::mbarrier_arrive(q_free + 1);
    ++handoffs;
    q_pending = false;
  }
  if (tile + 1 < num_tiles && row_end_tile<SCHEDULE>(p, range, tile) == tile + 1) {
    // Its batch item and head group are all the load needs (row_work also finds its parts).
    pending_q.work = row_origin<BLOCK_H>(
        p, smla::row_of_tile(division_of(p), global_tile<SCHEDULE>(range, tile + 1)));
    q_pending = true;
  }
}

// Producer warps: per tile, wait until the consumers released the stage, publish the token ids
// (publish_rows), announce the bytes and issue one bulk copy per valid row. Where they hand q over
// (q_handoff.cuh), at the top of a row's first tile they load its q, and after that tile's copies
// they store it.
template <int BLOCK_T, int BLOCK_H, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int MMA,
          int PRODUCERS, int UNPACK, int SCHEDULE>
__device__ __forceinline__ void produce(const smla::SplitParams& p, const smla::SmemLayout& layout,
                                        unsigned char* smem, const WorkRange& range) {
  constexpr bool kHandoff = hands_q_over<BLOCK_H, MMA, PRODUCERS, SCHEDULE>();
  constexpr int kThreads = (PRODUCERS > 0 ? PRODUCERS : 1) * 32;
  constexpr int kRowsPerThread = smla::producer_rows_per_thread<BLOCK_T, kThreads>();
  constexpr unsigned kRowBytes = smla::kv_row_bytes(KV_FORMAT);
  const int thread = static_cast<int>(threadIdx.x) - NUM_WARPS * 32;
  auto* full = reinterpret_cast<unsigned long long*>(smem + layout.barrier_offset);
  unsigned long long* empty = full + NUM_STAGES;
  ProducerIds<BLOCK_T, kThreads, kRowsPerThread, SCHEDULE, stages_ids<KV_FORMAT, SCHEDULE>()>
      source_ids{{}, reinterpret_cast<int*>(smem + layout.staged_ids_offset), thread};
  source_ids.start(p, range);
  PendingQ<BLOCK_H, PRODUCERS> pending_q;
  bool q_pending = false;
  int handoffs = 0;
  const int num_tiles = range.end_tile - range.first_tile;
  for (int tile = 0; tile < num_tiles; ++tile) {
    const int stage = tile % NUM_STAGES;
    if constexpr (kHandoff) {
      // This tile begins a row: its q loads while the stage frees (loaded a tile earlier, it was in
      // flight across the loop's top, where ptxas waited for it before the stage's wait).
      if (q_pending) pending_q.load(p, thread);
    }
    int ids[kRowsPerThread];
    source_ids.take_before_wait(tile, ids);
    SMLA_TL_MARK_FIRST(thread == 0 && handoffs == 1, kCrossIdsTaken);
    SMLA_TL_MARK(thread == 0 && tile == smla_timeline::kMidTile, kMidIdsTaken);
    if (tile >= NUM_STAGES) {
      ptx::mbarrier_wait_sleeping<kProducerSuspendNs>(&empty[stage], ((tile / NUM_STAGES) - 1) & 1);
    }
    SMLA_TL_MARK_FIRST(thread == 0 && handoffs == 1, kCrossStageFree);
    SMLA_TL_MARK(thread == 0 && tile == smla_timeline::kMidTile, kMidStageFree);
    bool zeroed = false;
    unsigned char* ring = smem + layout.ring_offset + stage * layout.ring_stage_bytes;
    int* tokens = reinterpret_cast<int*>(smem + layout.token_offset) + stage * BLOCK_T;
    const unsigned bytes = publish_rows<BLOCK_T, kThreads, kRowsPerThread, kRowBytes>(
        layout, ring, tokens, source_ids, thread, ids, zeroed);
    SMLA_TL_MARK(thread == 0 && tile == 0 && ids[0] != -2, kIdsLoaded);  // waits for the load
    // Zero rows written here by st.shared may take a bulk copy a ring cycle later: generic writes
    // before async-proxy ones of the same thread need the proxy fence.
    if (zeroed) ptx::fence_proxy_async_shared();
    ptx::mbarrier_arrive_expect_tx(&full[stage], bytes);
    issue_copies<BLOCK_T, kThreads, kRowsPerThread, kRowBytes>(p, layout, ring, ids, thread,
                                                               &full[stage]);
    SMLA_TL_MARK(thread == 0 && tile == 0, kIssued0);
    SMLA_TL_MARK(thread == kThreads - 1 && tile == 0, kIssued0All);
    SMLA_TL_MARK(thread == 0 && tile + 1 == num_tiles, kIssuedLast);
    SMLA_TL_MARK_FIRST(thread == 0 && handoffs == 1, kCrossIssuedNext);
    SMLA_TL_MARK(thread == 0 && tile == smla_timeline::kMidTile, kMidIssued);
    source_ids.fetch_ahead(p, range, tile);  // loads while this tile's copies fly
    if constexpr (kHandoff) {
      hand_q_over<BLOCK_H, NUM_STAGES, KV_FORMAT, PRODUCERS, UNPACK, SCHEDULE>(
          p, layout, smem, range, tile, num_tiles, thread, full, pending_q, q_pending, handoffs);
    }
  }
}

}  // namespace smla_pipe
