#include "kernels/sparse_mla_decode/launch.hpp"

#include <cmath>

#include "core/device_pointer.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "templates/sparse_mla_decode/params.h"

namespace tuner::smla_family {

namespace {

std::string context_of(const DecodeKernels& kernels) {
  return std::string(kFamilyName) + " " + describe(to_config(kernels.config)) +
         " kv=" + std::string(to_string(kernels.kv_format));
}

}  // namespace

DecodeKernels load_decode_kernels(const CompileResult& compiled, const KernelConfig& config,
                                  KvFormat kv_format) {
  const std::string context = std::string(kFamilyName) + " " + describe(to_config(config)) +
                              " kv=" + std::string(to_string(kv_format));
  DecodeKernels kernels;
  kernels.config = config;
  kernels.kv_format = kv_format;
  kernels.module = std::make_shared<const cuda::Module>(compiled.cubin, context);
  kernels.split =
      kernels.module->function(compiled.lowered_names.at(split_kernel_name(config, kv_format)));
  kernels.combine = kernels.module->function(compiled.lowered_names.at(combine_kernel_name()));
  kernels.combine_whole_row =
      kernels.module->function(compiled.lowered_names.at(combine_whole_row_kernel_name()));
  Shape any_shape;
  any_shape.kv_format = kv_format;
  // The module may serve every launch-time variant of its compile key: the cluster merge's
  // shared memory (layout.h's split_smem_bytes) is the most any of them asks for.
  KernelConfig clustered = config;
  clustered.merge = smla::kMergeCluster;
  const LaunchGeometry widest = launch_geometry(clustered, any_shape, kCapacityUnknown);
  cuda::set_max_dynamic_smem(kernels.split, static_cast<int>(widest.split_smem_bytes), context);
  kernels.clusters =
      cuda::cluster_capacity(kernels.split, widest.split_threads, widest.split_smem_bytes);
  return kernels;
}

void launch_decode(const DecodeKernels& kernels, const LaunchGeometry& geometry,
                   const DeviceProblem& problem, int index_set, CUstream stream) {
  const Shape& shape = problem.spec.shape;
  launch_decode(kernels, geometry, problem.buffers(index_set, geometry.plan),
                {shape.batch, shape.n_local_heads(), shape.topk}, problem.softmax_scale, stream);
}

void launch_decode(const DecodeKernels& kernels, const LaunchGeometry& geometry,
                   const DecodeBuffers& buffers, const DecodeDims& dims, float softmax_scale,
                   CUstream stream) {
  // Packing is deploy.hpp's, shared with the serving launcher.
  const SplitPlan& plan = geometry.plan;
  if (plan.takes_tickets()) {  // merges 3, 5: the row tickets zeroed first, the split its dependent
    smla::CombineParams reset = pack_reset(buffers, dims, plan);
    void* reset_args[] = {&reset};
    const std::array<unsigned, 3> grid = reset_grid(dims, plan);
    cuda::launch(kernels.combine, {grid[0], grid[1], grid[2]}, {geometry.combine_threads, 1, 1}, 0,
                 stream, reset_args, context_of(kernels) + " ticket reset");
  }
  smla::SplitParams split = pack_split(buffers, dims, plan, softmax_scale);
  void* split_args[] = {&split};
  cuda::launch(kernels.split,
               {geometry.split_grid[0], geometry.split_grid[1], geometry.split_grid[2]},
               {geometry.split_threads, 1, 1}, geometry.split_smem_bytes, stream, split_args,
               context_of(kernels) + " split", split_order(plan), plan.cluster_x());
  if (!geometry.runs_combine()) return;
  smla::CombineParams combine = pack_combine(buffers, dims, plan);
  void* combine_args[] = {&combine};
  cuda::launch(combine_whole_row(plan) ? kernels.combine_whole_row : kernels.combine,
               {geometry.combine_grid[0], geometry.combine_grid[1], geometry.combine_grid[2]},
               {geometry.combine_threads, 1, 1}, 0, stream, combine_args,
               context_of(kernels) + " combine", combine_order(kernels.config.merge));
}

void launch_reference(const UtilityKernels& utility, const DeviceProblem& problem, int index_set,
                      CUstream stream) {
  const Shape& shape = problem.spec.shape;
  smla::ReferenceParams params{};
  params.q = device_pointer<const unsigned short>(problem.q.get());
  params.kv = device_pointer<const unsigned char>(problem.kv.get());
  params.indices = device_pointer<const int>(problem.index_set(index_set));
  params.out = device_pointer<float>(problem.ref_out.get());
  params.lse = device_pointer<float>(problem.ref_lse.get());
  params.batch = shape.batch;
  params.n_local_heads = shape.n_local_heads();
  params.topk = shape.topk;
  params.softmax_scale = problem.softmax_scale;
  void* args[] = {&params};
  constexpr unsigned kThreads = 256;
  const auto smem = static_cast<unsigned>((shape.topk + kThreads) * sizeof(float));
  CUfunction function =
      shape.kv_format == KvFormat::fp8_ds_mla ? utility.reference_fp8 : utility.reference_bf16;
  cuda::set_max_dynamic_smem(function, static_cast<int>(smem), "reference kernel");
  cuda::launch(
      function,
      {static_cast<unsigned>(shape.n_local_heads()), static_cast<unsigned>(shape.batch), 1},
      {kThreads, 1, 1}, smem, stream, args, "reference kernel");
}

}  // namespace tuner::smla_family
