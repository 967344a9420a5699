// `tuner sweep` on a GPU (issues 11, 12): a faulting candidate is isolated in the worker, retried
// once and recorded as a fault while the sweep finishes; kill -9 of the sweep mid-batch leaves no
// worker behind, and a resume loses and duplicates nothing; the batch search; the 'waves'
// batches. Skipped without a GPU (gpu_main.cpp; TUNER_REQUIRE_GPU=1 makes that a failure).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/cuda_driver.hpp"
#include "db/sqlite/sqlite.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/wait_process.hpp"

namespace fs = std::filesystem;
using tuner::db::Connection;
using tuner::db::OpenMode;

namespace {

std::string sweep_command(const fs::path& dir, const std::string& extra) {
  return "'" + tuner::test::kTunerBinary + "' sweep --db '" + (dir / "tuning.db").string() +
         "' --cache-dir '" + (dir / "cache").string() + "' " + extra;
}

// Runs a sweep into DIR/tuning.db and requires it to succeed (its output shown when not).
tuner::test::CommandResult sweep_ok(const fs::path& dir, const std::string& extra) {
  tuner::test::CommandResult sweep = tuner::test::run_with_stderr(sweep_command(dir, extra));
  INFO(sweep.output);
  REQUIRE(sweep.exit_code == 0);
  return sweep;
}

std::int64_t count(const fs::path& db, const std::string& sql) {
  return Connection::open(db, OpenMode::read_only).query_int64(sql);
}

// The first column of the first row `sql` returns from `db` (required to exist).
std::string first_text(const fs::path& db, const std::string& sql) {
  const auto connection = Connection::open(db, OpenMode::read_only);
  auto query = connection.prepare(sql);
  REQUIRE(query.step());
  return query.column_text(0);
}

// A sweep at batches 1 and 2 into a fresh DB in `fresh` (sharing `dir`'s cubin cache: nothing
// resumed, every config measured anew) with --also-time naming `params` at `batch`; its DB.
fs::path sweep_also_timing(const fs::path& dir, const fs::path& fresh, int batch,
                           const std::string& params) {
  const fs::path file = dir / "also.json";
  std::ofstream(file) << "{\"" << batch << "\": [" << params << "]}";
  fs::create_directory_symlink(dir / "cache", fresh / "cache");
  sweep_ok(fresh, "--batches 1,2 --also-time '" + file.string() + "'");
  return fresh / "tuning.db";
}

// The pids whose parent is `parent` (from /proc/*/stat).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), {});
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent) {
      children.push_back(static_cast<pid_t>(std::stoi(name)));
    }
  }
  return children;
}

using tuner::test::wait_for_end;

std::int64_t integrity_problems(const fs::path& db) {
  return count(db, "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'");
}

// Plan survivors of the last plan run that batch `batch` has no measured trial for.
std::int64_t lost(const fs::path& db, int batch) {
  return count(db,
               "SELECT COUNT(DISTINCT params_json) FROM trials WHERE stage = 'plan' AND "
               "fate = 'survivor' AND params_json NOT IN (SELECT t.params_json FROM trials t "
               "JOIN problems p ON p.id = t.problem_id WHERE t.stage = 'measure' AND "
               "t.fate <> 'transient' AND p.batch = " +
                   std::to_string(batch) + ")");
}

constexpr const char* kMeasured =
    "SELECT COUNT(*) FROM trials WHERE stage = 'measure' AND fate <> 'transient'";

}  // namespace

