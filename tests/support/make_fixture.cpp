// tunedb_make_fixture OUT_DIR: writes OUT_DIR/store.db (the winners of tests/support/fixture.hpp)
// and OUT_DIR/frozen.db (its sm_120 winners, frozen with small marked cubin images). Test data: it
// lives in tests/ because it names a kernel family, which db/ must not.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "db/tunedb/cubin_elf.hpp"
#include "db/tunedb/freeze.hpp"
#include "tests/support/fixture.hpp"

namespace {

// Test images: a CUDA ELF header for the arch (tunedb checks it), then bytes that name what they
// stand for, so a reader can check it got the right one.
tunedb::CubinImage fixture_image(const tunedb::CubinRequest& request) {
  const std::string text = "fixture cubin " + request.arch + " " + request.params_json;
  const std::string family(tuner::db::fixture::kFamily);
  // The fixture family's name as a mangled `void NAME()`.
  return {tunedb::stand_in_cubin(request.arch, text),
          {"_Z" + std::to_string(family.size()) + family + "v"}};
}

void remove_db(const std::filesystem::path& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::remove(path.string() + suffix);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tunedb_make_fixture OUT_DIR\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    remove_db(dir / "store.db");
    remove_db(dir / "frozen.db");
    {
      tuner::db::Store store = tuner::db::Store::open(dir / "store.db");
      tuner::db::fixture::write_fixture_winners(store);
    }
    tunedb::FreezeOptions options;
    options.budget_arch = "sm_120";
    const tunedb::FreezeSummary summary =
        tunedb::freeze(dir / "store.db", dir / "frozen.db", options, fixture_image);
    std::printf("wrote %s (%zu winners, %zu cubins, %s)\n", summary.path.c_str(), summary.winners,
                summary.cubins, summary.checksum.c_str());
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "tunedb_make_fixture: error: %s\n", error.what());
    return 1;
  }
}
