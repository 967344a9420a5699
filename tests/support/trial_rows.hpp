#pragma once
// A fully filled measured trial for store tests (test_store_*.cpp).
#include <cstdint>
#include <string>

#include "db/store/records.hpp"
#include "tests/support/fixture.hpp"

namespace tuner::test {

// A measured trial of `params` for `problem_id` in `run_id`.
inline db::TrialRecord measured_trial(std::int64_t run_id, std::int64_t problem_id,
                                      const std::string& params, double median_us) {
  db::TrialRecord trial;
  trial.run_id = run_id;
  trial.problem_id = problem_id;
  trial.source_hash = db::fixture::kSourceHash;
  trial.stage = db::Stage::measure;
  trial.budget_arch = "sm_120";
  trial.measured_arch = "sm_90";
  trial.device_name = db::fixture::kDevice;
  trial.params_json = params;
  trial.compile_key = "ck-32-16-4-2";
  trial.fate = db::Fate::measured;
  trial.reason = "verified and timed";
  trial.est_smem_bytes = 81408;
  trial.est_regs = 128;
  trial.ptxas_regs = 122;
  trial.ptxas_spill_bytes = 0;
  trial.blocks_per_sm = 1;
  trial.occupancy_limiter = "smem";
  trial.compile_ms = 812.5;
  trial.cached = false;
  trial.median_us = median_us;
  trial.p10_us = median_us * 0.99;
  trial.p90_us = median_us * 1.02;
  trial.samples = 200;
  trial.rel_spread = 0.03;
  trial.err_out = 1.5e-4;
  trial.err_lse = 2.0e-6;
  trial.bytes_moved = 10747904;
  return trial;
}

}  // namespace tuner::test
