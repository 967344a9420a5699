#pragma once
// The sparse MLA decode serving launcher as the GPU tests drive it: a frozen DB (TUNEDB_SERVE_DB,
// swept on this GPU, or hand-made winners frozen by `tuner freeze`), a Launcher opened on it, the
// utility kernels, a stream, one workspace for every batch up to kMaxBatch (what a serving process
// allocates at start-up), problems drawn on the device, and the timing cases' L2-safe inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>

#include "core/cuda_driver.hpp"
#include "core/measure.hpp"
#include "db/store/store.hpp"
#include "deploy/launcher.hpp"
#include "kernels/sparse_mla_decode/client.h"
#include "kernels/sparse_mla_decode/device_inputs.hpp"
#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "kernels/sparse_mla_decode/timing_sets.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"
#include "tests/support/fixture.hpp"
#include "tests/support/run_freeze.hpp"
#include "tests/support/temp_dir.hpp"

namespace tuner::test {

inline constexpr const char* kFp8 = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048";
inline constexpr const char* kBf16 = "kv_format=bf16,local_heads=16,page_size=64,topk=2048";
inline constexpr int kMaxBatch = 512;

struct Served {
  std::filesystem::path frozen;
  tunedb::cuda::Launcher launcher;
  smla_family::UtilityKernels utility;
  cuda::Stream stream;
  cuda::DeviceBuffer workspace;

  explicit Served(const std::filesystem::path& frozen_db)
      : frozen(frozen_db),
        launcher(tunedb::cuda::Launcher::open(frozen, 0)),
        utility(smla_family::load_utility_kernels(cuda::device_info(0).arch_sm())),
        workspace(std::max(launcher.workspace_bytes(smla_family::kFamilyName, kFp8, kMaxBatch),
                           launcher.workspace_bytes(smla_family::kFamilyName, kBf16, kMaxBatch)),
                  "workspace") {}

  // `index_sets` independent index sets over a KV cache of `kv_gib`, drawn from seed 11 + batch;
  // the problem's own workspace holds `max_splits` splits (the launcher's is `workspace`).
  smla_family::DeviceProblem problem(const char* shape_text, int batch, int index_sets,
                                     double kv_gib, int max_splits = 1) {
    smla_family::Shape shape;
    shape.kv_format = std::string(shape_text).find("bf16") != std::string::npos
                          ? smla_family::KvFormat::bf16
                          : smla_family::KvFormat::fp8_ds_mla;
    shape.batch = batch;
    const long long tokens =
        static_cast<long long>(kv_gib * (1LL << 30)) / smla_family::kv_row_bytes(shape.kv_format) +
        1;
    return smla_family::make_device_problem(
        utility, smla_family::InputSpec{shape, tokens, index_sets, 30, 11u + batch}, max_splits,
        stream.get());
  }

  tunedb_sparse_mla_decode_args args(const smla_family::DeviceProblem& p, int index_set) const {
    return {p.q.get(),   p.kv.get(),      p.index_set(index_set), p.out.get(),
            p.lse.get(), workspace.get(), workspace.size(),       p.softmax_scale};
  }

