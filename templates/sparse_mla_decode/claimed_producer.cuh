#pragma once
// EXPERIMENT (SMLA_EXP_CLAIM, scripts/devcarry_variant_tuner.sh claim SMLA_EXP_CLAIM; to be taken
// out again once measured, as earlier experiments were): per-row splits whose CTAs claim a row's
// tiles at run time instead of owning a fixed run of them. The thirty-third session's timelines
// show CTAs of equal tiles ending 30-46 us apart at batch 69 (DRAM service and SM sharing differ
// per CTA); the launch ends with the slowest. Here split j of a row runs tile j, then claims the
// row's next tile from a per-row counter (merge 3's ticket word: claims count in its low 16 bits,
// tickets in its high ones; the combine's reset mode zeroes it before the split), so the row's
// fast CTAs take more of its tiles. A CTA's partial is the softmax over whichever tiles it ran:
// the combine's lse weights do not care which. Only fp8 caches' register ids path (schedule 0,
// producer warps, merge 3). The sums' order depends on the claims: results differ in rounding
// from launch to launch.
#include "common/async.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"
#include "sparse_mla_decode/schedule.h"
#include "sparse_mla_decode/timeline.cuh"  // where a variant build defines SMLA_EXP_CLAIM

namespace smla_claim {

// The token id that producer thread 0 writes in a stage's first slot after the last claimed tile:
// the consumers stop there.
constexpr int kEndOfClaims = -3;
constexpr unsigned kClaimMask = 0xffffu;
constexpr unsigned kTicketUnit = 1u << 16;

// True when this launch claims tiles (both warp roles decide alike).
template <int SCHEDULE, int PRODUCERS, bool STAGED_IDS>
__device__ __forceinline__ bool claims(const smla::SplitParams& p) {
#ifdef SMLA_EXP_CLAIM
  return SCHEDULE == smla::kScheduleSplits && PRODUCERS > 0 && !STAGED_IDS &&
         p.row_tickets != nullptr && p.num_splits > 1;
#else
  return false;
#endif
}

// The consumers: waits for the stage of `tile` and says whether it is the end marker.
template <int BLOCK_T, int NUM_STAGES>
__device__ __forceinline__ bool at_end(const smla::SmemLayout& layout, unsigned char* smem,
                                       unsigned long long* full, int tile) {
  const int stage = tile % NUM_STAGES;
  ptx::mbarrier_wait(&full[stage], (tile / NUM_STAGES) & 1);
  const int* tokens = reinterpret_cast<const int*>(smem + layout.token_offset) + stage * BLOCK_T;
  return tokens[0] == kEndOfClaims;
}

// The producer warps of a claiming CTA: tile j (its split index), then claimed tiles, then the end
// marker. Thread 0 claims one tile ahead of the one whose ids load, so the atomic's round trip
// overlaps a whole tile.
template <int BLOCK_T, int NUM_WARPS, int NUM_STAGES, int KV_FORMAT, int PRODUCERS>
__device__ __forceinline__ void produce_claimed(const smla::SplitParams& p,
                                                const smla::SmemLayout& layout,
                                                unsigned char* smem) {
  constexpr int kThreads = PRODUCERS * 32;
  constexpr int kRows = (BLOCK_T + kThreads - 1) / kThreads;
  constexpr unsigned kRowBytes = smla::kv_row_bytes(KV_FORMAT);
  __shared__ int claimed[2];
  const int thread = static_cast<int>(threadIdx.x) - NUM_WARPS * 32;
  auto* full = reinterpret_cast<unsigned long long*>(smem + layout.barrier_offset);
  unsigned long long* empty = full + NUM_STAGES;
  const int* index_row = p.indices + static_cast<long long>(blockIdx.z) * p.topk;
  unsigned* counter =
      p.row_tickets + static_cast<int>(blockIdx.z) * p.head_groups + static_cast<int>(blockIdx.y);
  int next[kRows];
  auto fetch = [&](int row_tile) {
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const int row = thread + k * kThreads;
      const int pos = row_tile * BLOCK_T + row;
      next[k] =
          row_tile < p.tiles_per_row && row < BLOCK_T && pos < p.topk ? __ldg(index_row + pos) : -1;
    }
  };
  int current = static_cast<int>(blockIdx.x);
  fetch(current);
  unsigned pending = 0;
  if (thread == 0) {
    ptx::grid_dependency_wait();  // the reset of the counters (merge 3's first kernel)
    pending = atomicAdd(counter, 1u);
  }
  int tile = 0;
  for (; current < p.tiles_per_row; ++tile) {
    const int stage = tile % NUM_STAGES;
    int ids[kRows];
#pragma unroll
    for (int k = 0; k < kRows; ++k) ids[k] = next[k];
    if (tile >= NUM_STAGES) {
      ptx::mbarrier_wait_sleeping<20000>(&empty[stage], ((tile / NUM_STAGES) - 1) & 1);
    }
    unsigned bytes = 0;
    bool zeroed = false;
    unsigned char* ring = smem + layout.ring_offset + stage * layout.ring_stage_bytes;
    int* tokens = reinterpret_cast<int*>(smem + layout.token_offset) + stage * BLOCK_T;
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const int row = thread + k * kThreads;
      if (row >= BLOCK_T) continue;
      tokens[row] = ids[k];
      if (ids[k] >= 0) {
        bytes += kRowBytes;
      } else {
        zeroed = true;
        for (unsigned offset = 0; offset < kRowBytes; offset += 16) {
          *reinterpret_cast<uint4*>(ring + row * layout.ring_row_stride + offset) =
              make_uint4(0, 0, 0, 0);
        }
      }
    }
    if (zeroed) ptx::fence_proxy_async_shared();
    ptx::mbarrier_arrive_expect_tx(&full[stage], bytes);
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const int row = thread + k * kThreads;
      if (row >= BLOCK_T || ids[k] < 0) continue;
      ptx::bulk_copy_to_shared(ring + row * layout.ring_row_stride,
                               p.kv + static_cast<long long>(ids[k]) * kRowBytes, kRowBytes,
                               &full[stage]);
    }
    // The claim made a tile ago names the next tile; claim the one after while it loads. A CTA
    // claims until its first claim past the row (one failed claim per CTA).
    if (thread == 0) {
      const int next_tile = p.num_splits + static_cast<int>(pending & kClaimMask);
      claimed[tile & 1] = next_tile;
      if (next_tile < p.tiles_per_row) pending = atomicAdd(counter, 1u);
    }
    ptx::named_barrier_sync(2, kThreads);
    current = claimed[tile & 1];
    if (current < p.tiles_per_row) fetch(current);
  }
  // The end marker: a stage with no bytes whose first token id says so.
  const int stage = tile % NUM_STAGES;
  if (tile >= NUM_STAGES) {
    ptx::mbarrier_wait_sleeping<20000>(&empty[stage], ((tile / NUM_STAGES) - 1) & 1);
  }
  if (thread == 0) {
    reinterpret_cast<int*>(smem + layout.token_offset)[stage * BLOCK_T] = kEndOfClaims;
  }
  ptx::mbarrier_arrive_expect_tx(&full[stage], 0u);
}

}  // namespace smla_claim
