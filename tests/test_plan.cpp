#include "tuner/plan.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using tuner::Fate;
using tuner::PlanResult;
using tuner::PlanRow;

namespace {

using tuner::test::TempDir;

tuner::PlanRequest default_request(const std::string& arch) {
  tuner::PlanRequest request;
  request.family = &tuner::smla_family::family();
  // 64 heads, TP 4 (16 local heads), topk 2048, fp8_ds_mla, page 64
  request.shape = tuner::smla_family::canonical_shape(tuner::smla_family::Shape{});
  request.arch = tuner::arch_by_name(arch);
  return request;
}

// The cold plan of the default problem on sm_120, run once per process: the cases below share it
// (and its cache) so that the test compiles the space as few times as it can.
struct Sm120Plan {
  TempDir cache_dir;
  tuner::CubinCache cache{cache_dir.path()};
  PlanResult result = tuner::plan(default_request("sm_120"), cache);
};

const Sm120Plan& sm120_plan() {
  static const Sm120Plan plan;
  return plan;
}

// The row of one config; mma_path, producers, kv_unpack and ctas_per_sm default to the seeds'
// structure (0, 0, 0, 1).
const PlanRow& find_row(const PlanResult& result, int block_t, int block_h, int warps, int stages,
                        int ctas, int mma_path = 0, int producers = 0, int kv_unpack = 0,
                        int ctas_per_sm = 1) {
  for (const PlanRow& row : result.rows) {
    const tuner::Config& k = row.config;
    if (k.at("block_t") == block_t && k.at("block_h") == block_h && k.at("num_warps") == warps &&
        k.at("num_stages") == stages && k.at("target_ctas") == ctas &&
        k.at("mma_path") == mma_path && k.at("producers") == producers &&
        k.at("kv_unpack") == kv_unpack && k.at("ctas_per_sm") == ctas_per_sm) {
      return row;
    }
  }
  throw std::runtime_error("config not in the plan");
}

struct CommandOutput {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs the built `tuner` binary with `args` (shell words), capturing stdout and stderr apart.
CommandOutput run_tuner(const std::string& args) {
  TempDir err_dir;
  const fs::path err = err_dir / "err";
  const tuner::test::CommandResult run =
      tuner::test::run_command(tuner::test::kTunerBinary + " " + args + " 2>" + err.string());
  return CommandOutput{run.exit_code, run.output, slurp(err)};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("plan: budget reasons name the limit and the figure") {
  const tuner::Arch sm120 = tuner::arch_by_name("sm_120");
  tuner::Occupancy occupancy;
  CHECK(tuner::budget_prune_reason({110592, 100, 128}, sm120, &occupancy) ==
        "shared memory 110592 B > 101376 B per block on sm_120");
  CHECK(tuner::budget_prune_reason({1024, 272, 128}, sm120, &occupancy) ==
        "estimated 272 registers/thread > 255");
  // 1024 threads x 128 registers = 131072 > 65536 registers per block: no block can be resident.
  const std::string reason = tuner::budget_prune_reason({1024, 128, 1024}, sm120, &occupancy);
  CHECK(reason.rfind("0 resident blocks per SM: registers", 0) == 0);
  CHECK(occupancy.blocks_per_sm == 0);
  CHECK(tuner::budget_prune_reason({60000, 128, 128}, sm120, &occupancy).empty());
  CHECK(occupancy.blocks_per_sm == 1);
}

TEST_CASE("plan: after-compile reasons: spills (unless allowed), the register file") {
  const tuner::Arch sm120 = tuner::arch_by_name("sm_120");
  const tuner::StaticBudget budget{60000, 120, 128};
  tuner::CompiledFigures figures;
  figures.succeeded = true;
  figures.ptxas.registers = 255;
  figures.ptxas.spill_store_bytes = 4;
  figures.ptxas.spill_load_bytes = 8;
  figures.occupancy = tuner::compute_occupancy(sm120, {128, 255, 60000});
  CHECK(tuner::after_compile_prune_reason(figures, budget, sm120, false) ==
        "ptxas spills 12 B (stores 4 B, loads 8 B; --allow-spills keeps it)");
  CHECK(tuner::after_compile_prune_reason(figures, budget, sm120, true).empty());

  const tuner::StaticBudget wide{60000, 120, 512};
  figures.ptxas.spill_store_bytes = figures.ptxas.spill_load_bytes = 0;
  figures.ptxas.registers = 200;
  figures.occupancy = tuner::compute_occupancy(sm120, {512, 200, 60000});
  CHECK(tuner::after_compile_prune_reason(figures, wide, sm120, false) ==
        "ptxas 200 registers x 512 threads = 102400 > 65536 registers per SM on sm_120");
}

TEST_CASE("plan: 64 heads / TP 4 on sm_120, cold and warm cache, audit") {
  const PlanResult& plan = sm120_plan().result;

  SUBCASE("16 local heads; one row per member of BLOCK_H 16, each with a reason; 32 and 64 once") {
    CHECK(plan.shape.integer("local_heads") == 16);
    // BLOCK_T 3 x BLOCK_H 3 x warps 3 x stages 6 x mma_path 3 x producers 4 x kv_unpack 3 x
    // ctas_per_sm 3 x TARGET_CTAS 5 x merge 6 x schedule 3; BLOCK_H 32 and 64 are a third each.
    REQUIRE(plan.rows.size() == 3u * 3 * 3 * 6 * 3 * 4 * 3 * 3 * 5 * 6 * 3 / 3);
    std::set<std::string> configs;
    for (const PlanRow& row : plan.rows) {
      configs.insert(tuner::to_json(row.config));
      CHECK_FALSE(row.reason.empty());
      CHECK(row.config.at("block_h") == 16);
    }
    CHECK(configs.size() == plan.rows.size());
    REQUIRE(plan.narrowed.size() == 2);
    CHECK(plan.narrowed[0].param == "block_h");
    CHECK(plan.narrowed[0].value == 32);
    CHECK(plan.narrowed[0].reason == "BLOCK_H 32 > 16 local heads");
    CHECK(plan.narrowed[1].value == 64);
    CHECK(plan.narrowed[0].members == 1574640 / 3);
    CHECK(plan.narrowed[1].members == 1574640 / 3);
    int total = 0;
    for (Fate fate : tuner::kAllFates) total += plan.count(fate);
    CHECK(total == 1574640);
    CHECK(plan.members() == 1574640);
  }

  SUBCASE("the baseline survives and its estimated smem is the kernel's layout") {
    const PlanRow& row = find_row(plan, 16, 16, 4, 2, 512);
    CHECK(row.fate == Fate::survivor);
    REQUIRE(row.budget.has_value());
    CHECK(row.budget->smem_bytes_per_block ==
          static_cast<int>(smla::smem_layout(16, 16, 4, 2, smla::kFp8DsMla).total_bytes));
    REQUIRE(row.compiled.has_value());
    CHECK(row.compiled->succeeded);
    CHECK(row.compiled->ptxas.registers > 0);
    CHECK(row.compiled->occupancy.blocks_per_sm >= 1);
  }

  SUBCASE("every config over 101376 B is pruned_budget with its byte count in the reason") {
    int over = 0;
    for (const PlanRow& row : plan.rows) {
      if (!row.budget || row.budget->smem_bytes_per_block <= 101376) continue;
      ++over;
      CHECK(row.fate == Fate::pruned_budget);
      CHECK(contains(row.reason, std::to_string(row.budget->smem_bytes_per_block) + " B"));
      CHECK_FALSE(row.compiled.has_value());  // pruned before any compile
    }
    CHECK(over > 0);
  }

  SUBCASE("BLOCK_T 16 with 8 warps is in the plan with a fate (and 32 with 8 warps)") {
    for (int stages : {1, 2}) {
      const PlanRow& row = find_row(plan, 16, 16, 8, stages, 512);
      CHECK(row.budget.has_value());
      CHECK(row.fate != Fate::pruned_shape);
    }
    CHECK(find_row(plan, 32, 16, 8, 1, 512).fate == Fate::survivor);
  }

  SUBCASE("configs differing only in launch-time values share a compile and a fate") {
    // Keyed by the config without TARGET_CTAS and merge (a hash lookup per row: a linear search
    // per row made this case quadratic in the 104,976 rows, minutes under the sanitizers), and
    // whether merge is the cluster merge, which has its own rule (pipelined kernels only) and
    // budget (its exchange in shared memory), the last-CTA merge (pipelined per-row splits
    // only, and its own sweep trim), bf16 partials (pipelined kernels only, its own sweep
    // trim), or the row-slice merge (pipelined per-row splits only, its own sweep trim): merge 0
    // and 1 share every fate, but for the launch-time trims below.
    std::map<std::string, Fate> fate_by_compiled_part;
    std::set<std::string> compiled_parts;
    std::set<std::string> compiled_keys;
    for (const PlanRow& row : plan.rows) {
      if (row.compiled) {
        compiled_keys.insert(tuner::compile_key(row.config, tuner::smla_family::parameter_space()));
      }
      tuner::Config compiled_part = row.config;  // by hand, not compile_key: checked above
      std::erase_if(compiled_part.values, [](const std::pair<std::string, int>& value) {
        return value.first == "target_ctas" || value.first == "merge";
      });
      const int merge = row.config.at("merge");
      const int target_ctas = row.config.at("target_ctas");
      const char* own_rules = merge == 2   ? " cluster"
                              : merge == 3 ? " last_cta"
                              : merge == 4 ? " bf16_partials"
                              : merge == 5 ? " row_slices"
                                           : "";
      // The launch-time trims (space.cpp): the cluster merge's TARGET_CTAS 0 is 1024's launch,
      // the tile-dividing schedules' grid ignores TARGET_CTAS (swept at 128), and 0 is swept on
      // the 4 consumer + 2 producer warp kernels only.
      const bool four_plus_two = row.config.at("num_warps") == 4 && row.config.at("producers") == 2;
      const bool launch_time_trim = (merge == 2 && target_ctas == 0) ||
                                    (row.config.at("schedule") != 0 && target_ctas != 128) ||
                                    (target_ctas == 0 && !four_plus_two);
      const auto [first, inserted] = fate_by_compiled_part.emplace(
          tuner::to_json(compiled_part) + own_rules + (launch_time_trim ? " trim" : ""), row.fate);
      if (!inserted) CHECK(row.fate == first->second);
      compiled_parts.insert(tuner::to_json(compiled_part));
    }
    // 5 TARGET_CTAS x 6 merge = 30 rows per compiled part.
    CHECK(compiled_parts.size() * 30 == plan.rows.size());
    CHECK(plan.compile_keys == static_cast<int>(compiled_keys.size()));
    CHECK(plan.compiles_done == plan.compile_keys);  // cold cache
    CHECK(plan.pruned_before_compile() ==
          plan.count(Fate::pruned_shape) + plan.count(Fate::pruned_budget));
  }

  SUBCASE("the CLI's JSON, on the warm cache: every member, nothing recompiled") {
    const CommandOutput run = run_tuner(
        "plan --family sparse_mla_decode --arch sm_120 --heads 64 "
        "--tp 4 --format json --cache-dir " +
        sm120_plan().cache_dir.path().string());
    REQUIRE(run.exit_code == 0);
    const nlohmann::json rows = nlohmann::json::parse(run.out);
    REQUIRE(rows.is_array());
    CHECK(rows.size() == 1574640 / 3 + 2);  // BLOCK_H 16's members, then 32 and 64 once each
    long long members = 0;
    for (const nlohmann::json& row : rows) {
      for (const char* key : {"family", "params", "fate", "reason", "est_smem_bytes", "est_regs",
                              "ptxas_regs", "ptxas_spill_bytes", "blocks_per_sm",
                              "occupancy_limiter", "compile_ms", "cached", "members"}) {
        CHECK_MESSAGE(row.contains(key), key);
      }
      members += row["members"].get<long long>();
      // block_t … ctas_per_sm, target_ctas, merge, schedule; a narrowed value names itself only.
      CHECK(row["params"].size() == (row["members"] == 1 ? 11u : 1u));
      if (row["fate"] == "pruned_shape") CHECK(row["est_smem_bytes"].is_null());
      if (row["fate"] == "survivor") CHECK(row["cached"] == true);
    }
    CHECK(members == 1574640);
    CHECK(contains(run.err, "compiled now: 0,"));
    CHECK(contains(run.err, "survivor " + std::to_string(plan.count(Fate::survivor))));
  }

  SUBCASE("the audit (sharing the plan's cache) finds no false prunes") {
    tuner::PlanRequest request = default_request("sm_120");
    request.audit = true;
    const PlanResult audit = tuner::plan(request, sm120_plan().cache);
    CHECK(audit.false_prunes == 0);
    // Kept by the budget but spilling after compile: the static model's misses, each listed.
    CHECK(audit.false_keeps == audit.count(Fate::pruned_after_compile));
    CHECK(audit.compiles_done == audit.compile_keys - plan.compile_keys);  // only the new ones
    // Budget prunes are compiled to audit them; arch-rule prunes (no budget figures) are not.
    for (const PlanRow& row : audit.rows) {
      if (row.fate == Fate::pruned_budget)
        CHECK(row.compiled.has_value() == row.budget.has_value());
    }
  }
}

TEST_CASE("plan: the audit finds no false prunes on sm_90") {
  TempDir dir;
  const tuner::CubinCache cache(dir.path());
  tuner::PlanRequest request = default_request("sm_90");
  request.audit = true;
  const PlanResult audit = tuner::plan(request, cache);
  CHECK(audit.members() == 1574640);        // the cross product above
  CHECK(audit.rows.size() == 1574640 / 3);  // BLOCK_H 16; 32 and 64 ruled out by the shape
  CHECK(audit.false_prunes == 0);
  CHECK(audit.count(Fate::survivor) > 0);
  // sm_90's 227 KB opt-in keeps the 64-token pipelined tiles that sm_120 prunes.
  CHECK(find_row(audit, 64, 16, 4, 2, 512, 1, 2).fate == Fate::survivor);
  // e4m3 MMA is emulated on sm_90: pruned by the arch rule, not audited as a budget prune.
  const PlanRow& fp8_mma = find_row(audit, 64, 16, 4, 2, 512, 2, 2);
  CHECK(fp8_mma.fate == Fate::pruned_budget);
  CHECK(contains(fp8_mma.reason, "emulated on sm_90"));
  CHECK_FALSE(fp8_mma.compiled.has_value());
}

TEST_CASE("plan CLI: bad input exits 2 with a message naming the input") {
  TempDir dir;
  const std::string cache = " --cache-dir " + dir.path().string();
  struct Case {
    std::string args;
    std::string message;
  };
  const fs::path file = dir.path() / "a-file";
  std::ofstream(file) << "x";
  const Case cases[] = {
      {"plan --family nope" + cache, "unknown family 'nope'"},
      {"plan --arch sm_99" + cache, "unknown arch 'sm_99'"},
      {"plan --kv fp4" + cache, "--kv 'fp4' is not allowed for sparse_mla_decode: use one of"},
      {"plan --heads 64 --tp 5" + cache, "not divisible by tp 5"},
      {"plan --heads ''" + cache, "--heads needs a positive integer, got ''"},
      {"plan --topk abc" + cache, "--topk needs a positive integer, got 'abc'"},
      {"plan --format xml" + cache, "--format 'xml' is not known"},
      {"plan --jobs -3" + cache, "--jobs"},
      {"plan --cache-dir " + (file / "cache").string(),
       "cache directory '" + (file / "cache").string() + "' cannot be used"},
      {"plan --cache-dir ''", "--cache-dir is empty"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const CommandOutput run = run_tuner(c.args);
    CHECK(run.exit_code == 2);
    CHECK_MESSAGE(contains(run.err, c.message), run.err);
  }
}

TEST_CASE("plan CLI: --help describes the options") {
  const CommandOutput run = run_tuner("plan --help");
  CHECK(run.exit_code == 0);
  for (const char* option : {"--arch", "--heads", "--tp", "--topk", "--kv", "--format", "--audit",
                             "--allow-spills", "--cache-dir", "--jobs"}) {
    CHECK_MESSAGE(contains(run.out, option), option);
  }
}
