// tuner merge and --shard: shard slices, merged runs/trials/winners, idempotence, the conflict
// rule, and every refusal (nothing written). Stores are written through the real db::Store.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/config.hpp"
#include "core/error.hpp"
#include "db/store/shards.hpp"
#include "db/store/store.hpp"
#include "kernels/registry.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/sweep_run.hpp"
#include "tests/support/temp_dir.hpp"
#include "tuner/merge.hpp"
#include "tuner/shard.hpp"

namespace fs = std::filesystem;
using namespace tuner;

namespace {

const Family& mla() { return family_by_name("sparse_mla_decode"); }
const std::string kShape = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048";
const std::string kX =
    R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":512})";
const std::string kY =
    R"({"block_h":16,"block_t":64,"num_stages":2,"num_warps":4,"target_ctas":512})";
std::string default_params() { return to_json(mla().default_config()); }

struct Timed {
  int batch;
  std::string params;
  double median_us;
  double spread;  // relative; p10/p90 = median -/+ half of it
  db::Fate fate = db::Fate::measured;
  bool launch_quantiles = false;  // protocol 2's per-launch p10 / p90 (median -3 % / +5 %)
};

struct PlanFate {
  std::string params;
  db::Fate fate;
  std::string reason;
  std::optional<std::int64_t> members = std::nullopt;  // a value the shape rules out alone
};

struct StoreSpec {
  std::optional<ShardSpec> shard;
  std::vector<Timed> trials;
  std::string source_hash = mla().source_hash();
  bool ended = true;
  std::string work = "sweep test-work";
  std::vector<PlanFate> plan = {};
};

void write_store(const fs::path& path, const StoreSpec& spec) {
  db::Store store = db::Store::open(path);
  const std::int64_t run_id = store.begin_run(test::h200_sweep_run("test " + path.string()));
  store.add_source(spec.source_hash, "sparse_mla_decode");
  if (spec.shard) {
    db::record_shard(store, run_id, spec.shard->index, spec.shard->count, spec.work);
  }
  for (const Timed& timed : spec.trials) {
    db::TrialRecord trial;
    trial.run_id = run_id;
    trial.problem_id = store.problem_id({"sparse_mla_decode", kShape, timed.batch});
    trial.source_hash = spec.source_hash;
    trial.stage = db::Stage::measure;
    trial.budget_arch = "sm_90";
    trial.measured_arch = "sm_90";
    trial.device_name = "NVIDIA H200";
    trial.params_json = timed.params;
    trial.fate = timed.fate;
    trial.reason = "test";
    trial.measure_env = "env";
    if (timed.fate == db::Fate::measured) {
      trial.median_us = timed.median_us;
      trial.p10_us = timed.median_us * (1 - timed.spread / 2);
      trial.p90_us = timed.median_us * (1 + timed.spread / 2);
      trial.samples = 30;
      trial.rel_spread = timed.spread;
      if (timed.launch_quantiles) trial.launch_p10_us = timed.median_us * 0.97;
      if (timed.launch_quantiles) trial.launch_p90_us = timed.median_us * 1.05;
    }
    store.record_trial(trial);
  }
  for (const PlanFate& fate : spec.plan) {
    db::TrialRecord trial;
    trial.run_id = run_id;
    trial.problem_id = store.problem_id({"sparse_mla_decode", kShape, std::nullopt});
    trial.source_hash = spec.source_hash;
    trial.budget_arch = "sm_90";
    trial.params_json = fate.params;
    trial.fate = fate.fate;
    trial.reason = fate.reason;
    trial.members = fate.members;
    store.record_trial(trial);
  }
  if (spec.ended) store.end_run(run_id);
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::int64_t count_trials(const fs::path& path) {
  return db::Store::open_read_only(path).count_trials();
}

// NAME-1.db (the default at batch 8, 20 us) and NAME-2.db (kX at x_us), merged into NAME.db.
void merge_two_shards(const test::TempDir& dir, const std::string& name, double x_us) {
  write_store(dir / (name + "-1.db"), {ShardSpec{1, 2}, {{8, default_params(), 20.0, 0.01}}});
  write_store(dir / (name + "-2.db"), {ShardSpec{2, 2}, {{8, kX, x_us, 0.01}}});
  run_merge({(dir / (name + ".db")).string(),
             {(dir / (name + "-1.db")).string(), (dir / (name + "-2.db")).string()}});
}

}  // namespace

TEST_CASE("shard: i/N parses, out of range and malformed texts are refused naming the fix") {
  const ShardSpec spec = parse_shard("3/8");
  CHECK(spec.index == 3);
  CHECK(spec.count == 8);
  CHECK(spec.text() == "3/8");
  CHECK_FALSE(parse_shard("1/1").sharded());
  for (const char* bad : {"0/4", "5/4", "4", "a/4", "1/0", "01/4", "1/4x", "-1/4", "/4", "1/"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_shard(bad), InputError);
  }
  try {
    parse_shard("5/4");
    FAIL("5/4 was accepted");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()).find("out of range") != std::string::npos);
    CHECK(std::string(error.what()).find("1 <= i <= N") != std::string::npos);
  }
}

