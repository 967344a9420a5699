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
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/cluster_capacity.hpp"
#include "core/launch_order.hpp"

namespace tuner {

// One kernel of a frozen config, loaded: its function and the launch facts the frozen DB carries.
struct BoundKernel {
  CUfunction function = nullptr;
  unsigned block_threads = 0;
  unsigned dynamic_smem = 0;
  ClusterCapacity clusters;  // on the launcher's device, with this block and smem (none: no cap)
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

// cuLaunchKernel (cuLaunchKernelEx for a programmatic launch or clusters of `cluster_x` CTAs along
// x), as the launcher resolved it (the family does not load the driver itself).
using LaunchKernelFn = CUresult (*)(CUfunction function, unsigned grid_x, unsigned grid_y,
                                    unsigned grid_z, unsigned block_x, unsigned dynamic_smem,
                                    CUstream stream, void** params, LaunchOrder order,
                                    unsigned cluster_x);

// One field of a family's argument record (the plain C struct `launch` reads, declared in
// kernels/<family>/serve_args.h). The family lists its fields so that a caller without the
// family's header (the C ABI's generic launch, Python's ctypes) can build the record by name.
enum class ArgKind {
  device_pointer = 1,  // uint64_t device address on the launcher's device
  u64 = 2,             // uint64_t (a size in bytes)
  i32 = 3,             // int32_t
  f32 = 4              // float
};
struct ArgField {
  const char* name = "";  // a static, NUL-terminated string (handed out through the C ABI)
  ArgKind kind = ArgKind::device_pointer;
  std::size_t offset = 0;  // offsetof in the record
};

struct DeployFamily {
  std::string_view name;
  std::size_t args_size = 0;         // sizeof the family's argument record
  std::span<const ArgField> fields;  // every field of the record, by offset
  // Start-up: fills the bound config from the frozen kernels by role (e.g. "split",
  // "combine"; nullptr when the cubin has no kernel of that role) and the config's values.
  // Throws std::runtime_error naming a value the geometry needs and the config lacks.
  BoundConfig (*bind)(const std::function<const BoundKernel*(std::string_view role)>& kernel,
                      const std::function<std::optional<std::int64_t>(std::string_view)>& value) =
      nullptr;  // bind_roles_and_values below does the usual
  // Hot path (noexcept, allocation-free): the workspace one launch of `batch` needs.
  ServeResult (*workspace_bytes)(const BoundConfig& config, std::string_view shape, int batch,
                                 std::size_t* bytes) = nullptr;
  // Hot path: checks the arguments, computes the geometry, packs the parameter blocks on the
  // stack and enqueues the launches on `stream`.
  ServeResult (*launch)(const BoundConfig& config, std::string_view shape, int batch,
                        const void* args, CUstream stream, LaunchKernelFn launch_kernel) = nullptr;
};

// What `bind` is handed: the frozen kernel of a role (nullptr when the cubin has none) and a
// config value by name.
using KernelByRole = std::function<const BoundKernel*(std::string_view role)>;
using ValueByName = std::function<std::optional<std::int64_t>(std::string_view name)>;

// The usual `bind`: the kernels of `roles` into kernel slots 0, 1, ... (an absent role leaves
// its slot empty; the launch refuses what it then lacks) and the values `names` into value slots
// 0, 1, ...; throws std::runtime_error naming a value the family's geometry needs that the config
// lacks or holds below 1.
inline BoundConfig bind_roles_and_values(std::string_view family,
                                         std::span<const std::string_view> roles,
                                         std::span<const char* const> names,
                                         const KernelByRole& kernel, const ValueByName& value) {
  BoundConfig bound;
  for (std::size_t slot = 0; slot < roles.size() && slot < BoundConfig::kMaxKernels; ++slot) {
    if (const BoundKernel* found = kernel(roles[slot])) bound.kernels[slot] = *found;
  }
  for (std::size_t slot = 0; slot < names.size() && slot < BoundConfig::kMaxValues; ++slot) {
    const std::optional<std::int64_t> found = value(names[slot]);
    if (!found || *found < 1) {
      throw std::runtime_error(std::string(family) + " config has no positive " + names[slot] +
                               ": the frozen DB is not one this launcher reads");
    }
    bound.values[slot] = *found;
  }
  return bound;
}

// The hot path's workspace check: ok, or workspace_too_small when the launch needs more than the
// caller passed.
inline ServeResult check_workspace(std::uint64_t workspace, std::uint64_t workspace_bytes,
                                   std::size_t needed) noexcept {
  if (needed > 0 && (workspace == 0 || workspace_bytes < needed)) {
    return {ServeStatus::workspace_too_small,
            "workspace smaller than this launch needs: size it with the workspace query for the "
            "largest batch"};
  }
  return {};
}

}  // namespace tuner
