// tunedb::ShapeHandle and the C tunedb_shape: a shape resolved once, then batch -> config in O(1).
// The expected answers come from the fixture's table (tests/support/fixture.hpp: sm_120 winners at
// batches 1, 8, 32, 128), written out here by hand, not from the one-call lookup.
#include <doctest/doctest.h>
#include <string>

#include "db/tunedb/cubin_elf.hpp"
#include "db/tunedb/shape_handle.hpp"
#include "db/tunedb/tunedb.h"
#include "db/tunedb/tunedb.hpp"
#include "tests/support/allocation_counter.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/frozen_fixture.hpp"

using tuner::test::allocations;

namespace {

using tunedb::How;
using tunedb::Miss;

const std::string kShape = tuner::db::fixture::kShape;
const std::string kDefault = tuner::db::fixture::kDefaultParams;
// The fixture's winners at 8 and 128 differ from each other and the default in these values.
struct Expected {
  std::int64_t block_t, num_stages, target_ctas;
};
constexpr Expected kTuned8{32, 2, 512};
constexpr Expected kTuned128{64, 3, 256};

bool is(const tunedb::Config* config, const Expected& expected) {
  return config != nullptr && config->value("block_t") == expected.block_t &&
         config->value("num_stages") == expected.num_stages &&
         config->value("target_ctas") == expected.target_ctas;
}

tunedb::CubinImage test_image(const tunedb::CubinRequest& request) {
  return {tunedb::stand_in_cubin(request.arch, "image " + request.params_json), {"_Z4splitv"}};
}

struct Fixture : tuner::test::FrozenFixture {
  Fixture() : FrozenFixture(test_image) {}
};

// The fixture's rule written out: the smallest tuned batch >= batch, else the largest.
int expected_tuned_batch(int batch) {
  for (const int tuned : {1, 8, 32, 128}) {
    if (tuned >= batch) return tuned;
  }
  return 128;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("shape handle: every batch 1..600 follows the exact / bucket rule") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  const tunedb::ShapeHandle handle =
      tunedb::resolve_shape(db, "sparse_mla_decode", "sm_120", kShape);
  CHECK(handle.largest_tuned_batch() == 128);
  CHECK(handle.tuned_batches() == std::vector<int>{1, 8, 32, 128});
  for (int batch = 1; batch <= 600; ++batch) {
    CAPTURE(batch);
    const tunedb::Lookup answer = handle.lookup(batch);
    const int tuned = expected_tuned_batch(batch);
    CHECK(answer.tuned_batch == tuned);
    CHECK(answer.how == (tuned == batch ? How::exact : How::bucket));
    CHECK(answer.miss == Miss::none);
    REQUIRE(answer.config != nullptr);
    REQUIRE(answer.cubin != nullptr);  // the frozen image travels with the answer
  }
  CHECK(is(handle.lookup(8).config, kTuned8));
  CHECK(handle.lookup(8).median_us == 20.5);
  CHECK(handle.lookup(20).default_kept);  // bucket -> 32, where the default was kept
  CHECK(handle.lookup(20).config->params_json == kDefault);
  // Above the largest tuned batch: its winner, and tuned_batch < batch says so.
  const tunedb::Lookup above = handle.lookup(100000);
  CHECK(above.how == How::bucket);
  CHECK(above.tuned_batch == 128);
  CHECK(is(above.config, kTuned128));
}

TEST_CASE("shape handle: batch 0 or negative is refused with a clear error") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  const tunedb::ShapeHandle handle =
      tunedb::resolve_shape(db, "sparse_mla_decode", "sm_120", kShape);
  for (const int batch : {0, -1, -512}) {
    CAPTURE(batch);
    try {
      handle.lookup(batch);
      FAIL("no error for batch ", batch);
    } catch (const tunedb::DbInputError& error) {
      CHECK(contains(error.what(), "batch " + std::to_string(batch) + " is not a batch size"));
      CHECK(contains(error.what(), "1 or more"));
    }
  }
  CHECK_THROWS_AS(tunedb::ShapeHandle().lookup(1), tunedb::DbInputError);
}

