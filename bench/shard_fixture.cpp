// Writes N shard DBs of the default sweep (the default family and shape) through the real
// store, as N `tuner sweep --shard i/N` runs on one GPU model would: each shard records the whole
// plan (every config of the space, plan stage) and measured trials for its slice of
// (batch, candidate). Two modes:
//   sweep (default): the default sweep's 51 CUDA-graph batch sizes (shards run exhaustively) and
//     the candidates a sweep measures: the configs the family's named and sm_90 rules keep;
//   all: the 11 batches before issue 12, every config of the space a candidate (an upper bound).
// The timings are fixture data (a hash of the item), not measurements: the files exist to time
// `tuner merge` (BENCHMARKS.md), not to pick configs.
//
// Usage: tuner_shard_fixture OUT_DIR N [sweep|all]    -> OUT_DIR/shard-1.db ... shard-N.db
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "db/store/shards.hpp"
#include "db/store/store.hpp"
#include "kernels/registry.hpp"
#include "tuner/batch_set.hpp"
#include "tuner/plan_record.hpp"
#include "tuner/run_info.hpp"
#include "tuner/shard.hpp"

namespace {

const std::vector<int> kOldBatches{1, 2, 4, 8, 16, 32, 48, 64, 80, 96, 128};

// The configs the shards measure: every config ("all"), or those the family's rules keep for the
// default shape on sm_90, less its measured trims (a real sweep's candidates, before the budget
// and compile prunes).
std::vector<tuner::Config> candidates(const tuner::Family& family, const tuner::Shape& shape,
                                      bool all) {
  std::vector<tuner::Config> kept;
  for (const tuner::Config& config : tuner::cross_product(family.space())) {
    const bool trimmed = family.trims != nullptr && !family.trims(config).empty();
    if (all || (family.rules(config, shape).empty() && !trimmed &&
                family.arch_rules(config, 90).empty())) {
      kept.push_back(config);
    }
  }
  return kept;
}

tuner::db::TrialRecord measured(std::int64_t run, std::int64_t problem, const std::string& hash,
                                const std::string& params, std::uint64_t seed) {
  tuner::db::TrialRecord trial;
  trial.run_id = run;
  trial.problem_id = problem;
  trial.source_hash = hash;
  trial.stage = tuner::db::Stage::measure;
  trial.budget_arch = "sm_90";
  trial.measured_arch = "sm_90";
  trial.device_name = "NVIDIA H200";
  trial.params_json = params;
  trial.fate = tuner::db::Fate::measured;
  trial.reason = "verified and timed";
  const double median = 10.0 + static_cast<double>(seed % 10000) / 100.0;
  trial.median_us = median;
  trial.p10_us = median * 0.995;
  trial.p90_us = median * 1.005;
  trial.samples = 40;
  trial.rel_spread = 0.01;
  trial.measure_env = "nvrtc 13.0, driver 13000, protocol 1";
  return trial;
}

void write_shard(const std::filesystem::path& path, const tuner::ShardSpec& shard, bool all) {
  const tuner::Family& family = *tuner::families().front();  // the CLI's default family
  const tuner::Shape typed = family.canonicalize(family.default_shapes.front().values);
  const std::string shape = typed.canonical();
  const std::vector<int> batches = all ? kOldBatches : tuner::cudagraph_batches(512);
  const std::string& hash = family.source_hash();
  tuner::db::Store store = tuner::db::Store::open(path);
  tuner::db::RunInfo run = tuner::base_run_info(
      tuner::db::RunKind::sweep, "sm_90", "tuner sweep --shard " + shard.text() + " (fixture)");
  run.gpu_name = "NVIDIA H200";
  run.measured_arch = "sm_90";
  const std::int64_t run_id = store.begin_run(run);
  store.add_source(hash, family.name);
  tuner::db::record_shard(store, run_id, shard.index, shard.count,
                          tuner::sweep_work(family.name, shape, "sm_90", batches));
  const std::vector<tuner::Config> configs = tuner::cross_product(family.space());
  const std::int64_t plan_problem = store.problem_id({family.name, shape, std::nullopt});
  std::vector<tuner::db::TrialRecord> plan_rows;  // one transaction, as the plan records them
  for (const tuner::Config& config : configs) {
    tuner::db::TrialRecord trial;
    trial.run_id = run_id;
    trial.problem_id = plan_problem;
    trial.source_hash = hash;
    trial.budget_arch = "sm_90";
    trial.params_json = tuner::to_json(config);
    trial.reason = "fixture survivor";
    plan_rows.push_back(std::move(trial));
  }
  tuner::record_plan_trials(store, plan_rows);  // rows and digest, as the sweep records them
  const std::vector<tuner::Config> measured_configs = candidates(family, typed, all);
  for (int batch : batches) {
    const std::int64_t problem = store.problem_id({family.name, shape, batch});
    for (const tuner::Config& config : measured_configs) {
      const std::string params = tuner::to_json(config);
      const std::string key = tuner::sweep_item_key(shape, batch, params);
      if (!tuner::in_shard(shard, key)) continue;
      store.record_trial(measured(run_id, problem, hash, params, std::hash<std::string>{}(key)));
    }
  }
  store.end_run(run_id);
}

}  // namespace

int main(int argc, char** argv) {
  const bool all = argc == 4 && std::string(argv[3]) == "all";
  if ((argc != 3 && argc != 4) || (argc == 4 && !all && std::string(argv[3]) != "sweep")) {
    std::fprintf(stderr, "usage: %s OUT_DIR N [sweep|all]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int count = std::atoi(argv[2]);
  std::filesystem::create_directories(dir);
  for (int index = 1; index <= count; ++index) {
    const auto path = dir / ("shard-" + std::to_string(index) + ".db");
    std::filesystem::remove(path);
    write_shard(path, tuner::ShardSpec{index, count}, all);
    std::printf("%s\n", path.c_str());
  }
  return 0;
}
