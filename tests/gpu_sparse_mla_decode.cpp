// GPU correctness of the sparse MLA decode family: every config that compiles for the device and
// fits it (TARGET_CTAS 128, 1024 and 0), over batch {1, 7, 64, 128} x topk {2048, 600, 5} x both KV
// formats x 16, 32 and 64 local heads, plus the corner cases; the GPU reference itself against the
// CPU fp64 reference.
// Set TUNER_GPU_LOG=FILE to get one line per check.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "kernels/sparse_mla_decode/device_inputs.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/reference.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "tests/support/matrix_selection.hpp"
#include "tests/support/smla_gpu.hpp"

using namespace tuner;
using namespace tuner::smla_family;
using tuner::test::CompiledKeys;
using tuner::test::gpu;
using tuner::test::Gpu;
using tuner::test::max_splits_for;
namespace {

// Downloads q, index set 0 and only the KV rows it references (renumbered), for the CPU reference.
HostInputs host_inputs(const DeviceProblem& problem) {
  const Shape& shape = problem.spec.shape;
  HostInputs inputs;
  inputs.shape = shape;
  inputs.softmax_scale = problem.softmax_scale;
  inputs.q.resize(problem.q.size() / 2);
  problem.q.download(inputs.q.data(), problem.q.size());
  inputs.indices.resize(problem.index_set_bytes() / 4);
  problem.indices.download(inputs.indices.data(), problem.index_set_bytes());
  const std::size_t row_bytes = static_cast<std::size_t>(kv_row_bytes(shape.kv_format));
  std::map<std::int32_t, std::int32_t> renumbered;
  for (std::int32_t& index : inputs.indices) {
    if (index < 0) continue;
    auto [it, inserted] = renumbered.emplace(index, static_cast<std::int32_t>(renumbered.size()));
    if (inserted) {
      inputs.kv.resize(renumbered.size() * row_bytes);
      problem.kv.download(inputs.kv.data() + it->second * row_bytes, row_bytes,
                          static_cast<std::size_t>(index) * row_bytes);
    }
    index = it->second;
  }
  return inputs;
}

struct Tally {
  int checks = 0;
  int failures = 0;
  double worst_out = 0.0;
  double worst_lse = 0.0;
};

void record(Tally& tally, const Agreement& agreement, const std::string& label) {
  ++tally.checks;
  tally.worst_out = std::max(tally.worst_out, agreement.out_rel_error);
  tally.worst_lse = std::max(tally.worst_lse, agreement.lse_rel_error);
  const bool ok = agreement.passes(kOutTolerance, kLseTolerance);
  if (!ok) ++tally.failures;
  if (std::FILE* log = test::gpu_log()) {
    std::fprintf(log, "%s %s %s\n", ok ? "PASS" : "FAIL", label.c_str(),
                 describe(agreement).c_str());
  }
  if (!ok) MESSAGE("FAIL " << label << ": " << describe(agreement));
}

// Runs every compiled config (x TARGET_CTAS) on one shape; inputs redrawn per compile key.
Tally run_shape(const CompiledKeys& compiled, const Shape& shape, long long num_tokens,
                std::uint64_t seed) {
  Gpu& device = gpu();
  InputSpec spec{shape, num_tokens, 1, 30, seed};
  DeviceProblem problem = make_device_problem(
      device.utility, spec, max_splits_for(compiled.configs, shape), device.stream.get());
  Tally tally;
  for (std::size_t i = 0; i < compiled.configs.size(); ++i) {
    if (!compiled.results[i]) continue;
    DecodeKernels kernels =
        load_decode_kernels(*compiled.results[i], compiled.configs[i], shape.kv_format);
    redraw_inputs(device.utility, problem, seed * 1000 + i, device.stream.get());
    problem.ref_out.fill_u32(0x7fc00001u, device.stream.get());
    problem.ref_lse.fill_u32(0x7fc00001u, device.stream.get());
    launch_reference(device.utility, problem, 0, device.stream.get());
    for (int t = 0; t < test::launch_variants(compiled.configs[i]); ++t) {
      kernels.config = test::launch_variant(compiled.configs[i], t);
      const LaunchGeometry geometry = launch_geometry(kernels.config, shape, kernels.clusters);
      poison_outputs(problem, device.stream.get());
      launch_decode(kernels, geometry, problem, 0, device.stream.get());
      // Judged on the device (gpu_sparse_mla_row_errors checks it against the host comparison):
      // at batch 128 x 64 heads the host's conversion and comparison took ~26 ms a check.
      record(tally, compare_on_device(device.utility, problem, device.stream),
             describe(to_config(kernels.config)) +
                 " kv=" + std::string(to_string(shape.kv_format)) +
                 " heads=" + std::to_string(shape.n_local_heads()) +
                 " batch=" + std::to_string(shape.batch) + " topk=" + std::to_string(shape.topk) +
                 " splits=" + std::to_string(geometry.plan.num_splits));
    }
  }
  return tally;
}

}  // namespace

