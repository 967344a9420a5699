// The runtime-side CLI (query, freeze, verify, export) run as the built binary on real SQLite files
// in a fresh temporary directory per test case; fixture stores are written through db::Store.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "db/tunedb/tunedb.hpp"
#include "kernels/fp8_gemm/family.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "tests/support/fixture.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kDefault = tuner::db::fixture::kDefaultParams;
// Configs an sm_120 plan keeps (86 656 B of shared memory; 2 stages of 32 tokens would ask for
// 105 728 B, above sm_120's 101 376 B opt-in, and freeze refuses them).
const std::string kTuned1 =
    R"({"block_h":16,"block_t":32,"num_stages":1,"num_warps":8,"target_ctas":1024})";
const std::string kTuned64 =
    R"({"block_h":16,"block_t":32,"num_stages":1,"num_warps":8,"target_ctas":256})";

using Result = tuner::test::CommandResult;
using tuner::test::TempDir;

// Runs the tuner binary with `arguments` (shell words, paths quoted by the caller).
Result run_tuner(const std::string& arguments, bool with_stderr = false) {
  return tuner::test::run_command("'" + tuner::test::kTunerBinary + "' " + arguments +
                                  (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

tuner::db::WinnerRecord winner(int batch, const std::string& params, double median_us,
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

// A store with winners for batches 1, 16 (the default kept) and 64, budget sm_120, timed on an
// H200; run id returned. Uses this build's kernel source hash so that freeze can compile them.
// A sweep run budgeted for sm_120 and timed on an H200.
tuner::db::RunInfo sm120_sweep_run() {
  tuner::db::RunInfo run;
  run.host = "test-host";
  run.gpu_name = "NVIDIA H200";
  run.measured_arch = "sm_90";
  run.budget_arch = "sm_120";
  run.driver_version = "13000";
  run.cuda_version = "13000";
  run.nvrtc_version = "13.0";
  run.tuner_version = "test";
  run.command_line = "tuner sweep --budget-arch sm_120";
  run.kind = tuner::db::RunKind::sweep;
  return run;
}

std::int64_t write_store(const std::string& path) {
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

nlohmann::json query_json(const std::string& db, int batch, const std::string& extra = "") {
  const Result result =
      run_tuner("query --db " + quoted(db) + " --family sparse_mla_decode " +
                "--heads 64 --tp 4 --batch " + std::to_string(batch) + " --format json " + extra);
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  return nlohmann::json::parse(result.output);
}

}  // namespace

TEST_CASE("query --format json: exact and bucket and default answers with their provenance") {
  TempDir dir;
  const std::string db = dir / "tuning.db";
  const std::int64_t run_id = write_store(db);

  const nlohmann::json exact = query_json(db, 64);  // --arch defaults to the only one, sm_120
  CHECK(exact["how"] == "exact");
  CHECK(exact["miss"] == "none");
  CHECK(exact["arch"] == "sm_120");
  CHECK(exact["batch"] == 64);
  CHECK(exact["tuned_batch"] == 64);
  CHECK(exact["config"]["block_t"] == 32);
  CHECK(exact["config"]["target_ctas"] == 256);
  CHECK(exact["params_json"] == kTuned64);
  CHECK(exact["median_us"] == doctest::Approx(80.25));
  CHECK(exact["run_id"] == run_id);
  CHECK(exact["measured_arch"] == "sm_90");
  CHECK(exact["device_name"] == "NVIDIA H200");
  CHECK(exact["default_kept"] == false);
  CHECK(exact["frozen"] == false);
  CHECK(exact["shape"] == "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048");
  // 128 heads over TP 8 reach the kernel as the same 16 local heads: the same answer.
  const Result tp8_run =
      run_tuner("query --db " + quoted(db) + " --heads 128 --tp 8 --batch 64 --format json");
  REQUIRE_MESSAGE(tp8_run.exit_code == 0, tp8_run.output);
  const nlohmann::json tp8 = nlohmann::json::parse(tp8_run.output);
  CHECK(tp8["how"] == "exact");
  CHECK(tp8["params_json"] == kTuned64);
  // The canonical text itself (as tunedb's C API takes it) gives the same answer.
  const Result text_run =
      run_tuner("query --db " + quoted(db) +
                " --shape kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048 --batch 64 "
                "--format json");
  REQUIRE_MESSAGE(text_run.exit_code == 0, text_run.output);
  CHECK(nlohmann::json::parse(text_run.output)["params_json"] == kTuned64);

  const nlohmann::json bucket = query_json(db, 9);
  CHECK(bucket["how"] == "bucket");
  CHECK(bucket["tuned_batch"] == 16);
  CHECK(bucket["params_json"] == kDefault);
  CHECK(bucket["default_kept"] == true);

  const nlohmann::json above = query_json(db, 500);
  CHECK(above["how"] == "bucket");
  CHECK(above["tuned_batch"] == 64);

  const nlohmann::json untuned = query_json(db, 8, "--kv bf16");
  CHECK(untuned["how"] == "default");
  CHECK(untuned["miss"] == "shape_not_tuned");
  CHECK(untuned["params_json"] == kDefault);
  CHECK(untuned["tuned_batch"].is_null());
  CHECK(untuned["median_us"].is_null());
  CHECK(untuned["run_id"].is_null());
  CHECK(untuned["device_name"].is_null());

  const nlohmann::json other_arch = query_json(db, 8, "--arch sm_90");
  CHECK(other_arch["how"] == "default");
  CHECK(other_arch["miss"] == "arch_not_in_db");
}

TEST_CASE("query: a missing or corrupt file or an ambiguous arch exits 2 naming the problem") {
  TempDir dir;
  const Result missing = run_tuner("query --db " + quoted(dir / "absent.db") + " --batch 8", true);
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("absent.db' does not exist") != std::string::npos);

  const std::string corrupt = dir / "corrupt.db";
  std::ofstream(corrupt) << std::string(4096, 'x');
  const Result damaged = run_tuner("query --db " + quoted(corrupt) + " --batch 8", true);
  CHECK(damaged.exit_code == 2);
  CHECK(damaged.output.find("corrupt.db") != std::string::npos);
  CHECK(damaged.output.find("not a SQLite database") != std::string::npos);

  const std::string db = dir / "tuning.db";
  const std::int64_t run_id = write_store(db);
  {
    tuner::db::Store store = tuner::db::Store::open(db);
    tuner::db::WinnerRecord sm90 = winner(8, kDefault, 20.0, run_id, "any");
    sm90.budget_arch = "sm_90";
    store.add_source("any", "sparse_mla_decode");
    store.record_winner(sm90);
  }
  const Result ambiguous = run_tuner("query --db " + quoted(db) + " --batch 8", true);
  CHECK(ambiguous.exit_code == 2);
  CHECK(ambiguous.output.find("several budget arches (sm_120, sm_90): pass --arch") !=
        std::string::npos);
}

TEST_CASE("freeze compiles real sm_120 cubins and verify passes then fails on an edited file") {
  TempDir dir;
  const std::string db = dir / "tuning.db";
  const std::string frozen = dir / "frozen.db";
  write_store(db);
  const Result froze = run_tuner("freeze --db " + quoted(db) + " --out " + quoted(frozen) +
                                     " --arch sm_120 --cache-dir " + quoted(dir / "cache"),
                                 true);
  REQUIRE_MESSAGE(froze.exit_code == 0, froze.output);
  MESSAGE(froze.output);
  // Three distinct configs (the default among them): one cubin each, all for sm_120.
  CHECK(froze.output.find("froze") != std::string::npos);
  CHECK(froze.output.find("3 winners, 3 cubins") != std::string::npos);
  CHECK(froze.output.find("cubin for sm_120") != std::string::npos);

  const Result verified = run_tuner("verify " + quoted(frozen), true);
  CHECK_MESSAGE(verified.exit_code == 0, verified.output);
  CHECK(verified.output.rfind("ok: ", 0) == 0);

  // The frozen answer carries the cubin: split + combine, or both splits + combine (default).
  const nlohmann::json tuned = query_json(frozen, 1);
  CHECK(tuned["frozen"] == true);
  CHECK(tuned["how"] == "exact");
  CHECK(tuned["cubin_bytes"].get<long long>() > 1000);
  CHECK(tuned["kernel_names"].size() == 2);
  const nlohmann::json fallback = query_json(frozen, 8, "--kv bf16");
  CHECK(fallback["how"] == "default");
  CHECK(fallback["kernel_names"].size() == 3);

  // Frozen schema 3: each kernel's launch facts, as the serving launcher binds them. kTuned1
  // runs 4 warps, no producer warps (128 threads) and its layout's dynamic shared memory.
  const tunedb::TuningDb opened = tunedb::TuningDb::open(frozen);
  const tunedb::Lookup one =
      opened.lookup("sparse_mla_decode", "sm_120", tuner::db::fixture::kShape, 1);
  REQUIRE(one.cubin != nullptr);
  REQUIRE(one.cubin->launches.size() == 2);
  const tunedb::KernelLaunch& combine = one.cubin->launches[0];
  const tunedb::KernelLaunch& split = one.cubin->launches[1];
  CHECK(combine.role == "combine");
  CHECK(combine.kernel_name == one.cubin->kernel_names.back());
  CHECK(combine.block_threads == 128);
  CHECK(split.role == "split.fp8_ds_mla");
  CHECK(split.kernel_name == one.cubin->kernel_names.front());
  CHECK(split.block_threads == 256);  // 8 warps
  CHECK(split.dynamic_smem ==
        static_cast<int>(smla::smem_layout(32, 16, 8, 1, 0, 0, 0).total_bytes));
  CHECK(split.max_dynamic_smem == split.dynamic_smem);
  REQUIRE(split.launch_params.size() == 4);
  CHECK(split.launch_params[2].name == "merge");
  CHECK(split.launch_params[3].name == "target_ctas");
  CHECK(split.launch_params[3].value == 1024);
  const tunedb::Lookup untuned = opened.lookup(
      "sparse_mla_decode", "sm_120", "kv_format=bf16,local_heads=16,page_size=64,topk=2048", 8);
  REQUIRE(untuned.cubin != nullptr);
  CHECK(untuned.cubin->launches.size() == 3);  // both split kernels and combine

  // Refuses to overwrite without --force.
  const Result again = run_tuner("freeze --db " + quoted(db) + " --out " + quoted(frozen) +
                                     " --cache-dir " + quoted(dir / "cache"),
                                 true);
  CHECK(again.exit_code == 2);

  // Flip one byte of the winners' payload: an edit the checksum must catch.
  const std::string edited = dir / "edited.db";
  fs::copy_file(frozen, edited);
  {
    std::fstream file(edited, std::ios::in | std::ios::out | std::ios::binary);
    std::ostringstream contents;
    contents << file.rdbuf();
    const std::string bytes = contents.str();
    const std::size_t where = bytes.find(
        "\"block_t\":32,\"num_stages\":1,\"num_warps\":8,"
        "\"target_ctas\":256");
    REQUIRE(where != std::string::npos);
    file.seekp(static_cast<std::streamoff>(where + 11));  // the '3' of 32
    file.put('6');
  }
  const Result failed = run_tuner("verify " + quoted(edited), true);
  CHECK(failed.exit_code == 1);
  CHECK(failed.output.find("FAILED") != std::string::npos);
  CHECK(failed.output.find("checksum") != std::string::npos);

  const Result missing = run_tuner("verify " + quoted(dir / "absent.db"), true);
  CHECK(missing.exit_code == 2);
}

TEST_CASE(
    "freeze refuses a winner whose shared memory is above the arch's opt-in, writes nothing") {
  TempDir dir;
  const std::string db = dir / "tuning.db";
  const std::string frozen = dir / "frozen.db";
  {
    tuner::db::Store store = tuner::db::Store::open(db);
    const std::int64_t run_id = store.begin_run(sm120_sweep_run());
    const std::string hash = tuner::smla_family::source_hash();
    store.add_source(hash, "sparse_mla_decode");
    // The seeds' path with 64-token tiles and 3 stages: 3 x 64 rows of dequantized KV, far above
    // sm_120's 101376 B (no sm_120 plan keeps it; an edited or foreign store could hold it).
    const std::string too_big =
        R"({"block_h":16,"block_t":64,"num_stages":3,"num_warps":4,"target_ctas":256})";
    REQUIRE(smla::smem_layout(64, 16, 4, 3, smla::kFp8DsMla).total_bytes > 101376u);
    store.record_winner(winner(8, too_big, 20.0, run_id, hash));
    store.end_run(run_id);
  }
  const Result froze = run_tuner("freeze --db " + quoted(db) + " --out " + quoted(frozen) +
                                     " --arch sm_120 --cache-dir " + quoted(dir / "cache"),
                                 true);
  CHECK_MESSAGE(froze.exit_code == 2, froze.output);
  CHECK(froze.output.find("above sm_120's opt-in 101376 B") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(frozen));
}

TEST_CASE("export --format vllm-json writes one file keyed by batch size") {
  TempDir dir;
  const std::string db = dir / "tuning.db";
  write_store(db);
  const std::string out = dir / "configs";
  const Result exported =
      run_tuner("export --db " + quoted(db) + " --format vllm-json --out " + quoted(out), true);
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.output);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(out)) files.push_back(entry.path());
  REQUIRE(files.size() == 1);
  CHECK(files[0].filename() ==
        "sparse_mla_decode,local_heads=16,topk=2048,kv=fp8_ds_mla,page=64,"
        "device_name=NVIDIA_H200.json");
  std::ifstream file(files[0]);
  const nlohmann::ordered_json table = nlohmann::ordered_json::parse(file);
  std::vector<std::string> keys;
  for (const auto& [key, value] : table.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"1", "16", "64"});
  CHECK(table["1"]["BLOCK_T"] == 32);
  CHECK(table["1"]["TARGET_CTAS"] == 1024);
  CHECK(table["16"]["BLOCK_T"] == 16);
  CHECK(table["64"]["TARGET_CTAS"] == 256);

  const Result bad_format = run_tuner("export --db " + quoted(db) + " --format csv", true);
  CHECK(bad_format.exit_code == 2);
  CHECK(bad_format.output.find("--format 'csv' is not known: use vllm-json") != std::string::npos);
}