TEST_CASE("a faulting candidate is retried, recorded as a fault, and the sweep finishes") {
  const tuner::test::TempDir dir;
  sweep_ok(dir.path(), "--batches 1 --test-fault-candidate");
  const fs::path db = dir / "tuning.db";
  CHECK(count(db,
              "SELECT COUNT(*) FROM trials WHERE fate = 'fault' AND params_json LIKE "
              "'%test_fault%' AND reason LIKE 'reproduced on retry: %'") == 1);
  CHECK(count(db, "SELECT COUNT(*) FROM trials WHERE fate = 'measured'") > 1);
  CHECK(count(db, "SELECT COUNT(*) FROM winners WHERE batch = 1") == 1);
  CHECK(count(db, "SELECT COUNT(*) FROM trials WHERE stage = 'retime' AND fate = 'measured'") >= 1);
  // Timing protocol 2: every full-protocol timing (the finalists' re-timings) carries its
  // per-launch quantiles around its median; the search's screens say so and carry none.
  CHECK(count(db,
              "SELECT COUNT(*) FROM trials WHERE fate = 'measured' AND stage = 'retime' AND NOT ("
              "measure_env LIKE '%protocol 2' AND launch_p10_us > 0 AND launch_p10_us <= "
              "median_us AND median_us <= launch_p90_us)") == 0);
  CHECK(count(db,
              "SELECT COUNT(*) FROM trials WHERE fate = 'measured' AND stage = 'measure' AND NOT ("
              "measure_env LIKE '%protocol 2, screen 4' AND launch_p10_us IS NULL AND reason "
              "LIKE '%screened: 1 warm-up + 4 timed replays%')") == 0);
  CHECK(integrity_problems(db) == 0);
}

