// Plan digests (db/store/plan_digest.hpp) and tuner merge: shards that hold the same plan are
// merged without reading their plan rows, with the same result as the row-by-row probe (checked by
// merging the same shards written without digests); anything the digests do not vouch for falls
// back to the probe. Stores are written through the real db::Store and the sweep's plan writer.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "db/sqlite/sqlite.hpp"
#include "db/store/plan_digest.hpp"
#include "db/store/shards.hpp"
#include "db/store/store.hpp"
#include "tests/support/sweep_run.hpp"
#include "tests/support/temp_dir.hpp"
#include "tuner/merge.hpp"
#include "tuner/plan_record.hpp"

namespace fs = std::filesystem;
using namespace tuner;

namespace {

const std::string kFamily = "sparse_mla_decode";
const std::string kShape = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048";
const std::string kSource = "0123456789abcdef";

// A plan of `configs` fates; `odd_reason` changes the reason of the config with that index.
std::vector<db::TrialRecord> plan_rows(int configs, int odd_reason = -1) {
  std::vector<db::TrialRecord> rows;
  for (int i = 0; i < configs; ++i) {
    db::TrialRecord row;
    row.source_hash = kSource;
    row.budget_arch = "sm_90";
    row.params_json = R"({"block_t":)" + std::to_string(i) + "}";
    row.fate = i % 3 == 0 ? db::Fate::pruned_budget : db::Fate::survivor;
    row.reason = i == odd_reason ? "changed" : "reason " + std::to_string(i % 3);
    rows.push_back(row);
  }
  return rows;
}

enum class Plans { with_digests, rows_only };

// Shard `index` of `count`: its plan (recorded `copies` times) and one measured trial.
void write_shard(const fs::path& path, int index, int count,
                 const std::vector<db::TrialRecord>& plan, Plans how, int copies = 1) {
  db::Store store = db::Store::open(path);
  const std::int64_t run_id =
      store.begin_run(test::h200_sweep_run("test shard " + std::to_string(index)));
  store.add_source(kSource, kFamily);
  db::record_shard(store, run_id, index, count, "sweep digest-test");
  std::vector<db::TrialRecord> rows = plan;
  for (db::TrialRecord& row : rows) {
    row.run_id = run_id;
    row.problem_id = store.problem_id({kFamily, kShape, std::nullopt});
  }
  for (int copy = 0; copy < copies; ++copy) {
    if (how == Plans::with_digests) {
      record_plan_trials(store, rows);
    } else {
      store.record_trials(rows);
    }
  }
  db::TrialRecord measured = rows.front();
  measured.problem_id = store.problem_id({kFamily, kShape, 8});
  measured.stage = db::Stage::measure;
  measured.measured_arch = "sm_90";
  measured.device_name = "NVIDIA H200";
  measured.params_json = R"({"block_t":)" + std::to_string(1000 + index) + "}";
  measured.fate = db::Fate::measured;
  measured.median_us = 10.0 + index;
  measured.p10_us = 0.99 * (10.0 + index);
  measured.p90_us = 1.01 * (10.0 + index);
  measured.samples = 30;
  measured.rel_spread = 0.02;
  measured.measure_env = "env";
  store.record_trial(measured);
  store.end_run(run_id);
}

using PlanFates = std::multiset<std::tuple<std::string, std::string, std::string>>;

// The output's plan rows as (config, fate, reason), read with plain SQL.
PlanFates plan_fates(const fs::path& path) {
  const db::Connection connection = db::Connection::open(path, db::OpenMode::read_only);
  db::Statement rows = connection.prepare(
      "SELECT params_json, fate, reason FROM trials WHERE stage = 'plan' ORDER BY id");
  PlanFates fates;
  while (rows.step()) {
    fates.emplace(rows.column_text(0), rows.column_text(1), rows.column_text(2));
  }
  return fates;
}

// PRAGMA integrity_check's complaints (0: "ok"). SQLite 3.40 misread plan_digests' first column
// order and reported NULL values here.
std::int64_t integrity_problems(const fs::path& path) {
  return db::Connection::open(path, db::OpenMode::read_only)
      .query_int64("SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'");
}

std::int64_t digests(const fs::path& path) {
  return db::Connection::open(path, db::OpenMode::read_only)
      .query_int64("SELECT COUNT(*) FROM plan_digests");
}

MergeSummary merge(const fs::path& out, const std::vector<fs::path>& inputs) {
  MergeRequest request{out.string(), {}};
  for (const fs::path& input : inputs) request.inputs.push_back(input.string());
  return run_merge(request);
}

}  // namespace

