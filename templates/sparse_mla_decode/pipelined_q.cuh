#pragma once
// The pipelined split kernel's q in shared memory, in the form each MMA path reads (see
// pipelined_qk.cuh for the orders): 16-bit values for mma_path 1 (bf16 for bf16 caches, f16 in the
// cvt or bits order for fp8 caches) and e4m3 value + e4m3 residual per (head, 128-group) with an
// fp32 scale for mma_path 2; bf16 rope in both.
#include "common/async.cuh"
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/params.h"

namespace smla_pipe {

__device__ __forceinline__ unsigned bf16x2_to_f16x2(unsigned bf16x2) {
  const float lo = fminf(fmaxf(__uint_as_float(bf16x2 << 16), -65504.f), 65504.f);
  const float hi = fminf(fmaxf(__uint_as_float(bf16x2 & 0xffff0000u), -65504.f), 65504.f);
  return ptx::pack_f16x2(lo, hi);
}

__device__ __forceinline__ const uint4* q_source(const smla::SplitParams& p, int batch_item,
                                                 int head) {
  const long long row = static_cast<long long>(batch_item) * p.n_local_heads + head;
  return reinterpret_cast<const uint4*>(p.q + row * smla::kHeadDim);
}

// One 32-byte unit of a q row as 16-bit values for the MMA path: bf16 caches keep bf16; fp8 caches
// get f16 latent dims in the permuted order described above (the one K_BITS selects).
template <int KV_FORMAT, bool K_BITS>
__device__ __forceinline__ void q_unit_16bit(int unit, uint4& lo, uint4& hi) {
  constexpr int kLatentUnits = smla::kLatentDim / 16;
  if (KV_FORMAT != smla::kFp8DsMla || unit >= kLatentUnits) return;
  // Words hold dim pairs (0,1) (2,3) ... (14,15); the cvt order takes pairs 0,2,4,6 then
  // 1,3,5,7; the bits order takes the low halves (even dims) then the high halves (odd).
  const unsigned w[8] = {bf16x2_to_f16x2(lo.x), bf16x2_to_f16x2(lo.y), bf16x2_to_f16x2(lo.z),
                         bf16x2_to_f16x2(lo.w), bf16x2_to_f16x2(hi.x), bf16x2_to_f16x2(hi.y),
                         bf16x2_to_f16x2(hi.z), bf16x2_to_f16x2(hi.w)};
  if (K_BITS) {
    lo = make_uint4(ptx::byte_perm(w[0], w[1], 0x5410u), ptx::byte_perm(w[2], w[3], 0x5410u),
                    ptx::byte_perm(w[4], w[5], 0x5410u), ptx::byte_perm(w[6], w[7], 0x5410u));
    hi = make_uint4(ptx::byte_perm(w[0], w[1], 0x7632u), ptx::byte_perm(w[2], w[3], 0x7632u),
                    ptx::byte_perm(w[4], w[5], 0x7632u), ptx::byte_perm(w[6], w[7], 0x7632u));
  } else {
    lo = make_uint4(w[0], w[2], w[4], w[6]);
    hi = make_uint4(w[1], w[3], w[5], w[7]);
  }
}

// Unit i (of `items`, kUnits a q row) of the q rows from first_head: zeros past `items` and for
// heads past the shape.
__device__ __forceinline__ void load_q_unit(const smla::SplitParams& p, int batch_item,
                                            int first_head, int i, int items, uint4& lo,
                                            uint4& hi) {
  constexpr int kUnits = smla::kHeadDim * 2 / 32;  // 32-byte units: 16 dims each
  lo = hi = make_uint4(0, 0, 0, 0);
  if (i < items && first_head + i / kUnits < p.n_local_heads) {
    const uint4* src = q_source(p, batch_item, first_head + i / kUnits);
    lo = src[(i % kUnits) * 2];
    hi = src[(i % kUnits) * 2 + 1];
  }
}

// Unit i converted for the MMA path (q_unit_16bit) and stored in its q row.
template <int KV_FORMAT, bool K_BITS>
__device__ __forceinline__ void store_q_unit(const smla::SmemLayout& layout, unsigned char* smem,
                                             int i, uint4 lo, uint4 hi) {
  constexpr int kUnits = smla::kHeadDim * 2 / 32;
  q_unit_16bit<KV_FORMAT, K_BITS>(i % kUnits, lo, hi);
  uint4* dst = reinterpret_cast<uint4*>(smem + layout.q_offset +
                                        (i / kUnits) * layout.q_row_stride + (i % kUnits) * 32);
  dst[0] = lo;
  dst[1] = hi;
}

// q rows as 16-bit values (q_unit_16bit) and bf16 rope; rows past n_local_heads are zero. A thread
// issues the loads of up to kBatch units before it converts and stores any: one round trip to
// memory per batch instead of one per unit (with 4 consumer warps and BLOCK_H 16, five trips
// became two; each costs ~1 us while the producers' gathers load the memory system, at the start
// and at every row a balanced-schedule CTA enters). Batches of 5 (one trip) took the balanced
// 4 + 2 warp kernel from 154 to 173 registers on sm_90, past the 170 that 2 CTAs per SM allow.
template <int BLOCK_H, int NUM_THREADS, int KV_FORMAT, bool K_BITS>
__device__ __forceinline__ void prepare_q_16bit(const smla::SplitParams& p,
                                                const smla::SmemLayout& layout, unsigned char* smem,
                                                int batch_item, int first_head) {
  constexpr int kUnits = smla::kHeadDim * 2 / 32;  // 32-byte units: 16 dims each
  constexpr int kItems = BLOCK_H * kUnits;
  constexpr int kPerThread = (kItems + NUM_THREADS - 1) / NUM_THREADS;
  constexpr int kBatch = kPerThread < 4 ? kPerThread : 4;  // 8 uint4 registers at most
  for (int first = 0; first < kPerThread; first += kBatch) {
    uint4 lo[kBatch];
    uint4 hi[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int i = static_cast<int>(threadIdx.x) + (first + k) * NUM_THREADS;
      load_q_unit(p, batch_item, first_head, i, kItems, lo[k], hi[k]);
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int i = static_cast<int>(threadIdx.x) + (first + k) * NUM_THREADS;
      if (i < kItems) store_q_unit<KV_FORMAT, K_BITS>(layout, smem, i, lo[k], hi[k]);
    }
  }
}

// One (head, 128-group) of q as e4m3 value + e4m3 residual, quantized by its warp (amax, scale =
// amax / 448); `bits` are the lane's 4 bf16 dims of the group (zero for heads past the shape).
__device__ __forceinline__ void quantize_q_group(uint2 bits, unsigned char* dst, float* scale,
                                                 int lane) {
  const float v[4] = {__uint_as_float(bits.x << 16), __uint_as_float(bits.x & 0xffff0000u),
                      __uint_as_float(bits.y << 16), __uint_as_float(bits.y & 0xffff0000u)};
  const float amax =
      ptx::warp_max(fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3]))));
  const float inv = amax > 0.f ? 448.f / amax : 0.f;
  const float x[4] = {v[0] * inv, v[1] * inv, v[2] * inv, v[3] * inv};
  const unsigned hi = ptx::pack_e4m3x4(x[0], x[1], x[2], x[3]);
  float rounded[4];
  ptx::e4m3x4_to_floats(hi, rounded);
  *reinterpret_cast<unsigned*>(dst) = hi;
  *reinterpret_cast<unsigned*>(dst + smla::kPipelinedQResidualOffset) =
      ptx::pack_e4m3x4(x[0] - rounded[0], x[1] - rounded[1], x[2] - rounded[2], x[3] - rounded[3]);
  if (lane == 0) *scale = amax / 448.f;
}

