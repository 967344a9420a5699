#pragma once
// A diagnostic timeline of the split and combine kernels, compiled in only where SMLA_TIMELINE is
// defined (the number of the launch to print: scripts/devcarry_timeline_tuner.sh builds such a
// `tuner`; the tuner's own kernels never define it, so every mark below compiles to nothing).
// Per CTA, %globaltimer stamps (ns) of the marks below, kept in static shared memory and printed
// by one thread at the CTA's end for launches SMLA_TIMELINE and SMLA_TIMELINE + 1 (counted per
// module from the CTAs that started: CTAs of one launch all start before the next launch's).
// scripts/timeline.py turns the lines into the ramp / stream / drain / combine parts of a launch.
#include "common/ptx.cuh"

#ifdef SMLA_TIMELINE
namespace smla_timeline {

enum Mark : int {
  kEntry,       // the CTA's first instruction (thread 0)
  kIssued0,     // the producers' first tile copies issued (its ids loaded)
  kQReady,      // the consumers' q in shared memory
  kFirstFull,   // the first tile landed (consumer thread 0 past its full barrier)
  kLastFull,    // the last tile landed
  kIssuedLast,  // the producers' last tile copies issued
  kComputed,    // the last tile's softmax and P.V done
  kWritten,     // the output (or partial) written
  kLaunch,      // not a stamp: the launch number
  kMarks
};

__device__ unsigned split_ctas_started;
__device__ unsigned combine_ctas_started;

__device__ __forceinline__ unsigned long long* marks() {
  __shared__ unsigned long long stamps[kMarks];
  return stamps;
}

__device__ __forceinline__ unsigned grid_ctas() { return gridDim.x * gridDim.y * gridDim.z; }

__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(id));
  return id;
}

// Thread 0 at the CTA's start: the entry stamp and the launch number.
__device__ __forceinline__ void enter(unsigned* started) {
  if (threadIdx.x != 0) return;
  marks()[kEntry] = ptx::global_timer_ns();
  marks()[kLaunch] = atomicAdd(started, 1u) / grid_ctas();
}

__device__ __forceinline__ bool printed_launch(unsigned long long launch) {
  return launch == SMLA_TIMELINE || launch == SMLA_TIMELINE + 1;
}

__device__ __forceinline__ void print_split() {
  const unsigned long long* m = marks();
  if (!printed_launch(m[kLaunch])) return;
  printf("TL split %llu %u %u %u sm %u %llu %llu %llu %llu %llu %llu %llu %llu\n", m[kLaunch],
         blockIdx.x, blockIdx.y, blockIdx.z, sm_id(), m[kEntry], m[kIssued0], m[kQReady],
         m[kFirstFull], m[kLastFull], m[kIssuedLast], m[kComputed], m[kWritten]);
}

// The combine's marks: kEntry, kFirstFull (past its wait for the split grid), then its end.
__device__ __forceinline__ void print_combine() {
  const unsigned long long* m = marks();
  if (!printed_launch(m[kLaunch])) return;
  printf("TL combine %llu %u %u %u sm %u %llu %llu %llu\n", m[kLaunch], blockIdx.x, blockIdx.y,
         blockIdx.z, sm_id(), m[kEntry], m[kFirstFull], ptx::global_timer_ns());
}

}  // namespace smla_timeline

#define SMLA_TL_MARK(cond, mark)                                                    \
  do {                                                                              \
    if (cond) smla_timeline::marks()[smla_timeline::mark] = ptx::global_timer_ns(); \
  } while (0)
#define SMLA_TL_ENTER_SPLIT() smla_timeline::enter(&smla_timeline::split_ctas_started)
#define SMLA_TL_ENTER_COMBINE() smla_timeline::enter(&smla_timeline::combine_ctas_started)
#define SMLA_TL_PRINT_SPLIT()       \
  do {                              \
    if (threadIdx.x == 0) {         \
      SMLA_TL_MARK(true, kWritten); \
      smla_timeline::print_split(); \
    }                               \
  } while (0)
#define SMLA_TL_PRINT_COMBINE() smla_timeline::print_combine()
#else
#define SMLA_TL_MARK(cond, mark) \
  do {                           \
  } while (0)
#define SMLA_TL_ENTER_SPLIT() \
  do {                        \
  } while (0)
#define SMLA_TL_ENTER_COMBINE() \
  do {                          \
  } while (0)
#define SMLA_TL_PRINT_SPLIT() \
  do {                        \
  } while (0)
#define SMLA_TL_PRINT_COMBINE() \
  do {                          \
  } while (0)
#endif
