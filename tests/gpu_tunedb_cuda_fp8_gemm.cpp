// libtunedb_cuda serving the fp8 GEMM on a GPU (issue 13, the second family): a frozen DB with
// hand-picked winners (one split-K, one not) frozen by the real `tuner freeze`, launched by the
// launcher against the family's fp32 GPU reference at several batches (exact, bucket, and the
// default of an untuned shape), eager and replayed from a CUDA graph on redrawn inputs; then the
// refusals through the C API (a record of the wrong size, a workspace too small) with the
// family's typed C wrapper (kernels/fp8_gemm/client.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/cuda_driver.hpp"
#include "core/nvrtc.hpp"
#include "db/store/store.hpp"
#include "deploy/launcher.hpp"
#include "kernels/fp8_gemm/client.h"
#include "kernels/fp8_gemm/family.hpp"
#include "kernels/fp8_gemm/reference.hpp"
#include "templates/fp8_gemm/params.h"
#include "tests/support/fixture.hpp"
#include "tests/support/run_freeze.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

using namespace tuner;
using namespace tuner::fp8_gemm;
namespace fs = std::filesystem;

constexpr const char* kTuned = "block=128,k=7168,n=4096";
constexpr const char* kUntuned = "block=128,k=1536,n=6144";
constexpr int kMaxBatch = 256;

std::string device_arch() { return "sm_" + std::to_string(cuda::device_info(0).arch_sm()); }

db::WinnerRecord winner(const std::string& arch, int batch, const KernelConfig& config,
                        std::int64_t run) {
  db::WinnerRecord w;
  w.family = kFamilyName;
  w.budget_arch = arch;
  w.measured_arch = arch;
  w.device_name = cuda::device_info(0).name;
  w.shape = kTuned;
  w.batch = batch;
  w.params_json = to_json(to_config(config));
  w.median_us = 20.0;  // test data, not measurements
  w.default_params_json = to_json(to_config(default_config()));
  w.default_median_us = 25.0;
  w.source_hash = source_hash();
  w.run_id = run;
  w.decision = db::Decision::tuned;
  w.speedup_vs_default = 1.25;
  w.noise_rel = 0.01;
  w.reason = "test data";
  return w;
}

// Winners at batch 1 (SPLIT_K 4: GEMM + reduce) and 64 (one split, 64x128 tiles), frozen by the
// real `tuner freeze` (NVRTC compiles the cubins).
fs::path make_frozen_db(const test::TempDir& dir) {
  const fs::path store_path = dir / "store.db";
  const std::string arch = device_arch();
  {
    db::Store store = db::Store::open(store_path);
    db::RunInfo run_info = db::fixture::fixture_run();
    run_info.budget_arch = arch;
    const std::int64_t run = store.begin_run(run_info);
    store.add_source(source_hash(), kFamilyName);
    store.record_winner(winner(arch, 1, {16, 64, 128, 4, 3, 4}, run));
    store.record_winner(winner(arch, 64, {64, 128, 128, 8, 3, 1}, run));
    store.end_run(run);
  }
  return test::run_freeze(store_path, dir.path(), arch);
}

// One frozen DB per process (freezing compiles with NVRTC).
const fs::path& frozen_db() {
  static const test::TempDir dir;
  static const fs::path path = make_frozen_db(dir);
  return path;
}

struct Utility {
  cuda::Module module;
  CUfunction reference, fill_e4m3, fill_scale;
};

Utility load_utility() {
  const CompileResult compiled = compile(utility_program(cuda::device_info(0).arch_sm()));
  cuda::Module module(compiled.cubin, "fp8_gemm utility program");
  const auto function = [&](const char* name) {
    return module.function(compiled.lowered_names.at(name));
  };
  // The functions first: a braced list evaluates left to right, so moving the module in the same
  // list would leave `function` asking a moved-from (null) module.
  CUfunction reference = function("fp8_gemm_reference");
  CUfunction fill_e4m3 = function("fp8_gemm_fill_e4m3");
  CUfunction fill_scale = function("fp8_gemm_fill_scale");
  return {std::move(module), reference, fill_e4m3, fill_scale};
}

