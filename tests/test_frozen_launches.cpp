// Frozen schemas 3 and 4: the launch metadata of each cubin (table `launches`) and its launch
// contract as freeze writes them from the provider, as TuningDb hands them to the serving launcher,
// under the checksum, and refused when they do not fit the image.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "db/sqlite/sqlite.hpp"
#include "db/tunedb/cubin_elf.hpp"
#include "db/tunedb/freeze.hpp"
#include "db/tunedb/tunedb.hpp"
#include "tests/support/frozen_fixture.hpp"

namespace fs = std::filesystem;
using tuner::db::Connection;
using tuner::db::OpenMode;

namespace {

tunedb::CubinImage image_with(const tunedb::CubinRequest& request, const std::string& split_name,
                              int dynamic_smem, int max_dynamic_smem) {
  tunedb::CubinImage image{tunedb::stand_in_cubin(request.arch, "image " + request.params_json),
                           {"_Z5splitv", "_Z7combinev"},
                           {}};
  image.launches.push_back({"split.fp8_ds_mla", split_name, 256, dynamic_smem, max_dynamic_smem,
                            R"({"target_ctas":1024,"block_t":32,"block_h":16})"});
  image.launches.push_back({"combine", "_Z7combinev", 128, 0, 0, R"({"block_h":16})"});
  image.launch_contract = "sha256:contract of " + request.params_json;
  return image;
}

tunedb::CubinImage good_image(const tunedb::CubinRequest& request) {
  return image_with(request, "_Z5splitv", 40000, 50000);
}

std::string freeze_error(const tunedb::CubinProvider& provider) {
  try {
    tuner::test::FrozenFixture fixture(provider);
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("freeze stores each kernel's launch facts and TuningDb hands them out") {
  const tuner::test::FrozenFixture fixture(good_image);
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  const tunedb::Lookup found =
      db.lookup(tuner::db::fixture::kFamily, "sm_120", tuner::db::fixture::kShape, 1);
  REQUIRE(found.cubin != nullptr);
  const tunedb::Cubin& cubin = *found.cubin;
  CHECK(cubin.family == "sparse_mla_decode");
  CHECK(cubin.arch == "sm_120");
  CHECK(cubin.params_json == found.config->params_json);
  CHECK(&db.cubin(cubin.index) == &cubin);
  CHECK(cubin.launch_contract == "sha256:contract of " + std::string(cubin.params_json));
  REQUIRE(cubin.launches.size() == 2);
  const tunedb::KernelLaunch& combine = cubin.launches[0];  // by role name
  const tunedb::KernelLaunch& split = cubin.launches[1];
  CHECK(combine.role == "combine");
  CHECK(combine.kernel_name == "_Z7combinev");
  CHECK(combine.block_threads == 128);
  CHECK(split.role == "split.fp8_ds_mla");
  CHECK(split.kernel_name == "_Z5splitv");
  CHECK(split.block_threads == 256);
  CHECK(split.dynamic_smem == 40000);
  CHECK(split.max_dynamic_smem == 50000);
  REQUIRE(split.launch_params.size() == 3);  // canonical: sorted by name
  CHECK(split.launch_params[0].name == "block_h");
  CHECK(split.launch_params[0].value == 16);
  CHECK(split.launch_params[2].name == "target_ctas");
  CHECK(split.launch_params[2].value == 1024);
  std::size_t with_launches = 0;
  for (std::size_t i = 0; i < db.cubin_count(); ++i) with_launches += !db.cubin(i).launches.empty();
  CHECK(with_launches == db.cubin_count());
  CHECK(db.cubin_count() == fixture.summary.cubins);

  // verify's own query names the same contracts as the loader's cubins (one per config here).
  std::set<std::string> contracts;
  for (std::size_t i = 0; i < db.cubin_count(); ++i) {
    contracts.insert("sha256:contract of " + std::string(db.cubin(i).params_json));
  }
  const tunedb::VerifyReport report = tunedb::verify(fixture.frozen);
  REQUIRE(report.launch_contracts.size() == 1);
  CHECK(report.launch_contracts.at("sparse_mla_decode") == contracts);
  CHECK(contracts.size() == fixture.summary.cubins);
}

TEST_CASE("the checksum covers the launch metadata and the launch contract") {
  const tuner::test::FrozenFixture fixture(good_image);
  // The contract edited too: a file made to pass a launcher's check is caught the same way.
  for (const char* edit : {"UPDATE launches SET block_threads = 64 WHERE role = 'combine'",
                           "UPDATE cubins SET launch_contract = 'sha256:other'"}) {
    CAPTURE(edit);
    const fs::path copy = fixture.dir / "edited.db";
    fs::remove(copy);
    fs::copy_file(fixture.frozen, copy);
    Connection::open(copy, OpenMode::read_write_create).exec(edit);
    CHECK_THROWS_WITH_AS(tunedb::TuningDb::open(copy), doctest::Contains("checksum mismatch"),
                         tunedb::DbError);
    CHECK_THROWS_AS(tunedb::verify(copy), tunedb::DbError);
  }
}

TEST_CASE("freeze refuses launch metadata that does not fit its image") {
  const std::string unknown =
      freeze_error([](const tunedb::CubinRequest& r) { return image_with(r, "_Z5otherv", 1, 1); });
  CHECK(unknown.find("names kernel '_Z5otherv', which the image does not hold") !=
        std::string::npos);
  const std::string smem = freeze_error(
      [](const tunedb::CubinRequest& r) { return image_with(r, "_Z5splitv", 60000, 50000); });
  CHECK(smem.find("dynamic smem 60000 above its max-dynamic-smem attribute 50000") !=
        std::string::npos);
  const std::string no_contract = freeze_error([](const tunedb::CubinRequest& r) {
    tunedb::CubinImage image = good_image(r);
    image.launch_contract.clear();
    return image;
  });
  CHECK(no_contract.find("gave launch records but no launch contract for sparse_mla_decode") !=
        std::string::npos);
}

TEST_CASE("a cubin without launch records may carry no launch contract") {
  // A family the serving launcher cannot launch: nothing is checked against it.
  const tuner::test::FrozenFixture fixture([](const tunedb::CubinRequest& request) {
    return tunedb::CubinImage{tunedb::stand_in_cubin(request.arch, "image"), {"_Z5splitv"}};
  });
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture.frozen);
  REQUIRE(db.cubin_count() > 0);
  CHECK(db.cubin(0).launch_contract.empty());
  CHECK(db.cubin(0).launches.empty());
  CHECK(tunedb::verify(fixture.frozen).launch_contracts.empty());  // nothing to launch, none named
}
