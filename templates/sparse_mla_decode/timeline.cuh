#pragma once
// A diagnostic timeline of the split and combine kernels, compiled in only where SMLA_TIMELINE is
// defined (the first of the two launches to record: scripts/devcarry_variant_tuner.sh builds such
// a `tuner`; the tuner's own kernels never define it, so every mark below compiles to nothing).
// Per CTA, %globaltimer stamps (ns) of the marks below, kept in static shared memory. Launches
// SMLA_TIMELINE and SMLA_TIMELINE + 1 store them to a global log at the CTA's end, and launch
// SMLA_TIMELINE + 3 prints the log, so that the recorded launches run as the timed ones do (a
// printf at their end would hold the grid, the combine's wait and the next launch). Launches are
// counted per module from the CTAs that started (one launch's CTAs all start before the next's);
// the count's atomic is read at the end only, so that it holds nothing up at the start.
// scripts/timeline.py turns the lines into the ramp / stream / drain / combine parts of a launch.
#include "common/ptx.cuh"

#ifdef SMLA_TIMELINE
namespace smla_timeline {

enum Mark : int {
  kEntry,       // the CTA's first instruction (thread 0)
  kIdsLoaded,   // the producers' first tile ids in registers (producer thread 0)
  kIssued0,     // the producers' first tile copies issued
  kQReady,      // the consumers' q in shared memory
  kFirstFull,   // the first tile landed (consumer thread 0 past its full barrier); the combine:
                // past its wait for the split grid
  kLastFull,    // the last tile landed
  kIssuedLast,  // the producers' last tile copies issued
  kComputed,    // the last tile's softmax and P.V done (consumer thread 0)
  kWritten,     // the output (or partial) written, any in-kernel merge done; the combine's end
  kRowSums,     // the last row's partial row sums gathered from every consumer warp (thread 0)
  kDependents,  // past the last row's programmatic-dependent trigger (thread 0)
  kIssued0All,  // the last producer thread's first tile copies issued
  // The CTA's first row crossing where the producers hand q over (q_handoff.cuh); 0 without one.
  kCrossLastFull,    // the old row's last tile landed (consumer thread 0 past its full barrier)
  kCrossComputed,    // its softmax and P.V done
  kCrossWritten,     // the old row's output written
  kCrossQFull,       // the consumers past q_full: the new row's q stored
  kCrossDone0,       // the new row's first tile done (consumer thread 0)
  kCrossDone1,       // its second tile done
  kCrossQFree,       // the producers past q_free (producer thread 0)
  kCrossQStored,     // their share of the new q stored
  kCrossIssuedNext,  // the copies of the tile after the new row's first issued
  kCrossIdsTaken,    // that tile's staged ids read (producer thread 0, before the stage's wait)
  kCrossStageFree,   // past that tile's stage wait (its stage freed by every consumer warp)
  // The producers' fifth tile (kMidTile) for comparison (producer thread 0): ids read, past the
  // stage's wait, copies issued.
  kMidIdsTaken,
  kMidStageFree,
  kMidIssued,
  kMarks
};
constexpr int kFirstCrossMark = kCrossLastFull;
constexpr int kMidTile = 4;
constexpr int kSplitCtas = 4096;     // CTAs per launch the log holds (the rest are not recorded)
constexpr int kCombineCtas = 16384;  // likewise for the combine

__device__ unsigned split_ctas_started;
__device__ unsigned combine_ctas_started;
__device__ unsigned long long split_log[2][kSplitCtas][kMarks + 1];  // + the SM
__device__ unsigned long long combine_log[2][kCombineCtas][4];       // SM, entry, waited, end

__device__ __forceinline__ unsigned long long* marks() {
  __shared__ unsigned long long stamps[kMarks];
  return stamps;
}

__device__ __forceinline__ unsigned grid_ctas() { return gridDim.x * gridDim.y * gridDim.z; }
__device__ __forceinline__ unsigned cta_index() {
  return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
}

__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(id));
  return id;
}

// Thread 0 at the CTA's start: the entry stamp, and the ticket whose launch number is read at
// the end (0 for the other threads).
__device__ __forceinline__ unsigned enter(unsigned* started) {
  if (threadIdx.x != 0) return 0;
  for (int m = kFirstCrossMark; m < kMarks; ++m) marks()[m] = 0;  // set only where a row crosses
  marks()[kEntry] = ptx::global_timer_ns();
  return atomicAdd(started, 1u);
}

// What thread 0 does at the CTA's end: record launches SMLA_TIMELINE and + 1 (into log slot
// 0 / 1), print both in + 3; nothing for CTAs past the log's `capacity` or other launches.
struct LogStep {
  unsigned cta;
  int record_slot;  // -1: not a recorded launch
  bool print;
};
__device__ __forceinline__ LogStep log_step(unsigned ticket, unsigned capacity) {
  const unsigned launch = ticket / grid_ctas();
  const unsigned cta = cta_index();
  const bool logged = cta < capacity;
  const bool recorded = launch == SMLA_TIMELINE || launch == SMLA_TIMELINE + 1;
  return {cta, logged && recorded ? static_cast<int>(launch - SMLA_TIMELINE) : -1,
          logged && launch == SMLA_TIMELINE + 3};
}

