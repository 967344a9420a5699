#pragma once
// Two consumer groups' rows merged in shared memory (schedule.h's kScheduleTwoGroups): each group
// ran every other tile of the split with its own running maximum, sum and output accumulator, as
// two splits of the row would. At the row's end group 1 hands its accumulator to group 0, which
// merges it as the combine merges splits and writes the row as one split's output.
//
// Thread t of group 1 holds the same rows and dims as thread t of group 0 (the same warp index in
// its group and the same lane), so the hand-over is thread to thread: group 1 stores its registers
// in the ring, group 0 reads its partner's back. No layout of the values is shared with any other
// code: the stash is private to these two functions.
#include "common/async.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/token_softmax.cuh"

namespace smla_pipe {

// Named barrier at which group 1's stores are handed to group 0 (1: every consumer; 2, 3: the
// groups' own; see ConsumerGroup).
constexpr int kGroupHandBarrier = 4;

// Bytes of the stash: per thread of a group, its n-tiles' values and one float4 of statistics.
template <int NUM_WARPS>
__host__ __device__ constexpr unsigned group_stash_bytes() {
  return (Accumulator<smla::kMmaM, NUM_WARPS>::kNTiles + 1) * NUM_WARPS * 32 * 16;
}

// Call with every consumer thread of both groups, after gather_row_sums. Returns true for group
// 0's threads, whose `acc` then holds the merged row; group 1's threads return at once after their
// stores (its `acc` is left as it was).
template <int NUM_WARPS>
__device__ __forceinline__ bool merge_groups(const smla::SmemLayout& layout, unsigned char* smem,
                                             Accumulator<smla::kMmaM, NUM_WARPS>& acc) {
  using Acc = Accumulator<smla::kMmaM, NUM_WARPS>;
  constexpr int kGroupThreads = NUM_WARPS * 32;
  float4* stash = reinterpret_cast<float4*>(smem + layout.ring_offset);
  const int thread = static_cast<int>(threadIdx.x) % kGroupThreads;
  // Both groups are past their last tile: no stage of the ring is read or filled any more.
  ptx::named_barrier_sync(1, 2 * kGroupThreads);
  if (threadIdx.x >= kGroupThreads) {
#pragma unroll
    for (int n = 0; n < Acc::kNTiles; ++n) {
      const float(&v)[4] = acc.value[0][n];
      stash[n * kGroupThreads + thread] = make_float4(v[0], v[1], v[2], v[3]);
    }
    stash[Acc::kNTiles * kGroupThreads + thread] =
        make_float4(acc.row_max[0][0], acc.row_max[0][1], acc.row_sum[0][0], acc.row_sum[0][1]);
    ptx::named_barrier_arrive(kGroupHandBarrier, 2 * kGroupThreads);
    return false;
  }
  ptx::named_barrier_sync(kGroupHandBarrier, 2 * kGroupThreads);
  const float4 stats = stash[Acc::kNTiles * kGroupThreads + thread];
  const float other_max[2] = {stats.x, stats.y};
  const float other_sum[2] = {stats.z, stats.w};
  float own_scale[2];
  float other_scale[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    // As a tile of the online softmax: both -inf (no valid token in either) gives factors 0.
    const float base = online_max_step(acc.row_max[0][half], other_max[half], own_scale[half]);
    other_scale[half] = ptx::exp2_approx(other_max[half] - base);
    acc.row_sum[0][half] =
        acc.row_sum[0][half] * own_scale[half] + other_sum[half] * other_scale[half];
  }
#pragma unroll
  for (int n = 0; n < Acc::kNTiles; ++n) {
    const float4 other = stash[n * kGroupThreads + thread];
    const float v[4] = {other.x, other.y, other.z, other.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      acc.value[0][n][j] = acc.value[0][n][j] * own_scale[j / 2] + v[j] * other_scale[j / 2];
    }
  }
  return true;
}

}  // namespace smla_pipe
