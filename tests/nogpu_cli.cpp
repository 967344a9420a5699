// The CLI on a machine without a GPU (the executable exits 77, "skipped", where a GPU is present):
// `tuner sweep` refuses with exit 3 and points to `tuner plan`, and the main-job script falls back
// to the sm_120 plan.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

using tuner::test::CommandResult;
using tuner::test::kTunerBinary;
using tuner::test::run_with_stderr;
using tuner::test::TempDir;

}  // namespace

TEST_CASE("tuner sweep without a GPU exits 3, says so, points to tuner plan and writes no DB") {
  const TempDir dir;
  const CommandResult outcome =
      run_with_stderr("'" + kTunerBinary + "' sweep --db '" + (dir / "tuning.db").string() + "'");
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.output.find("tuner sweep needs a GPU") != std::string::npos);
  CHECK(outcome.output.find("tuner plan") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "tuning.db"));
}

TEST_CASE("the main job without a GPU prints the sm_120 plan and says why") {
  const TempDir dir;
  const CommandResult outcome =
      run_with_stderr("cd '" + dir.path().string() + "' && XDG_CACHE_HOME='" + dir.path().string() +
                      "/cache' bash '" TUNER_SOURCE_DIR "/scripts/main_job.sh' '" +
                      TUNER_BINARY_DIR + "' '" + (dir / "tuning.db").string() + "'");
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.output.find("no GPU on this machine") != std::string::npos);
  CHECK(outcome.output.find("sm_120") != std::string::npos);
  CHECK(outcome.output.find("fates (1574640 configs)") != std::string::npos);
}