TEST_CASE("the GPU reference agrees with the CPU fp64 reference") {
  Gpu& device = gpu();
  for (KvFormat kv : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
    Shape shape;
    shape.kv_format = kv;
    shape.batch = 3;
    shape.topk = 300;
    InputSpec spec{shape, 4096, 1, 100, 11};
    DeviceProblem problem = make_device_problem(device.utility, spec, 1, device.stream.get());
    // One batch item with no valid index at all.
    std::vector<std::int32_t> indices(problem.index_set_bytes() / 4);
    device.stream.synchronize("fill");
    problem.indices.download(indices.data(), problem.index_set_bytes());
    std::fill(indices.begin() + shape.topk, indices.begin() + 2 * shape.topk, -1);
    problem.indices.upload(indices.data(), problem.index_set_bytes());
    launch_reference(device.utility, problem, 0, device.stream.get());
    device.stream.synchronize("reference");
    const DeviceOutputs gpu_ref = download_reference(problem);
    const HostOutputs cpu_ref = cpu_reference(host_inputs(problem));
    const Agreement agreement = compare(gpu_ref.out, gpu_ref.lse, cpu_ref.out, cpu_ref.lse);
    MESSAGE("GPU vs CPU reference, kv=" << to_string(kv) << ": " << describe(agreement));
    CHECK(agreement.passes(1e-5, 1e-6));
    CHECK(std::isinf(gpu_ref.lse[shape.n_local_heads()]));
  }
}

TEST_CASE("every config that compiles and fits is correct on every shape") {
  std::printf("%-10s %5s %5s %5s %8s %8s %10s %10s\n", "kv", "heads", "batch", "topk", "checks",
              "failed", "max_out", "max_lse");
  int total_checks = 0;
  test::for_each_selected_part([&](const Shape& base, const CompiledKeys& compiled) {
    for (const std::string& failure : compiled.failures) {
      if (!failure.empty()) MESSAGE("compile failed: " << failure);
    }
    MESSAGE(to_string(base.kv_format)
            << " " << base.n_local_heads() << " heads: " << compiled.configs.size()
            << " compile keys, " << compiled.from_cache << " from the cubin cache");
    for (int batch : test::matrix_batches()) {
      for (int topk : test::matrix_topks()) {
        Shape shape = base;
        shape.batch = batch;
        shape.topk = topk;
        const Tally tally =
            run_shape(compiled, shape, 1 << 18, static_cast<std::uint64_t>(batch * 7919 + topk));
        std::printf("%-10s %5d %5d %5d %8d %8d %10.2e %10.2e\n",
                    std::string(to_string(base.kv_format)).c_str(), shape.n_local_heads(), batch,
                    topk, tally.checks, tally.failures, tally.worst_out, tally.worst_lse);
        std::fflush(stdout);
        total_checks += tally.checks;
        CHECK(tally.checks > 0);
        CHECK(tally.failures == 0);
      }
    }
  });
  MESSAGE("checks run: " << total_checks);
}

namespace {

void all_invalid_for_item_one(std::vector<std::int32_t>& indices, const Shape& shape, long long) {
  if (shape.batch > 1)
    std::fill(indices.begin() + shape.topk, indices.begin() + 2 * shape.topk, -1);
}
void many_duplicates(std::vector<std::int32_t>& indices, const Shape&, long long) {
  for (std::size_t i = 0; i < indices.size(); i += 2) indices[i] = 12345;
}
void last_slots(std::vector<std::int32_t>& indices, const Shape&, long long num_tokens) {
  for (std::size_t i = 0; i < indices.size(); ++i) {
    indices[i] = static_cast<std::int32_t>(num_tokens - 1 - static_cast<long long>(i % 97));
  }
}

}  // namespace

