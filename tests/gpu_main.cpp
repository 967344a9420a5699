// The main of every GPU test executable: without a GPU it says why and exits 77, which CTest
// reports as "skipped" (SKIP_RETURN_CODE), so that a machine with no GPU never reports a pass.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "core/cuda_driver.hpp"

int main(int argc, char** argv) {
  std::string why_not;
  if (!tuner::cuda::gpu_available(&why_not)) {
    const std::string executable =
        argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "gpu test";
    const std::string message = "SKIPPED: " + executable + ": no GPU on this machine (" + why_not +
                                "); run it on a machine with an NVIDIA GPU\n";
    std::fputs(message.c_str(), stdout);
    std::fputs(message.c_str(), stderr);
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