TEST_CASE("shard: every item falls in exactly one shard, by FNV-1a 64 of its key") {
  // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the published test vector): mod 3 = 1, mod 4 = 0.
  CHECK(shard_of("a", 3) == 2);
  CHECK(shard_of("a", 4) == 1);
  std::set<int> used;
  for (int i = 0; i < 500; ++i) {
    const std::string key =
        sweep_item_key(kShape, i % 11, "{\"block_t\":" + std::to_string(i) + "}");
    int owners = 0;
    for (int index = 1; index <= 7; ++index) owners += in_shard(ShardSpec{index, 7}, key) ? 1 : 0;
    CHECK(owners == 1);
    used.insert(shard_of(key, 7));
  }
  CHECK(used.size() == 7);  // 500 items leave no shard of 7 empty
}

TEST_CASE("merge: complete shards give the union, winners decided by the noise-aware rule") {
  test::TempDir dir;
  const std::string d = default_params();
  // batch 8: X is 2x faster than the default and does not overlap it; Y is within noise.
  write_store(dir / "s1.db", {ShardSpec{1, 2}, {{8, d, 20.0, 0.01}, {8, kY, 19.9, 0.01}}});
  write_store(dir / "s2.db", {ShardSpec{2, 2}, {{8, kX, 10.0, 0.01}, {16, d, 30.0, 0.01}}});
  const MergeRequest request{(dir / "out.db").string(),
                             {(dir / "s1.db").string(), (dir / "s2.db").string()}};
  const MergeSummary summary = run_merge(request);
  REQUIRE(summary.shard_sets.size() == 1);
  CHECK(summary.shard_sets[0].count == 2);
  CHECK(summary.trials_added == 4);
  CHECK(summary.conflicts.empty());
  const db::Store out = db::Store::open_read_only(dir / "out.db");
  CHECK(out.count_trials() == 4);
  CHECK(out.runs().size() == 2);
  const std::vector<db::WinnerRecord> winners = out.winners();
  REQUIRE(winners.size() == 2);  // batch 16 has only the default: it is kept
  const db::WinnerRecord& b8 = winners[0].batch == 8 ? winners[0] : winners[1];
  const db::WinnerRecord& b16 = winners[0].batch == 8 ? winners[1] : winners[0];
  CHECK(b8.params_json == kX);
  CHECK(b8.decision == db::Decision::tuned);
  CHECK(b8.speedup_vs_default == doctest::Approx(2.0));
  CHECK(b8.default_median_us == doctest::Approx(20.0));
  CHECK(b16.params_json == d);
  CHECK(b16.decision == db::Decision::default_kept);
}

