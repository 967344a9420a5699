// `tuner plan --db`: every fate recorded in the store, run after run; bad input exits 2.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

using tuner::test::CommandResult;
using tuner::test::kTunerBinary;
using tuner::test::run_with_stderr;
using tuner::test::TempDir;

long long count(const fs::path& db, const char* sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  REQUIRE(sqlite3_prepare_v2(handle, sql, -1, &statement, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(statement) == SQLITE_ROW);
  const long long value = sqlite3_column_int64(statement, 0);
  sqlite3_finalize(statement);
  sqlite3_close(handle);
  return value;
}

}  // namespace

TEST_CASE(
    "tuner plan --db records every member of the cross product, a value the shape rules out "
    "once") {
  const TempDir dir;
  const fs::path db = dir / "plan.db";
  const std::string command = "'" + kTunerBinary +
                              "' plan --arch sm_120 --format csv --cache-dir '" +
                              (dir / "cache").string() + "' --db '" + db.string() + "'";
  const CommandResult first = run_with_stderr(command);
  REQUIRE(first.exit_code == 0);
  CHECK(first.output.find("recorded 1574640 fates (524882 rows) as plan run 1") !=
        std::string::npos);
  // Every member of BLOCK_T 3 x BLOCK_H 3 x warps 3 x stages 6 x mma_path 3 x producers 4 x
  // kv_unpack 3 x ctas_per_sm 3 x TARGET_CTAS 5 x merge 6 x schedule 3, counted by the rows'
  // members.
  CHECK(count(db, "SELECT SUM(COALESCE(members, 1)) FROM trials WHERE stage = 'plan'") ==
        3 * 3 * 3 * 6 * 3 * 4 * 3 * 3 * 5 * 6 * 3);
  // BLOCK_H 32 and 64 exceed 16 local heads: two thirds of the space, whatever else they set, in
  // one row each; the rows of one config hold BLOCK_H 16 only.
  CHECK(count(db,
              "SELECT COUNT(*) FROM trials WHERE fate = 'pruned_shape' AND reason LIKE 'BLOCK_H %' "
              "AND params_json IN ('{\"block_h\":32}', '{\"block_h\":64}') AND members = 524880") ==
        2);
  CHECK(count(db,
              "SELECT COUNT(*) FROM trials WHERE stage = 'plan' AND members IS NULL AND "
              "params_json NOT LIKE '%\"block_h\":16,%'") == 0);
  CHECK(count(db, "SELECT COUNT(*) FROM trials WHERE stage = 'plan'") == 1574640 / 3 + 2);
  CHECK(count(db,
              "SELECT COUNT(*) FROM runs WHERE kind = 'plan' AND budget_arch = 'sm_120' "
              "AND gpu_name IS NULL AND ended_at IS NOT NULL") == 1);
  // A second plan run records its fates again, under its own run.
  REQUIRE(run_with_stderr(command).exit_code == 0);
  CHECK(count(db, "SELECT COUNT(*) FROM trials WHERE stage = 'plan'") == 2 * (1574640 / 3 + 2));
  CHECK(count(db, "SELECT COUNT(DISTINCT run_id) FROM trials") == 2);
}

TEST_CASE("bad shape input exits 2 naming the field and the allowed values, and writes no DB") {
  const TempDir dir;
  const fs::path db = dir / "plan.db";
  const auto plan = [&](const std::string& options) {
    return run_with_stderr("'" + kTunerBinary + "' plan --arch sm_120 --cache-dir '" +
                           (dir / "cache").string() + "' --db '" + db.string() + "' " + options);
  };
  struct Case {
    const char* options;
    const char* message;
  };
  const Case cases[] = {
      {"--family dense_gemm", "unknown family 'dense_gemm': known families are sparse_mla_decode"},
      {"--kv int4",
       "--kv 'int4' is not allowed for sparse_mla_decode: use one of fp8_ds_mla | bf16"},
      {"--heads 64 --tp 3", "heads 64 is not divisible by tp 3"},
      {"--topk ''", "--topk needs a positive integer, got ''"},
      {"--page-size 0", "--page-size needs a positive integer, got '0'"},
      {"--n 4096", "unrecognised option '--n'"},
      {"--shape local_heads=16,kv_format=fp8_ds_mla", "is not canonical ('kv_format' after"},
      {"--family fp8_gemm --shape k=4096,n=7168",
       "--shape 'k=4096,n=7168' is not fp8_gemm's canonical form: use 'block=128,k=4096,n=7168'"},
  };
  for (const Case& bad : cases) {
    CAPTURE(bad.options);
    const CommandResult outcome = plan(bad.options);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.output.find(bad.message) != std::string::npos);
    CHECK_FALSE(fs::exists(db));
  }
}

