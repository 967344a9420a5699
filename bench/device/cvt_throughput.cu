// H200 micro-benchmark (nvcc on the lent GPU machine, not part of the CMake build): throughput of
// e4m3x4 -> two f16x2 by the hardware conversion (F2FP...UNPACK_B) against the bitwise unpack of
// templates/common/ptx.cuh (e4m3x4_to_f16x4_bits: shifts and masks on the integer pipe), and a
// mix of both, in a loop that does nothing else but an add and an xor per word (the "none" row:
// that overhead alone). Prints ns per converted word per SM and conversions per clock per SM.
// Usage: nvcc -O3 -arch=sm_90 -I templates bench/device/cvt_throughput.cu -o cvt && ./cvt
#include <cstdio>

#include "common/ptx.cuh"

template <int MODE>
__global__ void convert_loop(unsigned* out, int iterations, unsigned seed) {
  unsigned w[8];
  unsigned acc[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    w[j] = seed * (threadIdx.x + 1) + j * 0x01010101u;
    acc[j] = 0;
  }
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const unsigned x = w[j] + static_cast<unsigned>(i);
      unsigned lo = x;
      unsigned hi = x;
      if (MODE == 1 || (MODE == 3 && j % 2 == 0)) ptx::e4m3x4_to_f16x4(x, lo, hi);
      if (MODE == 2 || (MODE == 3 && j % 2 == 1)) ptx::e4m3x4_to_f16x4_bits(x, lo, hi);
      acc[j] ^= lo ^ hi;
    }
  }
  unsigned total = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) total ^= acc[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}

template <int MODE>
float time_mode(unsigned* out, int blocks, int threads, int iterations) {
  cudaEvent_t start;
  cudaEvent_t stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  convert_loop<MODE><<<blocks, threads>>>(out, iterations, 7u);
  cudaEventRecord(start);
  convert_loop<MODE><<<blocks, threads>>>(out, iterations, 9u);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, start, stop);
  return ms;
}

int main() {
  int sms = 0;
  int clock_khz = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  const int blocks = sms * 4;
  const int threads = 512;
  const int iterations = 1 << 14;
  unsigned* out = nullptr;
  cudaMalloc(&out, sizeof(unsigned) * blocks * threads);
  const char* names[] = {"none", "cvt (F2FP)", "bitwise", "half cvt, half bitwise"};
  float ms[4] = {time_mode<0>(out, blocks, threads, iterations),
                 time_mode<1>(out, blocks, threads, iterations),
                 time_mode<2>(out, blocks, threads, iterations),
                 time_mode<3>(out, blocks, threads, iterations)};
  const double words = double(blocks) * threads * iterations * 8;
  std::printf("%d SMs, %d MHz (reported), %.0f words of 4 e4m3 per mode\n", sms, clock_khz / 1000,
              words);
  std::printf("%-24s %10s %22s %24s\n", "mode", "ms", "extra clk/word/SM", "words/clk/SM (extra)");
  for (int m = 0; m < 4; ++m) {
    const double extra_ms = ms[m] - ms[0];
    const double clk_per_word = extra_ms * 1e-3 * clock_khz * 1e3 * sms / words;
    std::printf("%-24s %10.3f %22.4f %24.2f\n", names[m], ms[m], clk_per_word,
                clk_per_word > 0 ? 1.0 / clk_per_word : 0.0);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
