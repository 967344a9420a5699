// tuner sweep: set-up, the plan, the batch search's walk, the multi-GPU pool and shards. One
// candidate's measurement is in sweep_measure.cpp, one batch's finalists and winner in
// sweep_batch.cpp (tuner/sweep_run.hpp holds the run's state).
#include "tuner/sweep.hpp"

#include <algorithm>
#include <chrono>

#include "core/cluster_probe.hpp"
#include "core/cubin_cache.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "db/store/shards.hpp"
#include "tuner/batch_set.hpp"
#include "tuner/device_pool.hpp"
#include "tuner/plan.hpp"
#include "tuner/plan_record.hpp"
#include "tuner/run_info.hpp"
#include "tuner/sweep_run.hpp"

namespace tuner {

using nlohmann::json;

void Progress::step(const std::string& what) {
  ++done_;
  if (request_.on_progress) request_.on_progress(SweepProgress{done_, total_, what});
}

void Progress::note(const std::string& what) const {
  if (request_.on_progress) request_.on_progress(SweepProgress{0, total_, what});
}

SweepSummary SweepRun::run() {
  const auto began = std::chrono::steady_clock::now();
  std::string why_not;
  if (!cuda::gpu_available(&why_not)) {
    throw NoGpuError("tuner sweep needs a GPU to time candidates: " + why_not +
                     ". Without one, `tuner plan --arch sm_120` shows every config's fate.");
  }
  open_store(start_measurers());
  const auto plan_began = std::chrono::steady_clock::now();
  const std::vector<Candidate> candidates = plan_candidates();
  summary_.plan_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - plan_began).count();
  // With several GPUs every item is measured first through the pool; the per-batch pass below
  // then finds them in the DB and re-times the finalists on one GPU.
  Progress progress(request_, count_items(candidates) * (measurers_.size() > 1 ? 2 : 1));
  progress.note("sweep: " + std::to_string(candidates.size()) + " candidates x " +
                std::to_string(request_.batches.size()) + " batches on " + device_name_ + " (" +
                measured_arch_ + "), budget arch " + budget_arch_ + ", run " +
                std::to_string(run_id_));
  if (request_.shard.sharded()) {
    for (int batch : request_.batches) sweep_shard_batch(batch, candidates, progress);
  } else {
    if (measurers_.size() > 1) measure_through_pool(candidates, progress);
    run_search(candidates, progress);
  }
  std::sort(
      summary_.batches.begin(), summary_.batches.end(),
      [](const SweepBatchSummary& a, const SweepBatchSummary& b) { return a.batch < b.batch; });
  store_->end_run(run_id_);
  summary_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return summary_;
}

// The device's figures into the summary, the memory check, then the store and this run's row.
void SweepRun::open_store(const json& info) {
  device_name_ = info.at("device_name").get<std::string>();
  measured_arch_ = "sm_" + std::to_string(info.at("arch_sm").get<int>());
  summary_.copy_gbs = info.at("copy_gbs").get<double>();
  summary_.device_name = device_name_;
  // Refused before anything is recorded: no launch count makes a footprint under 4x L2 safe.
  check_memory_covers_l2(request_.memory_gib * static_cast<double>(1LL << 30),
                         info.at("l2_bytes").get<long long>(),
                         "--memory-gib " + json(request_.memory_gib).dump());
  budget_arch_ = request_.budget_arch.value_or(measured_arch_);
  store_ = std::make_unique<db::Store>(db::Store::open(request_.db_path));
  const db::RunInfo run = run_info(info);
  measure_env_ = measure_env(run.nvrtc_version.value_or("?"), run.driver_version.value_or("?"),
                             kMeasureProtocolVersion);
  run_id_ = store_->begin_run(run);
  summary_.run_id = run_id_;
  if (request_.shard.sharded()) {
    db::record_shard(*store_, run_id_, request_.shard.index, request_.shard.count,
                     sweep_work(request_.family->name, request_.shape.canonical(), budget_arch_,
                                request_.batches));
  }
}

db::RunInfo SweepRun::run_info(const json& info) const {
  db::RunInfo run = base_run_info(db::RunKind::sweep, budget_arch_, request_.command_line);
  run.gpu_name = device_name_;
  run.measured_arch = measured_arch_;
  run.driver_version = std::to_string(info.at("driver_version").get<int>());
  run.copy_bandwidth_gbs = info.at("copy_gbs").get<double>();
  return run;
}

