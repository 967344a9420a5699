// H200/H100 micro-benchmark (nvcc on the lent GPU machine, not part of the CMake build): what one
// 64-token tile (16 heads, fp8_ds_mla, 4 consumer warps, two CTAs an SM) costs a CTA with the
// tile already in shared memory (no global loads, no producers), in SM cycles (clock64):
//   current_qk    the production scores of the winners (token softmax, mma_path 1: ldmatrix of
//                 the 656-byte rows, e4m3 -> f16 by F2FP, m16n8k16 f16 MMA, rope by bf16 MMA;
//                 pipelined_qk.cuh's score_totals + mask_and_scale, called as the kernel does);
//   current_tile  the production consumer tile (token_softmax.cuh's token_softmax_tile);
//   wgmma_qk      the scores by warpgroup MMA (bench/device/wgmma_tile.cuh's scores, sm_90a):
//                 K e4m3 straight from the ring rows as register fragments, q as e4m3 value +
//                 residual stacked into one m64n32k32 B, rope by m64n16k16 bf16;
//   wgmma_tile    the whole tile around it (wgmma_tile.cuh's tile: the softmax in the scores'
//                 transposed frame, P stored transposed, token_softmax.cuh's P.V).
// Then current_tile at 1, 2 and 3 CTAs an SM (3 with a one-stage ring): cycles a tile an SM.
// Checks, on the host in fp64: wgmma_qk's scores of integer inputs (exact sums: any error is a
// layout error) and of random e4m3 inputs; wgmma_tile's output and lse after two tiles (both
// stages hold the same one) against attention of the same inputs, with the family's tolerance
// (|out - ref| / |ref| < 1e-2, lse relative < 1e-3). Exit status 1 if a check fails.
// Usage: nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I templates -I bench/device
//          bench/device/qk_wgmma.cu -o qk && ./qk
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "qk_wgmma_inputs.h"
#include "sparse_mla_decode/pipelined_output.cuh"
#include "wgmma_tile.cuh"

namespace {

using qk_bench::Inputs;
using qk_bench::kHeads;
using qk_bench::kTokens;

// The winners' layout (BLOCK_T 64, BLOCK_H 16, 4 + 2 warps, 2 stages, mma_path 1): a function, so
// that device code can take it as a constant (NVCC keeps namespace-scope constexpr host-only).
__host__ __device__ constexpr smla::SmemLayout bench_layout() {
  return smla::smem_layout(64, 16, 4, 2, smla::kFp8DsMla, smla::kMmaRegF16, 2);
}
constexpr smla::SmemLayout kHostLayout = bench_layout();
// The same with one ring stage: three CTAs an SM fit its shared memory (for the occupancy scan;
// the timed loop reads whatever the stage holds).
__host__ __device__ constexpr smla::SmemLayout one_stage_layout() {
  return smla::smem_layout(64, 16, 4, 1, smla::kFp8DsMla, smla::kMmaRegF16, 2);
}

// The production kernel's shared memory with finite values (e4m3 0.25-0.9, f16 ~0.5, positive
// fp32 and token ids): its timing does not depend on them.
__device__ void fill_production(unsigned char* smem, unsigned bytes) {
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) {
    smem[i] = 0x30 + (i * 7u) % 16u;
  }
}