TEST_CASE(
    "a footprint under 4x the L2 is refused by sweep and bench with exit 2, nothing written") {
  const tuner::test::TempDir dir;
  const tuner::test::CommandResult sweep =
      tuner::test::run_with_stderr(sweep_command(dir.path(), "--batches 1 --memory-gib 0.1"));
  INFO(sweep.output);
  CHECK(sweep.exit_code == 2);
  CHECK(sweep.output.find("--memory-gib 0.1 gives an input footprint of 102.4 MiB, less than 4x "
                          "this GPU's L2") != std::string::npos);
  const fs::path db = dir / "tuning.db";
  CHECK((!fs::exists(db) ||
         count(db, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'runs'") == 0 ||
         count(db, "SELECT COUNT(*) FROM runs") == 0));
  const tuner::test::CommandResult bench = tuner::test::run_with_stderr(
      "'" + tuner::test::kTunerBinary + "' bench --batches 1 --memory-gib 0.1");
  INFO(bench.output);
  CHECK(bench.exit_code == 2);
  CHECK(bench.output.find("less than 4x this GPU's L2") != std::string::npos);
}

TEST_CASE("kill -9 mid-sweep: no orphaned worker; the resume loses and duplicates nothing") {
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);  // orphans come to us: we see how they end
  const tuner::test::TempDir dir;
  const fs::path db = dir / "tuning.db";
  const std::string command = sweep_command(dir.path(), "--batches 1,4");
  const pid_t sweep = ::fork();
  REQUIRE(sweep >= 0);
  if (sweep == 0) {
    ::execl("/bin/sh", "sh", "-c", ("exec " + command + " >/dev/null 2>&1").c_str(), nullptr);
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  // The store's file exists before its schema does (the sweep creates both): poll the table.
  const auto measured_so_far = [&] {
    return fs::exists(db) &&
                   count(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'trials'") == 1
               ? count(db, kMeasured)
               : 0;
  };
  while (std::chrono::steady_clock::now() < deadline && measured_so_far() < 3) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const std::vector<pid_t> workers = children_of(sweep);
  REQUIRE(::kill(sweep, SIGKILL) == 0);
  REQUIRE(wait_for_end(sweep, 10).has_value());
  CHECK_FALSE(workers.empty());
  for (const pid_t worker : workers) {
    const std::optional<int> status = wait_for_end(worker, 10);
    CHECK(status.has_value());  // it died with its parent instead of timing on
  }
  const std::int64_t before = count(db, kMeasured);
  CHECK(before >= 3);
  const tuner::test::CommandResult resumed = tuner::test::run_with_stderr(command);
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(integrity_problems(db) == 0);
  // Per batch: every candidate measured exactly once across both runs.
  CHECK(count(db,
              "SELECT COUNT(*) FROM (SELECT problem_id, params_json, COUNT(*) AS n FROM trials "
              "WHERE stage = 'measure' AND fate <> 'transient' GROUP BY 1, 2 HAVING n > 1)") == 0);
  CHECK(lost(db, 1) == 0);
  CHECK(lost(db, 4) == 0);
  CHECK(count(db, "SELECT COUNT(*) FROM winners") == 2);
  CHECK(count(db, kMeasured) > before);
}

// Issue 12: the batch search. Batches 1, 2, 4, 8: anchors 1 and 8 (every config, verified),
// 2 and 4 between them (the closest few, timed only); every config has a fate at every batch.
TEST_CASE("the batch search measures anchors fully, skips with a reason elsewhere, and resumes") {
  const tuner::test::TempDir dir;
  const fs::path db = dir / "tuning.db";
  const std::string command =
      sweep_command(dir.path(), "--batches 1-2,4,8 --search-keep 3 --test-fault-candidate");
  const tuner::test::CommandResult sweep = tuner::test::run_with_stderr(command);
  INFO(sweep.output);
  REQUIRE(sweep.exit_code == 0);
  const auto at = [&](int batch, const std::string& where) {
    return count(db,
                 "SELECT COUNT(*) FROM trials t JOIN problems p ON p.id = t.problem_id WHERE "
                 "t.stage = 'measure' AND p.batch = " +
                     std::to_string(batch) + " AND " + where);
  };
  const auto distinct = [&](int batch) {
    return count(db,
                 "SELECT COUNT(DISTINCT t.params_json) FROM trials t JOIN problems p ON "
                 "p.id = t.problem_id WHERE t.stage = 'measure' AND p.batch = " +
                     std::to_string(batch));
  };
  for (const int batch : {1, 2, 4, 8}) {
    CAPTURE(batch);
    CHECK(lost(db, batch) == 0);           // measured or skipped: every survivor has a fate here
    CHECK(at(batch, "1") == distinct(1));  // one fate per config, the same configs everywhere
    CHECK(distinct(batch) == distinct(1));
  }
  // At an anchor only the same launch as a measured config is skipped (tuner/same_launch.hpp):
  // at batch 1 the cluster merge's splits are capped at 8, which every TARGET_CTAS asks for with
  // one head group, so merge 2's four TARGET_CTAS are one launch (its 0 is trimmed as 1024's).
  const std::string other_reason =
      "t.fate = 'skipped_by_search' AND t.reason NOT LIKE "
      "'the same launch as %: measured once, as that config'";
  CHECK(at(1, other_reason) == 0);
  CHECK(at(1, "t.fate = 'skipped_by_search' AND t.params_json LIKE '%\"merge\":2%'") > 0);
  CHECK(at(8, other_reason) == 1);  // only the candidate that faulted at 1
  CHECK(at(2, "t.fate = 'skipped_by_search'") > 0);
  CHECK(at(4, "t.fate = 'skipped_by_search'") > 0);
  // keep 3, the default, the batch below's 4, and (anchors disagreeing) every launch-time
  // variant (at most 5 TARGET_CTAS x 3 merge) of the 2 closest kernels
  CHECK(at(2, "t.fate = 'measured'") <= 3 + 1 + 4 + 2 * 15);
  CHECK(at(2,
           "t.fate = 'measured' AND t.reason LIKE 'screened: %; verified once per shape at "
           "batches 1,8'") == at(2, "t.fate = 'measured'"));
  CHECK(at(8, "t.fate = 'measured' AND t.reason LIKE 'verified and screened: %'") ==
        at(8, "t.fate = 'measured'"));
  // The winner rule compared full-protocol re-timings only: the winner has one at every batch.
  CHECK(count(db,
              "SELECT COUNT(*) FROM winners w JOIN problems p ON p.batch = w.batch AND p.shape = "
              "w.shape WHERE NOT EXISTS (SELECT 1 FROM trials t WHERE t.problem_id = p.id AND "
              "t.stage = 'retime' AND t.params_json = w.params_json AND t.reason LIKE "
              "'timing protocol 2 in full%')") == 0);
  CHECK(at(4,
           "t.params_json LIKE '%test_fault%' AND t.fate = 'skipped_by_search' AND t.reason "
           "LIKE '%it failed at batch 1 in this sweep'") == 1);
  CHECK(count(db, "SELECT COUNT(*) FROM winners") == 4);
  const std::int64_t trials = count(db, "SELECT COUNT(*) FROM trials WHERE stage <> 'plan'");
  const tuner::test::CommandResult again = tuner::test::run_with_stderr(command);
  REQUIRE(again.exit_code == 0);
  CHECK(count(db, "SELECT COUNT(*) FROM trials WHERE stage <> 'plan'") == trials);  // all done
}

// A config no finalist rule would pick, named by --also-time, is timed in full at its batch in
// every round beside the finalists: the full-protocol oracle of scripts/regret.py.
TEST_CASE("--also-time: a named config is timed in full beside the finalists, every round") {
  const tuner::test::TempDir dir;
  sweep_ok(dir.path(), "--batches 1,2");
  // The slowest screened config at batch 2: measured, never re-timed in that sweep.
  const std::string params = first_text(
      dir / "tuning.db",
      "SELECT t.params_json FROM trials t JOIN problems p ON p.id = t.problem_id WHERE p.batch = "
      "2 AND t.stage = 'measure' AND t.fate = 'measured' AND t.params_json NOT IN (SELECT "
      "params_json FROM trials WHERE stage = 'retime' AND problem_id = p.id) ORDER BY "
      "t.median_us DESC LIMIT 1");
  const tuner::test::TempDir fresh;
  const fs::path oracle = sweep_also_timing(dir.path(), fresh.path(), 2, params);
  const std::string retimed =
      "SELECT COUNT(*) FROM trials t JOIN problems p ON p.id = t.problem_id WHERE p.batch = 2 "
      "AND t.stage = 'retime' AND t.fate = 'measured' AND t.params_json = '" +
      params + "'";
  CHECK(count(oracle, retimed) == 1);
  CHECK(count(oracle, retimed +
                          " AND t.reason LIKE 'timing protocol 2 in full, 3 interleaved round(s)%" +
                          "named by --also-time%'") == 1);
  CHECK(count(oracle,
              "SELECT COUNT(*) FROM trials t JOIN problems p ON p.id = t.problem_id WHERE "
              "p.batch = 1 AND t.stage = 'retime' AND t.reason LIKE '%--also-time%'") == 0);
}

// A config the screens left unmeasured as the same launch as a measured one (at batch 1 the
// cluster merge's TARGET_CTAS values are one launch), named by --also-time, is not timed again:
// the config it copies is timed in full and the named one's re-timing trial takes that timing.
TEST_CASE("--also-time: a config that is the same launch as a measured one is timed once, as it") {
  const tuner::test::TempDir dir;
  sweep_ok(dir.path(), "--batches 1,2");
  const std::string params = first_text(
      dir / "tuning.db",
      "SELECT t.params_json FROM trials t JOIN problems p ON p.id = t.problem_id WHERE p.batch = "
      "1 AND t.stage = 'measure' AND t.fate = 'skipped_by_search' AND t.reason LIKE 'the same "
      "launch as %' ORDER BY t.id LIMIT 1");
  const tuner::test::TempDir fresh;
  const fs::path oracle = sweep_also_timing(dir.path(), fresh.path(), 1, params);
  const std::string retimed_at_1 =
      "SELECT COUNT(*) FROM trials t JOIN problems p ON p.id = t.problem_id WHERE p.batch = 1 "
      "AND t.stage = 'retime' AND t.fate = 'measured'";
  CHECK(count(oracle, retimed_at_1 + " AND t.params_json = '" + params +
                          "' AND t.reason LIKE 'the same launch as %: timed in full once, as "
                          "that config (timing protocol 2 in full, 3 interleaved round(s)%'") == 1);
  // Its timing is another config's full timing at that batch: the config it copies.
  CHECK(count(oracle, retimed_at_1 + " AND t.params_json <> '" + params +
                          "' AND t.median_us = (SELECT t2.median_us FROM trials t2 JOIN problems "
                          "p2 ON p2.id = t2.problem_id WHERE p2.batch = 1 AND t2.stage = 'retime' "
                          "AND t2.params_json = '" +
                          params + "')") >= 1);
}

TEST_CASE(
    "--shard 1/2 then 2/2 and tuner merge: disjoint slices, every survivor measured once, "
    "the winner decided by the merge") {
  const tuner::test::TempDir dir;
  const std::string tuner = "'" + tuner::test::kTunerBinary + "'";
  const std::string cache = " --cache-dir '" + (dir / "cache").string() + "' --batches 1";
  for (const char* shard : {"1", "2"}) {
    const tuner::test::CommandResult sweep = tuner::test::run_with_stderr(
        tuner + " sweep --db '" + (dir / (std::string("s") + shard + ".db")).string() + "'" +
        cache + " --shard " + shard + "/2");
    INFO(sweep.output);
    REQUIRE(sweep.exit_code == 0);
  }
  const fs::path s1 = dir / "s1.db", s2 = dir / "s2.db", merged = dir / "merged.db";
  CHECK(count(s1, "SELECT COUNT(*) FROM winners") == 0);  // a shard decides no winner
  CHECK(count(s2, "SELECT COUNT(*) FROM winners") == 0);
  const tuner::test::CommandResult merge = tuner::test::run_with_stderr(
      tuner + " merge '" + merged.string() + "' '" + s1.string() + "' '" + s2.string() + "'");
  INFO(merge.output);
  REQUIRE(merge.exit_code == 0);
  CHECK(count(s1, kMeasured) > 0);
  CHECK(count(s2, kMeasured) > 0);
  CHECK(count(s1, kMeasured) + count(s2, kMeasured) == count(merged, kMeasured));
  CHECK(lost(merged, 1) == 0);
  CHECK(count(merged,
              "SELECT COUNT(*) FROM (SELECT 1 FROM trials WHERE stage = 'measure' GROUP BY "
              "problem_id, params_json HAVING COUNT(*) > 1)") == 0);
  CHECK(count(merged, "SELECT COUNT(*) FROM winners WHERE batch = 1 AND reason LIKE 'merge: %'") ==
        1);
  CHECK(integrity_problems(merged) == 0);
}

TEST_CASE("--devices all: one worker per GPU of this host; the sweep finishes with a winner") {
  const tuner::test::TempDir dir;
  const tuner::test::CommandResult sweep = sweep_ok(dir.path(), "--batches 1 --devices all");
  CHECK(sweep.output.find(" x NVIDIA") != std::string::npos);
  CHECK(count(dir / "tuning.db", "SELECT COUNT(*) FROM winners WHERE batch = 1") == 1);
  CHECK(lost(dir / "tuning.db", 1) == 0);
}

TEST_CASE("--batches waves: the GPU's wave edges are tuned; a family without them is refused") {
  const tuner::test::TempDir dir;
  const tuner::test::CommandResult none = tuner::test::run_with_stderr(
      sweep_command(dir.path(), "--family fp8_gemm --batches waves --max-batch 512"));
  CHECK(none.exit_code == 2);
  // The message names the input, the GPU's family and the fix (tuner/sweep.cpp, run_sweep).
  CHECK_MESSAGE(
      none.output.find("--batches 'waves' / 'clusters' name no batch up to --max-batch "
                       "512 on this GPU for fp8_gemm: add batches or raise --max-batch") !=
          std::string::npos,
      none.output);
  // Up to the SM count, sparse MLA decode with 16 local heads has one edge: the SM count itself.
  const int sm_count = tuner::cuda::device_info(0).sm_count;
  const tuner::test::CommandResult sweep =
      sweep_ok(dir.path(), "--batches waves --max-batch " + std::to_string(sm_count));
  const std::string edges =
      "wave edges (" + std::to_string(sm_count) + " SMs): " + std::to_string(sm_count);
  CHECK_MESSAGE(sweep.output.find(edges) != std::string::npos, sweep.output);
  CHECK(count(dir / "tuning.db",
              "SELECT COUNT(*) FROM winners WHERE batch = " + std::to_string(sm_count)) == 1);
}