TEST_CASE("both families: one store, one frozen DB with both families' cubins, query and export") {
  TempDir dir;
  const std::string db = dir / "tuning.db";
  const std::string frozen = dir / "frozen.db";
  const std::int64_t run_id = write_store(db);  // sparse_mla_decode winners at 1, 16, 64
  const tuner::Family& gemm = tuner::fp8_gemm::family();
  const std::string gemm_shape =
      gemm.canonicalize({{"n", "7168"}, {"k", "4096"}, {"block", "128"}}).canonical();
  const std::string gemm_tuned =
      R"({"block_k":128,"block_m":32,"block_n":128,"num_stages":4,"num_warps":8,"split_k":2})";
  {
    tuner::db::Store store = tuner::db::Store::open(db);
    store.add_source(gemm.source_hash(), gemm.name);
    for (int batch : {1, 128}) {
      tuner::db::WinnerRecord w = winner(batch, kDefault, 10.0, run_id, gemm.source_hash());
      w.family = gemm.name;
      w.shape = gemm_shape;
      w.default_params_json = tuner::to_json(gemm.default_config());
      w.params_json = batch == 1 ? w.default_params_json : gemm_tuned;
      w.decision = batch == 1 ? tuner::db::Decision::default_kept : tuner::db::Decision::tuned;
      store.record_winner(w);
    }
  }
  const Result froze = run_tuner("freeze --db " + quoted(db) + " --out " + quoted(frozen) +
                                     " --arch sm_120 --cache-dir " + quoted(dir / "cache"),
                                 true);
  REQUIRE_MESSAGE(froze.exit_code == 0, froze.output);
  CHECK(froze.output.find("froze " + frozen + ": 5 winners") != std::string::npos);

  const Result gemm_query = run_tuner("query --db " + quoted(frozen) +
                                      " --family fp8_gemm --n 7168 --k 4096 --batch 100 "
                                      "--format json");
  REQUIRE_MESSAGE(gemm_query.exit_code == 0, gemm_query.output);
  const nlohmann::json found = nlohmann::json::parse(gemm_query.output);
  CHECK(found["how"] == "bucket");
  CHECK(found["tuned_batch"] == 128);
  CHECK(found["params_json"] == gemm_tuned);
  CHECK(found["shape"] == "block=128,k=4096,n=7168");
  CHECK(found["cubin_bytes"].get<long long>() > 1000);  // a real sm_120 image
  CHECK(found["kernel_names"].size() == 2);             // the GEMM and its split-K reduce

  const nlohmann::json smla = query_json(frozen, 64);
  CHECK(smla["how"] == "exact");
  CHECK(smla["params_json"] == kTuned64);

  const std::string out = dir / "configs";
  const Result exported =
      run_tuner("export --db " + quoted(frozen) + " --format vllm-json --out " + quoted(out), true);
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.output);
  const fs::path gemm_file =
      fs::path(out) /
      "N=7168,K=4096,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json";
  REQUIRE(fs::exists(gemm_file));
  std::ifstream file(gemm_file);
  const nlohmann::json table = nlohmann::json::parse(file);
  CHECK(table["128"]["BLOCK_SIZE_M"] == 32);
  CHECK(table["128"]["BLOCK_SIZE_N"] == 128);
  CHECK(table["128"]["num_stages"] == 4);
  CHECK(table["1"]["BLOCK_SIZE_N"] == 64);  // the default kept at batch 1
}

