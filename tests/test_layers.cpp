// The house's layers only look down: core/ includes nothing of ours outside core/; kernels/ only
// core/, kernels/ and templates/; db/ only db/; templates/ only templates/ (NVRTC include names);
// deploy/ (libtunedb_cuda) no tuner/ and no NVRTC.
// Reads the source tree (TUNER_SOURCE_DIR) as text.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// `#include "X"` lines of every C/C++/CUDA file under `folder` whose X starts with none of
// `allowed`, as "file: X".
std::vector<std::string> upward_includes(const std::string& folder,
                                         const std::vector<std::string>& allowed) {
  std::vector<std::string> found;
  const fs::path root = fs::path(TUNER_SOURCE_DIR) / folder;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".cuh" && ext != ".c") continue;
    std::ifstream file(entry.path());
    std::string line;
    while (std::getline(file, line)) {
      if (line.rfind("#include \"", 0) != 0) continue;
      const std::string target = line.substr(10, line.find('"', 10) - 10);
      bool ok = false;
      for (const std::string& prefix : allowed) ok = ok || target.rfind(prefix, 0) == 0;
      if (!ok) found.push_back(entry.path().string() + ": " + target);
    }
  }
  return found;
}

}  // namespace

TEST_CASE("layers: no include runs from a lower layer to a higher one") {
  CHECK(upward_includes("core", {"core/"}).empty());
  CHECK(upward_includes("kernels", {"core/", "kernels/", "templates/"}).empty());
  CHECK(upward_includes("db", {"db/"}).empty());
  CHECK(upward_includes("templates", {"common/", "fp8_gemm/", "sparse_mla_decode/"}).empty());
  // libtunedb_cuda (deploy/): the driver wrapper, tunedb and the families' deploy units only;
  // never the tuner, never NVRTC (scripts/test_install.sh checks its NEEDED entries too).
  CHECK(upward_includes("deploy", {"core/deploy_family.hpp", "core/cuda_driver.hpp",
                                   "core/error.hpp", "db/tunedb/", "deploy/", "kernels/"})
            .empty());
  // The check can fail: tuner/ includes kernels/ and db/, which core/ may not.
  CHECK_FALSE(upward_includes("tuner", {"core/"}).empty());
}
