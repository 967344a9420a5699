// The main of tests that check the no-GPU paths: where a GPU is present they exit 77 (CTest:
// skipped) with the reason printed, since there the same commands take their GPU paths.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include "core/cuda_driver.hpp"

int main(int argc, char** argv) {
  if (tuner::cuda::gpu_available()) {
    const std::string name = std::filesystem::path(argv[0]).filename().string();
    std::printf("SKIPPED: %s checks the no-GPU paths, and this machine has a GPU\n", name.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
