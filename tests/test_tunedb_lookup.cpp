// tunedb (db/tunedb) lookups through the C++ and C APIs: exact, bucket and above-largest answers,
// flagged fallbacks for untuned shapes, families and archs, lookups without exceptions or
// allocations across threads, a tuning store looked up directly, and the params JSON an answer
// carries. Real SQLite files in a fresh temporary directory per case; winners:
// tests/support/fixture.hpp (freezing: test_tunedb_freeze.cpp; opening: test_tunedb_open.cpp).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "db/tunedb/params.hpp"
#include "db/tunedb/shape.hpp"
#include "db/tunedb/tunedb.h"
#include "db/tunedb/tunedb.hpp"
#include "tests/support/allocation_counter.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/tunedb_fixture.hpp"

using tuner::test::allocations;

using tunedb::How;
using tunedb::Miss;
using namespace tuner::test::tunedb_fixture;

namespace {

const std::string kDefault = tuner::db::fixture::kDefaultParams;
const std::string kTuned8 =
    R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":512})";

// The bytes after a stand-in image's 64-byte ELF header.
std::string image_payload(const tunedb::Cubin& cubin) {
  return std::string(cubin.bytes.begin() + 64, cubin.bytes.end());
}

}  // namespace

TEST_CASE("tunedb: exact, bucket and above-largest lookups") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);

  const tunedb::Lookup exact = db.lookup("sparse_mla_decode", "sm_120", kShape, 8);
  CHECK(exact.how == How::exact);
  CHECK(exact.miss == Miss::none);
  REQUIRE(exact.config != nullptr);
  CHECK(exact.config->params_json == kTuned8);
  CHECK(exact.config->value("block_t") == 32);
  CHECK_FALSE(exact.config->value("block_x").has_value());
  CHECK(exact.tuned_batch == 8);
  CHECK(exact.median_us == 20.5);
  CHECK(exact.run_id == 1);
  CHECK(exact.measured_arch == "sm_90");  // timed on the H200, not on an sm_120 part
  CHECK(exact.device_name == "NVIDIA H200");
  REQUIRE(exact.cubin != nullptr);
  CHECK(image_payload(*exact.cubin) == "image sm_120 " + kTuned8);
  CHECK(exact.cubin->kernel_names == std::vector<std::string_view>{"_Z4splitv", "_Z7combinev"});

  const tunedb::Lookup between = db.lookup("sparse_mla_decode", "sm_120", kShape, 9);
  CHECK(between.how == How::bucket);
  CHECK(between.tuned_batch == 32);  // the smallest tuned batch above 9
  CHECK(between.default_kept);
  CHECK(between.config->params_json == kDefault);

  const tunedb::Lookup above = db.lookup("sparse_mla_decode", "sm_120", kShape, 1000);
  CHECK(above.how == How::bucket);
  CHECK(above.tuned_batch == 128);
  CHECK(above.config->params_json == kTuned128);

  const tunedb::Lookup below_one = db.lookup("sparse_mla_decode", "sm_120", kShape, 0);
  CHECK(below_one.how == How::exact);  // batches below 1 are looked up as 1
  CHECK(below_one.tuned_batch == 1);
}

TEST_CASE("tunedb: untuned shapes, families and archs fall back, flagged") {
  Fixture fixture;
  tunedb::OpenOptions options;
  options.defaults.push_back({"dense_gemm", R"({"tile":128})"});
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen, options);

  const std::string other_topk = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=1024";
  const tunedb::Lookup shape = db.lookup("sparse_mla_decode", "sm_120", other_topk, 8);
  CHECK(shape.how == How::default_config);
  CHECK(shape.miss == Miss::shape_not_tuned);
  CHECK(shape.config->params_json == kDefault);
  CHECK(std::isnan(shape.median_us));
  CHECK(shape.tuned_batch == 0);
  CHECK(shape.device_name.empty());
  REQUIRE(shape.cubin != nullptr);  // the default's image was frozen too
  CHECK(image_payload(*shape.cubin) == "image sm_120 " + kDefault);

  // The store holds sm_90 winners, but the file was frozen for sm_120 only.
  const tunedb::Lookup arch = db.lookup("sparse_mla_decode", "sm_90", kShape, 8);
  CHECK(arch.how == How::default_config);
  CHECK(arch.miss == Miss::arch_not_in_db);
  CHECK(arch.config->params_json == kDefault);
  CHECK(arch.cubin == nullptr);  // no image for an arch the file was not frozen for

  const tunedb::Lookup given = db.lookup("dense_gemm", "sm_120", kShape, 8);
  CHECK(given.how == How::default_config);
  CHECK(given.miss == Miss::family_not_in_db);
  CHECK(given.config->value("tile") == 128);

  const tunedb::Lookup unknown = db.lookup("paged_attention", "sm_120", kShape, 8);
  CHECK(unknown.how == How::not_found);
  CHECK(unknown.config == nullptr);
  CHECK(std::string(tunedb::how_name(unknown.how)) == "not_found");
  CHECK(std::string(tunedb::miss_name(arch.miss)) == "arch_not_in_db");
}

