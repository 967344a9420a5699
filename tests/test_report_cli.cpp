// tuner diff, tuner report and scripts/plot_report.py run as programs on real SQLite stores filled
// through the store's own API with hand-chosen trials and winners
// (tests/support/report_store.hpp): a planted regression flagged (exit 1), an unknown run, a
// missing file or too few runs refused (exit 2), and non-empty PNGs beside report.md (what the
// report holds: test_report_contents.cpp). No GPU.
#include <doctest/doctest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "db/store/store.hpp"
#include "tests/support/report_store.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"
#include "tuner/report.hpp"

namespace fs = std::filesystem;
using namespace tuner;
using namespace tuner::test::report_store;

namespace {

using Command = tuner::test::CommandResult;
using tuner::test::kTunerBinary;
using tuner::test::run_with_stderr;
using tuner::test::TempDir;

bool is_png(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::array<unsigned char, 8> signature{};
  file.read(reinterpret_cast<char*>(signature.data()), signature.size());
  const std::array<unsigned char, 8> expected{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return file.gcount() == 8 && signature == expected && fs::file_size(path) > 1000;
}

}  // namespace

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
