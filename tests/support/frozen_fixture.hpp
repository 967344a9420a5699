#pragma once
// A tuning store with the fixture winners (tests/support/fixture.hpp) and its sm_120 winners frozen
// with stand-in cubins from `provider`, in a fresh temporary directory; file helpers for tests
// that damage copies of it.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "db/store/store.hpp"
#include "db/tunedb/freeze.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/temp_dir.hpp"

namespace tuner::test {

struct FrozenFixture {
  TempDir dir;
  std::filesystem::path store = dir / "store.db";
  std::filesystem::path frozen = dir / "frozen.db";
  tunedb::FreezeSummary summary;

  explicit FrozenFixture(const tunedb::CubinProvider& provider) {
    tuner::db::Store opened = tuner::db::Store::open(store);
    tuner::db::fixture::write_fixture_winners(opened);
    tunedb::FreezeOptions options;
    options.budget_arch = "sm_120";
    summary = tunedb::freeze(store, frozen, options, provider);
  }
};

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace tuner::test