// Plans against the budget arch and records every fate (unless an earlier run holds exactly these:
// a rerun with nothing changed); the survivors are the candidates. A plan no run has recorded
// writes the rows decided before compiling while the compiles run.
std::vector<Candidate> SweepRun::plan_candidates() {
  PlanRequest plan_request;
  plan_request.family = request_.family;
  plan_request.shape = request_.shape;
  plan_request.arch = plan_arch(budget_arch_, nullptr);
  EarlyPlanRows early;
  if (plan_never_recorded(*store_, plan_request)) {
    plan_request.while_compiling = [&](const PlanResult& partial,
                                       const std::vector<bool>& decided) {
      early = record_decided_rows(*store_, run_id_, partial, decided, *request_.family);
    };
  }
  const PlanResult plan = tuner::plan(plan_request, CubinCache(request_.cache_dir));
  if (plan_request.while_compiling) {
    finish_plan_record(*store_, run_id_, plan, *request_.family, std::move(early));
  } else {
    record_plan_unless_held(*store_, run_id_, plan, *request_.family);
  }
  std::vector<Candidate> candidates;
  const Config default_config = request_.family->default_config();
  bool has_default = false;
  for (const PlanRow& row : plan.rows) {
    if (row.fate != Fate::survivor) continue;
    candidates.push_back(Candidate{row.config, false});
    has_default = has_default || row.config == default_config;
  }
  // The default is always measured: it is what every winner is compared against.
  if (!has_default) candidates.insert(candidates.begin(), Candidate{default_config, false});
  if (request_.inject_fault_candidate) {
    Config faulty = default_config;
    faulty.values.emplace_back("test_fault", 1);
    candidates.push_back(Candidate{faulty, true});
  }
  return candidates;
}

// The batch search (tuner/batch_search.hpp) decides which candidates each batch measures.
void SweepRun::run_search(const std::vector<Candidate>& candidates, Progress& progress) {
  std::map<std::string, const Candidate*> by_params;
  std::vector<std::string> params;
  ConfigGroups groups;
  for (const Candidate& candidate : candidates) {
    params.push_back(to_json(candidate.config));
    by_params.emplace(params.back(), &candidate);
    groups[params.back()] = compile_key(candidate.config, request_.family->space());
  }
  // Several GPUs measure every item through the pool first (the queue has no earlier batches to
  // search from), so the search then keeps them all.
  const bool exhaustive = request_.exhaustive || measurers_.size() > 1;
  screening_ = !exhaustive && request_.screen_replays > 0;
  summary_.screen_replays = screening_ ? request_.screen_replays : 0;
  summary_.anchors =
      exhaustive ? request_.batches : anchor_batches(request_.batches, request_.search);
  summary_.verify_batches =
      exhaustive ? request_.batches : verify_batches(summary_.anchors, request_.search);
  const SearchRun run = run_batch_search(
      request_.batches, params, to_json(request_.family->default_config()), request_.search,
      exhaustive,
      [&](int batch, const BatchPick& pick, bool verify) {
        const SameLaunches same = exhaustive ? SameLaunches{pick.measure, {}, {}}
                                             : same_launches(batch, pick.measure, by_params);
        std::vector<Candidate> chosen;
        for (const std::string& p : same.measure) chosen.push_back(*by_params.at(p));
        std::vector<SkippedConfig> skipped = pick.skipped;
        skipped.insert(skipped.end(), same.skipped.begin(), same.skipped.end());
        summary_.same_launch += static_cast<int>(same.skipped.size());
        BatchOutcome outcome = sweep_batch(batch, chosen, skipped, verify, progress, same.copies);
        copy_same_launches(same, outcome);
        return outcome;
      },
      groups);
  summary_.search_s = run.search_s;
}

// The picked configs grouped by what the GPU runs at `batch` (tuner/same_launch.hpp); a family
// without a launch identity measures every config.
SameLaunches SweepRun::same_launches(
    int batch, const std::vector<std::string>& picked,
    const std::map<std::string, const Candidate*>& by_params) const {
  const Family& family = *request_.family;
  if (family.launch_identity == nullptr) return SameLaunches{picked, {}, {}};
  return group_same_launches(
      picked, to_json(family.default_config()), [&](const std::string& params) {
        return family.launch_identity(by_params.at(params)->config, request_.shape, batch);
      });
}

bool SweepRun::in_my_shard(int batch, const Candidate& candidate) const {
  return in_shard(request_.shard,
                  sweep_item_key(request_.shape.canonical(), batch, to_json(candidate.config)));
}

int SweepRun::count_items(const std::vector<Candidate>& candidates) const {
  int items = 0;
  for (int batch : request_.batches) {
    for (const Candidate& candidate : candidates) items += in_my_shard(batch, candidate) ? 1 : 0;
  }
  return items;
}

// A shard measures its items and stops there: a winner needs every candidate of the batch,
// which only tuner merge sees.
void SweepRun::sweep_shard_batch(int batch, const std::vector<Candidate>& candidates,
                                 Progress& progress) {
  const std::int64_t problem_id = store_->problem_id(problem_key(batch));
  SweepBatchSummary batch_summary;
  batch_summary.batch = batch;
  for (const Candidate& candidate : candidates) {
    if (in_my_shard(batch, candidate)) {
      measure(problem_id, batch, candidate, true, progress, batch_summary.measured_now);
    }
  }
  batch_summary.decision = "shard " + request_.shard.text() + ": decided by tuner merge";
  summary_.batches.push_back(batch_summary);
}

