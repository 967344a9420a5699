// H200 micro-benchmark (nvcc on the lent GPU machine, not part of the CMake build): what one
// 64-token tile's scores (q . K over 512 fp8 latent dims + 64 bf16 rope dims, 16 heads) cost a CTA
// of 4 consumer warps, two CTAs an SM, with the tile already in shared memory (no global loads):
//   current_qk    the production QK of the winners (token softmax, mma_path 1: ldmatrix of the
//                 656-byte rows, e4m3 -> f16 by F2FP, m16n8k16 f16 MMA, rope by bf16 MMA;
//                 pipelined_qk.cuh's score_totals + mask_and_scale, called as the kernel does);
//   current_tile  the production consumer tile (token_softmax_tile: QK, softmax, P, P.V);
//   wgmma_qk      the same scores by warpgroup MMA on sm_90a: K stays e4m3 in a chunk-major tile
//                 ([16-byte chunk][token][16 B], the canonical K-major layout without swizzle), q
//                 as e4m3 value + e4m3 residual per (head, 128-group) scale (as mma_path 2), one
//                 m64n16k32 accumulator per scale group, rope by m64n16k16 bf16; scaled in fp32.
// wgmma_qk's scores of one tile are checked against an fp64 reference on the host (the descriptor
// and fragment layouts are what this run verifies), so its timing counts only if that passes.
// Prints cycles per tile per CTA (SM clock, clock64) and the ratio to current_tile.
// Usage: nvcc -O3 -std=c++17 -arch=sm_90a -I templates bench/device/qk_wgmma.cu -o qk && ./qk
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sparse_mla_decode/token_softmax.cuh"