TEST_CASE(
    "plan digest text: order-free and canonical, and a changed fate, reason or config differs") {
  const std::vector<db::TrialRecord> plan = plan_rows(7);
  std::vector<db::TrialRecord> reversed(plan.rbegin(), plan.rend());
  reversed[0].params_json = R"({ "block_t" : 6 })";  // not canonical, same config
  CHECK(db::plan_fate_text(reversed) == db::plan_fate_text(plan));
  CHECK(db::plan_fate_text(plan_rows(7, 3)) != db::plan_fate_text(plan));
  std::vector<db::TrialRecord> other_fate = plan;
  other_fate[1].fate = db::Fate::compile_failed;
  CHECK(db::plan_fate_text(other_fate) != db::plan_fate_text(plan));
  CHECK(db::plan_fate_text(plan_rows(6)) != db::plan_fate_text(plan));
}

TEST_CASE("merge: shards holding one plan digest merge as the row-by-row probe merges them") {
  test::TempDir dir;
  const std::vector<db::TrialRecord> plan = plan_rows(40);
  std::vector<fs::path> digested;
  std::vector<fs::path> rows_only;
  for (int index = 1; index <= 4; ++index) {
    digested.push_back(dir / ("d" + std::to_string(index) + ".db"));
    rows_only.push_back(dir / ("r" + std::to_string(index) + ".db"));
    write_shard(digested.back(), index, 4, plan, Plans::with_digests);
    write_shard(rows_only.back(), index, 4, plan, Plans::rows_only);
  }
  CHECK(digests(digested.front()) == 1);
  CHECK(digests(rows_only.front()) == 0);
  const MergeSummary fast = merge(dir / "fast.db", digested);
  const MergeSummary probed = merge(dir / "probed.db", rows_only);
  CHECK(fast.trials_added == probed.trials_added);
  CHECK(fast.trials_added == 40 + 4);  // the plan once, four measured trials
  CHECK(fast.plan_fates_shared == 3 * 40);
  CHECK(fast.plan_fates_shared == probed.plan_fates_shared);
  CHECK(plan_fates(dir / "fast.db") == plan_fates(dir / "probed.db"));
  CHECK(digests(dir / "fast.db") == 1);  // the output vouches for the plan it now holds
  CHECK(integrity_problems(digested.front()) == 0);
  CHECK(integrity_problems(dir / "fast.db") == 0);
  // Merging the digested shards into the probed output: its plan rows carry no digest, so the
  // first shard is probed row by row, and from then on the output holds its digest.
  const MergeSummary into_probed = merge(dir / "probed.db", digested);
  CHECK(into_probed.plan_fates_shared == 4 * 40);
  CHECK(plan_fates(dir / "probed.db") == plan_fates(dir / "fast.db"));
}

TEST_CASE("merge: a plan the digests do not vouch for is probed row by row, and nothing is lost") {
  test::TempDir dir;
  const std::vector<db::TrialRecord> plan = plan_rows(30);
  const fs::path same = dir / "s1.db";
  const fs::path changed = dir / "s2.db";
  const fs::path twice = dir / "s3.db";  // its plan recorded twice
  write_shard(same, 1, 3, plan, Plans::with_digests);
  write_shard(changed, 2, 3, plan_rows(30, 5), Plans::with_digests);  // one reason differs
  write_shard(twice, 3, 3, plan, Plans::with_digests, 2);             // rows = 2 x the digest's
  const MergeSummary summary = merge(dir / "out.db", {same, changed, twice});
  PlanFates expected;
  for (const db::TrialRecord& row : plan_rows(30)) {
    expected.emplace(row.params_json, db::to_string(row.fate), row.reason);
  }
  expected.emplace(R"({"block_t":5})", "survivor", "changed");
  CHECK(plan_fates(dir / "out.db") == expected);
  CHECK(summary.plan_fates_shared == 29 + 2 * 30);
  CHECK(digests(dir / "out.db") == 2);
}