// q rows as e4m3 value + e4m3 residual per (head, 128-group) (quantize_q_group) + bf16 rope. As in
// prepare_q_16bit, loads go out in batches before any is used: the rope's first, then up to 4
// groups per warp, so a 4-consumer-warp CTA at BLOCK_H 16 waits on memory 4 times instead of 17
// (one trip per group, each behind the stores of the one before). Batches of 8 (2 trips) took the
// BLOCK_H 32 kernel with producers to 8 bytes of spills on sm_120; with 4, BLOCK_T 64 at BLOCK_H
// 16 / 32 and 0 / 2 producers keep their sm_120 registers (217, 220, 255, 254) and no spills.
template <int BLOCK_H, int NUM_THREADS>
__device__ __forceinline__ void prepare_q_fp8(const smla::SplitParams& p,
                                              const smla::SmemLayout& layout, unsigned char* smem,
                                              int batch_item, int first_head) {
  constexpr int kWarps = NUM_THREADS / 32;
  constexpr int kItems = BLOCK_H * smla::kNumGroups;
  constexpr int kPerWarp = (kItems + kWarps - 1) / kWarps;
  constexpr int kBatch = kPerWarp < 4 ? kPerWarp : 4;
  constexpr int kRopeUnits = smla::kRopeDim * 2 / 16;
  constexpr int kRopePerThread = (BLOCK_H * kRopeUnits + NUM_THREADS - 1) / NUM_THREADS;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  uint4 rope[kRopePerThread];
#pragma unroll
  for (int k = 0; k < kRopePerThread; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * NUM_THREADS;
    rope[k] = make_uint4(0, 0, 0, 0);
    if (i < BLOCK_H * kRopeUnits && first_head + i / kRopeUnits < p.n_local_heads) {
      rope[k] = q_source(p, batch_item,
                         first_head + i / kRopeUnits)[smla::kLatentDim * 2 / 16 + i % kRopeUnits];
    }
  }
  float* q_scale = reinterpret_cast<float*>(smem + layout.q_scale_offset);
  for (int first = 0; first < kPerWarp; first += kBatch) {
    uint2 bits[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int item = warp + (first + k) * kWarps;  // warp-uniform: warp_max needs whole warps
      const int row = item / smla::kNumGroups;
      bits[k] = make_uint2(0, 0);
      if (item < kItems && first_head + row < p.n_local_heads) {
        bits[k] = reinterpret_cast<const uint2*>(
            q_source(p, batch_item,
                     first_head + row))[(item % smla::kNumGroups * smla::kGroupDim + lane * 4) / 4];
      }
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int item = warp + (first + k) * kWarps;
      if (item >= kItems) continue;
      const int row = item / smla::kNumGroups;
      const int group = item % smla::kNumGroups;
      quantize_q_group(
          bits[k],
          smem + layout.q_offset + row * layout.q_row_stride + group * smla::kGroupDim + lane * 4,
          q_scale + row * smla::kNumGroups + group, lane);
    }
  }
#pragma unroll
  for (int k = 0; k < kRopePerThread; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * NUM_THREADS;
    if (i >= BLOCK_H * kRopeUnits) continue;
    *reinterpret_cast<uint4*>(smem + layout.q_offset + (i / kRopeUnits) * layout.q_row_stride +
                              smla::kPipelinedQRopeOffset + (i % kRopeUnits) * 16) = rope[k];
  }
}

}  // namespace smla_pipe