// CTAS: the launch bound's CTAs an SM; 3 take the one-stage layout.
template <bool FULL, int CTAS = 2>
__global__ void __launch_bounds__(128, CTAS) current_kernel(int tiles, float* out) {
  constexpr smla::SmemLayout kLayout = CTAS == 3 ? one_stage_layout() : bench_layout();
  constexpr int kStages = CTAS == 3 ? 1 : 2;
  extern __shared__ __align__(128) unsigned char smem[];
  fill_production(smem, kLayout.total_bytes);
  __syncthreads();
  smla_pipe::Accumulator<16, 4> acc;
  smla_pipe::clear(acc);
  float checksum = 0.f;
  const long long start = clock64();
  for (int tile = 0; tile < tiles; ++tile) {
    const unsigned char* ring =
        smem + kLayout.ring_offset + (tile % kStages) * kLayout.ring_stage_bytes;
    const int* tokens =
        reinterpret_cast<const int*>(smem + kLayout.token_offset) + (tile % kStages) * 64;
    if constexpr (FULL) {
      smla_pipe::token_softmax_tile<64, 4, smla::kFp8DsMla, 0>(kLayout, smem, ring, tokens, 0.01f,
                                                               nullptr, false, acc);
    } else {
      float s[2][4];
      const int first_n = smla_pipe::own_first_n<2>();
      smla_pipe::score_totals<0, 1, 2, smla::kFp8DsMla, smla::kMmaRegF16, 0>(kLayout, smem, ring, 0,
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

// The inputs into the production layout: both ring stages' rows (nope, scales, rope: 656 bytes),
// valid token ids, and q in wgmma_tile.cuh's form (WgmmaQ) in the q rows' place.
__device__ void load_inputs(unsigned char* smem, const Inputs* in) {
  constexpr smla::SmemLayout kLayout = bench_layout();
  using smla_wgmma::WgmmaQ;
  for (int i = threadIdx.x; i < 2 * kTokens * 41; i += blockDim.x) {
    const int stage = i / (kTokens * 41);
    const int row = (i / 41) % kTokens;
    const int chunk = i % 41;
    const unsigned char* src =
        chunk < 32   ? &in->nope[row][chunk * 16]
        : chunk < 33 ? reinterpret_cast<const unsigned char*>(in->k_scale[row])
                     : reinterpret_cast<const unsigned char*>(in->rope[row]) + (chunk - 33) * 16;
    *reinterpret_cast<uint4*>(smem + kLayout.ring_offset + stage * kLayout.ring_stage_bytes +
                              row * 656 + chunk * 16) = *reinterpret_cast<const uint4*>(src);
  }
  for (int i = threadIdx.x; i < 2 * kTokens; i += blockDim.x) {
    reinterpret_cast<int*>(smem + kLayout.token_offset)[i] = i % kTokens;
  }
  unsigned char* q = smem + kLayout.q_offset;
  for (int i = threadIdx.x; i < 32 * WgmmaQ::kRows; i += blockDim.x) {  // [chunk][row][16 B]
    const int row = i % WgmmaQ::kRows;
    const int chunk = i / WgmmaQ::kRows;
    const unsigned char* src =
        row < kHeads ? &in->q_hi[row][chunk * 16] : &in->q_lo[row - kHeads][chunk * 16];
    reinterpret_cast<uint4*>(q)[i] = *reinterpret_cast<const uint4*>(src);
  }
  for (int i = threadIdx.x; i < 8 * kHeads; i += blockDim.x) {
    reinterpret_cast<uint4*>(q + WgmmaQ::kRopeOffset)[i] =
        reinterpret_cast<const uint4*>(in->q_rope[i % kHeads])[i / kHeads];
  }
  for (int i = threadIdx.x; i < kHeads * 4; i += blockDim.x) {
    reinterpret_cast<float*>(q + WgmmaQ::kScaleOffset)[i] = in->q_scale[i / 4][i % 4];
  }
  ptx::fence_proxy_async_shared();  // generic writes, read by the MMAs' async proxy
  __syncthreads();
}

// MODE 1: tiles of wgmma_tile.cuh's tile, then (check != nullptr) the normalised output rows
// [16][512] and lse [16]; MODE 0: its scores only, then (check) one tile's scores [64][16].
template <int MODE>
__global__ void __launch_bounds__(128, 2)
    wgmma_kernel(const Inputs* in, float scale_log2, float* check, int tiles, float* out) {
  constexpr smla::SmemLayout kLayout = bench_layout();
  extern __shared__ __align__(128) unsigned char smem[];
  load_inputs(smem, in);
  float q_scale[4][4];
  smla_wgmma::load_q_scales(smem + kLayout.q_offset, q_scale);
  smla_pipe::Accumulator<16, 4> acc;
  smla_pipe::clear(acc);
  smla_wgmma::TransposedStats stats;
  smla_wgmma::clear(stats);
  float checksum = 0.f;
  float s[8];
  const long long start = clock64();
  for (int tile = 0; tile < tiles; ++tile) {
    const unsigned char* ring = smem + kLayout.ring_offset + (tile & 1) * kLayout.ring_stage_bytes;
    const int* tokens = reinterpret_cast<const int*>(smem + kLayout.token_offset) + (tile & 1) * 64;
    if constexpr (MODE == 1) {
      smla_wgmma::tile<4>(kLayout, smem, ring, tokens, q_scale, scale_log2, stats, acc);
    } else {
      float4 token_scale[2];
      smla_wgmma::scores(ring, 656, smem + kLayout.q_offset, q_scale, tokens, scale_log2, s,
                         token_scale);
      for (int j = 0; j < 8; ++j) checksum += s[j];
    }
  }
  const long long cycles = clock64() - start;
  checksum += acc.value[0][0][0] + acc.value[0][15][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = checksum;
  if (threadIdx.x == 0) out[gridDim.x * blockDim.x + blockIdx.x] = static_cast<float>(cycles);
  if (check == nullptr || blockIdx.x != 0) return;
  if constexpr (MODE == 1) {
    smla_wgmma::gather_row_sums<4>(kLayout, smem, stats, acc);
    smla_pipe::for_each_output<16, 4, smla::kFp8DsMla>(
        acc, kHeads, 1.f,
        [&](int row, int dim, float lo, float hi) {
          check[row * 512 + dim] = lo;
          check[row * 512 + dim + 1] = hi;
        },
        [&](int row, float value) { check[kHeads * 512 + row] = value; });
  } else {
    for (int j = 0; j < 8; ++j) {
      check[smla_wgmma::token_of_half((j / 2) % 2) * kHeads +
            smla_wgmma::head_of_slot((j / 4) * 2 + j % 2)] = s[j];
    }
  }
}

#define CHECK(call)                                                    \
  do {                                                                 \
    const cudaError_t status = (call);                                 \
    if (status != cudaSuccess) {                                       \
      std::printf("%s failed: %s\n", #call, cudaGetErrorName(status)); \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)

// Cycles a tile a CTA, averaged over the CTAs (each wrote its clock64 span after the checksums).
// `ctas` CTAs of `kernel` with `smem` bytes each, `per_sm` of them an SM (which must fit).
template <typename Kernel, typename... Args>
double cycles_per_tile_at(Kernel kernel, unsigned smem, int per_sm, int ctas, int tiles, float* out,
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
  if (resident < per_sm) std::printf("  note: %d CTAs an SM fit, not %d\n", resident, per_sm);
  return total / ctas / tiles;
}

template <typename Kernel, typename... Args>
double cycles_per_tile(Kernel kernel, int ctas, int tiles, float* out, Args... args) {
  return cycles_per_tile_at(kernel, kHostLayout.total_bytes, 2, ctas, tiles, out, args...);
}

// One CTA, `tiles` tiles (both stages hold the same one) of `kernel` on `host`'s inputs: what it
// wrote to check.
template <typename Kernel>
std::vector<float> one_tile(Kernel kernel, const Inputs& host, float scale_log2, size_t count,
                            float* out, int tiles = 1) {
  Inputs* inputs = nullptr;
  float* check = nullptr;
  CHECK(cudaMalloc(&inputs, sizeof(Inputs)));
  CHECK(cudaMalloc(&check, count * 4));
  CHECK(cudaMemcpy(inputs, &host, sizeof(Inputs), cudaMemcpyHostToDevice));
  kernel<<<1, 128, kHostLayout.total_bytes>>>(inputs, scale_log2, check, tiles, out);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> got(count);
  CHECK(cudaMemcpy(got.data(), check, count * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(inputs));
  CHECK(cudaFree(check));
  return got;
}

// wgmma_qk's scores against fp64: max |error| / max |score|.
double scores_error(const Inputs& host, float* out) {
  const std::vector<float> got = one_tile(wgmma_kernel<0>, host, 1.f, kTokens * kHeads, out);
  double worst = 0;
  double largest = 0;
  for (int t = 0; t < kTokens; ++t) {
    for (int h = 0; h < kHeads; ++h) {
      const double want = qk_bench::score(host, t, h);
      worst = std::fmax(worst, std::fabs(got[t * kHeads + h] - want));
      largest = std::fmax(largest, std::fabs(want));
    }
  }
  return worst / largest;
}

// The output after two tiles (both stages hold the same tile: the same output, lse + ln 2)
// against fp64 attention, the family's two measures.
bool tile_correct(const Inputs& host, float* out) {
  double largest = 0;
  for (int t = 0; t < kTokens; ++t) {
    for (int h = 0; h < kHeads; ++h)
      largest = std::fmax(largest, std::fabs(qk_bench::score(host, t, h)));
  }
  const double scale_log2 = 8.0 / largest;  // a spread of 8 in log2 units over the tile
  const std::vector<float> got =
      one_tile(wgmma_kernel<1>, host, static_cast<float>(scale_log2), kHeads * 513, out, 2);
  double error = 0;
  double norm = 0;
  double lse_error = 0;
  for (int h = 0; h < kHeads; ++h) {
    double want[512];
    const double lse = qk_bench::attention(host, h, scale_log2, want) + std::log(2.0);
    for (int d = 0; d < 512; ++d) {
      error += (got[h * 512 + d] - want[d]) * (got[h * 512 + d] - want[d]);
      norm += want[d] * want[d];
    }
    lse_error = std::fmax(lse_error, std::fabs(got[kHeads * 512 + h] - lse) / std::fabs(lse));
  }
  const double relative = std::sqrt(error / norm);
  std::printf(
      "%s after two tiles vs fp64: |out - ref| / |ref| %.3g (< 1e-2), lse relative %.3g "
      "(< 1e-3)\n",
      "wgmma_tile", relative, lse_error);
  return relative < 1e-2 && lse_error < 1e-3;
}

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int ctas = 2 * sms;
  const int tiles = 4096;
  float* out = nullptr;
  Inputs* inputs = nullptr;
  CHECK(cudaMalloc(&out, (3 * sms * 128 + 3 * sms) * 4));  // the most CTAs a launch has
  CHECK(cudaMalloc(&inputs, sizeof(Inputs)));
  static Inputs random;
  static Inputs integer;
  qk_bench::make_random(random);
  qk_bench::make_integer(integer);
  CHECK(cudaMemcpy(inputs, &random, sizeof(Inputs), cudaMemcpyHostToDevice));
  std::printf("%d SMs, %d CTAs of 4 warps, %u B shared memory each, %d tiles each\n", sms, ctas,
              kHostLayout.total_bytes, tiles);
  const double current_qk = cycles_per_tile(current_kernel<false>, ctas, tiles, out);
  const double current_tile = cycles_per_tile(current_kernel<true>, ctas, tiles, out);
  const double wgmma_qk =
      cycles_per_tile(wgmma_kernel<0>, ctas, tiles, out, inputs, 0.01f, (float*)nullptr);
  const double wgmma_tile =
      cycles_per_tile(wgmma_kernel<1>, ctas, tiles, out, inputs, 0.01f, (float*)nullptr);
  const double integer_error = scores_error(integer, out);
  const double random_error = scores_error(random, out);
  std::printf(
      "wgmma_qk scores vs fp64, max |error| / max |score|: integer inputs %.3g (exact "
      "sums: must be 0), random e4m3 inputs %.3g\n",
      integer_error, random_error);
  const bool tile_ok = tile_correct(random, out);
  const bool correct = integer_error == 0 && tile_ok;
  std::printf("\n| path | cycles a tile a CTA | / current_tile |\n|---|---:|---:|\n");
  std::printf("| current_qk | %.0f | %.2f |\n", current_qk, current_qk / current_tile);
  std::printf("| current_tile | %.0f | 1.00 |\n", current_tile);
  std::printf("| wgmma_qk | %.0f | %.2f |\n", wgmma_qk, wgmma_qk / current_tile);
  std::printf("| wgmma_tile%s | %.0f | %.2f |\n", tile_ok ? "" : " (WRONG)", wgmma_tile,
              wgmma_tile / current_tile);
  // What more resident warps buy the production tile (compute only): cycles a tile an SM.
  std::printf(
      "\n| current_tile, CTAs an SM | cycles a tile a CTA | cycles a tile an SM |\n"
      "|---:|---:|---:|\n");
  const double one =
      cycles_per_tile_at(current_kernel<true, 1>, kHostLayout.total_bytes, 1, sms, tiles, out);
  const double three = cycles_per_tile_at(current_kernel<true, 3>, one_stage_layout().total_bytes,
                                          3, 3 * sms, tiles, out);
  const double per_cta[3] = {one, current_tile, three};
  for (int n = 1; n <= 3; ++n) {
    std::printf("| %d | %.0f | %.0f |\n", n, per_cta[n - 1], per_cta[n - 1] / n);
  }
  return correct ? 0 : 1;
}