TEST_CASE("merge: a plan fate every shard recorded is held once, a different one is kept") {
  test::TempDir dir;
  const std::string d = default_params();
  const PlanFate x{kX, db::Fate::survivor, "fits"};
  StoreSpec first{ShardSpec{1, 2}, {{8, d, 20.0, 0.01}}};
  first.plan = {x, PlanFate{kY, db::Fate::pruned_budget, "smem 300000 B"}};
  StoreSpec second{ShardSpec{2, 2}, {{8, kX, 10.0, 0.01}}};
  second.plan = {x, PlanFate{kY, db::Fate::pruned_budget, "smem 300001 B"}};
  write_store(dir / "s1.db", first);
  write_store(dir / "s2.db", second);
  const MergeRequest request{(dir / "out.db").string(),
                             {(dir / "s1.db").string(), (dir / "s2.db").string()}};
  const MergeSummary summary = run_merge(request);
  CHECK(summary.plan_fates_shared == 1);  // s2's copy of kX's fate
  CHECK(summary.trials_added == 2 + 3);   // two measured, kX once, kY's two different reasons
  const db::Store out = db::Store::open_read_only(dir / "out.db");
  db::TrialFilter plan;
  plan.stage = db::Stage::plan;
  CHECK(out.count_trials(plan) == 3);
  CHECK(out.runs().size() == 2);
  const MergeSummary again = run_merge(request);
  CHECK(again.trials_added == 0);
  CHECK(again.plan_fates_shared == 4);  // every incoming plan fate is held already
  CHECK(db::Store::open_read_only(dir / "out.db").count_trials(plan) == 3);
}

TEST_CASE("merge: every column of a trial arrives (launch quantiles, a narrowed value's members)") {
  test::TempDir dir;
  StoreSpec first{ShardSpec{1, 2}, {{8, default_params(), 20.0, 0.01, db::Fate::measured, true}}};
  first.plan = {PlanFate{R"({"block_h":64})", db::Fate::pruned_shape, "BLOCK_H 64", 393660}};
  write_store(dir / "s1.db", first);
  write_store(dir / "s2.db", {ShardSpec{2, 2}, {{8, kX, 10.0, 0.01}}});
  run_merge({(dir / "out.db").string(), {(dir / "s1.db").string(), (dir / "s2.db").string()}});
  bool quantiles = false;
  bool members = false;
  for (const db::TrialRecord& trial :
       db::Store::open_read_only(dir / "out.db").trials(db::TrialFilter{})) {
    if (trial.params_json == default_params()) {
      quantiles = trial.launch_p10_us.value_or(0.0) == doctest::Approx(20.0 * 0.97) &&
                  trial.launch_p90_us.value_or(0.0) == doctest::Approx(20.0 * 1.05);
    }
    if (trial.stage == db::Stage::plan) members = trial.members == 393660;
  }
  CHECK(quantiles);
  CHECK(members);
}

TEST_CASE("merge: merging the same files again changes nothing") {
  test::TempDir dir;
  const std::string d = default_params();
  write_store(dir / "s1.db", {ShardSpec{1, 2}, {{8, d, 20.0, 0.01}}});
  write_store(dir / "s2.db", {ShardSpec{2, 2}, {{8, kX, 10.0, 0.01}}});
  const MergeRequest request{(dir / "out.db").string(),
                             {(dir / "s1.db").string(), (dir / "s2.db").string()}};
  run_merge(request);
  const std::vector<db::WinnerRecord> first = db::Store::open_read_only(dir / "out.db").winners();
  const MergeSummary again = run_merge(request);
  CHECK(again.runs_added == 0);
  CHECK(again.trials_added == 0);
  CHECK(again.trials_already_there == 2);
  const db::Store out = db::Store::open_read_only(dir / "out.db");
  CHECK(out.count_trials() == 2);
  CHECK(out.runs().size() == 2);
  const std::vector<db::WinnerRecord> second = out.winners();
  REQUIRE(second.size() == first.size());
  CHECK(second[0].params_json == first[0].params_json);
  CHECK(second[0].median_us == first[0].median_us);
}

