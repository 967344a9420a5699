// The main of every GPU test executable: without a GPU it says why and exits 77, which CTest
// reports as "skipped" (SKIP_RETURN_CODE), so that a machine with no GPU never reports a pass.
// With TUNER_REQUIRE_GPU=1 (set it on GPU machines) the same finding is a failure (exit 1): a GPU
// machine whose driver does not answer must not pass its GPU tests by skipping them.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/cuda_driver.hpp"

int main(int argc, char** argv) {
  std::string why_not;
  if (!tuner::cuda::gpu_available(&why_not)) {
    const std::string executable =
        argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "gpu test";
    const char* require = std::getenv("TUNER_REQUIRE_GPU");
    const bool required = require != nullptr && std::string(require) == "1";
    const std::string message =
        (required ? "FAILED: " : "SKIPPED: ") + executable + ": no GPU on this machine (" +
        why_not + ")" +
        (required ? ", and TUNER_REQUIRE_GPU=1 says there must be one: check the driver "
                    "(nvidia-smi) and CUDA_VISIBLE_DEVICES\n"
                  : "; run it on a machine with an NVIDIA GPU\n");
    std::fputs(message.c_str(), stdout);
    std::fputs(message.c_str(), stderr);
    return required ? 1 : 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
