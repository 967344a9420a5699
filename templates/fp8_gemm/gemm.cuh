#pragma once
// fp8 block-scaled GEMM for decode (M = batch, small): C = (A * a_scale) x (B * b_scale)^T in bf16.
// mma.sync m16n8k32 e4m3 (sm_89 and later: one source for sm_90 and sm_120), a cp.async ring of
// NUM_STAGES tiles, and split-K over whole 128-wide K groups (split_k > 1: fp32 partials summed by
// fp8_gemm_reduce). Each 128-wide K group is accumulated on its own and then scaled into the total
// (the fp32 promotion DeepSeek-V3's recipe asks for).
#include "common/ptx.cuh"
#include "fp8_gemm/layout.h"
#include "fp8_gemm/params.h"

namespace fp8gemm_device {

// Split blockIdx.z owns the K groups [first_group, first_group + group_count).
__device__ __forceinline__ int first_group(const fp8gemm::GemmParams& p, int groups) {
  return static_cast<int>(blockIdx.z) * ((groups + p.split_k - 1) / p.split_k);
}
__device__ __forceinline__ int group_count(const fp8gemm::GemmParams& p, int groups, int first) {
  return max(0, min(groups, first + (groups + p.split_k - 1) / p.split_k) - first);
}

template <int MI, int NI>
__device__ __forceinline__ void zero(float (&acc)[MI][NI][4]) {
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[mi][ni][j] = 0.f;
    }
  }
}

// Copies K tile `tile` of this CTA (A: BLOCK_M rows, rows >= m zero-filled; B: BLOCK_N rows) into
// ring slot `slot` with 16-byte cp.async.
template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int THREADS>
__device__ __forceinline__ void load_tile(unsigned char* smem, const fp8gemm::GemmParams& p, int m0,
                                          int n0, int k0, int slot) {
  constexpr int kRow = fp8gemm::row_bytes(BLOCK_K);
  constexpr int kChunks = BLOCK_K / 16;
  unsigned char* sa = smem + slot * fp8gemm::stage_bytes(BLOCK_M, BLOCK_N, BLOCK_K);
  unsigned char* sb = sa + BLOCK_M * kRow;
#pragma unroll
  for (int i = threadIdx.x; i < BLOCK_M * kChunks; i += THREADS) {
    const int r = i / kChunks;
    const int c = (i % kChunks) * 16;
    const bool inside = m0 + r < p.m;
    const unsigned char* src = p.a + static_cast<long long>(inside ? m0 + r : 0) * p.k + k0 + c;
    ptx::cp_async_16(sa + r * kRow + c, src, inside ? 16 : 0);
  }
#pragma unroll
  for (int i = threadIdx.x; i < BLOCK_N * kChunks; i += THREADS) {
    const int r = i / kChunks;
    const int c = (i % kChunks) * 16;
    ptx::cp_async_16(sb + r * kRow + c, p.b + static_cast<long long>(n0 + r) * p.k + k0 + c, 16);
  }
}

// The fragments of one k32 step straight from shared memory: A and B are both K-contiguous, so
// each register is four consecutive bytes of one row (no ldmatrix needed).
template <int MI, int NI, int ROW>
__device__ __forceinline__ void mma_step(float (&part)[MI][NI][4], const unsigned char* sa,
                                         const unsigned char* sb, int kk, int group, int quad) {
  unsigned af[MI][4];
  unsigned bf[NI][2];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
    const unsigned char* base = sa + (mi * 16 + group) * ROW + kk + quad * 4;
    af[mi][0] = *reinterpret_cast<const unsigned*>(base);
    af[mi][1] = *reinterpret_cast<const unsigned*>(base + 8 * ROW);
    af[mi][2] = *reinterpret_cast<const unsigned*>(base + 16);
    af[mi][3] = *reinterpret_cast<const unsigned*>(base + 8 * ROW + 16);
  }
