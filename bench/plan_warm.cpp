// The plan phase of a warm `tuner sweep` (nothing changed: the store already holds the plan), on
// this machine: tuner::plan over the default family's space with a warm cubin cache, then
// record_plan_unless_held against a store that holds the plan, phase by phase. The first record
// (the cold path) is timed too. BENCHMARKS.md section 9 quotes it; the H200's sweep summary
// reports the same phase as "plan".
//
// Usage: tuner_plan_warm DIR [REPEATS]   (DIR holds the store and the cubin cache; kept)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/cubin_cache.hpp"
#include "db/store/store.hpp"
#include "kernels/registry.hpp"
#include "tuner/plan.hpp"
#include "tuner/plan_record.hpp"
#include "tuner/run_info.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point began) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tuner_plan_warm DIR [REPEATS]\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  std::filesystem::create_directories(dir);
  const tuner::Family& family = *tuner::families().front();
  tuner::PlanRequest request;
  request.family = &family;
  request.shape = family.canonicalize(family.default_shapes.front().values);
  request.arch = tuner::plan_arch("sm_90", nullptr);
  const tuner::CubinCache cache(dir / "cache");
  tuner::plan(request, cache);  // fills the cubin cache
  tuner::db::Store store = tuner::db::Store::open(dir / "plan_warm.db");
  for (int round = 0; round <= repeats; ++round) {
    auto began = std::chrono::steady_clock::now();
    const tuner::PlanResult plan = tuner::plan(request, cache);
    const double plan_s = seconds_since(began);
    tuner::db::RunInfo run =
        tuner::base_run_info(tuner::db::RunKind::sweep, "sm_90", "tuner_plan_warm (bench)");
    const std::int64_t run_id = store.begin_run(run);
    began = std::chrono::steady_clock::now();
    const std::int64_t holder = tuner::record_plan_unless_held(store, run_id, plan, family);
    const double record_s = seconds_since(began);
    store.end_run(run_id);
    std::printf("%s: %zu rows, plan %.3f s, record_plan_unless_held %.3f s (%s)\n",
                round == 0 ? "cold" : "warm", plan.rows.size(), plan_s, record_s,
                holder == run_id ? "recorded" : "held by an earlier run");
  }
  return 0;
}
