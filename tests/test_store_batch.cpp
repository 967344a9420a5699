// Store::record_trials: many trials in one transaction (a plan's ~50 000 fates, a batch's
// skipped_by_search rows), all or none, with the same checks and canonical params as
// record_trial. Real SQLite files in a fresh temporary directory.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "db/store/store.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trial_rows.hpp"

using namespace tuner::db;
using tuner::test::measured_trial;
using tuner::test::TempDir;

namespace {

struct Started {
  std::int64_t run = 0;
  std::int64_t problem = 0;
};

Started start(Store& store) {
  Started ids;
  ids.run = store.begin_run(fixture::fixture_run());
  store.add_source(fixture::kSourceHash, fixture::kFamily);
  ids.problem = store.problem_id(ProblemKey{"sparse_mla_decode", fixture::kShape, 8});
  return ids;
}

std::string params(int i) {
  return R"({"target_ctas":)" + std::to_string(i) + R"(, "block_t":32})";  // not canonical
}

}  // namespace

TEST_CASE("store: record_trials commits every trial, canonical, found by the resume check") {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  const Started ids = start(store);
  std::vector<TrialRecord> trials;
  for (int i = 1; i <= 300; ++i)
    trials.push_back(measured_trial(ids.run, ids.problem, params(i), i));
  store.record_trials(trials);
  CHECK(store.count_trials({}) == 300);
  MeasureKey key = trials[41].measure_key();
  key.params_json = R"({"block_t":32,"target_ctas":42})";
  const auto found = store.find_measured_trial(key);
  REQUIRE(found.has_value());
  CHECK(found->median_us == 42.0);
  store.record_trials({});  // nothing to write is no error
  CHECK(store.count_trials({}) == 300);
}

TEST_CASE("store: record_trials writes all or nothing") {
  TempDir dir;
  Store store = Store::open(dir / "tune.db");
  const Started ids = start(store);
  store.record_trial(measured_trial(ids.run, ids.problem, params(7), 7.0));
  std::vector<TrialRecord> trials;
  for (int i = 1; i <= 10; ++i)
    trials.push_back(measured_trial(ids.run, ids.problem, params(i), i));

  SUBCASE("a duplicate resume key in the middle: refused, naming it, none written") {
    try {
      store.record_trials(trials);
      FAIL("a duplicate measured trial was accepted");
    } catch (const DbError& error) {
      CHECK(error.code_name() == "SQLITE_CONSTRAINT_UNIQUE");
      CHECK(std::string(error.what()).find("target_ctas\":7") != std::string::npos);
    }
    CHECK(store.count_trials({}) == 1);
  }
  SUBCASE("an inconsistent trial: refused before anything is written") {
    trials.erase(trials.begin() + 6);  // no duplicate now
    trials.back().median_us.reset();   // measured without a median
    CHECK_THROWS(store.record_trials(trials));
    CHECK(store.count_trials({}) == 1);
  }
}
