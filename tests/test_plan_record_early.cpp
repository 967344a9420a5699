// A cold plan recorded in two parts (tuner sweep): the rows decided before any compile while the
// compiles run (PlanRequest::while_compiling, record_decided_rows), then the rest and the digests
// (finish_plan_record). The store must end up as record_plan leaves it: the same rows, the same
// merge digest, the same plan-run digest, so that a rerun finds the plan held. Real SQLite files,
// and a real plan of the fp8_gemm family, narrowed to one compile key, for the callback's contract.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/cubin_cache.hpp"
#include "db/store/plan_run.hpp"
#include "db/store/store.hpp"
#include "kernels/fp8_gemm/family.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "tests/support/hand_made_plan.hpp"
#include "tests/support/temp_dir.hpp"
#include "tuner/plan_record.hpp"
#include "tuner/run_info.hpp"

namespace {

constexpr std::size_t npos = std::string_view::npos;

// 400 configs of the sparse MLA family with every fate (the compiled ones carry figures), and two
// values the shape rules out, one row each.
tuner::PlanResult hand_made_plan() {
  tuner::PlanResult plan = tuner::test::hand_made_plan(400, 7);
  plan.narrowed = {{"block_h", 32, "BLOCK_H 32 > 16 local heads", 393660},
                   {"block_h", 64, "BLOCK_H 64 > 16 local heads", 393660}};
  for (std::size_t index = 0; index < plan.rows.size(); ++index) {
    tuner::PlanRow& row = plan.rows[index];
    if (row.fate == tuner::Fate::pruned_shape || row.fate == tuner::Fate::pruned_budget) continue;
    row.compiled = tuner::CompiledFigures{};
    row.compiled->succeeded = row.fate != tuner::Fate::compile_failed;
    row.compiled->ptxas.registers = 100 + static_cast<int>(index % 50);
  }
  return plan;
}

// Every plan row as the store keeps it, in a fixed order.
using Row =
    std::tuple<std::string, std::string, std::string, std::string, std::string, std::int64_t>;
std::vector<Row> stored_rows(const tuner::db::Store& store) {
  std::vector<Row> rows;
  for (const tuner::db::TrialRecord& trial : store.trials()) {
    rows.emplace_back(trial.params_json, std::string(tuner::db::to_string(trial.fate)),
                      trial.reason, trial.compile_key.value_or("-"),
                      std::to_string(trial.ptxas_regs.value_or(-1)), trial.members.value_or(1));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::string one_text(const tuner::db::Store& store, const std::string& sql) {
  tuner::db::Statement select = store.connection().prepare(sql);
  REQUIRE(select.step());
  return select.column_text(0);
}

std::int64_t begin(tuner::db::Store& store) {
  return store.begin_run(tuner::base_run_info(tuner::db::RunKind::sweep, "sm_90", "test"));
}

}  // namespace

TEST_CASE("plan record in two parts: the store holds what record_plan writes") {
  const tuner::test::TempDir dir;
  const tuner::PlanResult plan = hand_made_plan();
  const tuner::Family& family = tuner::smla_family::family();
  tuner::PlanRequest request;
  request.family = &family;
  request.shape = plan.shape;
  request.arch = plan.arch;

  tuner::db::Store whole = tuner::db::Store::open(dir.path() / "whole.db");
  tuner::record_plan(whole, begin(whole), plan, family);

  tuner::db::Store parts = tuner::db::Store::open(dir.path() / "parts.db");
  const std::int64_t run = begin(parts);
  CHECK(tuner::plan_never_recorded(parts, request));
  std::vector<bool> decided(plan.rows.size());
  for (std::size_t i = 0; i < decided.size(); ++i) decided[i] = !plan.rows[i].compiled;
  tuner::EarlyPlanRows early = tuner::record_decided_rows(parts, run, plan, decided, family);
  // The narrowed values are decided before any compile too.
  CHECK(parts.count_trials() == 2 + std::count(decided.begin(), decided.end(), true));
  CHECK(early.keys.size() == static_cast<std::size_t>(parts.count_trials()));
  CHECK_FALSE(tuner::plan_never_recorded(parts, request));
  tuner::finish_plan_record(parts, run, plan, family, std::move(early));

  CHECK(parts.count_trials() == 402);
  CHECK(stored_rows(parts) == stored_rows(whole));
  const std::vector<Row> rows = stored_rows(whole);
  CHECK(std::count_if(rows.begin(), rows.end(),
                      [](const Row& row) { return std::get<5>(row) == 393660; }) == 2);
  for (const char* sql : {"SELECT digest || fates FROM plan_digests",
                          "SELECT digest || fates || budget_arch FROM plan_run_digests"}) {
    CAPTURE(sql);
    CHECK(one_text(parts, sql) == one_text(whole, sql));
  }
  // Only the compiled rows name their compile.
  for (const tuner::db::TrialRecord& trial : parts.trials()) {
    CHECK(trial.compile_key.has_value() == (trial.fate != tuner::db::Fate::pruned_shape &&
                                            trial.fate != tuner::db::Fate::pruned_budget));
  }
  // A rerun finds the plan held by this run and writes nothing.
  CHECK(tuner::record_plan_unless_held(parts, begin(parts), plan, family) == run);
  CHECK(parts.count_trials() == 402);
}

TEST_CASE("while_compiling sees the final fates of the rows it is told are decided") {
  const tuner::test::TempDir dir;
  const tuner::CubinCache cache(dir.path());
  const tuner::Family& gemm = tuner::fp8_gemm::family();
  tuner::PlanRequest request;
  request.family = &gemm;
  request.shape = gemm.canonicalize({{"n", "7168"}, {"k", "4096"}, {"block", "128"}});
  request.arch = tuner::arch_by_name("sm_90");
  // The default config's compile key (a survivor: one compile) and the keys of 16 x 32 tiles on 8
  // warps, which the tiling rule prunes without a compile: what the plan must tell apart.
  const std::string key = tuner::compile_key(gemm.default_config(), gemm.space());
  request.keep = [&](std::string_view compile_key) {
    return compile_key == key || (compile_key.find(R"("block_m":16,"block_n":32)") != npos &&
                                  compile_key.find(R"("num_warps":8)") != npos);
  };
  int calls = 0;
  std::vector<tuner::PlanRow> seen;
  std::vector<bool> seen_decided;
  request.while_compiling = [&](const tuner::PlanResult& partial,
                                const std::vector<bool>& decided) {
    ++calls;
    seen = partial.rows;
    seen_decided = decided;
  };
  const tuner::PlanResult plan = tuner::plan(request, cache);
  CHECK(calls == 1);
  REQUIRE(seen.size() == plan.rows.size());
  REQUIRE(seen_decided.size() == plan.rows.size());
  CHECK(plan.compile_keys == 1);
  int decided_rows = 0;
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    CAPTURE(i);
    CHECK(seen_decided[i] == !plan.rows[i].compiled.has_value());
    if (!seen_decided[i]) continue;
    ++decided_rows;
    CHECK(seen[i].fate == plan.rows[i].fate);
    CHECK(seen[i].reason == plan.rows[i].reason);
  }
  CHECK(decided_rows > 0);
  CHECK(decided_rows < static_cast<int>(plan.rows.size()));  // the default's rows compiled

  request.while_compiling = [](const tuner::PlanResult&, const std::vector<bool>&) {
    throw std::runtime_error("the store is full");
  };
  CHECK_THROWS_WITH_AS(tuner::plan(request, cache), "the store is full", std::runtime_error);
}
