// The house's layers only look down: core/ includes nothing of ours outside core/; kernels/ only
// core/, kernels/ and templates/; db/ only db/; templates/ only templates/ (NVRTC include names);
// deploy/ (libtunedb_cuda) no tuner/ and no NVRTC. The one exception: a family's serving client
// header (kernels/<family>/client.h, installed for serving applications) wraps deploy's C API;
// no code of ours under kernels/ includes it.
// Reads the source tree (TUNER_SOURCE_DIR) as text.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr const char* kClientHeader = "client.h";

bool is_source(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".cpp" || ext == ".hpp" || ext == ".h" || ext == ".cuh" || ext == ".c";
}

// The X of every `#include "X"` line of `path`.
std::vector<std::string> includes_of(const fs::path& path) {
  std::vector<std::string> targets;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind("#include \"", 0) == 0) {
      targets.push_back(line.substr(10, line.find('"', 10) - 10));
    }
  }
  return targets;
}

// `#include "X"` lines of every C/C++/CUDA file under `folder` (but files named `skip`) whose X
// starts with none of `allowed`, as "file: X".
std::vector<std::string> upward_includes(const std::string& folder,
                                         const std::vector<std::string>& allowed,
                                         const std::string& skip = "",
                                         const fs::path& tree = TUNER_SOURCE_DIR) {
  std::vector<std::string> found;
  const fs::path root = tree / folder;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!is_source(entry.path()) || entry.path().filename() == skip) continue;
    for (const std::string& target : includes_of(entry.path())) {
      // A bare name of a file beside the includer stays in the includer's folder (NVRTC and the
      // host both resolve it there), so it never climbs a layer.
      bool ok =
          target.find('/') == std::string::npos && fs::exists(entry.path().parent_path() / target);
      for (const std::string& prefix : allowed) ok = ok || target.rfind(prefix, 0) == 0;
      if (!ok) found.push_back(entry.path().string() + ": " + target);
    }
  }
  return found;
}

}  // namespace

TEST_CASE("layers: no include runs from a lower layer to a higher one") {
  CHECK(upward_includes("core", {"core/"}).empty());
  CHECK(upward_includes("kernels", {"core/", "kernels/", "templates/"}, kClientHeader).empty());
  CHECK(upward_includes("db", {"db/"}).empty());
  CHECK(upward_includes("templates", {"common/", "fp8_gemm/", "sparse_mla_decode/"}).empty());
  // libtunedb_cuda (deploy/): the driver wrapper, tunedb, the families' deploy units and their
  // launch contracts (generated data) only; never the tuner, never NVRTC (scripts/test_install.sh
  // checks its NEEDED entries too).
  CHECK(
      upward_includes("deploy", {"core/deploy_family.hpp", "core/cuda_driver.hpp", "core/error.hpp",
                                 "core/launch_contract.hpp", "db/tunedb/", "deploy/", "kernels/"})
          .empty());
  // A family's client header looks up at the C API only, and nothing under kernels/ includes one
  // (serve_args.h is what the family's own code shares).
  const fs::path kernels = fs::path(TUNER_SOURCE_DIR) / "kernels";
  for (const auto& family : fs::directory_iterator(kernels)) {
    const fs::path client = family.path() / kClientHeader;
    if (!fs::exists(client)) continue;
    const std::string own = "kernels/" + family.path().filename().string() + "/";
    for (const std::string& target : includes_of(client)) {
      CHECK_MESSAGE((target == "deploy/tunedb_cuda.h" || target.rfind(own, 0) == 0), target);
    }
  }
  for (const auto& entry : fs::recursive_directory_iterator(kernels)) {
    if (!is_source(entry.path()) || entry.path().filename() == kClientHeader) continue;
    for (const std::string& target : includes_of(entry.path())) {
      CHECK_MESSAGE(!target.ends_with(std::string("/") + kClientHeader), entry.path().string());
    }
  }
  // The check can fail: tuner/ includes kernels/ and db/, which core/ may not.
  CHECK_FALSE(upward_includes("tuner", {"core/"}).empty());
}

TEST_CASE("layers: a bare include passes only when the file sits beside its includer") {
  const fs::path tree = fs::temp_directory_path() / "tuner_test_layers_tree";
  fs::remove_all(tree);
  fs::create_directories(tree / "templates" / "fam");
  std::ofstream(tree / "templates" / "fam" / "beside.h") << "#pragma once\n";
  std::ofstream(tree / "templates" / "fam" / "ok.h") << "#include \"beside.h\"\n";
  CHECK(upward_includes("templates", {"fam/"}, "", tree).empty());
  // A bare name with no such sibling, and a relative climb, are both reported.
  std::ofstream(tree / "templates" / "fam" / "bad.h") << "#include \"missing.h\"\n"
                                                      << "#include \"../core/error.hpp\"\n";
  CHECK(upward_includes("templates", {"fam/"}, "", tree).size() == 2);
  fs::remove_all(tree);
}
