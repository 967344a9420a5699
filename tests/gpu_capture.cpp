// Capture safety of the serving path, on a GPU: a frozen tuning DB (written by `tuner freeze` from
// a store built here) is opened with tunedb; every winner's cubin is loaded from the frozen file at
// start-up (no NVRTC on that path); then, between cuStreamBeginCapture and cuStreamEndCapture,
// each tuned batch size is looked up and its split (+ combine) launched. The graph is instantiated
// and replayed, and every batch's output is checked against the fp32 reference. The tuner's own
// timing code must refuse a capturing stream.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <cstdlib>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch.hpp"
#include "core/config.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/measure.hpp"
#include "db/store/store.hpp"
#include "db/tunedb/tunedb.hpp"
#include "kernels/sparse_mla_decode/device_inputs.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/reference.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/serve.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace tuner;
using namespace tuner::smla_family;

namespace {

using tuner::test::kTunerBinary;
using tuner::test::TempDir;

const std::vector<int> kBatches = {1, 8, 64};
constexpr long long kNumTokens = 1 << 16;

KernelConfig tuned_config() {
  KernelConfig config;
  config.block_t = 32;
  config.block_h = 16;
  config.num_warps = 8;
  config.num_stages = 2;
  config.target_ctas = 256;
  return config;
}

// Batch 1 and 64 tuned, batch 8 kept the default.
KernelConfig winner_config(int batch) { return batch == 8 ? default_config() : tuned_config(); }

smla_family::Shape shape_for(int batch) {
  smla_family::Shape shape;  // 64 heads / TP 4, topk 2048, fp8_ds_mla, page 64
  shape.batch = batch;
  return shape;
}

void write_store(const std::string& path, const std::string& arch_name,
                 const std::string& device_name) {
  db::Store store = db::Store::open(path);
  db::RunInfo run;
  run.host = "gpu_capture";
  run.gpu_name = device_name;
  run.measured_arch = arch_name;
  run.budget_arch = arch_name;
  run.tuner_version = TUNER_VERSION;
  run.command_line = "gpu_capture test";
  run.kind = db::RunKind::sweep;
  const std::int64_t run_id = store.begin_run(run);
  store.add_source(source_hash(), kFamilyName);
  const std::string default_json = to_json(to_config(default_config()));
  for (int batch : kBatches) {
    const smla_family::Shape shape = shape_for(batch);
    db::WinnerRecord winner;
    winner.family = kFamilyName;
    winner.budget_arch = arch_name;
    winner.measured_arch = arch_name;
    winner.device_name = device_name;
    winner.shape = canonical_shape(shape).canonical();
    winner.batch = batch;
    winner.params_json = to_json(to_config(winner_config(batch)));
    winner.median_us = 10.0 * batch;
    winner.default_params_json = default_json;
    winner.default_median_us = 12.0 * batch;
    const bool kept = winner.params_json == default_json;
    winner.decision = kept ? db::Decision::default_kept : db::Decision::tuned;
    winner.speedup_vs_default = kept ? 1.0 : 1.2;
    winner.reason = "test data";
    winner.source_hash = source_hash();
    winner.run_id = run_id;
    store.record_winner(winner);
  }
  store.end_run(run_id);
}

// A kernel of a frozen image by its role (the launch facts `tuner freeze` stores with it): the
// split kernel of `kv`, "combine" or "combine.whole_row".
std::string kernel_of_role(const tunedb::Cubin& cubin, std::string_view role) {
  for (const tunedb::KernelLaunch& launch : cubin.launches) {
    if (launch.role == role) return std::string(launch.kernel_name);
  }
  FAIL("the frozen image has no kernel of role " << role);
  return {};
}

// Start-up: the image of a looked-up config, from the frozen file only.
DecodeKernels load_frozen(const tunedb::Lookup& found, KvFormat kv) {
  REQUIRE(found.config != nullptr);
  REQUIRE(found.cubin != nullptr);
  const KernelConfig config = from_config(config_from_json(found.config->params_json));
  const std::string context = "frozen " + std::string(found.config->params_json);
  DecodeKernels kernels;
  kernels.config = config;
  kernels.kv_format = kv;
  kernels.module = std::make_shared<const cuda::Module>(found.cubin->bytes, context);
  kernels.split = kernels.module->function(kernel_of_role(*found.cubin, split_role(kv)));
  kernels.combine = kernels.module->function(kernel_of_role(*found.cubin, kCombineRole));
  kernels.combine_whole_row =
      kernels.module->function(kernel_of_role(*found.cubin, kCombineWholeRowRole));
  cuda::set_max_dynamic_smem(kernels.split, static_budget(config, kv).smem_bytes_per_block,
                             context);
  return kernels;
}

struct Checked {
  Agreement agreement;
  int num_splits = 0;
};

}  // namespace

