// The serving launcher and the tuner's own launch (launch_decode, what `tuner sweep` and `tuner
// bench` time) side by side on a GPU (issue 13): from the same frozen cubin and inputs they write
// the same bits; and, on a swept DB (TUNEDB_SERVE_DB, scripts/device_calls/h200_issue13_s4.sh,
// run with --no-skip), a diagnostic that times, in one process with one protocol, the launcher and
// the tuner's launch with the partials in each layout, on the timing case's inputs and on inputs
// drawn as the sweep draws them: which factor moves a launched winner's time off its DB median.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/cubin_cache.hpp"
#include "core/family.hpp"
#include "core/measure.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/serve.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/timing_sets.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "tests/support/interleaved_timing.hpp"
#include "tests/support/served_decode.hpp"
#include "tests/support/temp_dir.hpp"

using namespace tuner;
using namespace tuner::smla_family;
using test::frozen_db;
using test::kFp8;
using test::Served;
namespace fs = std::filesystem;

namespace {

// The winner's split + combine kernels loaded from the frozen cubin outside the launcher: the
// launcher's code, launched by the tuner's path (launch_decode).
DecodeKernels frozen_kernels(const tunedb::Cubin& cubin, const KernelConfig& config) {
  CompileResult compiled;
  compiled.cubin = cubin.bytes;
  for (const tunedb::KernelLaunch& launch : cubin.launches) {
    for (const KvFormat format : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
      if (launch.role == split_role(format)) {
        compiled.lowered_names[split_kernel_name(config, format)] = launch.kernel_name;
      }
    }
    if (launch.role == kCombineRole) {
      compiled.lowered_names[combine_kernel_name()] = launch.kernel_name;
    }
    if (launch.role == kCombineWholeRowRole) {
      compiled.lowered_names[combine_whole_row_kernel_name()] = launch.kernel_name;
    }
  }
  return load_decode_kernels(compiled, config, KvFormat::fp8_ds_mla);
}

// What one batch's variants launch.
struct Factors {
  Config params;
  KernelConfig config;
  LaunchGeometry geometry;
  DecodeKernels kernels;  // the frozen cubin's
  DeviceProblem test;     // the timing case's inputs (seed 11 + batch)
  DeviceProblem sweep;    // drawn as the sweep draws them
  // The tuner's partials before they moved into a workspace: two buffers for the most splits.
  cuda::DeviceBuffer partial_out;
  cuda::DeviceBuffer partial_lse;
  LaunchFn session_launch;  // the family's session: what tuner sweep and tuner bench time
  int session_launches = 0;
};

Factors make_factors(Served& served, DeviceSession& session, const tunedb::Lookup& found,
                     int batch) {
  Factors f;
  f.params = config_from_json(found.config->params_json);
  f.config = from_config(f.params);
  smla_family::Shape shape;
  shape.batch = batch;
  f.kernels = frozen_kernels(*found.cubin, f.config);
  f.geometry = launch_geometry(f.config, shape, f.kernels.clusters);
  const TimingSets sets = test::sweep_sets(batch);
  const int max_splits = (shape.topk + 15) / 16;  // as the sweep's session sizes its partials
  f.test = served.problem(kFp8, batch, sets.launches, 1.0, max_splits);
  f.sweep = make_device_problem(
      served.utility, InputSpec{shape, sets.kv_rows, sets.launches, kInvalidPerMille, 7u + batch},
      max_splits, served.stream.get());
  // The sweep times the inputs its verify drew last (seed 1000003 x batch, sweep_measure.cpp).
  redraw_inputs(served.utility, f.sweep, 1000003ull * static_cast<unsigned>(batch),
                served.stream.get());
  const std::size_t rows = static_cast<std::size_t>(batch) *
                           static_cast<std::size_t>(shape.n_local_heads()) *
                           static_cast<std::size_t>(max_splits);
  f.partial_out = cuda::DeviceBuffer(rows * smla::kLatentDim * sizeof(float), "partial_out");
  f.partial_lse = cuda::DeviceBuffer(rows * sizeof(float), "partial_lse");
  session.prepare(batch);
  f.session_launch = session.load(f.params);
  const Verdict verdict =
      session.verify(f.params, f.session_launch, 1000003ull * static_cast<unsigned>(batch));
  CHECK_MESSAGE(verdict.passed, "the session's launch: " << verdict.reason);
  f.session_launches = session.launches_per_graph();
  return f;
}

DecodeBuffers inputs_of(const DeviceProblem& p, int set) {
  return {p.q.get(), p.kv.get(), p.index_set(set), p.out.get(), p.lse.get()};
}

// The variants, each with the problem its outputs land in (nullptr: checked by its own session).
struct Variants {
  std::vector<test::TimedVariant> timed;
  std::vector<DeviceProblem*> outputs;
};

Variants variants(Served& served, Factors& f, int batch) {
  const DecodeDims dims{batch, f.test.spec.shape.n_local_heads(), f.test.spec.shape.topk};
  const WorkspaceLayout layout = workspace_layout(dims, f.geometry.plan);
  const float scale = f.test.softmax_scale;
  const int sets = f.test.spec.index_sets;
  const CUdeviceptr workspace = served.workspace.get();
  Variants v;
  v.timed = {
      {"a launcher, the test's inputs", test::launcher_enqueue(served, f.test, batch), sets},
      {"b launch_decode, partials in two buffers (tuner before)",
       [&f, dims, scale](int i, CUstream s) {
         DecodeBuffers buffers = inputs_of(f.test, i);
         buffers.partial_out = f.partial_out.get();
         buffers.partial_lse = f.partial_lse.get();
         launch_decode(f.kernels, f.geometry, buffers, dims, scale, s);
       },
       sets},
      {"c launch_decode, the launcher's workspace",
       [&f, dims, scale, layout, workspace](int i, CUstream s) {
         launch_decode(f.kernels, f.geometry,
                       place_partials(inputs_of(f.test, i), workspace, layout), dims, scale, s);
       },
       sets},
      {"d launcher, inputs drawn as the sweep draws them",
       test::launcher_enqueue(served, f.sweep, batch), f.sweep.spec.index_sets},
      {"e launch_decode, the problem's workspace (tuner now)",
       [&f](int i, CUstream s) { launch_decode(f.kernels, f.geometry, f.test, i, s); }, sets},
      {"f the family's session (sweep/bench path, NVRTC cubin)", f.session_launch,
       f.session_launches}};
  v.outputs = {&f.test, &f.test, &f.test, &f.sweep, &f.test, nullptr};
  return v;
}

// Each variant's index set 0 against the reference: a variant is not timed unless it is right.
void check_variants(Served& served, const Variants& v) {
  for (std::size_t i = 0; i < v.timed.size(); ++i) {
    if (v.outputs[i] == nullptr) continue;
    const Agreement agreement =
        served.check(*v.outputs[i], [&] { v.timed[i].enqueue(0, served.stream.get()); });
    CHECK_MESSAGE(agreement.passes(kOutTolerance, kLseTolerance),
                  v.timed[i].name << ": " << describe(agreement));
  }
}

// The launch facts the launcher binds (frozen by `tuner freeze`) against the tuner's geometry, and
// whether the NVRTC compile the sweep times is the frozen cubin byte for byte.
bool check_frozen(const tunedb::Cubin& cubin, const Factors& f, const fs::path& cache) {
  for (const tunedb::KernelLaunch& launch : cubin.launches) {
    if (launch.role == split_role(KvFormat::fp8_ds_mla)) {
      CHECK(launch.block_threads == static_cast<int>(f.geometry.split_threads));
      CHECK(launch.dynamic_smem == static_cast<int>(f.geometry.split_smem_bytes));
    } else if (launch.role == kCombineRole) {
      CHECK(launch.block_threads == static_cast<int>(f.geometry.combine_threads));
      CHECK(launch.dynamic_smem == 0);
    }
  }
  const CachedCompile compiled =
      compile_cached(CubinCache(cache),
                     split_program(f.config, KvFormat::fp8_ds_mla, cuda::device_info(0).arch_sm()));
  REQUIRE(compiled.compiled);
  return compiled.result.cubin == cubin.bytes;
}

void report(int batch, double db_us, bool same_cubin, const Variants& v,
            const std::vector<test::VariantTiming>& timings) {
  MESSAGE("factors batch " << batch << ": DB median " << db_us << " us; the sweep's cubin "
                           << (same_cubin ? "is" : "is NOT") << " the frozen one");
  const double session_us = timings.back().median_us;  // f, the sweep's own path, is last
  for (std::size_t i = 0; i < timings.size(); ++i) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "factors batch %3d | %-56s | %7.2f us (rounds %.2f..%.2f) | /DB %.3f | /f %.3f",
                  batch, v.timed[i].name.c_str(), timings[i].median_us, timings[i].min_us,
                  timings[i].max_us, timings[i].median_us / db_us,
                  timings[i].median_us / session_us);
    MESSAGE(line);
  }
}

}  // namespace