TEST_CASE("corner cases: invalid rows, duplicates, the last slot, topk below BLOCK_T") {
  Gpu& device = gpu();
  const int arch = device.info.arch_sm();
  for (KvFormat kv : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
    for (const KernelConfig& config :
         {KernelConfig{.block_t = 16, .block_h = 16, .num_warps = 4, .num_stages = 2},
          KernelConfig{
              .block_t = 64, .block_h = 16, .num_warps = 8, .num_stages = 1, .target_ctas = 128},
          KernelConfig{
              .block_t = 32, .block_h = 16, .num_warps = 2, .num_stages = 3, .target_ctas = 1024},
          KernelConfig{.block_t = 64,
          .block_h = 16,
          .num_warps = 8,
          .num_stages = 2,
          .mma_path = 1,
          .producers = 1,
          .target_ctas = 128},
          KernelConfig{.block_t = 16,
          .block_h = 16,
          .num_warps = 4,
          .num_stages = 8,
          .mma_path = 1,
          .producers = 2,
          .target_ctas = 1024},
          // Four producer warps, 16 rows each of a 64-token tile (the space's producers 4).
          KernelConfig{.block_t = 64,
          .block_h = 16,
          .num_warps = 4,
          .num_stages = 2,
          .mma_path = 1,
          .producers = 4,
          .target_ctas = 128},
          // The sm_120 budget's winners' kernel: two producer warps, 16 rows each a tile.
          KernelConfig{.block_t = 32,
          .block_h = 16,
          .num_warps = 4,
          .num_stages = 3,
          .mma_path = 1,
          .producers = 2,
          .target_ctas = 256},
          KernelConfig{.block_t = 32,
          .block_h = 16,
          .num_warps = 4,
          .num_stages = 3,
          .mma_path = 2,
          .producers = 0,
          .target_ctas = 1024},
          KernelConfig{.block_t = 64,
          .block_h = 16,
          .num_warps = 8,
          .num_stages = 3,
          .mma_path = 2,
          .producers = 2,
          .target_ctas = 128}}) {
      Shape any_shape;
      any_shape.kv_format = kv;
      if (!shape_mismatch(config, any_shape).empty()) continue;
      const CompileResult compiled = compile(split_program(config, kv, arch));
      const DecodeKernels kernels = load_decode_kernels(compiled, config, kv);
      for (int topk : {2048, 5}) {
        Shape shape;
        shape.kv_format = kv;
        shape.batch = 4;
        shape.topk = topk;
        InputSpec spec{shape, 1 << 16, 1, 30, 5};
        DeviceProblem problem = make_device_problem(device.utility, spec, 128, device.stream.get());
        const std::string label = describe(to_config(config)) +
                                  " kv=" + std::string(to_string(kv)) +
                                  " topk=" + std::to_string(topk);
        for (auto [name, edit] :
             {std::pair<const char*, IndexEdit>{"all -1 for item 1", all_invalid_for_item_one},
              {"duplicates", many_duplicates},
              {"last slots", last_slots}}) {
          const Agreement agreement =
              verify_candidate(device.utility, kernels, problem, 77, device.stream, edit);
          INFO(label << " " << name << ": " << describe(agreement));
          CHECK(agreement.passes(kOutTolerance, kLseTolerance));
        }
      }
    }
  }
}

namespace {

// The split kernel on index rows near the end of a 4M-token cache, against the GPU reference.
void check_far_rows(Gpu& device, const KernelConfig& config) {
  Shape shape;
  shape.batch = 2;
  shape.topk = 512;
  const long long num_tokens = 4LL << 20;  // 4M tokens x 656 B = 2.75 GB
  InputSpec spec{shape, num_tokens, 1, 0, 9};
  DeviceProblem problem = make_device_problem(device.utility, spec, 64, device.stream.get());
  const CompileResult compiled =
      compile(split_program(config, shape.kv_format, device.info.arch_sm()));
  const DecodeKernels kernels = load_decode_kernels(compiled, config, shape.kv_format);
  const Agreement agreement =
      verify_candidate(device.utility, kernels, problem, 3, device.stream, last_slots);
  MESSAGE("4M-token cache, " << describe(to_config(config))
                             << " vs GPU reference: " << describe(agreement));
  CHECK(agreement.passes(kOutTolerance, kLseTolerance));
  // The GPU reference itself, on those far rows, against the CPU.
  const HostOutputs cpu_ref = cpu_reference(host_inputs(problem));
  const DeviceOutputs gpu_ref = download_reference(problem);
  const Agreement ref_agreement = compare(gpu_ref.out, gpu_ref.lse, cpu_ref.out, cpu_ref.lse);
  MESSAGE("4M-token cache, GPU reference vs CPU: " << describe(ref_agreement));
  CHECK(ref_agreement.passes(1e-5, 1e-6));
}
}  // namespace

TEST_CASE("a KV cache over 2^31 bytes: indices near its end use 64-bit row offsets") {
  Gpu& device = gpu();
  for (const KernelConfig& config : {default_config(),
                                     KernelConfig{.block_t = 32,
                                     .block_h = 16,
                                     .num_warps = 8,
                                     .num_stages = 4,
                                     .mma_path = 1,
                                     .producers = 1},
                                     KernelConfig{.block_t = 32,
                                     .block_h = 16,
                                     .num_warps = 8,
                                     .num_stages = 3,
                                     .mma_path = 2,
                                     .producers = 0}}) {
    check_far_rows(device, config);
  }
}
