#pragma once
// The GPU buffers of one problem: inputs drawn on the device from a seed (q, a paged KV cache,
// several independent index sets) and the outputs, NaN-poisoned before each checked launch.
#include <cstdint>
#include <vector>

#include "core/cubin_cache.hpp"
#include "core/cuda_driver.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner::smla_family {

// The reference kernel and the fills, loaded once per device.
struct UtilityKernels {
  cuda::Module module;
  CUfunction reference_fp8 = nullptr;
  CUfunction reference_bf16 = nullptr;
  CUfunction fill_bf16_normal = nullptr;
  CUfunction fill_kv_fp8 = nullptr;
  CUfunction fill_kv_bf16 = nullptr;
  CUfunction fill_indices = nullptr;
  CUfunction row_errors = nullptr;  // verify.hpp's compare_on_device
};

// Compiles (NVRTC) and loads the utility program for the current device; through `cache` when
// given (a sweep worker starts often: a warm rerun then reads the cubin instead of compiling).
UtilityKernels load_utility_kernels(int arch_sm, const CubinCache* cache = nullptr);

struct InputSpec {
  Shape shape;
  long long num_tokens = 0;    // KV cache rows (pages x page_size)
  int index_sets = 1;          // independent [batch][topk] index sets
  int invalid_per_mille = 30;  // share of -1 entries
  std::uint64_t seed = 1;
};

struct DeviceProblem {
  InputSpec spec;
  cuda::DeviceBuffer q;        // [batch][n_local_heads][576] bf16
  cuda::DeviceBuffer kv;       // [num_tokens][row bytes]
  cuda::DeviceBuffer indices;  // [index_sets][batch][topk] int32
  cuda::DeviceBuffer out;      // [batch][n_local_heads][512] bf16
  cuda::DeviceBuffer lse;      // [batch][n_local_heads] fp32
  // The split partials in deploy.hpp's workspace layout, as the serving launcher is handed them
  // (one buffer: partial_out, then partial_lse on a 256-byte boundary), for up to
  // max_partial_splits splits.
  cuda::DeviceBuffer workspace;
  int max_partial_splits = 1;
  cuda::DeviceBuffer ref_out;  // fp32 reference output
  cuda::DeviceBuffer ref_lse;
  cuda::DeviceBuffer row_sums;  // [batch][n_local_heads][kRowSums] fp64, compare_on_device's
  float softmax_scale = 0.f;

  CUdeviceptr index_set(int set) const;
  std::size_t index_set_bytes() const;
  // The buffers of a launch of `plan` reading index set `set`, its partials placed in `workspace`
  // as the serving launcher places them (place_partials). Throws std::logic_error when the plan
  // has more splits than the workspace was sized for.
  DecodeBuffers buffers(int set, const SplitPlan& plan) const;
};

// Allocates and fills everything; the workspace sized for `max_partial_splits` splits.
DeviceProblem make_device_problem(const UtilityKernels& utility, const InputSpec& spec,
                                  int max_partial_splits, CUstream stream);

// Redraws q and the index sets from a new seed (the KV cache stays): fresh inputs per check.
void redraw_inputs(const UtilityKernels& utility, DeviceProblem& problem, std::uint64_t seed,
                   CUstream stream);

// Fills outputs and partials with NaN bit patterns so that unwritten elements fail the check.
void poison_outputs(const DeviceProblem& problem, CUstream stream);

}  // namespace tuner::smla_family
