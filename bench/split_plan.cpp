// The serving launcher's split plan on this machine (kernels/sparse_mla_decode/deploy.hpp's
// split_plan, which deploy's launch path calls on every launch): per-row splits (schedule 0) and
// the balanced schedule (schedule 1) on the H200's 264 resident CTAs (2 per SM), at batches and
// local-head counts that make 8 to 2048 rows. BENCHMARKS.md section 7 quotes it.
// Usage: split_plan_bench [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include "core/cluster_capacity.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"

namespace {

using tuner::ClusterCapacity;
using tuner::smla_family::GeometryParams;

// state.range(0): batch, range(1): local heads, range(2): schedule.
void BM_SplitPlan(benchmark::State& state) {
  const tuner::smla_family::DecodeDims dims{static_cast<int>(state.range(0)),
                                            static_cast<int>(state.range(1)), 2048};
  const GeometryParams params{64, 16, 1024, 0, static_cast<int>(state.range(2))};
  ClusterCapacity capacity;
  capacity.clusters[1] = 264;
  for (auto _ : state) {
    benchmark::DoNotOptimize(tuner::smla_family::split_plan(dims, params, capacity));
  }
}

}  // namespace

BENCHMARK(BM_SplitPlan)
    ->ArgNames({"batch", "heads", "schedule"})
    ->ArgsProduct({{8, 136, 512}, {16, 64}, {0, 1}})
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

BENCHMARK_MAIN();
