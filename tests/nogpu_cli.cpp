// The CLI on a machine without a GPU (the executable exits 77, "skipped", where a GPU is present):
// `tuner sweep` refuses with exit 3 and points to `tuner plan`, and the main-job script falls back
// to the sm_120 plan.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

Outcome run(const std::string& command) {
  Outcome outcome;
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) outcome.output += buffer.data();
  const int status = ::pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

const std::string kTuner = TUNER_BINARY_DIR "/tuner/tuner";

}  // namespace

TEST_CASE("tuner sweep without a GPU exits 3, says so, points to tuner plan and writes no DB") {
  const fs::path dir = fresh_dir("tuner_cli_sweep");
  const Outcome outcome = run("'" + kTuner + "' sweep --db '" + (dir / "tuning.db").string() + "'");
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.output.find("tuner sweep needs a GPU") != std::string::npos);
  CHECK(outcome.output.find("tuner plan") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "tuning.db"));
  fs::remove_all(dir);
}

TEST_CASE("the main job without a GPU prints the sm_120 plan and says why") {
  const fs::path dir = fresh_dir("tuner_main_job");
  const Outcome outcome = run("cd '" + dir.string() + "' && XDG_CACHE_HOME='" + dir.string() +
                              "/cache' bash '" TUNER_SOURCE_DIR "/scripts/main_job.sh' '" +
                              TUNER_BINARY_DIR + "' '" + (dir / "tuning.db").string() + "'");
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.output.find("no GPU on this machine") != std::string::npos);
  CHECK(outcome.output.find("sm_120") != std::string::npos);
  CHECK(outcome.output.find("fates (432 configs)") != std::string::npos);
  fs::remove_all(dir);
}
