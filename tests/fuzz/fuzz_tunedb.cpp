// libFuzzer target (clang, ASan + UBSan): every input is written to a file and opened the ways a
// deployment opens a tuning file: TuningDb::open + lookups, the C API, and verify. The only
// acceptable failures are tunedb's own errors; open and verify must agree on every frozen file.
// Seeds: the fixture's store.db and frozen.db (tunedb_make_fixture, tests/support/make_fixture.cpp;
// CTest writes them to build/tests/test_fixture). Built by tests/CMakeLists.txt when clang and
// libFuzzer are present; the CTest smoke run is fuzz_tunedb_smoke.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "db/tunedb/freeze.hpp"
#include "db/tunedb/tunedb.h"
#include "db/tunedb/tunedb.hpp"

namespace {

// One scratch file per fuzzing process, removed after each input.
const std::filesystem::path& input_path() {
  static const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                            ("fuzz_tunedb_" + std::to_string(::getpid()) + ".db");
  return path;
}

void lookups(const tunedb::TuningDb& db) {
  const char* const shapes[] = {"kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048",
                                "kv_format=bf16,local_heads=16,page_size=1,topk=512"};
  for (const std::string& arch : db.info().budget_arches) {
    for (const char* shape : shapes) {
      for (int batch : {0, 1, 8, 37, 4096}) {
        const tunedb::Lookup found = db.lookup("sparse_mla_decode", arch, shape, batch);
        if (found.cubin != nullptr && found.cubin->bytes.empty()) std::abort();
      }
    }
  }
}

// Returns the error text, or "" when `body` succeeded.
template <typename Body>
std::string error_of(Body body) {
  try {
    body();
  } catch (const tunedb::DbInputError& error) {
    return std::string("input: ") + error.what();
  } catch (const tunedb::DbError& error) {
    return std::string("db: ") + error.what();
  }
  return {};
}

void c_api(const std::filesystem::path& path) {
  tunedb_handle* handle = nullptr;
  if (tunedb_open(path.c_str(), &handle) != TUNEDB_OK) return;
  tunedb_result result;
  tunedb_lookup(handle, "sparse_mla_decode", "sm_120",
                "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048", 8, &result);
  tunedb_close(handle);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path& path = input_path();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  bool frozen = false;
  const std::string opened = error_of([&] {
    const tunedb::TuningDb db = tunedb::TuningDb::open(path);
    frozen = db.info().frozen;
    lookups(db);
  });
  const std::string verified = error_of([&] { tunedb::verify(path); });
  // Agreement: a frozen file that opens verifies, and a file that verifies opens.
  if ((opened.empty() && frozen && !verified.empty()) || (verified.empty() && !opened.empty())) {
    std::fprintf(stderr, "open and verify disagree:\n  open: %s\n  verify: %s\n",
                 opened.empty() ? "ok" : opened.c_str(),
                 verified.empty() ? "ok" : verified.c_str());
    std::abort();
  }
  c_api(path);
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  return 0;
}