TEST_CASE("tunedb: lookups are noexcept, allocation-free and agree across threads") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  static_assert(noexcept(db.lookup("f", "a", kShape, 1)));

  const long before = allocations.load();
  int found = 0;
  for (int batch = 1; batch <= 256; ++batch) {
    found += db.lookup("sparse_mla_decode", "sm_120", kShape, batch).tuned_batch > 0 ? 1 : 0;
    found += db.lookup("sparse_mla_decode", "sm_100", kShape, batch).config != nullptr ? 1 : 0;
  }
  CHECK(allocations.load() == before);
  CHECK(found == 512);

  std::vector<int> expected;
  for (int batch = 1; batch <= 200; ++batch) {
    expected.push_back(db.lookup("sparse_mla_decode", "sm_120", kShape, batch).tuned_batch);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        for (int batch = 1; batch <= 200; ++batch) {
          const auto result = db.lookup("sparse_mla_decode", "sm_120", kShape, batch);
          if (result.tuned_batch != expected[static_cast<std::size_t>(batch - 1)]) ++mismatches;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(mismatches.load() == 0);
}

TEST_CASE("tunedb: a tuning store can be looked up directly") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.store);
  CHECK_FALSE(db.info().frozen);
  CHECK(db.info().budget_arches == std::vector<std::string>{"sm_120", "sm_90"});
  const tunedb::Lookup sm90 = db.lookup("sparse_mla_decode", "sm_90", kShape, 8);
  CHECK(sm90.how == How::exact);
  CHECK(sm90.median_us == 18.0);
  CHECK(sm90.cubin == nullptr);  // images exist only in frozen files
  const std::string other = "kv_format=fp8_ds_mla,local_heads=16,page_size=16,topk=2048";
  CHECK(db.lookup("sparse_mla_decode", "sm_90", other, 8).config->params_json == kDefault);
}

TEST_CASE("tunedb: a moved-from TuningDb answers not_found") {
  Fixture fixture;
  tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  tunedb::TuningDb moved = std::move(db);
  CHECK(moved.lookup("sparse_mla_decode", "sm_120", kShape, 8).how == How::exact);
  CHECK(db.lookup("sparse_mla_decode", "sm_120", kShape, 8).how == How::not_found);  // NOLINT
}

TEST_CASE("tunedb: the C API") {
  Fixture fixture;
  tunedb_handle* handle = nullptr;
  REQUIRE(tunedb_open(fixture.frozen.c_str(), &handle) == TUNEDB_OK);
  tunedb_result result;
  REQUIRE(tunedb_lookup(handle, "sparse_mla_decode", "sm_120", kShape.c_str(), 100, &result) ==
          TUNEDB_OK);
  CHECK(result.how == TUNEDB_HOW_BUCKET);
  CHECK(result.tuned_batch == 128);
  CHECK(result.median_us == 110.2);
  CHECK(std::string(result.params_json) == kTuned128);
  REQUIRE(result.n_params == 5);
  CHECK(std::string(result.params[1].name) == "block_t");
  CHECK(result.params[1].value == 64);
  CHECK(std::string(result.measured_arch) == "sm_90");
  CHECK(std::string(result.kernel_names) == "_Z4splitv\n_Z7combinev");
  REQUIRE(result.cubin_size > 64);
  CHECK(std::string(static_cast<const char*>(result.cubin) + 64, result.cubin_size - 64) ==
        "image sm_120 " + kTuned128);

  REQUIRE(tunedb_lookup(handle, "sparse_mla_decode", "sm_75", kShape.c_str(), 1, &result) ==
          TUNEDB_OK);
  CHECK(result.how == TUNEDB_HOW_DEFAULT);
  CHECK(result.miss == TUNEDB_MISS_ARCH_NOT_IN_DB);
  CHECK(std::string(tunedb_miss_name(result.miss)) == "arch_not_in_db");
  CHECK(std::string(result.device_name).empty());

  CHECK(tunedb_lookup(handle, nullptr, "sm_120", kShape.c_str(), 1, &result) == TUNEDB_ERROR_INPUT);
  CHECK(std::string(tunedb_last_error()) == "tunedb_lookup: family is NULL");
  // A shape that is not canonical text is refused, naming the problem (unsorted names here).
  CHECK(tunedb_lookup(handle, "sparse_mla_decode", "sm_120",
                      "topk=2048,kv_format=fp8_ds_mla,local_heads=16,page_size=64", 1,
                      &result) == TUNEDB_ERROR_INPUT);
  CHECK(contains(tunedb_last_error(), "is not canonical ('kv_format' after 'topk'"));
  CHECK(tunedb_lookup(handle, "sparse_mla_decode", "sm_120", "local_heads=016", 1, &result) ==
        TUNEDB_ERROR_INPUT);
  CHECK(contains(tunedb_last_error(), "leading zero"));
  tunedb_close(handle);

  tunedb_handle* missing = nullptr;
  CHECK(tunedb_open((fixture.dir / "missing.db").c_str(), &missing) == TUNEDB_ERROR_INPUT);
  CHECK(missing == nullptr);
  CHECK(contains(tunedb_last_error(), "missing.db does not exist"));
  CHECK(tunedb_verify(fixture.frozen.c_str()) == TUNEDB_OK);
  CHECK(std::string(tunedb_last_error()).empty());
  CHECK(tunedb_verify(fixture.store.c_str()) == TUNEDB_ERROR_INPUT);
}