#pragma unroll
  for (int ni = 0; ni < NI; ++ni) {
    const unsigned char* base = sb + (ni * 8 + group) * ROW + kk + quad * 4;
    bf[ni][0] = *reinterpret_cast<const unsigned*>(base);
    bf[ni][1] = *reinterpret_cast<const unsigned*>(base + 16);
  }
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) ptx::mma_e4m3_16832(part[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
  }
}

// acc += part * a_scale[row][g] * b_scale[n0 / 128][g] for the warp's rows.
template <int MI, int NI>
__device__ __forceinline__ void promote(float (&acc)[MI][NI][4], const float (&part)[MI][NI][4],
                                        const fp8gemm::GemmParams& p, int row0, int n0, int g,
                                        int groups) {
  const float b_scale = p.b_scale[(n0 / fp8gemm::kScaleBlock) * groups + g];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
    const int r0 = row0 + mi * 16;
    const float s0 = r0 < p.m ? p.a_scale[static_cast<long long>(r0) * groups + g] * b_scale : 0.f;
    const float s1 =
        r0 + 8 < p.m ? p.a_scale[static_cast<long long>(r0 + 8) * groups + g] * b_scale : 0.f;
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      acc[mi][ni][0] += part[mi][ni][0] * s0;
      acc[mi][ni][1] += part[mi][ni][1] * s0;
      acc[mi][ni][2] += part[mi][ni][2] * s1;
      acc[mi][ni][3] += part[mi][ni][3] * s1;
    }
  }
}

// bf16 to C (one split) or fp32 to this split's partial slice.
template <int MI, int NI>
__device__ __forceinline__ void store(const float (&acc)[MI][NI][4], const fp8gemm::GemmParams& p,
                                      int row0, int col0, int split) {
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + mi * 16 + half * 8;
      if (row >= p.m) continue;
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) {
        const int col = col0 + ni * 8;
        const float lo = acc[mi][ni][half * 2];
        const float hi = acc[mi][ni][half * 2 + 1];
        const long long at = static_cast<long long>(row) * p.n + col;
        if (p.split_k == 1) {
          *reinterpret_cast<unsigned*>(p.c + at) = ptx::pack_bf16x2(lo, hi);
        } else {
          float* out = p.partial + static_cast<long long>(split) * p.m * p.n + at;
          *reinterpret_cast<float2*>(out) = make_float2(lo, hi);
        }
      }
    }
  }
}

}  // namespace fp8gemm_device