TEST_CASE("tuner bench --l2 accepts only sets, flush or none, before looking for a GPU") {
  const CommandResult outcome =
      run_with_stderr("'" + kTunerBinary + "' bench --batches 1 --l2 evict");
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.output.find("--l2 evict: not a way to treat the L2; pass 'sets'") !=
        std::string::npos);
  CHECK(outcome.output.find("'none' (the old, L2-unsafe protocol") != std::string::npos);
}

TEST_CASE("tuner bench refuses a negative --replays and an unwritable --samples before timing") {
  const TempDir dir;
  const std::string bench = "'" + kTunerBinary + "' bench --batches 1 ";
  const CommandResult replays = run_with_stderr(bench + "--replays -1");
  CHECK(replays.exit_code == 2);
  CHECK(replays.output.find("--replays -1: not a replay count") != std::string::npos);
  const std::string unwritable = (dir / "missing" / "samples.csv").string();
  const CommandResult samples = run_with_stderr(bench + "--samples '" + unwritable + "'");
  CHECK(samples.exit_code == 2);
  CHECK(samples.output.find("--samples " + unwritable + ": cannot open it for appending") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "missing"));
}

// Before any GPU work: the search's options are checked first, with or without a GPU.
TEST_CASE("tuner sweep refuses bad screening and finalist options with exit 2, naming them") {
  const TempDir dir;
  const std::string sweep = "'" + kTunerBinary + "' sweep --db '" + (dir / "tuning.db").string() +
                            "' --cache-dir '" + (dir / "cache").string() + "' ";
  for (const auto& [option, named] :
       {std::pair{"--screen-replays -1", "--screen-replays -1 is out of range"},
        std::pair{"--screen-replays 201", "--screen-replays 201 is out of range"},
        std::pair{"--finalist-margin 101", "--finalist-margin 101"},
        std::pair{"--finalist-margin nan", "--finalist-margin nan"}}) {
    const std::string shown_option(option);  // CAPTURE cannot take a structured binding
    CAPTURE(shown_option);
    const CommandResult outcome = run_with_stderr(sweep + option);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.output.find(named) != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "tuning.db"));
  }
}

// --also-time is read and checked against the sweep's batches and the family before any GPU work.
TEST_CASE("tuner sweep refuses an unreadable or wrong --also-time file with exit 2, naming it") {
  const TempDir dir;
  const fs::path file = dir / "also.json";
  std::ofstream(file) << R"({"3": []})";
  const std::string sweep = "'" + kTunerBinary + "' sweep --db '" + (dir / "tuning.db").string() +
                            "' --cache-dir '" + (dir / "cache").string() + "' --batches 1,8 ";
  for (const auto& [option, named] :
       {std::pair{"--also-time '" + (dir / "none.json").string() + "'",
                  std::string("none.json: cannot read the file")},
        std::pair{"--also-time '" + file.string() + "'",
                  std::string("batch 3 is not one of the sweep's --batches")},
        std::pair{"--also-time '" + file.string() + "' --shard 1/2",
                  std::string("--also-time with --shard")}}) {
    const std::string shown_option(option);  // CAPTURE cannot take a structured binding
    CAPTURE(shown_option);
    const CommandResult outcome = run_with_stderr(sweep + option);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.output.find(named) != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "tuning.db"));
  }
}