TEST_CASE(
    "merge: conflicting timings of one config: the smaller spread wins, a wrong result "
    "beats any timing, each conflict is reported") {
  test::TempDir dir;
  const std::string d = default_params();
  write_store(dir / "a.db",
              {std::nullopt, {{8, d, 20.0, 0.01}, {8, kX, 10.0, 0.05}, {8, kY, 9.0, 0.01}}});
  write_store(dir / "b.db",
              {std::nullopt, {{8, kX, 11.0, 0.01}, {8, kY, 0, 0, db::Fate::wrong_result}}});
  const MergeSummary summary =
      run_merge({(dir / "out.db").string(), {(dir / "a.db").string(), (dir / "b.db").string()}});
  CHECK(summary.conflicts.size() == 2);
  const db::Store out = db::Store::open_read_only(dir / "out.db");
  CHECK(out.count_trials() == 3);  // one row per resume key
  int checked = 0;
  for (const db::TrialRecord& trial : out.trials()) {
    if (trial.params_json == kX) {
      CHECK(*trial.median_us == doctest::Approx(11.0));  // spread 1% beats 5%
      ++checked;
    }
    if (trial.params_json == kY) {
      CHECK(trial.fate == db::Fate::wrong_result);
      ++checked;
    }
  }
  CHECK(checked == 2);
  const std::vector<db::WinnerRecord> winners = out.winners();
  REQUIRE(winners.size() == 1);
  CHECK(winners[0].params_json == kX);  // Y (9 us) gave a wrong result somewhere: never a winner
}

TEST_CASE("merge: a config the batch search skipped in one store keeps its timing from another") {
  test::TempDir dir;
  write_store(dir / "a.db",
              {std::nullopt, {{8, default_params(), 20.0, 0.01}, {8, kX, 10.0, 0.01}}});
  write_store(dir / "b.db", {std::nullopt, {{8, kX, 0, 0, db::Fate::skipped_by_search}}});
  const MergeSummary summary =
      run_merge({(dir / "out.db").string(), {(dir / "a.db").string(), (dir / "b.db").string()}});
  CHECK(summary.conflicts.empty());  // a skip is no timing: it competes with none
  const db::Store out = db::Store::open_read_only(dir / "out.db");
  db::TrialFilter measured;
  measured.fate = db::Fate::measured;
  CHECK(out.count_trials(measured) == 2);
  CHECK(out.count_trials() == 3);
  const std::vector<db::WinnerRecord> winners = out.winners();
  REQUIRE(winners.size() == 1);
  CHECK(winners[0].params_json == kX);
}

TEST_CASE("merge: missing, overlapping or unfinished shards are refused, nothing is written") {
  test::TempDir dir;
  const std::string d = default_params();
  write_store(dir / "s1.db", {ShardSpec{1, 3}, {{8, d, 20.0, 0.01}}});
  write_store(dir / "s2.db", {ShardSpec{2, 3}, {{8, kX, 10.0, 0.01}}});
  write_store(dir / "s2b.db", {ShardSpec{2, 3}, {{8, kY, 10.0, 0.01}}});
  write_store(dir / "s3.db", {ShardSpec{3, 3}, {}, mla().source_hash(), /*ended=*/false});
  const std::string out = (dir / "out.db").string();
  auto refused = [&](std::vector<std::string> inputs, const std::string& words) {
    CAPTURE(words);
    try {
      run_merge({out, inputs});
      FAIL("merged");
    } catch (const InputError& error) {
      CHECK(std::string(error.what()).find(words) != std::string::npos);
    }
    CHECK_FALSE(fs::exists(out));
  };
  const std::string s1 = (dir / "s1.db").string(), s2 = (dir / "s2.db").string();
  refused({s1, s2}, "shard 3/3 of 'sweep test-work' is missing");
  refused({s1, s2, (dir / "s2b.db").string(), (dir / "s3.db").string()}, "overlapping shards");
  refused({s1, s2, (dir / "s3.db").string()}, "never finished");
  refused({s1, s1}, "given twice");
  // Re-submitting the killed shard resumes into its DB: a finished run completes the set.
  write_store(dir / "s3.db", {ShardSpec{3, 3}, {{8, kY, 15.0, 0.01}}});
  const MergeSummary summary = run_merge({out, {s1, s2, (dir / "s3.db").string()}});
  REQUIRE(summary.shard_sets.size() == 1);
  CHECK(summary.shard_sets[0].resumed == 1);
  CHECK(count_trials(out) == 3);
}

