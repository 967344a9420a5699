// Tests that cannot pass by not running (issue 11): on a machine without a GPU (the executable
// exits 77, "skipped", where a GPU is present), a GPU test skips with exit 77, and fails with
// exit 1 under TUNER_REQUIRE_GPU=1.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/run_command.hpp"

namespace {

const std::string kGpuTest = TUNER_BINARY_DIR "/tests/gpu_cuda_driver";

}  // namespace

TEST_CASE("a GPU test without a GPU skips (77), and fails (1) under TUNER_REQUIRE_GPU=1") {
  const tuner::test::CommandResult skipped =
      tuner::test::run_with_stderr("env -u TUNER_REQUIRE_GPU '" + kGpuTest + "'");
  CHECK(skipped.exit_code == 77);
  CHECK(skipped.output.rfind("SKIPPED: gpu_cuda_driver: no GPU on this machine (", 0) == 0);
  const tuner::test::CommandResult required =
      tuner::test::run_with_stderr("TUNER_REQUIRE_GPU=1 '" + kGpuTest + "'");
  CHECK(required.exit_code == 1);
  CHECK(required.output.rfind("FAILED: gpu_cuda_driver: no GPU on this machine (", 0) == 0);
  CHECK(required.output.find("TUNER_REQUIRE_GPU=1 says there must be one") != std::string::npos);
}