TEST_CASE("the tuner's timed launch and the launcher write the same bits from the frozen cubin") {
  Served served(frozen_db());
  for (const int batch : {1, 8, 64, 128}) {
    CAPTURE(batch);
    const tunedb::Lookup found =
        served.launcher.db().lookup(kFamilyName, served.launcher.arch(), kFp8, batch);
    REQUIRE(found.cubin != nullptr);
    const KernelConfig config = from_config(config_from_json(found.config->params_json));
    smla_family::Shape shape;
    shape.batch = batch;
    // The split count under the cluster merge follows the device's cluster capacity, as in the
    // sweep's session and the launcher (without it, merge 2 at batch 64 planned 4 splits where an
    // H100's capacity allows fewer: other bits, both right).
    const DecodeKernels kernels = frozen_kernels(*found.cubin, config);
    const LaunchGeometry geometry = launch_geometry(config, shape, kernels.clusters);
    MESSAGE("batch " << batch << ": " << geometry.plan.num_splits << " splits on this device, "
                     << launch_geometry(config, shape, kCapacityUnknown).plan.num_splits
                     << " without its capacity");
    DeviceProblem p = served.problem(kFp8, batch, 1, 0.25, geometry.plan.num_splits);
    const Agreement launched_ok = served.check(p, [&] {
      test::check_launched(
          served.launcher.launch(kFamilyName, kFp8, batch, served.args(p, 0), served.stream.get()));
    });
    CHECK_MESSAGE(launched_ok.passes(kOutTolerance, kLseTolerance), describe(launched_ok));
    const DeviceOutputs launched = download_outputs(p);
    poison_outputs(p, served.stream.get());
    launch_decode(kernels, geometry, p, 0, served.stream.get());
    served.stream.synchronize("the tuner's launch");
    const DeviceOutputs timed = download_outputs(p);
    CHECK(timed.out == launched.out);
    CHECK(timed.lse == launched.lse);
  }
}

// In one process, the same protocol and index-set count for every variant, interleaved rounds.
TEST_CASE("diagnostic: which factor moves a launched winner's time off its DB median" *
          doctest::skip()) {
  REQUIRE_MESSAGE(std::getenv("TUNEDB_SERVE_DB") != nullptr,
                  "needs TUNEDB_SERVE_DB: a frozen DB from a sweep on this GPU at batches 1, 64");
  Served served(frozen_db());
  const test::TempDir cache;
  const cuda::DeviceInfo info = cuda::device_info(0);
  DeviceSession session =
      open_device(DeviceSetup{canonical_shape(smla_family::Shape{}), info.arch_sm(),
                              cache.path().string(), 1.0, info.l2_cache_bytes, 32});
  for (const int batch : {1, 64}) {
    CAPTURE(batch);
    const tunedb::Lookup found = test::swept_winner(served, batch);
    Factors f = make_factors(served, session, found, batch);
    const bool same_cubin = check_frozen(*found.cubin, f, cache.path());
    const Variants v = variants(served, f, batch);
    check_variants(served, v);
    report(batch, found.median_us, same_cubin, v,
           test::time_interleaved(v.timed, served.stream, 3));
  }
}
