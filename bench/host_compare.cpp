// The host side of one correctness check of the sparse MLA matrix before it judged on the device
// (kernels/sparse_mla_decode/verify.cpp): the bf16 output converted to float, the fp32 reference
// converted to double (once per compile key), and compare() over batch x heads rows of 512 values.
// BENCHMARKS.md section 7 (fourteenth session) quotes it for batch 128 x 64 heads.
// Usage: host_compare_bench [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/sparse_mla_decode/reference.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"

namespace {

constexpr std::size_t kWidth = 512;

std::size_t values_of(const benchmark::State& state) {
  return static_cast<std::size_t>(state.range(0)) * static_cast<std::size_t>(state.range(1)) *
         kWidth;
}

// state.range(0): batch, range(1): local heads.
void BM_Compare(benchmark::State& state) {
  const std::size_t count = values_of(state);
  const std::size_t rows = count / kWidth;
  std::mt19937 generator(1);
  std::normal_distribution<float> normal;
  std::vector<double> ref_out(count);
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    ref_out[i] = normal(generator);
    out[i] = static_cast<float>(ref_out[i]) * 1.001f;
  }
  const std::vector<double> ref_lse(rows, 3.0);
  const std::vector<float> lse(rows, 3.f);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        tuner::smla_family::compare(out, lse, ref_out, ref_lse, static_cast<int>(state.range(1))));
  }
}

void BM_Bf16ToFloat(benchmark::State& state) {
  const std::vector<std::uint16_t> bits(values_of(state), 0x3f81);
  for (auto _ : state) {
    std::vector<float> out(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) {
      out[i] = static_cast<float>(tuner::smla_family::bf16_to_double(bits[i]));
    }
    benchmark::DoNotOptimize(out.data());
  }
}

void BM_ReferenceToDouble(benchmark::State& state) {
  const std::vector<float> ref(values_of(state), 1.5f);
  for (auto _ : state) {
    std::vector<double> converted(ref.begin(), ref.end());
    benchmark::DoNotOptimize(converted.data());
  }
}

}  // namespace

BENCHMARK(BM_Compare)->ArgNames({"batch", "heads"})->Args({128, 64})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Bf16ToFloat)
    ->ArgNames({"batch", "heads"})
    ->Args({128, 64})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReferenceToDouble)
    ->ArgNames({"batch", "heads"})
    ->Args({128, 64})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
