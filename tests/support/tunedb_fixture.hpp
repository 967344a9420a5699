#pragma once
// The tunedb tests' fixture (test_tunedb_lookup.cpp, test_tunedb_freeze.cpp,
// test_tunedb_open.cpp): the winners of tests/support/fixture.hpp in a tuning store, its sm_120
// winners frozen with stand-in images of two kernels, the shape and a tuned config they answer,
// and helpers for checking error messages.
#include <exception>
#include <functional>
#include <string>

#include "db/tunedb/cubin_elf.hpp"
#include "db/tunedb/freeze.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/frozen_fixture.hpp"

namespace tuner::test::tunedb_fixture {

inline const std::string kShape = tuner::db::fixture::kShape;
inline const std::string kTuned128 =
    R"({"block_h":16,"block_t":64,"num_stages":3,"num_warps":4,"target_ctas":256})";

inline tunedb::CubinImage test_image(const tunedb::CubinRequest& request) {
  const std::string text = "image " + request.arch + " " + request.params_json;
  return {tunedb::stand_in_cubin(request.arch, text), {"_Z4splitv", "_Z7combinev"}};
}

// A store with the fixture winners, and its sm_120 winners frozen with test images.
struct Fixture : FrozenFixture {
  Fixture() : FrozenFixture(test_image) {}
};

// The message of what `body` throws; "(no exception)" when it returns.
inline std::string what_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "(no exception)";
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tuner::test::tunedb_fixture
