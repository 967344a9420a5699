// The families' launch contracts (core/launch_contract.hpp): the generated values against a
// recomputation in C++ from the source tree by the documented rule (cmake/LaunchContracts.cmake
// globs and hashes in CMake; this test lists the files with std::filesystem and hashes with
// OpenSSL, so the two share no code), and the serving launcher's refusal text
// (deploy/launch_contract_check.hpp). That Launcher::open refuses such a cubin needs a GPU
// (tests/gpu_tunedb_cuda.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/hash.hpp"
#include "core/launch_contract.hpp"
#include "deploy/launch_contract_check.hpp"
#include "kernels/registry.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = TUNER_SOURCE_DIR;

// The rule: templates/<family>/*.h, kernels/<family>/deploy.* and kernels/<family>/serve*.
std::vector<std::string> contract_files(const std::string& family) {
  std::vector<std::string> files;
  const auto add = [&](const fs::path& dir, const auto& wanted) {
    for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && wanted(name)) {
        files.push_back(fs::relative(entry.path(), kRoot).string());
      }
    }
  };
  add(kRoot / "templates" / family, [](const std::string& name) { return name.ends_with(".h"); });
  add(kRoot / "kernels" / family, [](const std::string& name) {
    return name.starts_with("deploy.") || name.starts_with("serve");
  });
  std::sort(files.begin(), files.end());
  return files;
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string recomputed_contract(const std::vector<std::string>& files) {
  std::string lines;
  for (const std::string& file : files) {
    lines += file + "\n" + tuner::sha256_hex(text_of(kRoot / file)) + "\n";
  }
  return "sha256:" + tuner::sha256_hex(lines);
}

}  // namespace

TEST_CASE(
    "each served family's launch contract is the hash of its parameter blocks and launch "
    "code as they are in the source tree") {
  std::vector<std::string> contracts;
  for (const tuner::Family* family : tuner::families()) {
    CAPTURE(family->name);
    const std::string_view contract = tuner::launch_contract(family->name);
    if (!fs::exists(kRoot / "kernels" / family->name / "serve.cpp")) {
      CHECK(contract.empty());  // no serving launcher: nothing to agree with
      continue;
    }
    const std::vector<std::string> files = contract_files(family->name);
    // The rule covers the parameter block the host packs and the code that packs it.
    CHECK(std::find(files.begin(), files.end(), "templates/" + family->name + "/params.h") !=
          files.end());
    CHECK(std::find(files.begin(), files.end(), "kernels/" + family->name + "/deploy.cpp") !=
          files.end());
    // Stale after an edit when the build did not regenerate it (the custom command's inputs).
    CHECK(contract == recomputed_contract(files));
    contracts.emplace_back(contract);
  }
  CHECK(contracts.size() == 2);
  CHECK(contracts.front() != contracts.back());
  CHECK(tuner::launch_contract("no_such_family").empty());
}

TEST_CASE(
    "the launcher refuses a cubin frozen under another launch contract, naming both and the "
    "fix") {
  using tunedb::cuda::launch_contract_problem;
  CHECK_FALSE(launch_contract_problem("cubin X", "sha256:aa", "sha256:aa").has_value());
  const auto other = launch_contract_problem("cubin X", "sha256:aa", "sha256:bb");
  REQUIRE(other.has_value());
  CHECK(
      other->starts_with("cubin X was frozen under launch contract sha256:aa, but this "
                         "libtunedb_cuda launches contract sha256:bb"));
  CHECK(other->find("freeze the store again with the tuner of this library's build") !=
        std::string::npos);
  const auto none = launch_contract_problem("cubin X", "", "sha256:bb");
  REQUIRE(none.has_value());
  CHECK(
      none->starts_with("cubin X was frozen with no launch contract, but this libtunedb_cuda "
                        "launches contract sha256:bb"));
}
