#pragma once
// The real `tuner freeze` over a test's store (NVRTC compiles the winners' cubins), for the GPU
// tests of the serving launcher. TUNER_BINARY overrides the build tree's binary (a copied build on
// the GPU machine). Fails the test, pointing at DIR/freeze.log, when freeze exits non-zero.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tuner::test {

inline std::filesystem::path run_freeze(const std::filesystem::path& store,
                                        const std::filesystem::path& dir, const std::string& arch) {
  const std::filesystem::path frozen = dir / "frozen.db";
  const char* binary = std::getenv("TUNER_BINARY");
  const std::string tuner =
      binary != nullptr ? std::string(binary) : std::string(TUNER_BINARY_DIR) + "/tuner/tuner";
  const std::string command =
      tuner + " freeze --db " + store.string() + " --out " + frozen.string() + " --arch " + arch +
      " --cache-dir " + (dir / "cache").string() + " >" + (dir / "freeze.log").string() + " 2>&1";
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0,
                  "tuner freeze failed: see " << (dir / "freeze.log").string());
  return frozen;
}

}  // namespace tuner::test
