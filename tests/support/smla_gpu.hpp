#pragma once
// The GPU tests of sparse MLA decode share these: one context and stream per process, the compile
// keys of a matrix part compiled for this GPU (matrix_compiles.hpp), and the launch variants'
// largest split count (the partials' size).
#include <memory>
#include <string>
#include <vector>

#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "tests/support/matrix_compiles.hpp"
#include "tests/support/matrix_selection.hpp"

namespace tuner::test {

using namespace tuner::smla_family;

struct Gpu {
  cuda::DeviceInfo info = cuda::device_info(0);
  cuda::Context context{0};
  int smem_optin = cuda::device_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0);
  UtilityKernels utility = load_utility_kernels(info.arch_sm());
  cuda::Stream stream;
};

inline Gpu& gpu() {
  static Gpu instance;
  instance.context.make_current();
  return instance;
}

// The fewest and the most CTAs the space asks for: one split at large batches, many at small ones.
inline constexpr int kTargets[] = {128, 1024};

// The launch variants the GPU tests run per compiled key: merge 0 with the fewest CTAs, merge 1
// with the most splits (every combine chunk count), merge 2 on the pipelined kernels at 256 CTAs
// (clusters of 2-8, 5 at topk 600, none at topk 5), merge 3 on the pipelined per-row-split
// kernels at 256 CTAs (1-32 splits a row: every ticket count from one to a row's tiles), merge 4
// (bf16 partials) on the pipelined kernels with one wave of the device's resident CTAs
// (TARGET_CTAS 0: 4 splits at batch 64 on the H200, a row's tiles at batch 1), and merge 5 (the
// row-slice merge) on the pipelined per-row-split kernels at 256 CTAs (1-8 splits a row, fewer
// where the grid would not be one wave: launch it with the kernels' capacity).
inline int launch_variants(const KernelConfig& key) {
  if (key.mma_path == 0) return 2;
  return key.schedule == smla::kScheduleSplits ? 6 : 4;
}
inline KernelConfig launch_variant(KernelConfig key, int variant) {
  // The tile-dividing schedules' fourth variant is merge 4 (they take no merge 3).
  key.merge = smla::divides_tiles(key.schedule) && variant == 3 ? smla::kMergeCombineBf16 : variant;
  key.target_ctas = key.merge == smla::kMergeCombine       ? kTargets[0]
                    : key.merge == smla::kMergeCombinePdl  ? kTargets[1]
                    : key.merge == smla::kMergeCombineBf16 ? kTargetOneWave
                                                           : 256;
  return key;
}

inline int max_splits_for(const std::vector<KernelConfig>& configs, const Shape& shape) {
  int max_splits = 1;
  for (KernelConfig config : configs) {
    // The split count grows with TARGET_CTAS: 1 << 30 asks every row's tiles, the most any
    // variant (TARGET_CTAS 0 on any device included) can launch.
    config.target_ctas = 1 << 30;
    max_splits =
        std::max(max_splits, launch_geometry(config, shape, kCapacityUnknown).plan.num_splits);
  }
  return max_splits;
}

// Calls f(base, compiled) for each (KV format, TP) part of the matrix that TUNER_GPU_MATRIX
// selects: `base` the part's shape, `compiled` the space's keys that it allows, compiled for this
// GPU.
template <typename F>
void for_each_selected_part(F&& f) {
  Gpu& device = gpu();
  for (KvFormat kv : {KvFormat::fp8_ds_mla, KvFormat::bf16}) {
    for (int tp : {4, 2, 1}) {
      if (!matrix_part_selected(kv, tp)) continue;
      Shape base;
      base.kv_format = kv;
      base.attn_tp = tp;
      f(base, compile_all(compile_keys_for(base, device.smem_optin), kv, device.info.arch_sm(),
                          matrix_cubin_cache()));
    }
  }
}

}  // namespace tuner::test