TEST_CASE("merge: DBs of different kernel sources or schema versions are refused, OUT unchanged") {
  test::TempDir dir;
  const std::string d = default_params();
  write_store(dir / "a.db", {std::nullopt, {{8, d, 20.0, 0.01}}});
  write_store(dir / "b.db", {std::nullopt, {{8, kX, 10.0, 0.01}}, "other-source-hash"});
  const std::string out = (dir / "out.db").string();
  run_merge({out, {(dir / "a.db").string()}});
  const std::string before = file_bytes(out);
  try {
    run_merge({out, {(dir / "b.db").string()}});
    FAIL("merged two sources");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()).find("different kernel sources") != std::string::npos);
  }
  CHECK(file_bytes(out) == before);
  const fs::path v1 = dir / "v1.db";
  std::ifstream sql(fs::path(TUNER_SOURCE_DIR) / "tests/data/store_v1.sql");
  std::stringstream text;
  text << sql.rdbuf();
  db::Connection::open(v1, db::OpenMode::read_write_create).exec(text.str());
  CHECK_THROWS(run_merge({out, {v1.string()}}));
  CHECK(file_bytes(out) == before);
}

TEST_CASE("CLI: bad shards, merge inputs and --devices exit 2 naming the input, nothing written") {
  test::TempDir dir;
  const std::string tuner = test::kTunerBinary;
  const std::string out = (dir / "out.db").string();
  write_store(dir / "s1.db", {ShardSpec{1, 2}, {{8, default_params(), 20.0, 0.01}}});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {tuner + " merge " + out + " " + (dir / "s1.db").string(), "shard 2/2"},
      {tuner + " merge " + out + " " + (dir / "nope.db").string(), "does not exist"},
      {tuner + " merge " + out, "at least one IN.db"},
      {tuner + " merge --force " + out + " " + (dir / "s1.db").string(), "file names only"},
      {tuner + " plan --family fp8_gemm --shard 5/4 --db " + out, "out of range"},
      {tuner + " sweep --devices 0,x --db " + out, "not a GPU ordinal"},
      {tuner + " sweep --shard 0/3 --db " + out, "is not i/N"},
  };
  for (const auto& [command, words] : cases) {
    CAPTURE(command);
    const test::CommandResult result = test::run_command(command + " 2>&1");
    CHECK(result.exit_code == 2);
    CHECK(result.output.find(words) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("CLI: tuner diff compares two merged stores by their winners (exit 1 when slower)") {
  test::TempDir dir;
  merge_two_shards(dir, "old", 10.0);
  merge_two_shards(dir, "new", 15.0);  // X 50 % slower
  const std::string diff = test::kTunerBinary + " diff --db " + (dir / "old.db").string() +
                           " --db " + (dir / "new.db").string() + " 2>&1";
  const test::CommandResult slower = test::run_command(diff);
  CHECK(slower.exit_code == 1);
  CHECK(slower.output.find("1 of 1 batches slower") != std::string::npos);
  const test::CommandResult same =
      test::run_command(test::kTunerBinary + " diff --db " + (dir / "old.db").string() + " --db " +
                        (dir / "old.db").string() + " 2>&1");
  CHECK(same.exit_code == 0);
}
