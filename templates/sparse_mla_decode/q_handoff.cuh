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
#include "sparse_mla_decode/timeline.cuh"  // where a variant build defines an experiment's switch

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

// One producer thread's share of a row's q: kAhead of its 32-byte units loaded before the row's
// first stage frees, the rest when it is stored. Holding 5 of the 9 took the batch-64 structure's
// kernel (BLOCK_T 64, 4 + 2 warps, 2 stages, fp8) from 155 to 172 registers on sm_90, past the 168
// that 2 CTAs an SM allow; 1-4 held gave 156. The rest's load latency is the producers' own, while
// the consumers finish the old row's last tile.
template <int BLOCK_H, int PRODUCERS>
struct PendingQ {
  static constexpr int kUnits = smla::kHeadDim * 2 / 32;  // 32-byte units a q row
  static constexpr int kThreads = PRODUCERS * 32;
  static constexpr int kItems = BLOCK_H * kUnits;
  static constexpr int kPerThread = (kItems + kThreads - 1) / kThreads;
#ifdef SMLA_EXP_Q_AHEAD  // experiment (thirty-seventh session): how many units load ahead
  static constexpr int kAheadWanted = SMLA_EXP_Q_AHEAD;
#else
  static constexpr int kAheadWanted = 4;
#endif
  static constexpr int kAhead = kPerThread < kAheadWanted ? kPerThread : kAheadWanted;
  static constexpr int kRest = kPerThread - kAhead;
  uint4 lo[kAhead > 0 ? kAhead : 1];
  uint4 hi[kAhead > 0 ? kAhead : 1];
  RowWork work;

  // This thread's unit k, converted and stored (store_q_unit).
  template <int KV_FORMAT, bool K_BITS>
  __device__ __forceinline__ static void store_unit(const smla::SmemLayout& layout,
                                                    unsigned char* smem, int thread, int k,
                                                    uint4 lo, uint4 hi) {
    const int i = thread + k * kThreads;
    if (i < kItems) store_q_unit<KV_FORMAT, K_BITS>(layout, smem, i, lo, hi);
  }

  // Issues the loads of the first kAhead units of the row `work` names (set by the caller);
  // `thread` counts the producer threads from 0.
  __device__ __forceinline__ void load(const smla::SplitParams& p, int thread) {
#pragma unroll
    for (int k = 0; k < kAhead; ++k) {
      load_q_unit(p, work.batch_item, work.first_head, thread + k * kThreads, kItems, lo[k], hi[k]);
    }
  }

#ifdef SMLA_EXP_Q_REST_EARLY
  // Experiment (thirty-seventh session; scripts/devcarry_variant_tuner.sh qre
  // SMLA_EXP_Q_REST_EARLY): the rest's loads issued before the producers wait for q_free, so that
  // their latency runs while the consumers finish the old row's scores, not after.
  uint4 rest_lo[kRest > 0 ? kRest : 1];
  uint4 rest_hi[kRest > 0 ? kRest : 1];
  __device__ __forceinline__ void load_rest(const smla::SplitParams& p, int thread) {
#pragma unroll
    for (int k = kAhead; k < kPerThread; ++k) {
      load_q_unit(p, work.batch_item, work.first_head, thread + k * kThreads, kItems,
                  rest_lo[k - kAhead], rest_hi[k - kAhead]);
    }
  }
#endif

  // Stores the loaded units, then loads and stores the rest.
  template <int KV_FORMAT, bool K_BITS>
  __device__ __forceinline__ void store(const smla::SplitParams& p, const smla::SmemLayout& layout,
                                        unsigned char* smem, int thread) {
#pragma unroll
    for (int k = 0; k < kAhead; ++k) {
      store_unit<KV_FORMAT, K_BITS>(layout, smem, thread, k, lo[k], hi[k]);
    }
#ifdef SMLA_EXP_Q_REST_EARLY
#pragma unroll
    for (int k = kAhead; k < kPerThread; ++k) {
      store_unit<KV_FORMAT, K_BITS>(layout, smem, thread, k, rest_lo[k - kAhead],
                                    rest_hi[k - kAhead]);
    }
    return;
#endif
    uint4 rest_lo[kRest > 0 ? kRest : 1];
    uint4 rest_hi[kRest > 0 ? kRest : 1];
#pragma unroll
    for (int k = kAhead; k < kPerThread; ++k) {
      load_q_unit(p, work.batch_item, work.first_head, thread + k * kThreads, kItems,
                  rest_lo[k - kAhead], rest_hi[k - kAhead]);
    }
#pragma unroll
    for (int k = kAhead; k < kPerThread; ++k) {
      store_unit<KV_FORMAT, K_BITS>(layout, smem, thread, k, rest_lo[k - kAhead],
                                    rest_hi[k - kAhead]);
    }
  }
};

}  // namespace smla_pipe