TEST_CASE(
    "tuned split+combine looked up and launched inside CUDA graph capture match the reference") {
  const cuda::DeviceInfo info = cuda::device_info(0);
  cuda::Context context(0);
  const std::string arch_name = "sm_" + std::to_string(info.arch_sm());
  const Arch arch = arch_by_name(arch_name);
  for (int batch : kBatches) {
    const int smem = static_budget(winner_config(batch), KvFormat::fp8_ds_mla).smem_bytes_per_block;
    REQUIRE_MESSAGE(smem <= arch.max_smem_per_block_optin_bytes,
                    describe(to_config(winner_config(batch))) << " does not fit " << arch_name);
  }

  // Offline: a store, frozen by the CLI with cubins compiled for this device's arch.
  TempDir dir;
  const std::string store_path = dir / "tuning.db";
  const std::string frozen_path = dir / "frozen.db";
  write_store(store_path, arch_name, info.name);
  // TUNER_BINARY overrides the build tree's binary (a copied build on the GPU machine).
  const char* binary = std::getenv("TUNER_BINARY");
  const std::string tuner = binary != nullptr ? std::string(binary) : kTunerBinary;
  const std::string freeze = "'" + tuner + "' freeze --db '" + store_path + "' --out '" +
                             frozen_path + "' --arch " + arch_name + " --cache-dir '" +
                             (dir / "cache").string() + "'";
  const int status = std::system(freeze.c_str());
  REQUIRE_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), freeze);

  // Start-up: open the frozen DB, load every winner's cubin, allocate every batch's buffers.
  const tunedb::TuningDb db = tunedb::TuningDb::open(frozen_path);
  CHECK(db.info().frozen);
  const smla_family::Shape base = shape_for(1);
  const std::string key = canonical_shape(base).canonical();
  std::vector<std::unique_ptr<DecodeKernels>> kernels_by_config(db.config_count());
  std::map<int, int> planned_splits;  // what each batch's buffers must hold
  for (int batch : kBatches) {
    const tunedb::Lookup found = db.lookup(kFamilyName, arch_name, key, batch);
    REQUIRE(found.how == tunedb::How::exact);
    auto& slot = kernels_by_config[found.config->index];
    if (!slot) slot = std::make_unique<DecodeKernels>(load_frozen(found, base.kv_format));
    planned_splits[batch] =
        launch_geometry(slot->config, shape_for(batch), slot->clusters).plan.num_splits;
  }
  const UtilityKernels utility = load_utility_kernels(info.arch_sm());
  cuda::Stream stream;
  std::map<int, DeviceProblem> problems;
  std::map<int, DeviceOutputs> references;
  for (int batch : kBatches) {
    const smla_family::Shape shape = shape_for(batch);
    const InputSpec spec{shape, kNumTokens, 1, 30, 7000u + static_cast<unsigned>(batch)};
    problems.emplace(batch,
                     make_device_problem(utility, spec, planned_splits.at(batch), stream.get()));
    DeviceProblem& problem = problems.at(batch);
    problem.ref_out.fill_u32(0x7fc00001u, stream.get());
    problem.ref_lse.fill_u32(0x7fc00001u, stream.get());
    launch_reference(utility, problem, 0, stream.get());
    stream.synchronize("reference batch " + std::to_string(batch));
    references.emplace(batch, download_reference(problem));
  }

  // Serving: look up and launch inside capture; nothing allocates device memory or synchronizes.
  for (auto& [batch, problem] : problems) poison_outputs(problem, stream.get());
  stream.synchronize("poison");
  cuda::begin_capture(stream, "serving capture");
  CHECK(stream.is_capturing());
  std::map<int, int> splits_by_batch;
  for (int batch : kBatches) {
    const tunedb::Lookup found = db.lookup(kFamilyName, arch_name, key, batch);
    CHECK(found.how == tunedb::How::exact);
    CHECK(found.tuned_batch == batch);
    const DecodeKernels& kernels = *kernels_by_config.at(found.config->index);
    const DeviceProblem& problem = problems.at(batch);
    const LaunchGeometry geometry =
        launch_geometry(kernels.config, problem.spec.shape, kernels.clusters);
    splits_by_batch[batch] = geometry.plan.num_splits;
    launch_decode(kernels, geometry, problem, 0, stream.get());
  }
  const cuda::Graph graph = cuda::end_capture(stream, "serving capture");
  const cuda::GraphExec exec = graph.instantiate("serving graph");

  // Replayed twice (poisoned between) so that each check sees only what that replay wrote.
  for (int replay = 0; replay < 2; ++replay) {
    if (replay > 0) {
      for (auto& [batch, problem] : problems) poison_outputs(problem, stream.get());
    }
    exec.launch(stream.get(), "serving graph replay");
    stream.synchronize("serving graph replay");
    for (int batch : kBatches) {
      const DeviceOutputs got = download_outputs(problems.at(batch));
      const DeviceOutputs& ref = references.at(batch);
      const Agreement agreement =
          compare(got.out, got.lse, std::vector<double>(ref.out.begin(), ref.out.end()),
                  std::vector<double>(ref.lse.begin(), ref.lse.end()));
      INFO("replay " << replay << " batch " << batch << " "
                     << describe(to_config(winner_config(batch))) << " splits "
                     << splits_by_batch[batch] << ": " << describe(agreement));
      CHECK(agreement.passes(kOutTolerance, kLseTolerance));
    }
  }
  MESSAGE("captured " << kBatches.size() << " tuned launches on " << info.name << " (" << arch_name
                      << "); splits per batch 1/8/64: " << splits_by_batch[1] << "/"
                      << splits_by_batch[8] << "/" << splits_by_batch[64]);
}

TEST_CASE("time_graph refuses a stream that is capturing a graph") {
  cuda::Context context(0);
  cuda::Stream stream;
  cuda::DeviceBuffer scratch(256, "scratch");
  const Enqueue enqueue = [&](int, CUstream on) { scratch.fill_u8(0, on); };
  cuda::begin_capture(stream, "caller's capture");
  bool refused = false;
  std::string message;
  try {
    time_graph(enqueue, stream, MeasureOptions{});
  } catch (const InputError& error) {
    refused = true;
    message = error.what();
  }
  const bool still_capturing = stream.is_capturing();
  const cuda::Graph caller_graph = cuda::end_capture(stream, "caller's capture");
  CHECK(refused);
  CHECK(message.find("capturing a CUDA graph") != std::string::npos);
  // The refusal left the caller's capture intact.
  CHECK(still_capturing);
  CHECK(caller_graph.get() != nullptr);
  // Outside capture it measures.
  const Timing timing = time_graph(enqueue, stream, MeasureOptions{4, 1, 3, 5, 0.5, 50.0, 2, {}});
  CHECK(timing.samples >= 3);
}