TEST_CASE("tunedb: the C++ map lookup builds the canonical text") {
  Fixture fixture;
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  const std::map<std::string, std::string, std::less<>> dims = {
      {"topk", "2048"}, {"local_heads", "16"}, {"page_size", "64"}, {"kv_format", "fp8_ds_mla"}};
  CHECK(tunedb::make_shape(dims) == kShape);
  const tunedb::Lookup found = db.lookup("sparse_mla_decode", "sm_120", dims, 8);
  CHECK(found.how == How::exact);
  CHECK(found.median_us == 20.5);
  CHECK_THROWS_AS(db.lookup("sparse_mla_decode", "sm_120", {{"Bad Name", "1"}}, 8),
                  tunedb::DbInputError);
}

TEST_CASE("tunedb: params JSON parsing is strict and canonical") {
  const auto parsed = tunedb::parse_params_json(R"( {"z": -3, "a":7} )");
  REQUIRE(parsed.has_value());
  REQUIRE(parsed->size() == 2);
  CHECK(parsed->front().name == "a");
  CHECK(parsed->back().value == -3);
  CHECK(tunedb::canonical_params_json(R"({"z":-3,"a":7})") == R"({"a":7,"z":-3})");
  CHECK(tunedb::canonical_params_json(R"({"a":9223372036854775807})") ==
        R"({"a":9223372036854775807})");
  for (const char* bad : {R"({"a":9223372036854775808})", R"({"a":-})", R"({"":1})", R"({"a":1,})",
                          R"({a:1})", R"({"a":true})", R"({"a":null})"}) {
    CAPTURE(bad);
    CHECK_FALSE(tunedb::parse_params_json(bad).has_value());
  }
}

// The fast path of canonical_params_json (is_canonical_params_json) against the slow one written
// out here from parse_params_json and params_to_json, which it does not use: on every input both
// must say the same, canonical or not, and give the same text.
TEST_CASE("tunedb: the canonical check agrees with parse and rewrite") {
  const auto slow = [](std::string_view json) -> std::optional<std::string> {
    auto params = tunedb::parse_params_json(json);
    if (!params) return std::nullopt;
    return tunedb::params_to_json(*params);
  };
  std::vector<std::string> inputs = {"{}",
                                     "{ }",
                                     R"({"a":1})",
                                     R"({"a":0})",
                                     R"({"a":-0})",
                                     R"({"a":01})",
                                     R"({"a":-1})",
                                     R"({"a":-01})",
                                     R"({"a":+1})",
                                     R"({"a":1.0})",
                                     R"({"a":1e3})",
                                     R"({"a":1,"b":2})",
                                     R"({"b":2,"a":1})",
                                     R"({"a":1,"a":1})",
                                     R"({"a":1, "b":2})",
                                     R"({"a":1,"b":2} )",
                                     R"({"a":9223372036854775807})",
                                     R"({"a":-9223372036854775808})",
                                     R"({"a":9223372036854775808})",
                                     R"({"a\"":1})",
                                     R"({"":1})",
                                     R"({"a":1,})",
                                     R"({"a":})",
                                     R"({"a"1})",
                                     R"({"ab":1,"b":2})",
                                     R"({"b":1,"ab":2})",
                                     R"({"a":1}})",
                                     "{\"a\":1}\n"};
  // Random texts from the pieces such objects are made of: mostly near-canonical ones.
  const std::vector<std::string> pieces = {"{", "}", "\"a\"", "\"b\"", "\"ab\"", ":",  ",", "0",
                                           "1", "-", "07",    "42",    " ",      "-0", ".5"};
  unsigned state = 12345;
  for (int text = 0; text < 20000; ++text) {
    std::string json = "{";
    const int parts = static_cast<int>(state % 9);
    for (int part = 0; part < parts; ++part) {
      state = state * 1103515245U + 12345U;
      json += pieces[(state >> 16) % pieces.size()];
    }
    inputs.push_back(json + "}");
  }
  int canonical = 0;
  for (const std::string& json : inputs) {
    CAPTURE(json);
    const std::optional<std::string> expected = slow(json);
    CHECK(tunedb::is_canonical_params_json(json) == (expected && *expected == json));
    CHECK(tunedb::canonical_params_json(json) == expected);
    canonical += expected && *expected == json ? 1 : 0;
  }
  CHECK(canonical > 20);  // the random texts reach the fast path, not only its refusals
}
