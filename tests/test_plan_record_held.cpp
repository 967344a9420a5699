// A warm sweep rerun's plan check (tuner::record_plan_unless_held with tuner::plan_row_digest):
// a plan recorded once is held by that run on every rerun and written never again; a digest moves
// with every part of a row the store keeps and with nothing else; a changed plan is recorded
// under its own run and becomes the one later reruns are held against. A hand-made plan of the
// sparse MLA family's configs (no compiles), real SQLite files in a fresh temporary directory.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "db/store/plan_run.hpp"
#include "db/store/store.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "tests/support/hand_made_plan.hpp"
#include "tests/support/temp_dir.hpp"
#include "tuner/plan_record.hpp"
#include "tuner/plan_row_digest.hpp"
#include "tuner/run_info.hpp"

namespace {

// 300 configs of the family's space with every plan fate; row 5 failed to compile with a log.
tuner::PlanResult hand_made_plan() {
  tuner::PlanResult plan = tuner::test::hand_made_plan(300, 1);
  plan.rows[5].fate = tuner::Fate::compile_failed;
  plan.rows[5].compile_log = "error: too many resources";
  return plan;
}

std::int64_t plan_rows(const tuner::db::Store& store) {
  return store.connection().query_int64("SELECT COUNT(*) FROM trials WHERE stage = 'plan'");
}

std::int64_t begin(tuner::db::Store& store) {
  return store.begin_run(tuner::base_run_info(tuner::db::RunKind::sweep, "sm_90", "test"));
}

}  // namespace

TEST_CASE("plan row digest: every recorded part of a row moves it, nothing else does") {
  const tuner::PlanResult plan = hand_made_plan();
  const std::string digest = tuner::plan_row_digest(plan);
  CHECK(digest.rfind("sha256:", 0) == 0);
  CHECK(digest.size() == 7 + 64);
  CHECK(tuner::plan_row_digest(hand_made_plan()) == digest);

  tuner::PlanResult value = plan;
  value.rows[120].config.values[0].second += 1;
  tuner::PlanResult fate = plan;
  fate.rows[299].fate = tuner::Fate::survivor == fate.rows[299].fate ? tuner::Fate::pruned_shape
                                                                     : tuner::Fate::survivor;
  tuner::PlanResult reason = plan;
  reason.rows[0].reason += ".";
  tuner::PlanResult log = plan;  // a compile_failed row's log is recorded with its reason
  log.rows[5].compile_log += " (2)";
  tuner::PlanResult order = plan;
  std::swap(order.rows[10], order.rows[11]);
  tuner::PlanResult fewer = plan;
  fewer.rows.pop_back();
  for (const tuner::PlanResult* changed : {&value, &fate, &reason, &log, &order, &fewer}) {
    CHECK(tuner::plan_row_digest(*changed) != digest);
  }
  // Not recorded, so not digested: a survivor's compile log, the audit note.
  tuner::PlanResult unrecorded = plan;
  unrecorded.rows[1].compile_log = "ptxas info";
  unrecorded.rows[2].audit_note = "checked";
  CHECK(tuner::plan_row_digest(unrecorded) == digest);
}

TEST_CASE("plan record: a rerun is held by the run that recorded the plan, a change is recorded") {
  const tuner::test::TempDir dir;
  tuner::db::Store store = tuner::db::Store::open(dir / "tune.db");
  const tuner::Family& family = tuner::smla_family::family();
  const tuner::PlanResult plan = hand_made_plan();
  const std::int64_t first = begin(store);
  CHECK(tuner::record_plan_unless_held(store, first, plan, family) == first);
  CHECK(plan_rows(store) == 300);
  CHECK(tuner::record_plan_unless_held(store, begin(store), plan, family) == first);
  CHECK(plan_rows(store) == 300);

  // A store whose plan run has no digest (written before digests): held row by row, and the
  // digest is recorded for the run that holds the rows.
  store.connection().exec("DELETE FROM plan_run_digests");
  CHECK(tuner::record_plan_unless_held(store, begin(store), plan, family) == first);
  CHECK(plan_rows(store) == 300);
  const tuner::db::PlanRunKey key{store.problem_id(tuner::plan_problem_key(plan)),
                                  family.source_hash(), "sm_90"};
  CHECK(tuner::db::run_holding_plan_digest(store, key, 300, tuner::plan_row_digest(plan)) == first);

  // The same rows in another order: held row by row too.
  tuner::PlanResult reordered = plan;
  std::reverse(reordered.rows.begin(), reordered.rows.end());
  CHECK(tuner::record_plan_unless_held(store, begin(store), reordered, family) == first);
  CHECK(plan_rows(store) == 300);

  // A changed reason: recorded whole under its own run, which later reruns are held against.
  tuner::PlanResult changed = plan;
  changed.rows[42].reason = "another rule";
  const std::int64_t changed_run = begin(store);
  CHECK(tuner::record_plan_unless_held(store, changed_run, changed, family) == changed_run);
  CHECK(plan_rows(store) == 600);
  const std::int64_t back = begin(store);
  CHECK(tuner::record_plan_unless_held(store, back, plan, family) == back);
  CHECK(plan_rows(store) == 900);

  // A later plan run written without a digest (tuner merge, an older tuner) with other fates: the
  // plan is no longer held by `back`, whose digest still matches it.
  const std::int64_t merged = begin(store);
  store.connection().exec(
      "INSERT INTO trials (run_id, problem_id, source_hash, stage, budget_arch, "
      "params_json, compile_key, fate, reason, measure_env) SELECT " +
      std::to_string(merged) +
      ", problem_id, source_hash, stage, budget_arch, params_json, "
      "compile_key, fate, reason || '!', measure_env FROM trials WHERE run_id = " +
      std::to_string(back));
  CHECK(plan_rows(store) == 1200);
  const std::int64_t after_merge = begin(store);
  CHECK(tuner::record_plan_unless_held(store, after_merge, plan, family) == after_merge);
  CHECK(plan_rows(store) == 1500);
}
