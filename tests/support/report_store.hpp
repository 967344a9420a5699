#pragma once
// Tuning stores for the report tests (test_report_contents.cpp, test_report_cli.cpp), filled
// through the store's own API with hand-chosen trials and winners: run 1 (plan fates, batches 1
// and 8 of four configs, a fault and a wrong result) and later sweeps of new kernel sources with
// other batch-8 times.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "db/store/store.hpp"
#include "tests/support/fixture.hpp"
#include "tuner/report.hpp"

namespace tuner::test::report_store {

using db::Fate;
using db::Stage;

inline const char* const kDevice = db::fixture::kDevice;  // what fixture_problem_winner times on
inline const std::string kShape = db::fixture::kShape;
inline constexpr double kCopyGbs = 4000.0;

// Four configs: block_t {16, 32} x num_warps {4, 8}; A is the family default.
inline const std::string kA = db::fixture::kDefaultParams;
inline const std::string kB =
    R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":512})";
inline const std::string kC =
    R"({"block_h":16,"block_t":16,"num_stages":2,"num_warps":8,"target_ctas":512})";
inline const std::string kD =
    R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":8,"target_ctas":512})";
inline const std::string kFaulty =
    R"({"block_h":16,"block_t":16,"num_stages":2,"num_warps":16,"target_ctas":512})";

inline db::ProblemKey problem_at(std::optional<int> batch) {
  return db::ProblemKey{"sparse_mla_decode", kShape, batch};
}

inline report::SeriesKey series_key() {
  return report::SeriesKey{"sparse_mla_decode", kShape, "sm_120", kDevice};
}

// The fixture's sweep run (sm_120 budget, timed on an H200) at this file's copy bandwidth.
inline std::int64_t sweep_run(db::Store& store) {
  db::RunInfo run = db::fixture::fixture_run();
  run.copy_bandwidth_gbs = kCopyGbs;
  return store.begin_run(run);
}

inline db::TrialRecord trial(std::int64_t run_id, std::int64_t problem_id,
                             const std::string& source, Stage stage, const std::string& params,
                             Fate fate, const std::string& reason) {
  db::TrialRecord t;
  t.run_id = run_id;
  t.problem_id = problem_id;
  t.source_hash = source;
  t.stage = stage;
  t.budget_arch = "sm_120";
  if (stage == Stage::measure) {
    t.measured_arch = "sm_90";
    t.device_name = kDevice;
  }
  t.params_json = params;
  t.fate = fate;
  t.reason = reason;
  return t;
}

// A measured trial with a +-2 % spread (rel_spread 0.04), 10 samples.
inline void measured(db::Store& store, std::int64_t run_id, int batch, const std::string& source,
                     const std::string& params, double median_us, std::int64_t bytes_moved) {
  db::TrialRecord t = trial(run_id, store.problem_id(problem_at(batch)), source, Stage::measure,
                            params, Fate::measured, "verified and timed (4 splits)");
  t.median_us = median_us;
  t.p10_us = median_us * 0.98;
  t.p90_us = median_us * 1.02;
  t.samples = 10;
  t.rel_spread = 0.04;
  t.bytes_moved = bytes_moved;
  store.record_trial(t);
}

inline void winner(db::Store& store, std::int64_t run_id, int batch, const std::string& source,
                   const std::string& params, double median_us, double default_us,
                   std::int64_t bytes) {
  db::WinnerRecord w = db::fixture::fixture_problem_winner("sm_120", batch, params, median_us,
                                                           default_us, source, run_id);
  w.decision = params == kA ? db::Decision::default_kept : db::Decision::tuned;
  w.speedup_vs_default = params == kA ? 1.0 : default_us / median_us;
  w.noise_rel = 0.04;
  w.reason = params == kA ? "default kept" : "tuned";
  w.bytes_moved = bytes;
  store.record_winner(w);
}

inline constexpr std::int64_t kBytes1 = 8'000'000;
inline constexpr std::int64_t kBytes8 = 32'000'000;

// Run 1: plan fates, then batch 1: A 20, B 16, C 25, D 18; batch 8: A 40, B 36, C 30, D 45;
// a fault and a wrong result; winners B (batch 1) and C (batch 8).
inline std::int64_t fill_run_one(db::Store& store) {
  store.add_source("src-1", "sparse_mla_decode");
  const std::int64_t run = sweep_run(store);
  const std::int64_t plan_problem = store.problem_id(problem_at(std::nullopt));
  const auto plan_trial = [&](const std::string& params, Fate fate, const std::string& reason) {
    store.record_trial(trial(run, plan_problem, "src-1", Stage::plan, params, fate, reason));
  };
  plan_trial(R"({"block_t":128,"num_stages":4})", Fate::pruned_budget, "smem 120 KB > 99 KB");
  plan_trial(R"({"block_t":128,"num_stages":3})", Fate::pruned_budget, "smem 120 KB > 99 KB");
  plan_trial(R"({"block_t":64,"num_warps":2})", Fate::pruned_budget, "regs 300 > 255");
  for (const std::string& params : {kA, kB, kC, kD}) plan_trial(params, Fate::survivor, "fits");
  const std::array<double, 4> batch1{20.0, 16.0, 25.0, 18.0};
  const std::array<double, 4> batch8{40.0, 36.0, 30.0, 45.0};
  const std::array<std::string, 4> configs{kA, kB, kC, kD};
  for (std::size_t i = 0; i < configs.size(); ++i) {
    measured(store, run, 1, "src-1", configs[i], batch1[i], kBytes1);
    measured(store, run, 8, "src-1", configs[i], batch8[i], kBytes8);
  }
  store.record_trial(trial(run, store.problem_id(problem_at(1)), "src-1", Stage::measure, kFaulty,
                           Fate::fault, "CUDA_ERROR_ILLEGAL_ADDRESS"));
  store.record_trial(trial(run, store.problem_id(problem_at(8)), "src-1", Stage::measure, kFaulty,
                           Fate::wrong_result, "out err 0.5 > 0.01"));
  winner(store, run, 1, "src-1", kB, 16.0, 20.0, kBytes1);
  winner(store, run, 8, "src-1", kC, 30.0, 40.0, kBytes8);
  store.end_run(run);
  return run;
}

// A later sweep of a new kernel source with the given batch-8 times for A, B, C, D (batch 1 as in
// run 1); its winners replace the earlier rows.
inline std::int64_t fill_later_run(db::Store& store, const std::string& source,
                                   const std::array<double, 4>& batch8) {
  store.add_source(source, "sparse_mla_decode");
  const std::int64_t run = sweep_run(store);
  const std::array<double, 4> batch1{20.0, 16.0, 25.0, 18.0};
  const std::array<std::string, 4> configs{kA, kB, kC, kD};
  std::size_t fastest8 = 0;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    measured(store, run, 1, source, configs[i], batch1[i], kBytes1);
    measured(store, run, 8, source, configs[i], batch8[i], kBytes8);
    if (batch8[i] < batch8[fastest8]) fastest8 = i;
  }
  winner(store, run, 1, source, kB, 16.0, 20.0, kBytes1);
  winner(store, run, 8, source, configs[fastest8], batch8[fastest8], batch8[0], kBytes8);
  store.end_run(run);
  return run;
}

}  // namespace tuner::test::report_store
