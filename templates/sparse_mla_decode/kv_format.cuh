#pragma once
// The KV cache formats in the split kernel (split.cuh): which tensor-core type each runs in, and
// the conversions to it (q once per CTA, fp8 tiles once per tile) with the fp8 group scales.
#include "common/ptx.cuh"
#include "sparse_mla_decode/layout.h"

namespace smla_detail {

// fp8 caches run the tensor cores in f16: e4m3 -> f16 is one exact cvt per pair, while there is no
// direct e4m3 -> bf16 conversion. q (bf16) is converted to f16 once per CTA, clamped to f16's
// range. bf16 caches stay bf16 throughout.
template <int KV_FORMAT>
struct KvTraits {
  static constexpr bool kFp8 = KV_FORMAT == smla::kFp8DsMla;
  static constexpr int kRowBytes = smla::kv_row_bytes(KV_FORMAT);
  static constexpr int kChunksPerRow = kRowBytes / 16;

  __device__ static __forceinline__ void mma(float (&acc)[4], const unsigned (&a)[4], unsigned b0,
                                             unsigned b1) {
    if (kFp8) {
      ptx::mma_f16_16816(acc, a, b0, b1);
    } else {
      ptx::mma_bf16_16816(acc, a, b0, b1);
    }
  }
  __device__ static __forceinline__ unsigned short pack(float value) {
    return static_cast<unsigned short>(
        (kFp8 ? ptx::pack_f16x2(value, 0.f) : ptx::pack_bf16x2(value, 0.f)) & 0xffffu);
  }
};

__device__ __forceinline__ float clamp_to_f16(float value) {
  return fminf(fmaxf(value, -65504.f), 65504.f);
}

// Eight bf16 (one uint4) -> eight f16, clamped to f16's finite range.
__device__ __forceinline__ uint4 bf16x8_to_f16x8(uint4 bf16) {
  const unsigned words[4] = {bf16.x, bf16.y, bf16.z, bf16.w};
  unsigned out[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[i] = ptx::pack_f16x2(clamp_to_f16(__uint_as_float(words[i] << 16)),
                             clamp_to_f16(__uint_as_float(words[i] & 0xffff0000u)));
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

// q rows in shared memory, bf16 -> f16 in place (fp8 caches only), once per CTA.
template <int BLOCK_H, int NUM_THREADS>
__device__ __forceinline__ void convert_q_to_f16(const smla::SmemLayout& layout,
                                                 unsigned char* smem) {
  constexpr int kUnits = smla::kHeadDim * 2 / 16;
  for (int i = threadIdx.x; i < BLOCK_H * kUnits; i += NUM_THREADS) {
    uint4* unit = reinterpret_cast<uint4*>(smem + layout.q_offset +
                                           (i / kUnits) * layout.q_row_stride + (i % kUnits) * 16);
    *unit = bf16x8_to_f16x8(*unit);
  }
}

// fp8 rows -> unscaled f16 rows (exact), rope bf16 -> f16; scales stay in the ring and are applied
// to the scores and to P.
template <int BLOCK_T, int NUM_THREADS>
__device__ __forceinline__ void dequantize_tile(const smla::SmemLayout& layout,
                                                const unsigned char* ring, unsigned char* dequant) {
  constexpr int kLatentUnits = smla::kLatentDim / 8;  // 8 fp8 bytes -> 16 bf16 bytes
  constexpr int kRopeUnits = smla::kRopeDim * 2 / 16;
  constexpr int kUnits = kLatentUnits + kRopeUnits;
  for (int i = threadIdx.x; i < BLOCK_T * kUnits; i += NUM_THREADS) {
    const int row = i / kUnits;
    const int unit = i % kUnits;
    const unsigned char* src = ring + row * layout.ring_row_stride;
    unsigned char* dst = dequant + row * smla::kBf16RowStride;
    if (unit < kLatentUnits) {
      const uint2 bytes = *reinterpret_cast<const uint2*>(src + unit * 8);
      uint4 out;
      ptx::e4m3x4_to_f16x4(bytes.x, out.x, out.y);
      ptx::e4m3x4_to_f16x4(bytes.y, out.z, out.w);
      *reinterpret_cast<uint4*>(dst + unit * 16) = out;
    } else {
      const int rope_unit = unit - kLatentUnits;
      *reinterpret_cast<uint4*>(dst + smla::kLatentDim * 2 + rope_unit * 16) = bf16x8_to_f16x8(
          *reinterpret_cast<const uint4*>(src + smla::kFp8RopeOffset + rope_unit * 16));
    }
  }
}

__device__ __forceinline__ float fp8_group_scale(const unsigned char* ring_row, int group) {
  return reinterpret_cast<const float*>(ring_row + smla::kFp8ScaleOffset)[group];
}

}  // namespace smla_detail