namespace {

constexpr int kTokens = 64;
constexpr int kHeads = 16;
constexpr int kNopeChunks = 32;  // 512 e4m3 bytes
constexpr int kRopeChunks = 8;   // 64 bf16
// wgmma_qk's shared memory: per ring stage the nope chunks, the rope chunks, the token scales.
constexpr unsigned kStageNope = kNopeChunks * kTokens * 16;
constexpr unsigned kStageRope = kRopeChunks * kTokens * 16;
constexpr unsigned kStageBytes = kStageNope + kStageRope + kTokens * 16;
constexpr unsigned kQHi = 2 * kStageBytes;
constexpr unsigned kQLo = kQHi + kNopeChunks * kHeads * 16;
constexpr unsigned kQRope = kQLo + kNopeChunks * kHeads * 16;
constexpr unsigned kQScale = kQRope + kRopeChunks * kHeads * 16;
constexpr unsigned kWgmmaSmem = kQScale + kHeads * 16;

// The host-made inputs of wgmma_qk, row-major as a cache and q would hold them.
struct Inputs {
  unsigned char nope[kTokens][512];
  unsigned short rope[kTokens][64];
  float k_scale[kTokens][4];
  unsigned char q_hi[kHeads][512];
  unsigned char q_lo[kHeads][512];
  unsigned short q_rope[kHeads][64];
  float q_scale[kHeads][4];
};

__device__ __forceinline__ unsigned long long smem_desc(const void* start, unsigned lbo,
                                                        unsigned sbo) {
  const auto addr = static_cast<unsigned>(__cvta_generic_to_shared(start));
  return static_cast<unsigned long long>((addr & 0x3FFFFu) >> 4) |
         (static_cast<unsigned long long>((lbo >> 4) & 0x3FFFu) << 16) |
         (static_cast<unsigned long long>((sbo >> 4) & 0x3FFFu) << 32);  // no swizzle
}

__device__ __forceinline__ void wgmma_e4m3(float (&d)[8], unsigned long long a,
                                           unsigned long long b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7])
      : "l"(a), "l"(b), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_bf16(float (&d)[8], unsigned long long a,
                                           unsigned long long b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7])
      : "l"(a), "l"(b), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_e4m3_regs(float (&d)[8], const unsigned (&a)[4],
                                                unsigned long long b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_bf16_regs(float (&d)[8], const unsigned (&a)[4],
                                                unsigned long long b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}

// q's value and residual stacked as 32 rows of B: one MMA gives both products (columns 0-15 the
// value's, 16-31 the residual's), instead of two N = 16 MMAs.
__device__ __forceinline__ void wgmma_e4m3_regs_n32(float (&d)[16], const unsigned (&a)[4],
                                                    unsigned long long b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
      "{%16, %17, %18, %19}, %20, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}

template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Fills the production kernel's shared memory with finite values (e4m3 0.25-0.9, f16 ~0.5,
// positive fp32 and token ids): the timing does not depend on them.
__device__ void fill_production(unsigned char* smem, unsigned bytes) {
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) smem[i] = 0x30 + (i * 7u) % 16u;
}

template <bool FULL>
__global__ void __launch_bounds__(128, 2) current_kernel(int tiles, float* out) {
  constexpr smla::SmemLayout layout =
      smla::smem_layout(64, 16, 4, 2, smla::kFp8DsMla, smla::kMmaRegF16, 2);
  extern __shared__ __align__(128) unsigned char smem[];
  fill_production(smem, layout.total_bytes);
  __syncthreads();
  smla_pipe::Accumulator<16, 4> acc;
  smla_pipe::clear(acc);
  float checksum = 0.f;
  const long long start = clock64();
  for (int tile = 0; tile < tiles; ++tile) {
    const unsigned char* ring = smem + layout.ring_offset + (tile & 1) * layout.ring_stage_bytes;
    const int* tokens = reinterpret_cast<const int*>(smem + layout.token_offset) + (tile & 1) * 64;
    if constexpr (FULL) {
      smla_pipe::token_softmax_tile<64, 4, smla::kFp8DsMla, 0>(layout, smem, ring, tokens, 0.01f,
                                                               nullptr, false, acc);
    } else {
      float s[2][4];
      const int first_n = smla_pipe::own_first_n<2>();
      smla_pipe::score_totals<0, 1, 2, smla::kFp8DsMla, smla::kMmaRegF16, 0>(layout, smem, ring, 0,
                                                                             first_n, s);
      smla_pipe::mask_and_scale<2>(tokens, first_n, 0.01f, s);
      for (int g = 0; g < 2; ++g) checksum += s[g][0] + s[g][1] + s[g][2] + s[g][3];
    }
  }
  const long long cycles = clock64() - start;
  checksum += acc.value[0][0][0] + acc.value[0][15][3] + acc.row_sum[0][0];
  out[blockIdx.x * blockDim.x + threadIdx.x] = checksum;
  if (threadIdx.x == 0) out[gridDim.x * blockDim.x + blockIdx.x] = static_cast<float>(cycles);
}

// Copies the inputs into the chunk-major layout: byte b of row r of a [rows][chunks * 16] matrix
// goes to chunk b / 16, row r, byte b % 16.
__device__ void load_chunk_major(unsigned char* dst, const unsigned char* src, int rows,
                                 int chunks) {
  for (int i = threadIdx.x; i < rows * chunks; i += blockDim.x) {
    const int row = i % rows;
    const int chunk = i / rows;
    *reinterpret_cast<uint4*>(dst + (chunk * rows + row) * 16) =
        *reinterpret_cast<const uint4*>(src + row * chunks * 16 + chunk * 16);
  }
}

// The stage's K as the production ring holds it: 656-byte rows (nope, scales, rope).
__device__ void load_rows(unsigned char* dst, const Inputs* in) {
  for (int i = threadIdx.x; i < kTokens * 41; i += blockDim.x) {
    const int row = i / 41;
    const int chunk = i % 41;
    const unsigned char* src = chunk < 32   ? &in->nope[row][chunk * 16]
                               : chunk < 33 ? reinterpret_cast<const unsigned char*>(in->k_scale[row])
                                            : reinterpret_cast<const unsigned char*>(in->rope[row]) +
                                                  (chunk - 33) * 16;
    *reinterpret_cast<uint4*>(dst + row * 656 + chunk * 16) = *reinterpret_cast<const uint4*>(src);
  }
}

// Scores by wgmma with K as A fragments from registers: ldmatrix x4 of 16 rows x 32 bytes is one
// k-step's fragment of this warp's 16 tokens; a scale group's 4 k-steps load into one of two
// buffers while the previous group's MMAs run (a buffer is reused once its group completed).
// STACKED: q_hi_desc is the stacked [value; residual] B (32 rows), acc32 its accumulators.
template <bool STACKED>
__device__ __forceinline__ void qk_from_registers(const unsigned char* stage,
                                                  unsigned long long q_hi_desc,
                                                  unsigned long long q_lo_desc,
                                                  unsigned long long q_rope_desc,
                                                  float (&acc)[5][8], float (&acc32)[4][16]) {
  const int lane = threadIdx.x % 32;
  const unsigned char* rows =
      stage + (16 * (threadIdx.x / 32) + lane % 8 + 8 * ((lane / 8) % 2)) * 656 + 16 * (lane / 16);
  unsigned a[2][4][4];
#pragma unroll
  for (int group = 0; group < 4; ++group) {
    if (group >= 2) wgmma_wait<1>();
#pragma unroll
    for (int step = 0; step < 4; ++step) {
      ptx::ldmatrix_x4(a[group % 2][step], rows + (group * 4 + step) * 32);
    }
    wgmma_fence();
#pragma unroll
    for (int step = 0; step < 4; ++step) {
      const int chunk = (group * 4 + step) * 2;
      if constexpr (STACKED) {
        wgmma_e4m3_regs_n32(acc32[group], a[group % 2][step], q_hi_desc + chunk * 2 * kHeads,
                            step);
      } else {
        wgmma_e4m3_regs(acc[group], a[group % 2][step], q_hi_desc + chunk * kHeads, step);
        wgmma_e4m3_regs(acc[group], a[group % 2][step], q_lo_desc + chunk * kHeads, 1);
      }
    }
    wgmma_commit();
  }
  wgmma_wait<1>();
#pragma unroll
  for (int step = 0; step < 4; ++step) ptx::ldmatrix_x4(a[0][step], rows + 528 + step * 32);
  wgmma_fence();
#pragma unroll
  for (int step = 0; step < 4; ++step) {
    wgmma_bf16_regs(acc[4], a[0][step], q_rope_desc + step * 2 * kHeads, step);
  }
  wgmma_commit();
  wgmma_wait<0>();
}

// MODE 0: K from shared memory through a descriptor (chunk-major tile); 1: K as register
// fragments (ldmatrix from 656-byte rows, as the production ring holds them); 2: as 1 with q's
// value and residual stacked into one N = 32 MMA.
template <int MODE>
__global__ void __launch_bounds__(128, 2)
    wgmma_kernel(const Inputs* in, float* scores, int tiles, float* out) {
  static_assert(kStageBytes == kTokens * 656, "both layouts fill the same stage");
  constexpr bool A_REGS = MODE != 0;
  extern __shared__ __align__(128) unsigned char smem[];
  for (int stage = 0; stage < 2; ++stage) {
    unsigned char* base = smem + stage * kStageBytes;
    if (A_REGS) {
      load_rows(base, in);
      continue;
    }
    load_chunk_major(base, &in->nope[0][0], kTokens, kNopeChunks);
    load_chunk_major(base + kStageNope, reinterpret_cast<const unsigned char*>(in->rope), kTokens,
                     kRopeChunks);
    load_chunk_major(base + kStageNope + kStageRope,
                     reinterpret_cast<const unsigned char*>(in->k_scale), kTokens, 1);
  }
  if (MODE == 2) {  // [chunk][32 rows: 16 values, 16 residuals][16 B]
    for (int i = threadIdx.x; i < 2 * kHeads * kNopeChunks; i += blockDim.x) {
      const int row = i % (2 * kHeads);
      const int chunk = i / (2 * kHeads);
      const unsigned char* src =
          row < kHeads ? &in->q_hi[row][chunk * 16] : &in->q_lo[row - kHeads][chunk * 16];
      *reinterpret_cast<uint4*>(smem + kQHi + (chunk * 2 * kHeads + row) * 16) =
          *reinterpret_cast<const uint4*>(src);
    }
  } else {
    load_chunk_major(smem + kQHi, &in->q_hi[0][0], kHeads, kNopeChunks);
    load_chunk_major(smem + kQLo, &in->q_lo[0][0], kHeads, kNopeChunks);
  }
  load_chunk_major(smem + kQRope, reinterpret_cast<const unsigned char*>(in->q_rope), kHeads,
                   kRopeChunks);
  load_chunk_major(smem + kQScale, reinterpret_cast<const unsigned char*>(in->q_scale), kHeads, 1);
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  // This thread's accumulator elements j: token 16 warp + lane / 4 + 8 ((j / 2) % 2), head
  // 8 (j / 4) + 2 (lane % 4) + j % 2. The q scales of its 4 heads stay in registers.
  float q_scale[4][4];
  for (int h = 0; h < 4; ++h) {
    const int head = 8 * (h / 2) + 2 * (lane % 4) + h % 2;
    for (int g = 0; g < 4; ++g) {
      q_scale[h][g] = reinterpret_cast<const float*>(smem + kQScale)[head * 4 + g];
    }
  }
  // Descriptors of the operands' first k-step; a k-step or stage further is an address further,
  // added to the address field (addresses >> 4 stay within its 14 bits).
  const unsigned long long k_desc = smem_desc(smem, kTokens * 16, 128);
  const unsigned long long rope_desc = smem_desc(smem + kStageNope, kTokens * 16, 128);
  const unsigned long long q_hi_desc =
      smem_desc(smem + kQHi, (MODE == 2 ? 2 : 1) * kHeads * 16, 128);
  const unsigned long long q_lo_desc = smem_desc(smem + kQLo, kHeads * 16, 128);
  const unsigned long long q_rope_desc = smem_desc(smem + kQRope, kHeads * 16, 128);
  float checksum = 0.f;
  float s[8];
  const long long start = clock64();
  for (int tile = 0; tile < tiles; ++tile) {
    const unsigned char* stage = smem + (tile & 1) * kStageBytes;
    const unsigned stage_step = (tile & 1) * (kStageBytes >> 4);
    float acc[5][8];
    float acc32[4][16];
    if constexpr (A_REGS) {
      qk_from_registers<MODE == 2>(stage, q_hi_desc, q_lo_desc, q_rope_desc, acc, acc32);
    } else {
      wgmma_fence();
#pragma unroll
      for (int group = 0; group < 4; ++group) {
#pragma unroll
        for (int step = 0; step < 4; ++step) {
          const int chunk = (group * 4 + step) * 2;
          const unsigned long long a = k_desc + stage_step + chunk * kTokens;  // 16 B units
          wgmma_e4m3(acc[group], a, q_hi_desc + chunk * kHeads, step);
          wgmma_e4m3(acc[group], a, q_lo_desc + chunk * kHeads, 1);
        }
      }
#pragma unroll
      for (int step = 0; step < 4; ++step) {
        wgmma_bf16(acc[4], rope_desc + stage_step + step * 2 * kTokens,
                   q_rope_desc + step * 2 * kHeads, step);
      }
      wgmma_commit();
      wgmma_wait<0>();
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int token = 16 * warp + lane / 4 + 8 * half;
      const float4 ks =
          A_REGS ? *reinterpret_cast<const float4*>(stage + token * 656 + 512)
                 : reinterpret_cast<const float4*>(stage + kStageNope + kStageRope)[token];
      const float k[4] = {ks.x, ks.y, ks.z, ks.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int j = (i / 2) * 4 + half * 2 + i % 2;  // the elements of this token
        float value = acc[4][j];
#pragma unroll
        for (int g = 0; g < 4; ++g) {
          const float dot = MODE == 2 ? acc32[g][j] + acc32[g][j + 8] : acc[g][j];
          value += dot * (k[g] * q_scale[(j / 4) * 2 + j % 2][g]);
        }
        s[j] = value;
      }
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) checksum += s[j] * 0.01f;
  }
  const long long cycles = clock64() - start;
  out[blockIdx.x * blockDim.x + threadIdx.x] = checksum;
  if (threadIdx.x == 0) out[gridDim.x * blockDim.x + blockIdx.x] = static_cast<float>(cycles);
  if (blockIdx.x == 0 && scores != nullptr) {
    for (int j = 0; j < 8; ++j) {
      const int token = 16 * warp + lane / 4 + 8 * ((j / 2) % 2);
      const int head = 8 * (j / 4) + 2 * (lane % 4) + j % 2;
      scores[token * kHeads + head] = s[j];
    }
  }
}

// ---- host ----

double e4m3(unsigned char byte) {
  const int sign = byte >> 7;
  const int exponent = (byte >> 3) & 15;
  const int mantissa = byte & 7;
  const double magnitude = exponent == 0 ? mantissa / 8.0 * std::ldexp(1.0, -6)
                                         : (1 + mantissa / 8.0) * std::ldexp(1.0, exponent - 7);
  return sign ? -magnitude : magnitude;
}
double bf16(unsigned short bits) {
  const unsigned word = static_cast<unsigned>(bits) << 16;
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}
unsigned char random_e4m3(unsigned& state) {
  state = state * 1664525u + 1013904223u;
  unsigned char byte = static_cast<unsigned char>(state >> 24);
  if ((byte & 0x7F) == 0x7F) byte ^= 0x08;  // not NaN
  return byte;
}
unsigned short random_bf16(unsigned& state) {
  state = state * 1664525u + 1013904223u;
  const float value = (static_cast<int>(state >> 8) % 2001 - 1000) / 1000.f;
  unsigned word;
  std::memcpy(&word, &value, 4);
  return static_cast<unsigned short>(word >> 16);
}

// exact: values in {-1, 0, 1, 2}, unit scales, no residual: every partial sum is an integer below
// 2^12, exact in any accumulator, so any error is a layout error.
unsigned char exact_e4m3(unsigned& state) {
  state = state * 1664525u + 1013904223u;
  const unsigned char values[4] = {0xB8, 0x00, 0x38, 0x40};
  return values[state >> 30];
}
unsigned short exact_bf16(unsigned& state) {
  state = state * 1664525u + 1013904223u;
  const unsigned short values[4] = {0xBF80, 0x0000, 0x3F80, 0x4000};
  return values[state >> 30];
}

void make_exact_inputs(Inputs& in) {
  unsigned state = 777u;
  for (int t = 0; t < kTokens; ++t) {
    for (int d = 0; d < 512; ++d) in.nope[t][d] = exact_e4m3(state);
    for (int d = 0; d < 64; ++d) in.rope[t][d] = exact_bf16(state);
    for (int g = 0; g < 4; ++g) in.k_scale[t][g] = 1.f;
  }
  for (int h = 0; h < kHeads; ++h) {
    for (int d = 0; d < 512; ++d) {
      in.q_hi[h][d] = exact_e4m3(state);
      in.q_lo[h][d] = 0;
    }
    for (int d = 0; d < 64; ++d) in.q_rope[h][d] = exact_bf16(state);
    for (int g = 0; g < 4; ++g) in.q_scale[h][g] = 1.f;
  }
}

void make_inputs(Inputs& in) {
  unsigned state = 12345u;
  const float scales[4] = {0.5f, 0.0625f, 1.5f, 3.0f};  // powers of two and not
  for (int t = 0; t < kTokens; ++t) {
    for (int d = 0; d < 512; ++d) in.nope[t][d] = random_e4m3(state);
    for (int d = 0; d < 64; ++d) in.rope[t][d] = random_bf16(state);
    for (int g = 0; g < 4; ++g) in.k_scale[t][g] = scales[(t + g) % 4];
  }
  for (int h = 0; h < kHeads; ++h) {
    for (int d = 0; d < 512; ++d) {
      in.q_hi[h][d] = random_e4m3(state);
      in.q_lo[h][d] = random_e4m3(state) & 0xC7;  // a small residual
    }
    for (int d = 0; d < 64; ++d) in.q_rope[h][d] = random_bf16(state);
    for (int g = 0; g < 4; ++g) in.q_scale[h][g] = scales[(h + 2 * g) % 4] / 4;
  }
}

double reference_score(const Inputs& in, int t, int h) {
  double total = 0;
  for (int d = 0; d < 512; ++d) {
    total += e4m3(in.nope[t][d]) * (e4m3(in.q_hi[h][d]) + e4m3(in.q_lo[h][d])) *
             in.k_scale[t][d / 128] * in.q_scale[h][d / 128];
  }
  for (int d = 0; d < 64; ++d) total += bf16(in.rope[t][d]) * bf16(in.q_rope[h][d]);
  return total;
}

#define CHECK(call)                                                                    \
  do {                                                                                 \
    const cudaError_t status = (call);                                                 \
    if (status != cudaSuccess) {                                                       \
      std::printf("%s failed: %s\n", #call, cudaGetErrorName(status));                 \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

template <typename Kernel, typename... Args>
double cycles_per_tile(Kernel kernel, unsigned smem, int ctas, int tiles, float* out,
                       Args... args) {
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, 128, smem));
  kernel<<<ctas, 128, smem>>>(args..., tiles / 8, out);  // warm-up
  kernel<<<ctas, 128, smem>>>(args..., tiles, out);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> cycles(ctas);
  CHECK(cudaMemcpy(cycles.data(), out + ctas * 128, ctas * 4, cudaMemcpyDeviceToHost));
  double total = 0;
  for (float c : cycles) total += c;
  std::printf("  (%d CTAs an SM resident, %u B shared memory a CTA)\n", resident, smem);
  return total / ctas / tiles;
}

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int ctas = 2 * sms;
  const int tiles = 4096;
  float* out = nullptr;
  float* scores = nullptr;
  Inputs* inputs = nullptr;
  CHECK(cudaMalloc(&out, (ctas * 128 + ctas) * 4));
  CHECK(cudaMalloc(&scores, kTokens * kHeads * 4));
  CHECK(cudaMalloc(&inputs, sizeof(Inputs)));
  static Inputs host;
  make_inputs(host);
  CHECK(cudaMemcpy(inputs, &host, sizeof(Inputs), cudaMemcpyHostToDevice));

  constexpr smla::SmemLayout layout =
      smla::smem_layout(64, 16, 4, 2, smla::kFp8DsMla, smla::kMmaRegF16, 2);
  std::printf("%d SMs, %d CTAs of 4 warps, %d tiles each\n", sms, ctas, tiles);
  std::printf("current_qk:\n");
  const double qk = cycles_per_tile(current_kernel<false>, layout.total_bytes, ctas, tiles, out);
  std::printf("current_tile:\n");
  const double tile = cycles_per_tile(current_kernel<true>, layout.total_bytes, ctas, tiles, out);
  static Inputs exact;
  make_exact_inputs(exact);
  Inputs* exact_inputs = nullptr;
  CHECK(cudaMalloc(&exact_inputs, sizeof(Inputs)));
  CHECK(cudaMemcpy(exact_inputs, &exact, sizeof(Inputs), cudaMemcpyHostToDevice));
  // One tile's scores from CTA 0 against the fp64 reference: max |error|, max |score|.
  auto check = [&](auto kernel, const Inputs* device, const Inputs& host_inputs, double& worst,
                   double& largest) {
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kWgmmaSmem));
    kernel<<<1, 128, kWgmmaSmem>>>(device, scores, 1, out);
    CHECK(cudaDeviceSynchronize());
    std::vector<float> got(kTokens * kHeads);
    CHECK(cudaMemcpy(got.data(), scores, got.size() * 4, cudaMemcpyDeviceToHost));
    worst = 0;
    largest = 0;
    for (int t = 0; t < kTokens; ++t) {
      for (int h = 0; h < kHeads; ++h) {
        const double want = reference_score(host_inputs, t, h);
        worst = std::fmax(worst, std::fabs(got[t * kHeads + h] - want));
        largest = std::fmax(largest, std::fabs(want));
      }
    }
  };
  constexpr int kVariants = 3;
  const char* names[kVariants] = {"wgmma_qk, K from shared memory", "wgmma_qk, K from registers",
                                  "wgmma_qk, K from registers, N = 32 [value; residual]"};
  double cycles[kVariants];
  bool exact_ok[kVariants];
  double relative[kVariants];
  for (int variant = 0; variant < kVariants; ++variant) {
    std::printf("%s:\n", names[variant]);
    auto kernel = variant == 0   ? wgmma_kernel<0>
                  : variant == 1 ? wgmma_kernel<1>
                                 : wgmma_kernel<2>;
    cycles[variant] =
        cycles_per_tile(kernel, kWgmmaSmem, ctas, tiles, out, inputs, (float*)nullptr);
    double worst = 0;
    double largest = 0;
    check(kernel, exact_inputs, exact, worst, largest);
    exact_ok[variant] = worst <= 1e-6 * largest;  // fp32 rounding of the scale products
    std::printf("  integer inputs: max |error| %.3g of max |score| %.3g (exact sums: a layout error would be of the order of the scores)\n", worst,
                largest);
    check(kernel, inputs, host, worst, largest);
    relative[variant] = worst / largest;
    std::printf("  random e4m3 inputs: max |error| %.3g of max |score| %.3g (%.2g)\n", worst,
                largest, relative[variant]);
  }
  std::printf("\n| path | cycles a tile a CTA (2 CTAs an SM) | / current_tile | layout check |"
              " max error / max score |\n|---|---:|---:|---|---:|\n");
  std::printf("| current_qk | %.0f | %.2f | | |\n", qk, qk / tile);
  std::printf("| current_tile | %.0f | 1.00 | | |\n", tile);
  bool correct = true;
  for (int variant = 0; variant < kVariants; ++variant) {
    correct = correct && exact_ok[variant];
    std::printf("| %s | %.0f | %.2f | %s | %.2g |\n", names[variant], cycles[variant],
                cycles[variant] / tile, exact_ok[variant] ? "exact" : "WRONG", relative[variant]);
    std::printf("| projected tile with it (current_tile - current_qk + it) | %.0f | %.2f | | |\n",
                tile - qk + cycles[variant], (tile - qk + cycles[variant]) / tile);
  }
  return correct ? 0 : 1;
}
