#pragma once
// Deterministic random fills, generated on the GPU so that gigabyte-sized caches cost no PCIe time.
// Every element is a pure function of (seed, index): the host can regenerate any slice for checks.
#include "sparse_mla_decode/layout.h"

namespace fill_detail {

__device__ __forceinline__ unsigned long long mix64(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ float uniform01(unsigned long long seed, unsigned long long index) {
  return static_cast<float>(mix64(seed * 0x100000001b3ull + index) >> 40) * (1.f / 16777216.f);
}

__device__ __forceinline__ unsigned short float_to_bf16_bits(float value) {
  const unsigned bits = __float_as_uint(value);
  return static_cast<unsigned short>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// Roughly normal: sum of four uniforms, centered, unit variance.
__device__ __forceinline__ float normal01(unsigned long long seed, unsigned long long index) {
  float sum = 0.f;
  for (int k = 0; k < 4; ++k) sum += uniform01(seed, index * 4 + k);
  return (sum - 2.f) * 1.7320508f;
}

// A finite e4m3 value: mostly normals with exponents 4..8 (|v| in [0.125, 3.75]), some subnormals
// and zeros, never the NaN encodings.
__device__ __forceinline__ unsigned char random_e4m3(unsigned long long seed,
                                                     unsigned long long index) {
  const unsigned long long r = mix64(seed ^ (index * 0xd1342543de82ef95ull));
  const unsigned sign = static_cast<unsigned>(r & 1u) << 7;
  const unsigned mantissa = static_cast<unsigned>(r >> 1) & 7u;
  const unsigned pick = static_cast<unsigned>(r >> 4) & 15u;
  const unsigned exponent = pick == 0 ? 0u : 4u + static_cast<unsigned>((r >> 8) % 5u);
  return static_cast<unsigned char>(sign | (exponent << 3) | mantissa);
}

}  // namespace fill_detail

__global__ void fill_bf16_normal(unsigned short* dst, long long count, unsigned long long seed,
                                 float stddev) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    dst[i] = fill_detail::float_to_bf16_bits(fill_detail::normal01(seed, i) * stddev);
  }
}

// One fp8_ds_mla row per token: 512 e4m3, 4 fp32 scales in [0.05, 0.2), 64 bf16 rope ~ N(0,
// 0.25^2).
__global__ void fill_kv_fp8_ds_mla(unsigned char* kv, long long num_tokens,
                                   unsigned long long seed) {
  constexpr int kRowBytes = smla::kv_row_bytes(smla::kFp8DsMla);
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       i < num_tokens * kRowBytes; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long token = i / kRowBytes;
    const int byte = static_cast<int>(i % kRowBytes);
    if (byte < smla::kFp8ScaleOffset) {
      kv[i] = fill_detail::random_e4m3(seed, i);
    } else if (byte < smla::kFp8RopeOffset) {
      if ((byte - smla::kFp8ScaleOffset) % 4 == 0) {
        const int group = (byte - smla::kFp8ScaleOffset) / 4;
        const float scale = 0.05f + 0.15f * fill_detail::uniform01(seed + 1, token * 4 + group);
        *reinterpret_cast<float*>(kv + i) = scale;
      }
    } else if ((byte - smla::kFp8RopeOffset) % 2 == 0) {
      const unsigned short value = fill_detail::float_to_bf16_bits(
          0.25f * fill_detail::normal01(seed + 2, token * 64 + (byte - smla::kFp8RopeOffset) / 2));
      *reinterpret_cast<unsigned short*>(kv + i) = value;
    }
  }
}

// bf16 rows ~ N(0, 0.25^2).
__global__ void fill_kv_bf16(unsigned char* kv, long long num_tokens, unsigned long long seed) {
  unsigned short* values = reinterpret_cast<unsigned short*>(kv);
  const long long count = num_tokens * smla::kHeadDim;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    values[i] = fill_detail::float_to_bf16_bits(0.25f * fill_detail::normal01(seed, i));
  }
}

// Random token ids in [0, num_tokens) (duplicates possible), each -1 with probability
// invalid_per_mille / 1000.
__global__ void fill_indices(int* indices, long long count, long long num_tokens,
                             unsigned long long seed, int invalid_per_mille) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned long long r = fill_detail::mix64(seed * 31 + i);
    const bool invalid = static_cast<int>(r % 1000u) < invalid_per_mille;
    indices[i] =
        invalid ? -1 : static_cast<int>((r >> 10) % static_cast<unsigned long long>(num_tokens));
  }
}
