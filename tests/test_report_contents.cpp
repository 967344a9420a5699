// What tuner report holds (tuner/report.hpp), built from real SQLite stores filled through the
// store's own API with hand-chosen trials and winners (tests/support/report_store.hpp): winners
// with their speedups and copy-bandwidth fractions, each dimension's best time per value, fate
// counts with their reasons, batch-search skips counted by rule, and a run rebuilt from its trials
// (the commands and plots: test_report_cli.cpp). No GPU.
#include "tuner/report.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "db/store/store.hpp"
#include "tests/support/report_store.hpp"
#include "tests/support/temp_dir.hpp"

using namespace tuner;
using db::Fate;
using db::Stage;
using namespace tuner::test::report_store;

namespace {

using tuner::test::TempDir;

const report::DimensionTable& dimension(const report::SeriesReport& series,
                                        const std::string& name) {
  for (const report::DimensionTable& table : series.dimensions) {
    if (table.name == name) return table;
  }
  throw std::runtime_error("no dimension " + name);
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

TEST_CASE("report: a value the shape ruled out counts every member it stands for") {
  TempDir dir;
  db::Store store = db::Store::open(dir / "tuning.db");
  const std::int64_t run = fill_run_one(store);
  db::TrialRecord narrowed =
      trial(run, store.problem_id(problem_at(std::nullopt)), "src-1", Stage::plan,
            R"({"block_h":64})", Fate::pruned_shape, "BLOCK_H 64 > 16 local heads");
  narrowed.members = 500;
  store.record_trial(narrowed);
  const report::Report built = report::build_report(store, {});
  CHECK(built.pruning.trials == 3 + 4 + 8 + 2 + 500);
  bool counted = false;
  for (const report::FateCount& count : built.pruning.fates) {
    if (count.stage == Stage::plan && count.fate == Fate::pruned_shape) {
      counted = count.count == 500;
    }
  }
  CHECK(counted);
  REQUIRE_FALSE(built.pruning.reasons.empty());
  CHECK(built.pruning.reasons[0].reason == "BLOCK_H 64 > 16 local heads");
  CHECK(built.pruning.reasons[0].count == 500);
  CHECK(report::render_markdown(built).find(
            "| plan | pruned_shape | BLOCK_H 64 > 16 local heads | 500 |") != std::string::npos);
}