// One worker per GPU (tuner/device_pool.hpp); the first also re-times the finalists.
json SweepRun::start_measurers() {
  const std::vector<int> devices =
      request_.devices.empty()
          ? std::vector<int>{request_.device}
          : resolve_devices(parse_devices(request_.devices), cuda::device_count());
  std::vector<std::string> names;
  json first;
  for (int device : devices) {
    measurers_.push_back(std::make_unique<Measurer>(request_, device));
    const json info = measurers_.back()->ask(json{{"op", "info"}});
    if (info.value("status", "") != "ok") {
      throw std::runtime_error("the measuring worker of GPU " + std::to_string(device) +
                               " could not start: " + info.value("reason", std::string("?")));
    }
    names.push_back(info.at("device_name").get<std::string>());
    if (first.is_null()) first = info;
  }
  require_one_model(devices, names);
  summary_.devices = static_cast<int>(devices.size());
  return first;
}

// Every item of every batch still to decide, longest first (the batch size drives a launch's
// time), measured by whichever GPU's worker is free; trials are written under writer_mutex_.
void SweepRun::measure_through_pool(const std::vector<Candidate>& candidates, Progress& progress) {
  struct Item {
    int batch;
    const Candidate* candidate;
    std::int64_t problem_id;
  };
  std::vector<Item> items;
  for (int batch : request_.batches) {
    if (!request_.shard.sharded() && !request_.force && existing_winner(batch)) continue;
    const std::int64_t problem_id = store_->problem_id(problem_key(batch));
    for (const Candidate& candidate : candidates) {
      if (in_my_shard(batch, candidate)) items.push_back(Item{batch, &candidate, problem_id});
    }
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.batch > b.batch; });
  std::vector<int> seeds(measurers_.size(), 0);
  run_queue(static_cast<int>(measurers_.size()), items.size(), [&](int worker, std::size_t index) {
    const Item& item = items[index];
    measure(item.problem_id, item.batch, *item.candidate, true, progress, seeds[worker],
            measurers_[worker].get());
  });
  pooled_ = true;  // from here on, what the pool measured is reused, even under --force
}

namespace {

// The GPU the sweep measures on first (--device, or the first of --devices).
int first_device(const SweepRequest& request) {
  if (request.devices.empty()) return request.device;
  const std::vector<int> devices =
      resolve_devices(parse_devices(request.devices), cuda::device_count());
  return devices.empty() ? request.device : devices.front();
}

// The batches the named sets 'waves' and 'clusters' add for the sweep's GPU, recorded in `edges`.
std::vector<int> named_edge_batches(const SweepRequest& request, SweepSummary& edges) {
  const Family& family = *request.family;
  const int device = first_device(request);
  std::vector<int> added;
  if (request.wave_edge_batches) {
    edges.sm_count = cuda::device_info(device).sm_count;
    if (family.wave_edge_batches != nullptr) {
      edges.wave_edges = family.wave_edge_batches(request.shape, edges.sm_count, request.max_batch);
    }
    added = merged_batches(added, edges.wave_edges);
  }
  if (request.cluster_edge_batches) {
    edges.cluster_edges_asked = true;
    if (family.cluster_edge_batches != nullptr) {
      edges.cluster_edges = family.cluster_edge_batches(
          request.shape, cuda::cluster_capacity_by_occupancy(device, cuda::kClusterProbeOccupancy),
          request.max_batch);
    }
    added = merged_batches(added, edges.cluster_edges);
  }
  return added;
}

}  // namespace

SweepSummary run_sweep(const SweepRequest& request) {
  const bool named = request.wave_edge_batches || request.cluster_edge_batches;
  if (!named || !cuda::gpu_available()) return SweepRun(request).run();
  SweepSummary edges;
  SweepRequest with_edges = request;
  with_edges.batches = merged_batches(request.batches, named_edge_batches(request, edges));
  if (with_edges.batches.empty()) {
    throw InputError("--batches 'waves' / 'clusters' name no batch up to --max-batch " +
                     std::to_string(request.max_batch) + " on this GPU for " +
                     request.family->name + ": add batches or raise --max-batch");
  }
  SweepSummary summary = SweepRun(with_edges).run();
  summary.wave_edges = edges.wave_edges;
  summary.sm_count = edges.sm_count;
  summary.cluster_edges = edges.cluster_edges;
  summary.cluster_edges_asked = edges.cluster_edges_asked;
  return summary;
}

}  // namespace tuner