__device__ __forceinline__ void leave_split(unsigned ticket) {
  const LogStep step = log_step(ticket, kSplitCtas);
  if (step.record_slot >= 0) {
    unsigned long long* entry = split_log[step.record_slot][step.cta];
    for (int m = 0; m < kMarks; ++m) entry[m] = marks()[m];
    entry[kMarks] = sm_id();
  }
  for (int k = 0; step.print && k < 2; ++k) {
    const unsigned long long* m = split_log[k][step.cta];
    printf(
        "TL split %d %u %u %u sm %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
        "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n",
        SMLA_TIMELINE + k, blockIdx.x, blockIdx.y, blockIdx.z, m[kMarks], m[kEntry], m[kIdsLoaded],
        m[kIssued0], m[kQReady], m[kFirstFull], m[kLastFull], m[kIssuedLast], m[kComputed],
        m[kWritten], m[kRowSums], m[kDependents], m[kIssued0All], m[kCrossLastFull],
        m[kCrossComputed], m[kCrossWritten], m[kCrossQFull], m[kCrossDone0], m[kCrossDone1],
        m[kCrossQFree], m[kCrossQStored], m[kCrossIssuedNext], m[kCrossIdsTaken],
        m[kCrossStageFree], m[kMidIdsTaken], m[kMidStageFree], m[kMidIssued]);
  }
}

__device__ __forceinline__ void leave_combine(unsigned ticket) {
  const LogStep step = log_step(ticket, kCombineCtas);
  if (step.record_slot >= 0) {
    unsigned long long* entry = combine_log[step.record_slot][step.cta];
    entry[0] = sm_id();
    entry[1] = marks()[kEntry];
    entry[2] = marks()[kFirstFull];
    entry[3] = ptx::global_timer_ns();
  }
  for (int k = 0; step.print && k < 2; ++k) {
    const unsigned long long* m = combine_log[k][step.cta];
    printf("TL combine %d %u %u %u sm %llu %llu %llu %llu\n", SMLA_TIMELINE + k, blockIdx.x,
           blockIdx.y, blockIdx.z, m[0], m[1], m[2], m[3]);
  }
}

}  // namespace smla_timeline

#define SMLA_TL_MARK(cond, mark)                                                    \
  do {                                                                              \
    if (cond) smla_timeline::marks()[smla_timeline::mark] = ptx::global_timer_ns(); \
  } while (0)
// The mark's first stamp only (the crossing marks: the CTA's first row crossing).
#define SMLA_TL_MARK_FIRST(cond, mark)                                      \
  do {                                                                      \
    if ((cond) && smla_timeline::marks()[smla_timeline::mark] == 0) {       \
      smla_timeline::marks()[smla_timeline::mark] = ptx::global_timer_ns(); \
    }                                                                       \
  } while (0)
// The first tile of the consumers' current row, for marks that count tiles into a row.
#define SMLA_TL_ROW_START(tile) const int smla_tl_row_start = (tile)
// The new row's first and second tile done (kCrossDone0 / 1), after SMLA_TL_ROW_START.
#define SMLA_TL_MARK_CROSS_DONE(cond, tile)                                     \
  do {                                                                          \
    SMLA_TL_MARK_FIRST((cond) && (tile) == smla_tl_row_start, kCrossDone0);     \
    SMLA_TL_MARK_FIRST((cond) && (tile) == smla_tl_row_start + 1, kCrossDone1); \
  } while (0)
#define SMLA_TL_ENTER_SPLIT() \
  const unsigned smla_tl_ticket = smla_timeline::enter(&smla_timeline::split_ctas_started)
#define SMLA_TL_ENTER_COMBINE() \
  const unsigned smla_tl_ticket = smla_timeline::enter(&smla_timeline::combine_ctas_started)
#define SMLA_TL_LEAVE_SPLIT()                     \
  do {                                            \
    if (threadIdx.x == 0) {                       \
      SMLA_TL_MARK(true, kWritten);               \
      smla_timeline::leave_split(smla_tl_ticket); \
    }                                             \
  } while (0)
#define SMLA_TL_LEAVE_COMBINE()                                         \
  do {                                                                  \
    if (threadIdx.x == 0) smla_timeline::leave_combine(smla_tl_ticket); \
  } while (0)
#else  // each mark a statement that compiles to nothing
#define SMLA_TL_NOTHING() \
  do {                    \
  } while (0)
#define SMLA_TL_MARK(cond, mark) SMLA_TL_NOTHING()
#define SMLA_TL_MARK_FIRST(cond, mark) SMLA_TL_NOTHING()
#define SMLA_TL_ROW_START(tile) SMLA_TL_NOTHING()
#define SMLA_TL_MARK_CROSS_DONE(cond, tile) SMLA_TL_NOTHING()
#define SMLA_TL_ENTER_SPLIT() SMLA_TL_NOTHING()
#define SMLA_TL_ENTER_COMBINE() SMLA_TL_NOTHING()
#define SMLA_TL_LEAVE_SPLIT() SMLA_TL_NOTHING()
#define SMLA_TL_LEAVE_COMBINE() SMLA_TL_NOTHING()
#endif