// One GEMM's device buffers: operands drawn on the GPU, C (bf16) and the fp32 reference.
struct Problem {
  int m, n, k;
  cuda::DeviceBuffer a, a_scale, b, b_scale, c, ref;
};

struct Served {
  fs::path frozen = frozen_db();
  tunedb::cuda::Launcher launcher = tunedb::cuda::Launcher::open(frozen, 0);
  Utility utility = load_utility();
  cuda::Stream stream;
  cuda::DeviceBuffer workspace{std::max(launcher.workspace_bytes(kFamilyName, kTuned, kMaxBatch),
                                        launcher.workspace_bytes(kFamilyName, kUntuned, kMaxBatch)),
                               "workspace"};

  void fill(CUfunction function, CUdeviceptr pointer, long long count, unsigned long long seed) {
    void* args[] = {&pointer, &count, &seed};
    const auto blocks = static_cast<unsigned>(std::clamp((count + 255) / 256, 1LL, 4096LL));
    cuda::launch(function, {blocks, 1, 1}, {256, 1, 1}, 0, stream.get(), args, "fill");
  }

  void draw(Problem& p, unsigned long long seed) {
    fill(utility.fill_e4m3, p.a.get(), static_cast<long long>(p.a.size()), seed * 4 + 1);
    fill(utility.fill_scale, p.a_scale.get(), static_cast<long long>(p.a_scale.size() / 4),
         seed * 4 + 2);
    fill(utility.fill_e4m3, p.b.get(), static_cast<long long>(p.b.size()), seed * 4 + 3);
    fill(utility.fill_scale, p.b_scale.get(), static_cast<long long>(p.b_scale.size() / 4),
         seed * 4 + 4);
  }

  Problem problem(int m, int n, int k) {
    const auto mn = static_cast<std::size_t>(m) * n;
    const auto groups = static_cast<std::size_t>(k / 128);
    Problem p{m,
              n,
              k,
              cuda::DeviceBuffer(static_cast<std::size_t>(m) * k, "A"),
              cuda::DeviceBuffer(m * groups * 4, "A scales"),
              cuda::DeviceBuffer(static_cast<std::size_t>(n) * k, "B"),
              cuda::DeviceBuffer(n / 128 * groups * 4, "B scales"),
              cuda::DeviceBuffer(mn * 2, "C"),
              cuda::DeviceBuffer(mn * 4, "reference C")};
    draw(p, 7u + static_cast<unsigned>(m));
    return p;
  }

  tunedb_fp8_gemm_args args(const Problem& p) const {
    return {p.a.get(), p.a_scale.get(), p.b.get(),       p.b_scale.get(),
            p.c.get(), workspace.get(), workspace.size()};
  }

  // C poisoned with NaN, the reference and `launch`, compared.
  GemmAgreement check(Problem& p, const std::function<void()>& launch) {
    p.c.fill_u16(0x7fc1, stream.get());
    fp8gemm::ReferenceParams r{reinterpret_cast<const unsigned char*>(p.a.get()),
                               reinterpret_cast<const float*>(p.a_scale.get()),
                               reinterpret_cast<const unsigned char*>(p.b.get()),
                               reinterpret_cast<const float*>(p.b_scale.get()),
                               reinterpret_cast<float*>(p.ref.get()),
                               p.m,
                               p.n,
                               p.k};
    void* args[] = {&r};
    const long long outputs = static_cast<long long>(p.m) * p.n;
    cuda::launch(utility.reference, {static_cast<unsigned>((outputs + 255) / 256), 1, 1},
                 {256, 1, 1}, 0, stream.get(), args, "fp8_gemm reference");
    launch();
    stream.synchronize("served fp8_gemm");
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(outputs));
    p.c.download(bits.data(), bits.size() * 2);
    std::vector<float> got(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) got[i] = bf16_value(bits[i]);
    std::vector<float> reference(bits.size());
    p.ref.download(reference.data(), reference.size() * 4);
    return compare(got, std::vector<double>(reference.begin(), reference.end()));
  }
};

