#pragma once
// The fp32 GPU reference of the fp8 block-scaled GEMM (checked against a CPU fp64 computation on
// small shapes, tests/gpu_fp8_gemm.cpp), and the input fills. Written separately from gemm.cuh:
// plain loops, one thread per output element, no shared memory, no tensor cores.
#include "fp8_gemm/layout.h"
#include "fp8_gemm/params.h"

namespace fp8gemm_device {

__device__ __forceinline__ float e4m3_to_float(unsigned char bits) {
  const int sign = bits >> 7;
  const int exponent = (bits >> 3) & 15;
  const int mantissa = bits & 7;
  // The fills never produce NaN (0x7f / 0xff).
  // 2^(exponent - 10) built from its bits: exact, unlike exp2f's approximation.
  const float power = __int_as_float((exponent - 10 + 127) << 23);
  const float magnitude = exponent == 0 ? mantissa * 0.001953125f  // 2^-9: subnormal step
                                        : static_cast<float>(8 + mantissa) * power;
  return sign != 0 ? -magnitude : magnitude;
}

__device__ __forceinline__ unsigned long long mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace fp8gemm_device

__global__ void fp8_gemm_reference(const fp8gemm::ReferenceParams p) {
  const long long index = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (index >= static_cast<long long>(p.m) * p.n) return;
  const int row = static_cast<int>(index / p.n);
  const int col = static_cast<int>(index % p.n);
  const int groups = p.k / fp8gemm::kScaleBlock;
  float total = 0.f;
  for (int g = 0; g < groups; ++g) {
    float sum = 0.f;
    for (int kk = 0; kk < fp8gemm::kScaleBlock; ++kk) {
      const long long k = static_cast<long long>(g) * fp8gemm::kScaleBlock + kk;
      sum += fp8gemm_device::e4m3_to_float(p.a[row * static_cast<long long>(p.k) + k]) *
             fp8gemm_device::e4m3_to_float(p.b[col * static_cast<long long>(p.k) + k]);
    }
    total += sum * p.a_scale[static_cast<long long>(row) * groups + g] *
             p.b_scale[(col / fp8gemm::kScaleBlock) * groups + g];
  }
  p.c[index] = total;
}

// e4m3 bytes with exponent field 4..9 (magnitudes 2^-3 .. 2^2 * 1.875) and random sign and
// mantissa: no NaN, no overflow of the fp32 sums.
__global__ void fp8_gemm_fill_e4m3(unsigned char* out, long long count, unsigned long long seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned long long r =
        fp8gemm_device::mix(seed ^ (static_cast<unsigned long long>(i) << 1));
    const unsigned exponent = 4 + static_cast<unsigned>((r >> 8) % 6);
    out[i] = static_cast<unsigned char>((r & 0x80) | (exponent << 3) | ((r >> 16) & 7));
  }
}

// Scales uniform in [0.5, 1.5) / 64.
__global__ void fp8_gemm_fill_scale(float* out, long long count, unsigned long long seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned long long r =
        fp8gemm_device::mix(seed ^ (static_cast<unsigned long long>(i) << 1));
    out[i] = (0.5f + static_cast<float>(r >> 40) * (1.0f / 16777216.0f)) * 0.015625f;
  }
}
