#pragma once
// A tuning store with known winners, for tests of the store, freeze and tunedb (C++, C, Python).
// The values are test data chosen by hand; tests/test_tunedb_python.py repeats them.
//
//   sparse_mla_decode, shape kShape (64 heads / TP 4 = 16 local heads, topk 2048, fp8, page 64)
//   budget sm_120, timed on "NVIDIA H200" (sm_90), run 1:
//     batch   1  tuned         block_t 32, target_ctas 1024          17.1 us
//     batch   8  tuned         block_t 32                            20.5 us
//     batch  32  default_kept  (the default)                         45.0 us
//     batch 128  tuned         block_t 64, num_stages 3, ctas 256   110.2 us
//   budget sm_90, timed on "NVIDIA H200", run 1:
//     batch   8  tuned         block_t 64                            18.0 us
//   default: block_h 16, block_t 16, num_stages 2, num_warps 4, target_ctas 512
#include <string>

#include "db/store/store.hpp"

namespace tuner::db::fixture {

inline const char* const kFamily = "sparse_mla_decode";
inline const char* const kDevice = "NVIDIA H200";
inline const char* const kShape = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048";
inline const char* const kSourceHash = "src-0123456789abcdef";
inline const char* const kDefaultParams =
    R"({"block_h":16,"block_t":16,"num_stages":2,"num_warps":4,"target_ctas":512})";

// A winner row of the fixture problem at `batch` (the shape above) tuned for `budget_arch` and
// timed on kDevice (sm_90), `params` against the default. The decision fields (decision,
// speedup_vs_default, noise_rel, reason) and bytes_moved are left to the caller.
inline WinnerRecord fixture_problem_winner(const std::string& budget_arch, int batch,
                                           const std::string& params, double median_us,
                                           double default_median_us, const std::string& source_hash,
                                           std::int64_t run_id) {
  WinnerRecord w;
  w.family = kFamily;
  w.budget_arch = budget_arch;
  w.measured_arch = "sm_90";
  w.device_name = kDevice;
  w.shape = kShape;
  w.batch = batch;
  w.params_json = params;
  w.median_us = median_us;
  w.default_params_json = kDefaultParams;
  w.default_median_us = default_median_us;
  w.source_hash = source_hash;
  w.run_id = run_id;
  return w;
}

inline WinnerRecord fixture_winner(const std::string& budget_arch, int batch,
                                   const std::string& params, double median_us,
                                   double default_median_us, std::int64_t run_id) {
  WinnerRecord w = fixture_problem_winner(budget_arch, batch, params, median_us, default_median_us,
                                          kSourceHash, run_id);
  const bool kept = params == kDefaultParams;
  w.decision = kept ? Decision::default_kept : Decision::tuned;
  w.speedup_vs_default = kept ? 1.0 : default_median_us / median_us;
  w.noise_rel = 0.01;
  w.reason = kept ? "default kept: 0.4% faster is within noise (spread 1.0%)" : "tuned";
  w.bytes_moved = static_cast<std::int64_t>(batch) * 1343488;
  return w;
}

inline RunInfo fixture_run() {
  RunInfo run;
  run.host = "fixture-host";
  run.gpu_name = kDevice;
  run.measured_arch = "sm_90";
  run.budget_arch = "sm_120";
  run.driver_version = "580.65";
  run.cuda_version = "13.0";
  run.nvrtc_version = "13.0";
  run.tuner_version = "0.1.0";
  run.command_line = "tuner sweep --arch sm_120";
  run.kind = RunKind::sweep;
  run.copy_bandwidth_gbs = 4300.0;
  return run;
}

// Fills `store` with the winners above; returns the run id.
inline std::int64_t write_fixture_winners(Store& store) {
  const std::int64_t run = store.begin_run(fixture_run());
  store.add_source(kSourceHash, kFamily);
  const std::string tuned_1 =
      R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":1024})";
  const std::string tuned_8 =
      R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":512})";
  const std::string tuned_128 =
      R"({"block_h":16,"block_t":64,"num_stages":3,"num_warps":4,"target_ctas":256})";
  const std::string tuned_sm90 =
      R"({"block_h":16,"block_t":64,"num_stages":2,"num_warps":4,"target_ctas":512})";
  store.record_winner(fixture_winner("sm_120", 1, tuned_1, 17.1, 19.0, run));
  store.record_winner(fixture_winner("sm_120", 8, tuned_8, 20.5, 23.0, run));
  store.record_winner(fixture_winner("sm_120", 32, kDefaultParams, 45.0, 45.0, run));
  store.record_winner(fixture_winner("sm_120", 128, tuned_128, 110.2, 131.0, run));
  store.record_winner(fixture_winner("sm_90", 8, tuned_sm90, 18.0, 22.0, run));
  store.end_run(run);
  return run;
}

}  // namespace tuner::db::fixture
