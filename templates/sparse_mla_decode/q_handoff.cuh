#pragma once
// Under the balanced schedule a CTA's range crosses rows. The consumers used to load the next
// row's q at the crossing: a dependent global load while the producers' gathers load the memory
// system, during which the ring could only fill its stages (schedule 1 lost 3.5 µs of split kernel
// against schedule 0 at batch 64; BENCHMARKS.md section 7, nineteenth session). Here the producer
// warps load it into registers at the top of the new row's first tile, before that stage's wait
// (loaded a tile earlier, its loads were in flight across the producer loop's top, where ptxas
// waited for them before the stage's wait: twenty-sixth session), store it once every consumer
// warp is past the old row's last scores (mbarrier q_free, one arrival per consumer warp) and hand
// it over (q_full, one arrival per producer thread). With 2 producer warps and BLOCK_H 16 that is
// 9 32-byte units a producer thread (PendingQ); larger q tiles or one producer warp keep the
// consumers' load (hands_q_over false). The e4m3 path's q quantization reduces over whole warps
// per group and stays with the consumers too.
#include "common/async.cuh"
#include "sparse_mla_decode/pipelined_qk.cuh"
#include "sparse_mla_decode/pipelined_work.cuh"

namespace smla_pipe {

template <int BLOCK_H, int MMA, int PRODUCERS, int SCHEDULE>
__host__ __device__ constexpr bool hands_q_over() {
  return smla::divides_tiles(SCHEDULE) && MMA == smla::kMmaRegF16 && PRODUCERS == 2 &&
         BLOCK_H == 16;
}

// The two handoff mbarriers after the ring's full / empty ones (smla::producer_barriers): q_free,
// then q_full. `full` is the first of the ring's.
__device__ __forceinline__ unsigned long long* q_free_barrier(unsigned long long* full,
                                                              int stages) {
  return full + 2 * stages;
}

// One producer thread's share of a row's q, all of its 32-byte units loaded at the top of the
// row's first tile and stored once the consumers free q. Loading only 4 of the 9 there and the
// other 5 after q_free kept the producers in the handoff for ~4.9 us (a dependent load with the
// memory system saturated), so the next tile's copies were issued ~8 us after the old row's last
// tile landed instead of ~2.3 and the two-stage ring ran dry (H100 timeline, thirty-seventh
// session). Timed apart (thirty-eighth session, H100): 0-0.3 % at a fixed division. Registers
// (sm_90): under a launch bound of two CTAs an SM 167, no spills; under a bound of one 179 (164
// before), one CTA an SM, so that kernel's balanced division runs 132 CTAs, not 264, which made it
// 1.5-4.6 % faster at batch 69-192 on the H100 (sm_120: 145). Held across the stage's wait only: a
// tile earlier, ptxas waited for the loads at the loop's top, before that wait (twenty-sixth
// session).
template <int BLOCK_H, int PRODUCERS>
struct PendingQ {
  static constexpr int kUnits = smla::kHeadDim * 2 / 32;  // 32-byte units a q row
  static constexpr int kThreads = PRODUCERS * 32;
  static constexpr int kItems = BLOCK_H * kUnits;
  static constexpr int kPerThread = (kItems + kThreads - 1) / kThreads;
  uint4 lo[kPerThread];
  uint4 hi[kPerThread];
  RowWork work;

  // Issues the loads of this thread's units of the row `work` names (set by the caller);
  // `thread` counts the producer threads from 0.
  __device__ __forceinline__ void load(const smla::SplitParams& p, int thread) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      load_q_unit(p, work.batch_item, work.first_head, thread + k * kThreads, kItems, lo[k], hi[k]);
    }
  }

  // Converts and stores the loaded units (store_q_unit).
  template <int KV_FORMAT, bool K_BITS>
  __device__ __forceinline__ void store(const smla::SmemLayout& layout, unsigned char* smem,
                                        int thread) const {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int i = thread + k * kThreads;
      if (i < kItems) store_q_unit<KV_FORMAT, K_BITS>(layout, smem, i, lo[k], hi[k]);
    }
  }
};

}  // namespace smla_pipe
