#pragma once
// The correctness checks' comparison on the device (verify.cpp's compare_on_device): one block per
// (batch, head) row of a candidate's bf16 output against the fp32 reference, four fp64 sums per
// row: sum (out - ref)^2 and sum ref^2 over the dims whose output is finite, the output's NaN/inf
// count and the reference's. A check then downloads 32 bytes a row instead of the 1 KB output, and
// converts and compares nothing on the host: at batch 128 x 64 heads the host path took ~26 ms
// a check besides the download (BENCHMARKS.md section 7, fourteenth session): minutes a row.
// verify.cpp judges the sums by the rules of its host comparison (row_errors_from_sums).
#include "sparse_mla_decode/layout.h"
#include "sparse_mla_decode/row_errors.h"

namespace smla_row_errors {

constexpr int kThreads = smla::kRowErrorsThreads;
constexpr int kSums = smla::kRowSums;

// NaN or inf: every exponent bit set.
__device__ __forceinline__ bool finite(float value) {
  return (__float_as_uint(value) & 0x7f800000u) != 0x7f800000u;
}

}  // namespace smla_row_errors

// Grid: one block of kThreads per row; sums[row * kSums + k].
__global__ void __launch_bounds__(smla_row_errors::kThreads)
    sparse_mla_decode_row_errors(const unsigned short* out, const float* ref_out, double* sums) {
  using namespace smla_row_errors;
  __shared__ double partial[kThreads][kSums];
  const long long first = static_cast<long long>(blockIdx.x) * smla::kLatentDim;
  double value[kSums] = {0.0, 0.0, 0.0, 0.0};
  for (int dim = threadIdx.x; dim < smla::kLatentDim; dim += kThreads) {
    const float got = __uint_as_float(static_cast<unsigned>(out[first + dim]) << 16);
    const float ref = ref_out[first + dim];
    if (!finite(ref)) value[3] += 1.0;
    if (!finite(got)) {
      value[2] += 1.0;
      continue;
    }
    const double diff = static_cast<double>(got) - static_cast<double>(ref);
    value[0] += diff * diff;
    value[1] += static_cast<double>(ref) * static_cast<double>(ref);
  }
  // A tree over the block in shared memory (fp64; the family's warp helpers are fp32).
#pragma unroll
  for (int k = 0; k < kSums; ++k) partial[threadIdx.x][k] = value[k];
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
#pragma unroll
      for (int k = 0; k < kSums; ++k) partial[threadIdx.x][k] += partial[threadIdx.x + stride][k];
    }
    __syncthreads();
  }
  if (threadIdx.x < kSums) {
    sums[static_cast<long long>(blockIdx.x) * kSums + threadIdx.x] = partial[0][threadIdx.x];
  }
}
