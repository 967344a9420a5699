#include "kernels/fp8_gemm/deploy.hpp"

#include <algorithm>

#include "core/device_pointer.hpp"
#include "templates/fp8_gemm/layout.h"

namespace tuner::fp8_gemm {

namespace {

constexpr long long kMaxReduceBlocks = 2048;

}  // namespace

const char* launch_rule_violation(const GemmDims& dims, const GemmLaunchParams& params) {
  if (params.block_n < 1 || dims.n % params.block_n != 0) {
    return "n is not a multiple of the config's BLOCK_N (whole column tiles)";
  }
  if (params.split_k < 1 || params.split_k > dims.k / fp8gemm::kScaleBlock) {
    return "the config's SPLIT_K is more than the k / 128 scale groups";
  }
  return nullptr;
}

Grid gemm_grid(const GemmDims& dims, const GemmLaunchParams& params) {
  return {static_cast<unsigned>(dims.n / params.block_n),
          static_cast<unsigned>((dims.m + params.block_m - 1) / params.block_m),
          static_cast<unsigned>(params.split_k)};
}

unsigned reduce_blocks(const GemmDims& dims) {
  const long long pairs = static_cast<long long>(dims.m) * dims.n / 2;
  return static_cast<unsigned>(
      std::clamp((pairs + kReduceThreads - 1) / kReduceThreads, 1LL, kMaxReduceBlocks));
}

fp8gemm::GemmParams pack_gemm(const GemmBuffers& buffers, const GemmDims& dims, int split_k) {
  fp8gemm::GemmParams p{};
  p.a = device_pointer<const unsigned char>(buffers.a);
  p.a_scale = device_pointer<const float>(buffers.a_scale);
  p.b = device_pointer<const unsigned char>(buffers.b);
  p.b_scale = device_pointer<const float>(buffers.b_scale);
  p.c = device_pointer<unsigned short>(buffers.c);
  p.partial = device_pointer<float>(buffers.partial);
  p.m = dims.m;
  p.n = dims.n;
  p.k = dims.k;
  p.split_k = split_k;
  return p;
}

fp8gemm::ReduceParams pack_reduce(const GemmBuffers& buffers, const GemmDims& dims, int split_k) {
  return {device_pointer<const float>(buffers.partial), device_pointer<unsigned short>(buffers.c),
          dims.m, dims.n, split_k};
}

std::size_t workspace_bytes(const GemmDims& dims, int split_k) {
  if (split_k <= 1) return 0;
  return static_cast<std::size_t>(split_k) * static_cast<std::size_t>(dims.m) *
         static_cast<std::size_t>(dims.n) * sizeof(float);
}

}  // namespace tuner::fp8_gemm
