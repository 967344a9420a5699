// tuner freeze and tuner verify run as the built binary on real SQLite files in a fresh temporary
// directory per test case: real sm_120 cubins compiled with their launch facts, verify passing
// and then failing on an edited file, saying whether the cubins carry this build's launch contract,
// a winner above the arch's shared-memory opt-in refused, and both kernel families in one frozen
// DB. Fixture stores (tests/support/cli_store.hpp) are written through db::Store (query and export:
// test_cli_query_export.cpp).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/launch_contract.hpp"
#include "db/store/store.hpp"
#include "db/tunedb/tunedb.hpp"
#include "kernels/fp8_gemm/family.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "tests/support/cli_store.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/relabelled_contract.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace tuner::test::cli_store;

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
  CHECK(verified.output.find("  sparse_mla_decode: launch contract " +
                             std::string(tuner::launch_contract("sparse_mla_decode")) +
                             ", this build's\n") != std::string::npos);

  // The frozen answer carries the cubin: split + the two combines, or both splits + the two
  // combines (default).
  const nlohmann::json tuned = query_json(frozen, 1);
  CHECK(tuned["frozen"] == true);
  CHECK(tuned["how"] == "exact");
  CHECK(tuned["cubin_bytes"].get<long long>() > 1000);
  CHECK(tuned["kernel_names"].size() == 3);
  CHECK(tuned["launch_contract"] == std::string(tuner::launch_contract("sparse_mla_decode")));
  const nlohmann::json fallback = query_json(frozen, 8, "--kv bf16");
  CHECK(fallback["how"] == "default");
  CHECK(fallback["kernel_names"].size() == 4);

  // Frozen schema 3: each kernel's launch facts, as the serving launcher binds them. kTuned1
  // runs 4 warps, no producer warps (128 threads) and its layout's dynamic shared memory.
  const tunedb::TuningDb opened = tunedb::TuningDb::open(frozen);
  const tunedb::Lookup one =
      opened.lookup("sparse_mla_decode", "sm_120", tuner::db::fixture::kShape, 1);
  REQUIRE(one.cubin != nullptr);
  // Frozen schema 4: each cubin carries the launch contract of the build that compiled it.
  for (std::size_t i = 0; i < opened.cubin_count(); ++i) {
    CHECK(opened.cubin(i).launch_contract == tuner::launch_contract("sparse_mla_decode"));
  }
  CHECK(one.cubin->launch_contract.starts_with("sha256:"));
  REQUIRE(one.cubin->launches.size() == 3);  // by role name
  const tunedb::KernelLaunch& combine = one.cubin->launches[0];
  const tunedb::KernelLaunch& whole_row = one.cubin->launches[1];
  const tunedb::KernelLaunch& split = one.cubin->launches[2];
  CHECK(combine.role == "combine");
  CHECK(combine.kernel_name == one.cubin->kernel_names[1]);
  CHECK(combine.block_threads == 128);
  CHECK(whole_row.role == "combine.whole_row");
  CHECK(whole_row.kernel_name == one.cubin->kernel_names.back());
  CHECK(whole_row.kernel_name.find("combine_whole_row") != std::string::npos);
  CHECK(whole_row.block_threads == 128);
  CHECK(whole_row.dynamic_smem == 0);
  CHECK(split.role == "split.fp8_ds_mla");
  CHECK(split.kernel_name == one.cubin->kernel_names.front());
  CHECK(split.block_threads == 256);  // 8 warps
  CHECK(split.dynamic_smem ==
        static_cast<int>(smla::smem_layout(32, 16, 8, 1, 0, 0, 0).total_bytes));
  CHECK(split.max_dynamic_smem == split.dynamic_smem);
  REQUIRE(split.launch_params.size() == 5);
  CHECK(split.launch_params[2].name == "merge");
  CHECK(split.launch_params[3].name == "schedule");
  CHECK(split.launch_params[3].value == 0);  // the fixture's winner: per-row splits
  CHECK(split.launch_params[4].name == "target_ctas");
  CHECK(split.launch_params[4].value == 1024);
  const tunedb::Lookup untuned = opened.lookup(
      "sparse_mla_decode", "sm_120", "kv_format=bf16,local_heads=16,page_size=64,topk=2048", 8);
  REQUIRE(untuned.cubin != nullptr);
  CHECK(untuned.cubin->launches.size() == 4);  // both split kernels and the two combines

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

  // A sound file frozen by another build (its contract edited, the checksum recomputed): intact,
  // and verify says this build's launcher refuses it.
  const std::string other = dir / "other_build.db";
  tuner::test::copy_with_contract(frozen, other, "sha256:other build");
  const Result foreign = run_tuner("verify " + quoted(other), true);
  CHECK_MESSAGE(foreign.exit_code == 0, foreign.output);
  CHECK(foreign.output.find("  sparse_mla_decode: launch contract sha256:other build, not this "
                            "build's (" +
                            std::string(tuner::launch_contract("sparse_mla_decode")) +
                            "): this build's libtunedb_cuda refuses these cubins") !=
        std::string::npos);
  // One cubin of another build among this build's: the line names the other build's contract.
  const std::string mixed = dir / "mixed_builds.db";
  tuner::test::copy_with_contract(frozen, mixed, "sha256:other build",
                                  "params_json = (SELECT MIN(params_json) FROM cubins)");
  CHECK(run_tuner("verify " + quoted(mixed), true)
            .output.find("launch contract sha256:other build, not this build's") !=
        std::string::npos);
}

TEST_CASE(
    "freeze refuses a winner whose shared memory is above the arch's opt-in, writes nothing") {
  TempDir dir;
  const std::string db = dir / "tuning.db";
  const std::string frozen = dir / "frozen.db";
  {
    tuner::db::Store store = tuner::db::Store::open(db);
    const std::int64_t run_id = store.begin_run(sm120_sweep_run());
    const std::string& hash = tuner::smla_family::source_hash();
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
