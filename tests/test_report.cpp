// tuner report / tuner diff and scripts/plot_report.py on real SQLite stores filled through the
// store's own API with hand-chosen trials and winners (no GPU).
#include "tuner/report.hpp"

#include <doctest/doctest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "db/store/store.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace tuner;
using db::Fate;
using db::Stage;

namespace {

using Command = tuner::test::CommandResult;
using tuner::test::kTunerBinary;
using tuner::test::run_with_stderr;
using tuner::test::TempDir;

const char* const kDevice = db::fixture::kDevice;  // what fixture_problem_winner times on
const std::string kShape = db::fixture::kShape;
constexpr double kCopyGbs = 4000.0;

// Four configs: block_t {16, 32} x num_warps {4, 8}; A is the family default.
const std::string kA = db::fixture::kDefaultParams;
const std::string kB =
    R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":512})";
const std::string kC =
    R"({"block_h":16,"block_t":16,"num_stages":2,"num_warps":8,"target_ctas":512})";
const std::string kD =
    R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":8,"target_ctas":512})";
const std::string kFaulty =
    R"({"block_h":16,"block_t":16,"num_stages":2,"num_warps":16,"target_ctas":512})";

db::ProblemKey problem_at(std::optional<int> batch) {
  return db::ProblemKey{"sparse_mla_decode", kShape, batch};
}

report::SeriesKey series_key() {
  return report::SeriesKey{"sparse_mla_decode", kShape, "sm_120", kDevice};
}

std::int64_t sweep_run(db::Store& store) {
  db::RunInfo run;
  run.host = "test-host";
  run.gpu_name = kDevice;
  run.measured_arch = "sm_90";
  run.budget_arch = "sm_120";
  run.tuner_version = "0.1.0";
  run.command_line = "tuner sweep --db test.db";
  run.kind = db::RunKind::sweep;
  run.copy_bandwidth_gbs = kCopyGbs;
  return store.begin_run(run);
}

db::TrialRecord trial(std::int64_t run_id, std::int64_t problem_id, const std::string& source,
                      Stage stage, const std::string& params, Fate fate,
                      const std::string& reason) {
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
void measured(db::Store& store, std::int64_t run_id, int batch, const std::string& source,
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

void winner(db::Store& store, std::int64_t run_id, int batch, const std::string& source,
            const std::string& params, double median_us, double default_us, std::int64_t bytes) {
  db::WinnerRecord w = db::fixture::fixture_problem_winner("sm_120", batch, params, median_us,
                                                           default_us, source, run_id);
  w.decision = params == kA ? db::Decision::default_kept : db::Decision::tuned;
  w.speedup_vs_default = params == kA ? 1.0 : default_us / median_us;
  w.noise_rel = 0.04;
  w.reason = params == kA ? "default kept" : "tuned";
  w.bytes_moved = bytes;
  store.record_winner(w);
}

constexpr std::int64_t kBytes1 = 8'000'000;
constexpr std::int64_t kBytes8 = 32'000'000;

// Run 1: plan fates, then batch 1: A 20, B 16, C 25, D 18; batch 8: A 40, B 36, C 30, D 45;
// a fault and a wrong result; winners B (batch 1) and C (batch 8).
std::int64_t fill_run_one(db::Store& store) {
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
std::int64_t fill_later_run(db::Store& store, const std::string& source,
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

const report::DimensionTable& dimension(const report::SeriesReport& series,
                                        const std::string& name) {
  for (const report::DimensionTable& table : series.dimensions) {
    if (table.name == name) return table;
  }
  throw std::runtime_error("no dimension " + name);
}

bool is_png(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::array<unsigned char, 8> signature{};
  file.read(reinterpret_cast<char*>(signature.data()), signature.size());
  const std::array<unsigned char, 8> expected{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return file.gcount() == 8 && signature == expected && fs::file_size(path) > 1000;
}

}  // namespace

TEST_CASE("report: winners, speedups and copy-bandwidth fractions are the stored ones") {
  TempDir dir;
  db::Store store = db::Store::open(dir / "tuning.db");
  const std::int64_t run = fill_run_one(store);
  const report::Report built = report::build_report(store, {});
  REQUIRE(built.series.size() == 1);
  const report::SeriesReport& series = built.series.front();
  CHECK(series.key == series_key());
  REQUIRE(series.results.size() == 2);
  const report::BatchResult& one = series.results[0];
  const report::BatchResult& eight = series.results[1];
  CHECK(one.batch == 1);
  CHECK(one.params_json == kB);
  CHECK(one.median_us == doctest::Approx(16.0));
  CHECK(*one.default_median_us == doctest::Approx(20.0));
  CHECK(*one.speedup_vs_default == doctest::Approx(1.25));
  CHECK(one.run_id == run);
  // 8e6 B in 16 us = 500 GB/s = 12.5 % of 4000 GB/s.
  CHECK(*one.achieved_gbs == doctest::Approx(500.0));
  CHECK(*one.copy_bandwidth_fraction == doctest::Approx(0.125));
  CHECK(eight.batch == 8);
  CHECK(eight.params_json == kC);
  CHECK(*eight.speedup_vs_default == doctest::Approx(40.0 / 30.0));
  CHECK(*eight.copy_bandwidth_fraction == doctest::Approx(32e6 / 30e3 / kCopyGbs));
  const std::string md = report::render_markdown(built);
  CHECK(md.find("| 1 | `bh16 bt32 ns2 nw4 tc512` | 16.00 | 20.00 | 1.25x | tuned |") !=
        std::string::npos);
  CHECK(md.find("12.5%") != std::string::npos);
}

TEST_CASE("report: each dimension's best time per value relative to the best, per batch") {
  TempDir dir;
  db::Store store = db::Store::open(dir / "tuning.db");
  const std::int64_t run = fill_run_one(store);
  report::ReportScope scope;
  scope.run_id = run;
  const report::Report built = report::build_report(store, scope);
  REQUIRE(built.series.size() == 1);
  const report::SeriesReport& series = built.series.front();
  REQUIRE(series.batches == std::vector<int>{1, 8});
  CHECK(series.best_us[0] == doctest::Approx(16.0));
  CHECK(series.best_us[1] == doctest::Approx(30.0));
  CHECK(series.measured_configs == std::vector<int>{4, 4});  // the fault is not a measurement
  const report::DimensionTable& warps = dimension(series, "num_warps");
  REQUIRE(warps.values == std::vector<int>{4, 8});       // 16 only faulted: not in the table
  CHECK(*warps.relative[0][0] == doctest::Approx(1.0));  // batch 1, 4 warps: B 16
  CHECK(*warps.relative[0][1] == doctest::Approx(18.0 / 16.0));  // batch 1, 8 warps: D 18
  CHECK(*warps.relative[1][0] == doctest::Approx(36.0 / 30.0));  // batch 8, 4 warps: B 36
  CHECK(*warps.relative[1][1] == doctest::Approx(1.0));          // batch 8, 8 warps: C 30
  const report::DimensionTable& block_t = dimension(series, "block_t");
  REQUIRE(block_t.values == std::vector<int>{16, 32});
  CHECK(*block_t.relative[0][0] == doctest::Approx(20.0 / 16.0));
  CHECK(*block_t.relative[0][1] == doctest::Approx(1.0));
  CHECK(*block_t.relative[1][0] == doctest::Approx(1.0));
  CHECK(*block_t.relative[1][1] == doctest::Approx(36.0 / 30.0));
  const report::DimensionTable& stages = dimension(series, "num_stages");
  CHECK(stages.values == std::vector<int>{2});
  CHECK(*stages.relative[1][0] == doctest::Approx(1.0));
  const std::string md = report::render_markdown(built);
  CHECK(md.find("| batch | best µs | configs | num_warps=4 | num_warps=8 |") != std::string::npos);
  CHECK(md.find("| 8 | 30.00 | 4 | 1.20 | 1.00 |") != std::string::npos);
  CHECK(report::render_summary(built).find("num_warps: best at 4 -> 1/2, 8 -> 1/2 batches") !=
        std::string::npos);
}

TEST_CASE("report: fate counts and each distinct reason with its count") {
  TempDir dir;
  db::Store store = db::Store::open(dir / "tuning.db");
  fill_run_one(store);
  const report::Report built = report::build_report(store, {});
  const report::PruningSummary& pruning = built.pruning;
  CHECK(pruning.trials == 3 + 4 + 8 + 2);
  const auto fate_count = [&](Stage stage, Fate fate) {
    for (const report::FateCount& count : pruning.fates) {
      if (count.stage == stage && count.fate == fate) return count.count;
    }
    return std::int64_t{0};
  };
  CHECK(fate_count(Stage::plan, Fate::pruned_budget) == 3);
  CHECK(fate_count(Stage::plan, Fate::survivor) == 4);
  CHECK(fate_count(Stage::measure, Fate::measured) == 8);
  CHECK(fate_count(Stage::measure, Fate::fault) == 1);
  CHECK(fate_count(Stage::measure, Fate::wrong_result) == 1);
  CHECK(fate_count(Stage::plan, Fate::pruned_shape) == 0);
  REQUIRE(pruning.reasons.size() == 6);
  CHECK(pruning.reasons[0].reason == "smem 120 KB > 99 KB");  // most frequent first
  CHECK(pruning.reasons[0].count == 2);
  CHECK(pruning.reasons[1].reason == "regs 300 > 255");
  CHECK(pruning.reasons[1].count == 1);
  const std::string md = report::render_markdown(built);
  CHECK(md.find("| plan | pruned_budget | smem 120 KB > 99 KB | 2 |") != std::string::npos);
  CHECK(md.find("| measure | fault | CUDA_ERROR_ILLEGAL_ADDRESS | 1 |") != std::string::npos);
}

TEST_CASE("report: batch-search skips are counted by rule, not one row per config") {
  TempDir dir;
  db::Store store = db::Store::open(dir / "tuning.db");
  const std::int64_t run = fill_run_one(store);
  const std::string rule =
      "; kept: within 5% of a neighbouring anchor's best (their winners agree)";
  const auto skip = [&](int batch, const std::string& params, const std::string& why) {
    store.record_trial(
        trial(run, store.problem_id(problem_at(batch)), "src-1", Stage::measure, params,
              Fate::skipped_by_search,
              "skipped by the batch search at batch " + std::to_string(batch) + ": " + why));
  };
  skip(2, kC, "+25.0% vs the best at anchor 1 (rank 4)" + rule);
  skip(4, kA, "+12.5% vs the best at anchor 8 (rank 3)" + rule);
  skip(4, kFaulty, "it failed at batch 1 in this sweep");
  const std::string md = report::render_markdown(report::build_report(store, {}));
  CHECK(md.find("| measure | skipped_by_search | 3 |") != std::string::npos);
  CHECK(md.find("| measure | skipped_by_search | not within the search margin" + rule + " | 2 |") !=
        std::string::npos);
  CHECK(
      md.find("| measure | skipped_by_search | it failed at an earlier batch of the sweep | 1 |") !=
      std::string::npos);
  CHECK(md.find("rank 4") == std::string::npos);  // the per-config numbers stay in the DB
}

TEST_CASE(
    "report: a run whose winners were replaced is rebuilt from its trials, and the latest trials "
    "win") {
  TempDir dir;
  db::Store store = db::Store::open(dir / "tuning.db");
  const std::int64_t first = fill_run_one(store);
  fill_later_run(store, "src-2", {40.0, 36.0, 45.0, 45.0});  // batch 8: C regressed, B wins
  const std::vector<report::BatchResult> rebuilt = report::run_results(store, first);
  REQUIRE(rebuilt.size() == 2);
  CHECK_FALSE(rebuilt[1].from_winner_row);
  CHECK(rebuilt[1].params_json == kC);
  CHECK(rebuilt[1].median_us == doctest::Approx(30.0));
  CHECK(*rebuilt[1].decision == db::Decision::tuned);
  CHECK(*rebuilt[1].speedup_vs_default == doctest::Approx(40.0 / 30.0));
  // The whole DB: each config's latest measurement (run 2's) is the one compared.
  const report::Report all = report::build_report(store, {});
  const report::SeriesReport& series = all.series.front();
  CHECK(series.best_us[1] == doctest::Approx(36.0));
  CHECK(*dimension(series, "num_warps").relative[1][1] == doctest::Approx(45.0 / 36.0));
  CHECK(series.results[1].params_json == kB);
  report::ReportScope missing;
  missing.run_id = 99;
  CHECK_THROWS_WITH_AS(report::build_report(store, missing),
                       doctest::Contains("run 99 is not in tuning DB"), tuner::InputError);
}

TEST_CASE("diff: flags a planted regression (exit 1) and passes an unchanged run (exit 0)") {
  TempDir dir;
  const fs::path db_path = dir / "tuning.db";
  {
    db::Store store = db::Store::open(db_path);
    fill_run_one(store);                                       // run 1
    fill_later_run(store, "src-2", {40.0, 36.0, 30.0, 45.0});  // run 2: as run 1
    fill_later_run(store, "src-3", {40.0, 36.0, 45.0, 45.0});  // run 3: batch 8 36 us, +20 %
  }
  const std::string diff = kTunerBinary + " diff --db " + db_path.string();
  const Command unchanged = run_with_stderr(diff + " --runs 1,2");
  CHECK(unchanged.exit_code == 0);
  CHECK(unchanged.output.find("unchanged (within noise)") != std::string::npos);
  CHECK(unchanged.output.find("SLOWER") == std::string::npos);
  const Command regressed = run_with_stderr(diff);  // the last two sweeps: 2 -> 3
  INFO(regressed.output);
  CHECK(regressed.exit_code == 1);
  CHECK(regressed.output.find("run 2 of") != std::string::npos);
  CHECK(regressed.output.find("+20.0%") != std::string::npos);
  CHECK(regressed.output.find("SLOWER (regression); winner changed") != std::string::npos);
  CHECK(regressed.output.find("1 of 2 batches slower") != std::string::npos);
  // A threshold above the change: slower beyond the noise, but no alert.
  CHECK(run_with_stderr(diff + " --threshold 25%").exit_code == 0);
}

TEST_CASE("diff and report: unknown run, missing file, too few runs -> a clear message, exit 2") {
  TempDir dir;
  const fs::path db_path = dir / "tuning.db";
  {
    db::Store store = db::Store::open(db_path);
    fill_run_one(store);
  }
  const Command unknown =
      run_with_stderr(kTunerBinary + " diff --db " + db_path.string() + " --runs 1,7");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.output.find("run 7 is not in tuning DB") != std::string::npos);
  const Command one_run = run_with_stderr(kTunerBinary + " diff --db " + db_path.string());
  CHECK(one_run.exit_code == 2);
  CHECK(one_run.output.find("holds 1 sweep run(s); diff needs two") != std::string::npos);
  const Command missing =
      run_with_stderr(kTunerBinary + " report --db " + (dir / "nope.db").string() + " --out " +
                      (dir / "out").string());
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("nope.db: no such file") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "nope.db"));
  const Command bad_run = run_with_stderr(kTunerBinary + " report --db " + db_path.string() +
                                          " --run 5 --out " + (dir / "out").string());
  CHECK(bad_run.exit_code == 2);
  CHECK(bad_run.output.find("run 5 is not in tuning DB") != std::string::npos);
  const Command bad_threshold =
      run_with_stderr(kTunerBinary + " diff --db " + db_path.string() + " --threshold lots");
  CHECK(bad_threshold.exit_code == 2);
  CHECK(bad_threshold.output.find("--threshold 'lots'") != std::string::npos);
}

TEST_CASE("plots: the script and tuner report write non-empty PNGs beside report.md") {
  TempDir dir;
  const fs::path db_path = dir / "tuning.db";
  {
    db::Store store = db::Store::open(db_path);
    fill_run_one(store);
  }
  const std::string slug = report::series_slug(series_key());
  const Command script =
      run_with_stderr("python3 " + std::string(TUNER_SOURCE_DIR) + "/scripts/plot_report.py --db " +
                      db_path.string() + " --out " + (dir / "plots").string());
  INFO(script.output);
  REQUIRE(script.exit_code == 0);
  CHECK(is_png(dir / "plots" / ("time_vs_batch_" + slug + ".png")));
  CHECK(is_png(dir / "plots" / ("heatmap_" + slug + ".png")));

  const Command cli = run_with_stderr(kTunerBinary + " report --db " + db_path.string() +
                                      " --out " + (dir / "report").string());
  INFO(cli.output);
  CHECK(cli.exit_code == 0);
  CHECK(cli.output.find("wrote ") != std::string::npos);
  std::ifstream markdown(dir / "report" / "report.md");
  const std::string md((std::istreambuf_iterator<char>(markdown)),
                       std::istreambuf_iterator<char>());
  CHECK(md.find("](time_vs_batch_" + slug + ".png)") != std::string::npos);
  CHECK(is_png(dir / "report" / ("time_vs_batch_" + slug + ".png")));
  CHECK(is_png(dir / "report" / ("heatmap_" + slug + ".png")));

  // Without python3 on PATH: a clear warning, report.md still written, exit 0.
  const Command no_python =
      run_with_stderr("PATH=" + (dir / "empty").string() + " " + kTunerBinary + " report --db " +
                      db_path.string() + " --out " + (dir / "no_python").string());
  CHECK(no_python.exit_code == 0);
  CHECK(no_python.output.find("warning: no plots: python3 was not found on PATH") !=
        std::string::npos);
  CHECK(fs::file_size(dir / "no_python" / "report.md") > 0);
  CHECK_FALSE(fs::exists(dir / "no_python" / ("heatmap_" + slug + ".png")));
}
