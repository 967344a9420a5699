#pragma once
// Runs and problems for the tuning-store tests (test_store_open.cpp, test_store_records.cpp,
// test_store_sqlite.cpp): the sweep run of tests/support/fixture.hpp, a plan run without GPU, the
// fixture problem at a batch, and a sweep begun with its source and batch-8 problem recorded.
#include <cstdint>
#include <optional>
#include <string>

#include "db/store/store.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trial_rows.hpp"

namespace tuner::test::store_setup {

// Every store test works in a fresh directory, most with measured trials.
using tuner::test::measured_trial;
using tuner::test::TempDir;

inline db::RunInfo sweep_run() { return db::fixture::fixture_run(); }

inline db::RunInfo plan_run() {
  db::RunInfo run;
  run.host = "cpu-box";
  run.budget_arch = "sm_120";
  run.tuner_version = "0.1.0";
  run.command_line = "tuner plan --arch sm_120";
  run.kind = db::RunKind::plan;
  return run;
}

inline db::ProblemKey problem_at(std::optional<int> batch) {
  return db::ProblemKey{"sparse_mla_decode", db::fixture::kShape, batch};
}

inline const std::string kParams =
    R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":512})";

struct Recorded {
  std::int64_t run = 0;
  std::int64_t problem = 0;
};

inline Recorded start_sweep(db::Store& store) {
  Recorded ids;
  ids.run = store.begin_run(sweep_run());
  store.add_source(db::fixture::kSourceHash, db::fixture::kFamily);
  ids.problem = store.problem_id(problem_at(8));
  return ids;
}

}  // namespace tuner::test::store_setup
