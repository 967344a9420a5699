#include "kernels/sparse_mla_decode/device_inputs.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "templates/sparse_mla_decode/row_errors.h"

namespace tuner::smla_family {

namespace {

DecodeDims dims_of(const Shape& shape) { return {shape.batch, shape.n_local_heads(), shape.topk}; }

// The largest workspace of a launch of up to `splits` splits: the partials, and merge 3's row
// tickets at the most head groups (BLOCK_H 16). All workspace_layout reads.
SplitPlan largest_plan(const Shape& shape, int splits) {
  SplitPlan plan;
  plan.num_splits = splits;
  plan.last_cta = true;
  plan.head_groups = (shape.n_local_heads() + 15) / 16;
  return plan;
}

void launch_fill(CUfunction function, void** args, long long elements, CUstream stream,
                 const std::string& what) {
  const long long blocks = std::min<long long>((elements + 255) / 256, 65535LL * 8);
  cuda::launch(function, {static_cast<unsigned>(std::max(blocks, 1LL)), 1, 1}, {256, 1, 1}, 0,
               stream, args, "fill " + what);
}

void fill_indices(const UtilityKernels& utility, DeviceProblem& problem, std::uint64_t seed,
                  CUstream stream) {
  int* indices = reinterpret_cast<int*>(problem.indices.get());
  long long count = static_cast<long long>(problem.spec.index_sets) * problem.spec.shape.batch *
                    problem.spec.shape.topk;
  long long num_tokens = problem.spec.num_tokens;
  unsigned long long index_seed = seed * 7 + 3;
  int invalid = problem.spec.invalid_per_mille;
  void* args[] = {&indices, &count, &num_tokens, &index_seed, &invalid};
  launch_fill(utility.fill_indices, args, count, stream, "indices");
}

void fill_q(const UtilityKernels& utility, DeviceProblem& problem, std::uint64_t seed,
            CUstream stream) {
  auto* q = reinterpret_cast<unsigned short*>(problem.q.get());
  auto count = static_cast<long long>(problem.q.size() / 2);
  unsigned long long q_seed = seed * 7 + 5;
  float stddev = 2.f;  // scores spread enough that a wrong gather or scale shows in the output
  void* args[] = {&q, &count, &q_seed, &stddev};
  launch_fill(utility.fill_bf16_normal, args, count, stream, "q");
}

}  // namespace

UtilityKernels load_utility_kernels(int arch_sm, const CubinCache* cache) {
  CompileResult compiled;
  if (cache != nullptr) {
    CachedCompile cached = compile_cached(*cache, utility_program(arch_sm));
    if (!cached.compiled) {
      throw NvrtcError("nvrtcCompileProgram", 6, "NVRTC_ERROR_COMPILATION",
                       utility_program(arch_sm).context, cached.result.log);
    }
    compiled = std::move(cached.result);
  } else {
    compiled = compile(utility_program(arch_sm));
  }
  UtilityKernels kernels{
      cuda::Module(compiled.cubin, "utility program"), {}, {}, {}, {}, {}, {}, {}};
  auto function = [&](const std::string& expression) {
    return kernels.module.function(compiled.lowered_names.at(expression));
  };
  kernels.reference_fp8 = function(reference_kernel_name(KvFormat::fp8_ds_mla));
  kernels.reference_bf16 = function(reference_kernel_name(KvFormat::bf16));
  kernels.fill_bf16_normal = function("fill_bf16_normal");
  kernels.fill_kv_fp8 = function("fill_kv_fp8_ds_mla");
  kernels.fill_kv_bf16 = function("fill_kv_bf16");
  kernels.fill_indices = function("fill_indices");
  kernels.row_errors = function("sparse_mla_decode_row_errors");
  return kernels;
}

CUdeviceptr DeviceProblem::index_set(int set) const {
  return indices.get() + static_cast<CUdeviceptr>(set) * index_set_bytes();
}

std::size_t DeviceProblem::index_set_bytes() const {
  return static_cast<std::size_t>(spec.shape.batch) * spec.shape.topk * sizeof(int);
}

DecodeBuffers DeviceProblem::buffers(int set, const SplitPlan& plan) const {
  const WorkspaceLayout layout = workspace_layout(dims_of(spec.shape), plan);
  if (plan.num_splits > max_partial_splits || layout.bytes > workspace.size()) {
    throw std::logic_error("sparse_mla_decode: a launch of " + std::to_string(plan.num_splits) +
                           " splits on a problem whose workspace holds the partials of " +
                           std::to_string(max_partial_splits) +
                           ": make the problem with max_partial_splits >= the launch's splits");
  }
  return place_partials({q.get(), kv.get(), index_set(set), out.get(), lse.get()}, workspace.get(),
                        layout);
}

DeviceProblem make_device_problem(const UtilityKernels& utility, const InputSpec& spec,
                                  int max_partial_splits, CUstream stream) {
  validate(spec.shape);
  const Shape& shape = spec.shape;
  const std::size_t heads_total = static_cast<std::size_t>(shape.batch) * shape.n_local_heads();
  const std::string what = "problem buffers";
  DeviceProblem problem;
  problem.spec = spec;
  problem.q = cuda::DeviceBuffer(heads_total * smla::kHeadDim * 2, what + " (q)");
  problem.kv = cuda::DeviceBuffer(static_cast<std::size_t>(spec.num_tokens) *
                                      static_cast<std::size_t>(kv_row_bytes(shape.kv_format)),
                                  what + " (kv cache)");
  problem.indices = cuda::DeviceBuffer(
      static_cast<std::size_t>(spec.index_sets) * shape.batch * shape.topk * sizeof(int),
      what + " (indices)");
  problem.out = cuda::DeviceBuffer(heads_total * smla::kLatentDim * 2, what + " (out)");
  problem.lse = cuda::DeviceBuffer(heads_total * sizeof(float), what + " (lse)");
  problem.max_partial_splits = std::max(max_partial_splits, 1);
  // At least one alignment unit: a one-split problem has no partials but a buffer to poison.
  problem.workspace = cuda::DeviceBuffer(
      std::max<std::size_t>(
          workspace_layout(dims_of(shape), largest_plan(shape, problem.max_partial_splits)).bytes,
          256),
      what + " (workspace)");
  problem.ref_out =
      cuda::DeviceBuffer(heads_total * smla::kLatentDim * sizeof(float), what + " (ref out)");
  problem.ref_lse = cuda::DeviceBuffer(heads_total * sizeof(float), what + " (ref lse)");
  problem.row_sums =
      cuda::DeviceBuffer(heads_total * smla::kRowSums * sizeof(double), what + " (row sums)");
  problem.softmax_scale = 1.f / std::sqrt(static_cast<float>(smla::kHeadDim));

  auto* kv = reinterpret_cast<unsigned char*>(problem.kv.get());
  long long num_tokens = spec.num_tokens;
  unsigned long long kv_seed = spec.seed * 7 + 1;
  void* args[] = {&kv, &num_tokens, &kv_seed};
  const long long kv_elements = shape.kv_format == KvFormat::fp8_ds_mla
                                    ? num_tokens * kv_row_bytes(shape.kv_format)
                                    : num_tokens * smla::kHeadDim;
  launch_fill(shape.kv_format == KvFormat::fp8_ds_mla ? utility.fill_kv_fp8 : utility.fill_kv_bf16,
              args, kv_elements, stream, "kv cache");
  redraw_inputs(utility, problem, spec.seed, stream);
  return problem;
}

void redraw_inputs(const UtilityKernels& utility, DeviceProblem& problem, std::uint64_t seed,
                   CUstream stream) {
  fill_q(utility, problem, seed, stream);
  fill_indices(utility, problem, seed, stream);
}

void poison_outputs(const DeviceProblem& problem, CUstream stream) {
  problem.out.fill_u16(0x7fc1, stream);  // bf16 NaN
  problem.lse.fill_u32(0x7fc00001u, stream);
  problem.workspace.fill_u32(0x7fc00001u, stream);
}

}  // namespace tuner::smla_family