TEST_CASE("shape handle: untuned shapes and archs answer the default, flagged") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  const tunedb::ShapeHandle other_arch =
      tunedb::resolve_shape(db, "sparse_mla_decode", "sm_75", kShape);
  CHECK(other_arch.largest_tuned_batch() == 0);
  CHECK(other_arch.tuned_batches().empty());
  for (const int batch : {1, 37, 4096}) {
    const tunedb::Lookup answer = other_arch.lookup(batch);
    CHECK(answer.how == How::default_config);
    CHECK(answer.miss == Miss::arch_not_in_db);
    CHECK(answer.tuned_batch == 0);
    REQUIRE(answer.config != nullptr);
    CHECK(answer.config->params_json == kDefault);
  }
  const tunedb::ShapeHandle other_shape = tunedb::resolve_shape(
      db, "sparse_mla_decode", "sm_120", "kv_format=bf16,local_heads=16,page_size=64,topk=2048");
  CHECK(other_shape.lookup(8).miss == Miss::shape_not_tuned);
  const tunedb::ShapeHandle unknown = tunedb::resolve_shape(db, "no_such_family", "sm_120", kShape);
  CHECK(unknown.lookup(8).how == How::not_found);
  CHECK(unknown.lookup(8).config == nullptr);
  CHECK_THROWS_WITH_AS(tunedb::resolve_shape(db, "sparse_mla_decode", "sm_120", "topk=1,a=2"),
                       doctest::Contains("is not canonical"), tunedb::DbInputError);
}

TEST_CASE("shape handle: lookups allocate nothing") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  const tunedb::ShapeHandle handle =
      tunedb::resolve_shape(db, "sparse_mla_decode", "sm_120", kShape);
  const tunedb::ShapeHandle fallback =
      tunedb::resolve_shape(db, "sparse_mla_decode", "sm_75", kShape);
  long tuned_sum = 0;
  const long before = allocations.load();
  for (int batch = 1; batch <= 1000; ++batch) {
    tuned_sum += handle.lookup(batch).tuned_batch + fallback.lookup(batch).tuned_batch;
  }
  CHECK(allocations.load() == before);
  CHECK(tuned_sum > 0);
}

TEST_CASE("shape handle: the C API") {
  Fixture fixture;
  tunedb_handle* db = nullptr;
  REQUIRE(tunedb_open(fixture.frozen.c_str(), &db) == TUNEDB_OK);
  tunedb_shape* shape = nullptr;
  REQUIRE(tunedb_shape_open(db, "sparse_mla_decode", "sm_120", kShape.c_str(), &shape) ==
          TUNEDB_OK);
  CHECK(tunedb_shape_largest_tuned_batch(shape) == 128);
  tunedb_result result;
  REQUIRE(tunedb_shape_lookup(shape, 100, &result) == TUNEDB_OK);
  CHECK(result.how == TUNEDB_HOW_BUCKET);
  CHECK(result.tuned_batch == 128);
  CHECK(result.median_us == 110.2);
  REQUIRE(result.n_params == 5);
  CHECK(std::string(result.params[3].name) == "num_warps");
  CHECK(std::string(result.params[4].name) == "target_ctas");
  CHECK(result.params[4].value == 256);
  CHECK(std::string(result.params[1].name) == "block_t");
  CHECK(result.params[1].value == 64);
  CHECK(result.cubin != nullptr);
  REQUIRE(tunedb_shape_lookup(shape, 512, &result) == TUNEDB_OK);  // above the largest tuned
  CHECK(result.how == TUNEDB_HOW_BUCKET);
  CHECK(result.tuned_batch == 128);
  REQUIRE(tunedb_shape_lookup(shape, 8, &result) == TUNEDB_OK);
  CHECK(result.how == TUNEDB_HOW_EXACT);
  CHECK(std::string(result.params_json).find("\"target_ctas\":512") != std::string::npos);
  CHECK(result.tuned_batch == 8);

  CHECK(tunedb_shape_lookup(shape, 0, &result) == TUNEDB_ERROR_INPUT);
  CHECK(contains(tunedb_last_error(), "batch 0 is not a batch size"));
  CHECK(tunedb_shape_lookup(shape, -3, &result) == TUNEDB_ERROR_INPUT);
  CHECK(contains(tunedb_last_error(), "batch -3 is not a batch size"));
  CHECK(tunedb_shape_lookup(nullptr, 1, &result) == TUNEDB_ERROR_INPUT);
  CHECK(std::string(tunedb_last_error()) == "tunedb_shape_lookup: shape is NULL");

  tunedb_shape* bad = nullptr;
  CHECK(tunedb_shape_open(db, "sparse_mla_decode", "sm_120", "local_heads=016", &bad) ==
        TUNEDB_ERROR_INPUT);
  CHECK(bad == nullptr);
  CHECK(contains(tunedb_last_error(), "leading zero"));
  tunedb_shape_close(shape);
  tunedb_close(db);
}