TEST_CASE("a schema-1 DB is refused by every command, naming the file and the fix, and unchanged") {
  TempDir dir;
  const std::string db = dir / "old.db";
  write_store(db);
  {
    const tuner::db::Connection connection =
        tuner::db::Connection::open(db, tuner::db::OpenMode::read_write_create);
    connection.exec("PRAGMA user_version = 1");
  }
  for (const std::string& command :
       {"query --db " + quoted(db) + " --batch 8",
        "export --db " + quoted(db) + " --format vllm-json",
        "report --db " + quoted(db) + " --out " + quoted(dir / "report"),
        "plan --arch sm_120 --db " + quoted(db) + " --cache-dir " + quoted(dir / "cache")}) {
    CAPTURE(command);
    const Result refused = run_tuner(command, true);
    CHECK(refused.exit_code == 2);
    CHECK(refused.output.find(db + " has schema version 1, written before shapes were data") !=
          std::string::npos);
    CHECK(refused.output.find("re-run `tuner sweep --db NEW.db`") != std::string::npos);
  }
  const tuner::db::Connection after =
      tuner::db::Connection::open(db, tuner::db::OpenMode::read_only);
  CHECK(after.query_int64("PRAGMA user_version") == 1);
  CHECK(after.query_int64("SELECT COUNT(*) FROM runs") == 1);  // the plan recorded no run
}
