#pragma once
// Loading a compiled split + combine program and launching it on a stream (graph-capturable: no
// allocation, no synchronization, no host work beyond filling the parameter blocks).
#include <memory>

#include "core/cuda_driver.hpp"
#include "core/nvrtc.hpp"
#include "kernels/sparse_mla_decode/device_inputs.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/space.hpp"

namespace tuner::smla_family {

// Copyable: configs that differ only in TARGET_CTAS share one loaded module.
struct DecodeKernels {
  KernelConfig config;
  KvFormat kv_format = KvFormat::fp8_ds_mla;
  std::shared_ptr<const cuda::Module> module;
  CUfunction split = nullptr;
  CUfunction combine = nullptr;            // the general combine (and merge 3's ticket reset)
  CUfunction combine_whole_row = nullptr;  // rows of at most 8 parts (deploy.hpp)
  // The split kernel's cluster capacity with the cluster merge's shared memory (the serving
  // launcher queries the same for its bound split kernel): split_plan's cap.
  ClusterCapacity clusters;
};

// Loads the cubin and raises the split kernel's dynamic shared-memory limit to what the layout
// needs.
DecodeKernels load_decode_kernels(const CompileResult& compiled, const KernelConfig& config,
                                  KvFormat kv_format);

// Launches split (+ combine when split) for the shape's batch, reading index set `index_set`; the
// partials in the problem's workspace, where the serving launcher puts them (the DB times that).
void launch_decode(const DecodeKernels& kernels, const LaunchGeometry& geometry,
                   const DeviceProblem& problem, int index_set, CUstream stream);

// The same on explicit buffers (the partials wherever `buffers` says), e.g. to compare layouts.
void launch_decode(const DecodeKernels& kernels, const LaunchGeometry& geometry,
                   const DecodeBuffers& buffers, const DecodeDims& dims, float softmax_scale,
                   CUstream stream);

// Launches the fp32 reference into problem.ref_out / ref_lse for index set `index_set`.
void launch_reference(const UtilityKernels& utility, const DeviceProblem& problem, int index_set,
                      CUstream stream);

}  // namespace tuner::smla_family