void check_launched(tunedb::cuda::ServeResult result) {
  REQUIRE_MESSAGE(result.status == tunedb::cuda::ServeStatus::ok,
                  tunedb::cuda::status_name(result.status) << ": " << result.what);
}

}  // namespace

TEST_CASE(
    "the launcher's fp8_gemm matches the reference: exact, bucket, default; eager, replayed") {
  Served served;
  const struct {
    const char* shape;
    int n, k, batch;
    const char* how;
  } cases[] = {{kTuned, 4096, 7168, 1, "exact"},     {kTuned, 4096, 7168, 3, "bucket"},
               {kTuned, 4096, 7168, 64, "exact"},    {kTuned, 4096, 7168, 100, "bucket"},
               {kTuned, 4096, 7168, 256, "bucket"},  {kUntuned, 6144, 1536, 1, "default"},
               {kUntuned, 6144, 1536, 37, "default"}};
  for (const auto& c : cases) {
    CAPTURE(c.shape);
    CAPTURE(c.batch);
    Problem p = served.problem(c.batch, c.n, c.k);
    const tunedb_fp8_gemm_args args = served.args(p);
    tunedb::cuda::LaunchReport report;
    const GemmAgreement eager = served.check(p, [&] {
      check_launched(served.launcher.launch(kFamilyName, c.shape, c.batch, args,
                                            served.stream.get(), &report));
    });
    CHECK_MESSAGE(eager.passes(), describe(eager));
    CHECK(std::string(report.how_text) == c.how);
    // The same launch captured once, replayed on operands redrawn after the capture.
    cuda::begin_capture(served.stream, "served fp8_gemm capture");
    check_launched(
        served.launcher.launch(kFamilyName, c.shape, c.batch, args, served.stream.get()));
    const cuda::GraphExec graph =
        cuda::end_capture(served.stream, "served fp8_gemm capture").instantiate("graph");
    served.draw(p, 1000u + static_cast<unsigned>(c.batch));
    const GemmAgreement replayed =
        served.check(p, [&] { graph.launch(served.stream.get(), "served fp8_gemm replay"); });
    CHECK_MESSAGE(replayed.passes(), describe(replayed));
  }
}

TEST_CASE("fp8_gemm through the C API: the typed wrapper launches; wrong sizes are refused") {
  Served served;
  tunedb_cuda_launcher* launcher = nullptr;
  REQUIRE(tunedb_cuda_open(served.frozen.c_str(), 0, &launcher) == TUNEDB_CUDA_OK);
  Problem p = served.problem(1, 4096, 7168);
  tunedb_fp8_gemm_args args = served.args(p);
  tunedb_cuda_report report{};
  const GemmAgreement agreement = served.check(p, [&] {
    REQUIRE(tunedb_cuda_launch_fp8_gemm(launcher, kTuned, 1, &args, served.stream.get(), &report) ==
            TUNEDB_CUDA_OK);
  });
  CHECK_MESSAGE(agreement.passes(), describe(agreement));
  CHECK(std::string(report.how) == "exact");
  // A record of another size: refused before anything is looked up, both sizes named.
  CHECK(tunedb_cuda_launch(launcher, TUNEDB_FP8_GEMM, kTuned, 1, &args, sizeof args - 8,
                           served.stream.get(), nullptr) == TUNEDB_CUDA_ERROR_INPUT);
  CHECK(std::string(tunedb_cuda_last_error()).find(std::to_string(sizeof args) + " bytes") !=
        std::string::npos);
  CHECK(served.launcher.launch(kFamilyName, kTuned, 1, &args, sizeof args + 8, served.stream.get())
            .status == tunedb::cuda::ServeStatus::bad_arguments);
  // Batch 1 runs SPLIT_K 4: its partials need a workspace.
  args.workspace_bytes = 64;
  CHECK(tunedb_cuda_launch_fp8_gemm(launcher, kTuned, 1, &args, served.stream.get(), nullptr) ==
        TUNEDB_CUDA_ERROR_WORKSPACE);
  CHECK(std::string(tunedb_cuda_last_error()).find("workspace") != std::string::npos);
  served.stream.synchronize("C API launches");
  tunedb_cuda_close(launcher);
}