  // The reference and `launch` on index set 0 of fresh outputs, compared.
  smla_family::Agreement check(smla_family::DeviceProblem& p, const std::function<void()>& launch) {
    smla_family::poison_outputs(p, stream.get());
    smla_family::launch_reference(utility, p, 0, stream.get());
    launch();
    stream.synchronize("served launch");
    const smla_family::DeviceOutputs out = smla_family::download_outputs(p);
    const smla_family::DeviceOutputs ref = smla_family::download_reference(p);
    return smla_family::compare(out.out, out.lse, {ref.out.begin(), ref.out.end()},
                                {ref.lse.begin(), ref.lse.end()}, p.spec.shape.n_local_heads());
  }
};

inline void check_launched(const tunedb::cuda::ServeResult& result) {
  REQUIRE_MESSAGE(result.status == tunedb::cuda::ServeStatus::ok,
                  tunedb::cuda::status_name(result.status) << ": " << result.what);
}

inline std::string device_arch() { return "sm_" + std::to_string(cuda::device_info(0).arch_sm()); }

// A store with hand-picked winners for this GPU's arch at batches 1, 8, 128 (timings are test
// data, not measurements), frozen by the real `tuner freeze` (NVRTC compiles the cubins). The
// batch-128 winner is the cluster merge (merge 2) on the pipelined kernel, so the launcher's
// cluster launches run: clusters of 2 at 100 and 128, 4 at 64 and 8 at 13 (bucketed to 128),
// one split (no cluster) above 128.
inline std::filesystem::path make_frozen_db(const TempDir& dir) {
  const std::filesystem::path store_path = dir / "store.db";
  const std::string arch = device_arch();
  {
    db::Store store = db::Store::open(store_path);
    db::RunInfo run_info = db::fixture::fixture_run();
    run_info.budget_arch = arch;
    const std::int64_t run = store.begin_run(run_info);
    store.add_source(smla_family::source_hash(), smla_family::kFamilyName);
    const std::pair<int, std::string> winners[] = {
        {1, R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":1024})"},
        {8, R"({"block_h":16,"block_t":64,"num_stages":2,"num_warps":4,"target_ctas":512})"},
        {128, R"({"block_h":16,"block_t":64,"merge":2,"mma_path":1,"num_stages":2,"num_warps":4,)"
              R"("producers":2,"target_ctas":256})"}};
    for (const auto& [batch, params] : winners) {
      db::WinnerRecord w = db::fixture::fixture_problem_winner(arch, batch, params, 20.0, 25.0,
                                                               smla_family::source_hash(), run);
      w.measured_arch = arch;
      w.decision = db::Decision::tuned;
      w.speedup_vs_default = 1.25;
      w.noise_rel = 0.01;
      w.reason = "test data";
      store.record_winner(w);
    }
    store.end_run(run);
  }
  return run_freeze(store_path, dir.path(), arch);
}

// One frozen DB per process (freezing compiles with NVRTC): TUNEDB_SERVE_DB or the hand-made one.
inline const std::filesystem::path& frozen_db() {
  static const TempDir dir;
  static const std::filesystem::path path =
      std::getenv("TUNEDB_SERVE_DB") != nullptr
          ? std::filesystem::path(std::getenv("TUNEDB_SERVE_DB"))
          : make_frozen_db(dir);
  return path;
}

// The sweep's number of index sets for `batch` over a 1 GiB KV cache: as many as keep the L2 from
// serving repeats (221 at batch 1 on the H200; 32 sets there would read ~41 MB per replay, inside
// its 60 MB L2).
inline smla_family::TimingSets sweep_sets(int batch) {
  smla_family::Shape shape;
  shape.batch = batch;
  return smla_family::timing_sets(shape, 1.0, cuda::device_info(0).l2_cache_bytes, 32,
                                  "the timing test's KV cache");
}

// The fp8 winner the swept DB (TUNEDB_SERVE_DB) holds for exactly `batch`.
inline tunedb::Lookup swept_winner(const Served& served, int batch) {
  const tunedb::Lookup found =
      served.launcher.db().lookup(smla_family::kFamilyName, served.launcher.arch(), kFp8, batch);
  REQUIRE_MESSAGE(found.how == tunedb::How::exact, "sweep batch " << batch << " before freezing");
  REQUIRE(found.cubin != nullptr);
  return found;
}

// The launcher on `p`'s index set `launch`, as a timing graph enqueues it.
inline Enqueue launcher_enqueue(Served& served, const smla_family::DeviceProblem& p, int batch) {
  return [&served, &p, batch](int launch, CUstream stream) {
    check_launched(served.launcher.launch(smla_family::kFamilyName, kFp8, batch,
                                          served.args(p, launch), stream));
  };
}

}  // namespace tuner::test
