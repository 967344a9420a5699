#pragma once
// The fp8 GEMM's launch geometry and parameter packing as a function of (n, k, batch, config),
// with no NVRTC, no tuner and no allocation: the one source of truth for the tuner's launches
// (session.cpp) and the serving launcher (serve.cpp in libtunedb_cuda).
#include <cstddef>
#include <cstdint>

#include "templates/fp8_gemm/params.h"

namespace tuner::fp8_gemm {

// The GEMM's dimensions: m is the batch (decode tokens).
struct GemmDims {
  int m = 1;
  int n = 0;
  int k = 0;
};

// The config values the geometry reads (the rest of a config is baked into the cubin).
struct GemmLaunchParams {
  int block_m = 16;
  int block_n = 64;
  int split_k = 1;
};

// What the kernel needs of (dims, params), without allocating: BLOCK_N divides n (whole column
// tiles) and SPLIT_K is at most the k / 128 scale groups. nullptr when they hold, else why not
// (a static string).
const char* launch_rule_violation(const GemmDims& dims, const GemmLaunchParams& params);

// Grid of the GEMM kernel: (n / BLOCK_N, ceil(m / BLOCK_M), SPLIT_K).
struct Grid {
  unsigned x = 1;
  unsigned y = 1;
  unsigned z = 1;
};
Grid gemm_grid(const GemmDims& dims, const GemmLaunchParams& params);

// The split-K reduce (runs when SPLIT_K > 1): a grid-stride loop over m x n / 2 element pairs,
// kReduceThreads per block, at most 2048 blocks.
inline constexpr unsigned kReduceThreads = 256;
unsigned reduce_blocks(const GemmDims& dims);

// The caller's device buffers as addresses; `partial` is the workspace (split-K partials).
struct GemmBuffers {
  std::uint64_t a = 0;        // [m][k] e4m3
  std::uint64_t a_scale = 0;  // [m][k / 128] fp32
  std::uint64_t b = 0;        // [n][k] e4m3
  std::uint64_t b_scale = 0;  // [n / 128][k / 128] fp32
  std::uint64_t c = 0;        // [m][n] bf16
  std::uint64_t partial = 0;  // [split_k][m][n] fp32 when SPLIT_K > 1
};
fp8gemm::GemmParams pack_gemm(const GemmBuffers& buffers, const GemmDims& dims, int split_k);
fp8gemm::ReduceParams pack_reduce(const GemmBuffers& buffers, const GemmDims& dims, int split_k);

// The workspace one launch needs: SPLIT_K fp32 slices of m x n, or 0 with one split.
std::size_t workspace_bytes(const GemmDims& dims, int split_k);

}  // namespace tuner::fp8_gemm
