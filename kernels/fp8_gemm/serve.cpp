#include "kernels/fp8_gemm/serve.hpp"

#include <cstddef>

#include "core/serve_shape.hpp"
#include "kernels/fp8_gemm/deploy.hpp"
#include "kernels/fp8_gemm/serve_args.h"
#include "kernels/fp8_gemm/space.hpp"

namespace tuner::fp8_gemm {

namespace {

// BoundConfig slots.
constexpr int kGemm = 0;
constexpr int kReduce = 1;
constexpr int kBlockM = 0;
constexpr int kBlockN = 1;
constexpr int kSplitK = 2;
constexpr const char* kValueNames[] = {"block_m", "block_n", "split_k"};

constexpr int kScaleBlock = 128;
constexpr int kMaxGridY = 65535;  // grid.y (ceil(m / BLOCK_M)) limit of cuLaunchKernel

ServeResult refuse(ServeStatus status, const char* what) noexcept { return {status, what}; }

// Validates (shape, batch) against the bound config; `result` ok or why not.
struct Planned {
  ServeResult result;
  GemmDims dims;
  GemmLaunchParams params;
};

Planned plan_launch(const BoundConfig& config, std::string_view shape_text, int batch) noexcept {
  Planned planned;
  const std::optional<ServeShape> shape = parse_serve_shape(shape_text);
  if (!shape) {
    planned.result = refuse(ServeStatus::bad_shape,
                            "shape text needs n and k, positive multiples of 128, and block=128 "
                            "(canonical text, as `tuner query` prints it)");
    return planned;
  }
  planned.params = {static_cast<int>(config.values[kBlockM]),
                    static_cast<int>(config.values[kBlockN]),
                    static_cast<int>(config.values[kSplitK])};
  if (batch < 1 || (batch - 1) / planned.params.block_m >= kMaxGridY) {
    planned.result = refuse(ServeStatus::bad_batch, "batch (m) must be in 1..65535 x BLOCK_M");
    return planned;
  }
  planned.dims = {batch, shape->n, shape->k};
  if (const char* violation = launch_rule_violation(planned.dims, planned.params)) {
    planned.result = refuse(ServeStatus::bad_shape, violation);
  }
  return planned;
}

BoundConfig bind(const KernelByRole& kernel, const ValueByName& value) {
  constexpr std::string_view roles[] = {kGemmRole, kReduceRole};
  return bind_roles_and_values(kFamilyName, roles, kValueNames, kernel, value);
}

ServeResult workspace_query(const BoundConfig& config, std::string_view shape, int batch,
                            std::size_t* bytes) {
  const Planned planned = plan_launch(config, shape, batch);
  if (planned.result.status != ServeStatus::ok) return planned.result;
  *bytes = workspace_bytes(planned.dims, planned.params.split_k);
  return {};
}

ServeResult check_buffers(const tunedb_fp8_gemm_args& args, std::size_t needed) {
  if (args.a == 0 || args.a_scale == 0 || args.b == 0 || args.b_scale == 0 || args.c == 0) {
    return refuse(ServeStatus::bad_arguments, "a, a_scale, b, b_scale and c must be non-null");
  }
  if (args.a % 16 != 0 || args.b % 16 != 0 || args.c % 4 != 0) {
    return refuse(ServeStatus::bad_arguments,
                  "a and b must be 16-byte aligned and c 4-byte aligned (as allocations are)");
  }
  return check_workspace(args.workspace, args.workspace_bytes, needed);
}

ServeResult launch(const BoundConfig& config, std::string_view shape, int batch, const void* args,
                   CUstream stream, LaunchKernelFn launch_kernel) {
  const Planned planned = plan_launch(config, shape, batch);
  if (planned.result.status != ServeStatus::ok) return planned.result;
  const auto& given = *static_cast<const tunedb_fp8_gemm_args*>(args);
  const int split_k = planned.params.split_k;
  if (const ServeResult checked = check_buffers(given, workspace_bytes(planned.dims, split_k));
      checked.status != ServeStatus::ok) {
    return checked;
  }
  const BoundKernel& gemm = config.kernels[kGemm];
  const BoundKernel& reduce = config.kernels[kReduce];
  if (gemm.function == nullptr || (split_k > 1 && reduce.function == nullptr)) {
    return refuse(ServeStatus::no_kernel, "the frozen cubin lacks the gemm or reduce kernel");
  }
  const GemmBuffers buffers{given.a,       given.a_scale, given.b,
                            given.b_scale, given.c,       given.workspace};
  fp8gemm::GemmParams gemm_params = pack_gemm(buffers, planned.dims, split_k);
  void* gemm_args[] = {&gemm_params};
  const Grid grid = gemm_grid(planned.dims, planned.params);
  CUresult result = launch_kernel(gemm.function, grid.x, grid.y, grid.z, gemm.block_threads,
                                  gemm.dynamic_smem, stream, gemm_args, LaunchOrder::stream, 1);
  if (result == CUDA_SUCCESS && split_k > 1) {
    fp8gemm::ReduceParams reduce_params = pack_reduce(buffers, planned.dims, split_k);
    void* reduce_args[] = {&reduce_params};
    result = launch_kernel(reduce.function, reduce_blocks(planned.dims), 1, 1, reduce.block_threads,
                           reduce.dynamic_smem, stream, reduce_args, LaunchOrder::stream, 1);
  }
  if (result != CUDA_SUCCESS) return {ServeStatus::launch_failed, "cuLaunchKernel failed", result};
  return {};
}

}  // namespace

std::optional<ServeShape> parse_serve_shape(std::string_view shape) noexcept {
  const std::optional<int> n = serve_shape::positive(shape, "n");
  const std::optional<int> k = serve_shape::positive(shape, "k");
  const std::optional<std::string_view> block = serve_shape::value(shape, "block");
  if (!n || !k || *n % kScaleBlock != 0 || *k % kScaleBlock != 0 || (block && *block != "128")) {
    return std::nullopt;
  }
  return ServeShape{*n, *k};
}

const DeployFamily& deploy_family() {
  using Args = tunedb_fp8_gemm_args;
  static constexpr ArgField fields[] = {
      {"a", ArgKind::device_pointer, offsetof(Args, a)},
      {"a_scale", ArgKind::device_pointer, offsetof(Args, a_scale)},
      {"b", ArgKind::device_pointer, offsetof(Args, b)},
      {"b_scale", ArgKind::device_pointer, offsetof(Args, b_scale)},
      {"c", ArgKind::device_pointer, offsetof(Args, c)},
      {"workspace", ArgKind::device_pointer, offsetof(Args, workspace)},
      {"workspace_bytes", ArgKind::u64, offsetof(Args, workspace_bytes)},
  };
  static const DeployFamily family{kFamilyName, sizeof(Args),     fields,
                                   &bind,       &workspace_query, &launch};
  return family;
}

}  // namespace tuner::fp8_gemm
