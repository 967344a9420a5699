#pragma once
// What the serving launcher (libtunedb_cuda, deploy/) needs of a family, with no NVRTC and no
// tuner: bind a frozen config's kernels once at start-up, then size its workspace and enqueue its
// launches on the hot path without allocating, synchronizing or loading anything (legal inside
// CUDA graph capture). A family provides one DeployFamily value (kernels/<family>/serve.cpp) and a
// line in deploy/families.cpp. The tuner side writes what `bind` reads: Family::frozen_launches.
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace tuner {

// One kernel of a frozen config, loaded: its function and the launch facts the frozen DB carries.
struct BoundKernel {
  CUfunction function = nullptr;
  unsigned block_threads = 0;
  unsigned dynamic_smem = 0;
};

// A frozen config bound for launching: the kernels by the family's role slots, and the config
// values its geometry reads. Plain data, copied into the launcher's table at start-up.
struct BoundConfig {
  static constexpr int kMaxKernels = 4;
  static constexpr int kMaxValues = 8;
  BoundKernel kernels[kMaxKernels] = {};
  std::int64_t values[kMaxValues] = {};
};

// Why a hot-path call refused; `what` is a static string (no allocation on the hot path).
enum class ServeStatus {
  ok,
  bad_shape,
  bad_batch,
  bad_arguments,
  workspace_too_small,
  no_kernel,
  launch_failed
};
struct ServeResult {
  ServeStatus status = ServeStatus::ok;
  const char* what = "";
  CUresult cuda_result = CUDA_SUCCESS;  // for launch_failed
};

// cuLaunchKernel, as the launcher resolved it (the family does not load the driver itself).
using LaunchKernelFn = CUresult (*)(CUfunction function, unsigned grid_x, unsigned grid_y,
                                    unsigned grid_z, unsigned block_x, unsigned dynamic_smem,
                                    CUstream stream, void** params);

struct DeployFamily {
  std::string_view name;
  std::size_t args_size = 0;  // sizeof the family's argument struct (deploy/tunedb_cuda.h)
  // Start-up: fills the bound config from the frozen kernels by role ("split.fp8_ds_mla",
  // "combine"; nullptr when the cubin has no kernel of that role) and the config's values.
  // Throws std::runtime_error naming a value the geometry needs and the config lacks.
  BoundConfig (*bind)(const std::function<const BoundKernel*(std::string_view role)>& kernel,
                      const std::function<std::optional<std::int64_t>(std::string_view)>& value) =
      nullptr;
  // Hot path (noexcept, allocation-free): the workspace one launch of `batch` needs.
  ServeResult (*workspace_bytes)(const BoundConfig& config, std::string_view shape, int batch,
                                 std::size_t* bytes) = nullptr;
  // Hot path: checks the arguments, computes the geometry, packs the parameter blocks on the
  // stack and enqueues the launches on `stream`.
  ServeResult (*launch)(const BoundConfig& config, std::string_view shape, int batch,
                        const void* args, CUstream stream, LaunchKernelFn launch_kernel) = nullptr;
};

}  // namespace tuner
