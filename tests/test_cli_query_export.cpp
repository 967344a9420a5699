// The runtime-side CLI that reads a DB (query, export) run as the built binary on real SQLite
// files in a fresh temporary directory per test case: query's answers and their provenance, the
// vLLM JSON export, and missing, corrupt, ambiguous and schema-1 DBs refused (exit 2). Fixture
// stores (tests/support/cli_store.hpp) are written through db::Store (freeze and verify:
// test_cli_freeze.cpp).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/sqlite/sqlite.hpp"
#include "db/store/store.hpp"
#include "tests/support/cli_store.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace tuner::test::cli_store;

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
