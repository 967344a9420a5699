// `tuner plan --db`: every fate recorded in the tuning store, run after run.
#include <doctest/doctest.h>
#include <sqlite3.h>
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

TEST_CASE("tuner plan --db records one plan-stage trial per member of the cross product") {
  const fs::path dir = fresh_dir("tuner_cli_plan_db");
  const fs::path db = dir / "plan.db";
  const std::string command = "'" + kTuner + "' plan --arch sm_120 --format csv --cache-dir '" +
                              (dir / "cache").string() + "' --db '" + db.string() + "'";
  const Outcome first = run(command);
  REQUIRE(first.exit_code == 0);
  CHECK(first.output.find("recorded 432 fates as plan run 1") != std::string::npos);
  CHECK(count(db, "SELECT COUNT(*) FROM trials WHERE stage = 'plan'") == 432);
  CHECK(count(db, "SELECT COUNT(*) FROM trials WHERE fate = 'pruned_shape'") == 288);
  CHECK(count(db,
              "SELECT COUNT(*) FROM runs WHERE kind = 'plan' AND budget_arch = 'sm_120' "
              "AND gpu_name IS NULL AND ended_at IS NOT NULL") == 1);
  // A second plan run records its fates again, under its own run.
  REQUIRE(run(command).exit_code == 0);
  CHECK(count(db, "SELECT COUNT(*) FROM trials WHERE stage = 'plan'") == 864);
  CHECK(count(db, "SELECT COUNT(DISTINCT run_id) FROM trials") == 2);
  fs::remove_all(dir);
}
