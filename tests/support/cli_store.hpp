#pragma once
// For the tests of the runtime-side CLI (test_cli_query_export.cpp, test_cli_freeze.cpp): a tuning
// store of sparse_mla_decode winners with this build's kernel source hash (so that freeze can
// compile them), and the built tuner binary run on it.
#include <doctest/doctest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "db/store/store.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace tuner::test::cli_store {

// The tests run the binary (its exit code and output) in a fresh directory per case.
using Result = CommandResult;
using tuner::test::TempDir;

inline const std::string kDefault = tuner::db::fixture::kDefaultParams;
// Configs an sm_120 plan keeps (86 656 B of shared memory; 2 stages of 32 tokens would ask for
// 105 728 B, above sm_120's 101 376 B opt-in, and freeze refuses them).
inline const std::string kTuned1 =
    R"({"block_h":16,"block_t":32,"num_stages":1,"num_warps":8,"target_ctas":1024})";
inline const std::string kTuned64 =
    R"({"block_h":16,"block_t":32,"num_stages":1,"num_warps":8,"target_ctas":256})";

// Runs the tuner binary with `arguments` (shell words, paths quoted by the caller).
inline CommandResult run_tuner(const std::string& arguments, bool with_stderr = false) {
  return run_command("'" + kTunerBinary + "' " + arguments +
                     (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

inline std::string quoted(const std::string& path) { return "'" + path + "'"; }

inline tuner::db::WinnerRecord winner(int batch, const std::string& params, double median_us,
                                      std::int64_t run_id, const std::string& source_hash) {
  tuner::db::WinnerRecord w = tuner::db::fixture::fixture_problem_winner(
      "sm_120", batch, params, median_us, median_us * 1.2, source_hash, run_id);
  const bool kept = params == kDefault;
  w.decision = kept ? tuner::db::Decision::default_kept : tuner::db::Decision::tuned;
  w.speedup_vs_default = kept ? 1.0 : 1.2;
  w.noise_rel = 0.01;
  w.reason = kept ? "default kept" : "tuned";
  return w;
}

// A sweep run budgeted for sm_120 and timed on an H200: the fixture's.
inline tuner::db::RunInfo sm120_sweep_run() { return tuner::db::fixture::fixture_run(); }

// A store with winners for batches 1, 16 (the default kept) and 64, budget sm_120, timed on an
// H200; run id returned. Uses this build's kernel source hash so that freeze can compile them.
inline std::int64_t write_store(const std::string& path) {
  tuner::db::Store store = tuner::db::Store::open(path);
  const std::int64_t run_id = store.begin_run(sm120_sweep_run());
  const std::string hash = tuner::smla_family::source_hash();
  store.add_source(hash, "sparse_mla_decode");
  store.record_winner(winner(1, kTuned1, 17.5, run_id, hash));
  store.record_winner(winner(16, kDefault, 30.0, run_id, hash));
  store.record_winner(winner(64, kTuned64, 80.25, run_id, hash));
  store.end_run(run_id);
  return run_id;
}

// `tuner query --format json` on `db` for the fixture's sparse_mla_decode shape at `batch`.
inline nlohmann::json query_json(const std::string& db, int batch, const std::string& extra = "") {
  const CommandResult result =
      run_tuner("query --db " + quoted(db) + " --family sparse_mla_decode " +
                "--heads 64 --tp 4 --batch " + std::to_string(batch) + " --format json " + extra);
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  return nlohmann::json::parse(result.output);
}

}  // namespace tuner::test::cli_store