// Grid (n / BLOCK_N, ceil(m / BLOCK_M), split_k); NUM_WARPS * 32 threads; dynamic shared memory
// fp8gemm::smem_bytes(BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES). Needs n % BLOCK_N == 0, k % 128 == 0.
template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int NUM_WARPS, int NUM_STAGES>
__global__ void __launch_bounds__(NUM_WARPS * 32, 1) fp8_gemm(const fp8gemm::GemmParams p) {
  constexpr int kThreads = NUM_WARPS * 32;
  constexpr int kRow = fp8gemm::row_bytes(BLOCK_K);
  constexpr int kWarpsN = fp8gemm::warps_n(BLOCK_M, NUM_WARPS);
  constexpr int kWM = fp8gemm::warp_tile_m(BLOCK_M, NUM_WARPS);
  constexpr int kWN = fp8gemm::warp_tile_n(BLOCK_M, BLOCK_N, NUM_WARPS);
  constexpr int kMI = kWM / 16;
  constexpr int kNI = kWN / 8;
  constexpr int kStage = fp8gemm::stage_bytes(BLOCK_M, BLOCK_N, BLOCK_K);
  constexpr int kTilesPerGroup = fp8gemm::kScaleBlock / BLOCK_K;
  static_assert(
      fp8gemm::tiling_ok(BLOCK_M, BLOCK_N, NUM_WARPS) && fp8gemm::kScaleBlock % BLOCK_K == 0,
      "the warps must tile the CTA and BLOCK_K divide the scale block");
  extern __shared__ __align__(16) unsigned char smem[];
  const int n0 = blockIdx.x * BLOCK_N;
  const int m0 = blockIdx.y * BLOCK_M;
  const int groups = p.k / fp8gemm::kScaleBlock;
  const int g_begin = fp8gemm_device::first_group(p, groups);
  const int k_tiles = fp8gemm_device::group_count(p, groups, g_begin) * kTilesPerGroup;
  const int k_base = g_begin * fp8gemm::kScaleBlock;
  const int group = (threadIdx.x % 32) / 4;  // mma fragment row / column
  const int quad = threadIdx.x % 4;          // mma fragment k / column pair
  const int warp_m = static_cast<int>(threadIdx.x / 32) / kWarpsN;
  const int warp_n = static_cast<int>(threadIdx.x / 32) % kWarpsN;

  float acc[kMI][kNI][4];
  float part[kMI][kNI][4];
  fp8gemm_device::zero<kMI, kNI>(acc);
#pragma unroll
  for (int s = 0; s < NUM_STAGES - 1; ++s) {
    if (s < k_tiles) {
      fp8gemm_device::load_tile<BLOCK_M, BLOCK_N, BLOCK_K, kThreads>(smem, p, m0, n0,
                                                                     k_base + s * BLOCK_K, s);
    }
    ptx::cp_async_commit();
  }
  for (int t = 0; t < k_tiles; ++t) {
    ptx::cp_async_wait<NUM_STAGES - 2>();
    __syncthreads();  // tile t landed for all; slot (t - 1) % NUM_STAGES is free again
    const int next = t + NUM_STAGES - 1;
    if (next < k_tiles) {
      fp8gemm_device::load_tile<BLOCK_M, BLOCK_N, BLOCK_K, kThreads>(
          smem, p, m0, n0, k_base + next * BLOCK_K, next % NUM_STAGES);
    }
    ptx::cp_async_commit();
    if (t % kTilesPerGroup == 0) fp8gemm_device::zero<kMI, kNI>(part);
    const unsigned char* sa = smem + (t % NUM_STAGES) * kStage + warp_m * kWM * kRow;
    const unsigned char* sb =
        smem + (t % NUM_STAGES) * kStage + BLOCK_M * kRow + warp_n * kWN * kRow;
#pragma unroll
    for (int kk = 0; kk < BLOCK_K; kk += fp8gemm::kMmaK) {
      fp8gemm_device::mma_step<kMI, kNI, kRow>(part, sa, sb, kk, group, quad);
    }
    if ((t + 1) % kTilesPerGroup == 0) {
      fp8gemm_device::promote<kMI, kNI>(acc, part, p, m0 + warp_m * kWM + group, n0,
                                        g_begin + t / kTilesPerGroup, groups);
    }
  }
  ptx::cp_async_wait<0>();
  fp8gemm_device::store<kMI, kNI>(acc, p, m0 + warp_m * kWM + group, n0 + warp_n * kWN + quad * 2,
                                  blockIdx.z);
}

// Sums the split_k fp32 partials of each element into bf16 C. Grid-stride over m * n / 2 pairs.
template <int THREADS>
__global__ void __launch_bounds__(THREADS) fp8_gemm_reduce(const fp8gemm::ReduceParams p) {
  const long long pairs = static_cast<long long>(p.m) * p.n / 2;
  const long long slice = static_cast<long long>(p.m) * p.n;
  for (long long i = blockIdx.x * static_cast<long long>(THREADS) + threadIdx.x; i < pairs;
       i += static_cast<long long>(gridDim.x) * THREADS) {
    float lo = 0.f;
    float hi = 0.f;
    for (int s = 0; s < p.split_k; ++s) {
      const float2 v = reinterpret_cast<const float2*>(p.partial + s * slice)[i];
      lo += v.x;
      hi += v.y;
    }
    reinterpret_cast<unsigned*>(p.c)[i] = ptx::pack_bf16x2(lo, hi);
  }
}
