#include "kernels/sparse_mla_decode/serve.hpp"

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/serve_shape.hpp"
#include "kernels/sparse_mla_decode/serve_args.h"
#include "kernels/sparse_mla_decode/space.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "templates/sparse_mla_decode/schedule.h"

namespace tuner::smla_family {

namespace {

// BoundConfig slots.
constexpr int kSplitFp8 = 0;
constexpr int kSplitBf16 = 1;
constexpr int kCombine = 2;
constexpr int kCombineWholeRow = 3;
constexpr int kBlockT = 0;
constexpr int kBlockH = 1;
constexpr int kTargetCtas = 2;
constexpr int kMerge = 3;
constexpr int kSchedule = 4;

constexpr int kMaxGridY = 65535;  // grid.y and grid.z limits of cuLaunchKernel

ServeResult refuse(ServeStatus status, const char* what) noexcept { return {status, what}; }

// Validates (shape, batch) and plans the launch; `status` ok or why not.
struct Planned {
  ServeResult result;
  ServeShape shape;
  DecodeDims dims;
  SplitPlan plan;
};

Planned plan_launch(const BoundConfig& config, std::string_view shape_text, int batch) noexcept {
  Planned planned;
  const std::optional<ServeShape> shape = parse_serve_shape(shape_text);
  if (!shape) {
    planned.result = refuse(ServeStatus::bad_shape,
                            "shape text lacks local_heads, topk or a kv_format of "
                            "fp8_ds_mla|bf16 (canonical text, as `tuner query` prints it)");
    return planned;
  }
  if (batch < 1 || batch > kMaxGridY) {
    planned.result = refuse(ServeStatus::bad_batch, "batch must be in 1..65535");
    return planned;
  }
  planned.shape = *shape;
  planned.dims = {batch, shape->local_heads, shape->topk};
  const bool fp8 = shape->kv_format == KvFormat::fp8_ds_mla;
  planned.plan = split_plan(
      planned.dims,
      {static_cast<int>(config.values[kBlockT]), static_cast<int>(config.values[kBlockH]),
       static_cast<int>(config.values[kTargetCtas]), static_cast<int>(config.values[kMerge]),
       static_cast<int>(config.values[kSchedule])},
      config.kernels[fp8 ? kSplitFp8 : kSplitBf16].clusters);
  return planned;
}

BoundConfig bind(const KernelByRole& kernel, const ValueByName& value) {
  const std::string_view roles[] = {split_role(KvFormat::fp8_ds_mla), split_role(KvFormat::bf16),
                                    kCombineRole, kCombineWholeRowRole};
  constexpr const char* names[] = {"block_t", "block_h"};
  BoundConfig bound = bind_roles_and_values(kFamilyName, roles, names, kernel, value);
  // TARGET_CTAS may be 0: one wave of the split kernel's resident CTAs (deploy.hpp).
  const std::optional<std::int64_t> target_ctas = value("target_ctas");
  if (!target_ctas || *target_ctas < 0) {
    throw std::runtime_error(std::string(kFamilyName) +
                             " config has no target_ctas >= 0: the frozen DB is not one this "
                             "launcher reads");
  }
  bound.values[kTargetCtas] = *target_ctas;
  // DBs frozen before `merge` name it `pdl` (the same values 0 and 1), and those frozen before pdl
  // lack both: their combine is stream-ordered.
  std::optional<std::int64_t> merge = value("merge");
  if (!merge) merge = value("pdl");
  bound.values[kMerge] = merge.value_or(smla::kMergeCombine);
  // DBs frozen before `schedule` ran per-row splits (the cubin's kernel name says which it is).
  bound.values[kSchedule] = value("schedule").value_or(smla::kScheduleSplits);
  return bound;
}

ServeResult workspace_bytes(const BoundConfig& config, std::string_view shape, int batch,
                            std::size_t* bytes) {
  const Planned planned = plan_launch(config, shape, batch);
  if (planned.result.status != ServeStatus::ok) return planned.result;
  *bytes = workspace_layout(planned.dims, planned.plan).bytes;
  return {};
}

ServeResult check_buffers(const tunedb_sparse_mla_decode_args& args, std::size_t needed) {
  if (args.q == 0 || args.kv == 0 || args.indices == 0 || args.out == 0 || args.lse == 0) {
    return refuse(ServeStatus::bad_arguments, "q, kv, indices, out and lse must be non-null");
  }
  if (!(args.softmax_scale > 0.0f)) {
    return refuse(ServeStatus::bad_arguments, "softmax_scale must be a positive number");
  }
  return check_workspace(args.workspace, args.workspace_bytes, needed);
}

ServeResult launch(const BoundConfig& config, std::string_view shape, int batch, const void* args,
                   CUstream stream, LaunchKernelFn launch_kernel) {
  const Planned planned = plan_launch(config, shape, batch);
  if (planned.result.status != ServeStatus::ok) return planned.result;
  const auto& given = *static_cast<const tunedb_sparse_mla_decode_args*>(args);
  const WorkspaceLayout layout = workspace_layout(planned.dims, planned.plan);
  if (const ServeResult checked = check_buffers(given, layout.bytes);
      checked.status != ServeStatus::ok) {
    return checked;
  }
  const bool fp8 = planned.shape.kv_format == KvFormat::fp8_ds_mla;
  const BoundKernel& split = config.kernels[fp8 ? kSplitFp8 : kSplitBf16];
  const BoundKernel& combine = config.kernels[kCombine];
  const bool tickets = planned.plan.takes_tickets();
  if (split.function == nullptr ||
      ((planned.plan.runs_combine() || tickets) && combine.function == nullptr)) {
    return refuse(ServeStatus::no_kernel, "the frozen cubin has no kernel for this kv_format");
  }
  const DecodeBuffers buffers = place_partials(
      {given.q, given.kv, given.indices, given.out, given.lse}, given.workspace, layout);
  CUresult result = CUDA_SUCCESS;
  if (tickets) {  // merges 3, 5: the row tickets zeroed first, the split its programmatic dependent
    smla::CombineParams reset_params = pack_reset(buffers, planned.dims, planned.plan);
    void* reset_args[] = {&reset_params};
    const std::array<unsigned, 3> grid = reset_grid(planned.dims, planned.plan);
    result = launch_kernel(combine.function, grid[0], grid[1], grid[2], combine.block_threads,
                           combine.dynamic_smem, stream, reset_args, LaunchOrder::stream, 1);
    if (result != CUDA_SUCCESS) {
      return {ServeStatus::launch_failed, "cuLaunchKernel failed", result};
    }
  }
  smla::SplitParams split_params =
      pack_split(buffers, planned.dims, planned.plan, given.softmax_scale);
  void* split_args[] = {&split_params};
  const std::array<unsigned, 3> split_dims = split_grid(planned.dims, planned.plan);
  result = launch_kernel(split.function, split_dims[0], split_dims[1], split_dims[2],
                         split.block_threads, split.dynamic_smem, stream, split_args,
                         split_order(planned.plan), planned.plan.cluster_x());
  if (result == CUDA_SUCCESS && planned.plan.runs_combine()) {
    smla::CombineParams combine_params = pack_combine(buffers, planned.dims, planned.plan);
    void* combine_args[] = {&combine_params};
    const std::array<unsigned, 3> grid = combine_grid(planned.dims, planned.plan);
    const BoundKernel& whole_row = config.kernels[kCombineWholeRow];
    const BoundKernel& merger =
        combine_whole_row(planned.plan) && whole_row.function != nullptr ? whole_row : combine;
    result = launch_kernel(merger.function, grid[0], grid[1], grid[2], merger.block_threads,
                           merger.dynamic_smem, stream, combine_args,
                           combine_order(static_cast<int>(config.values[kMerge])), 1);
  }
  if (result != CUDA_SUCCESS) return {ServeStatus::launch_failed, "cuLaunchKernel failed", result};
  return {};
}

}  // namespace

std::string_view split_role(KvFormat kv_format) {
  return kv_format == KvFormat::fp8_ds_mla ? "split.fp8_ds_mla" : "split.bf16";
}

std::optional<ServeShape> parse_serve_shape(std::string_view shape) noexcept {
  const std::optional<int> local_heads = serve_shape::positive(shape, "local_heads");
  const std::optional<int> topk = serve_shape::positive(shape, "topk");
  const std::optional<std::string_view> format = serve_shape::value(shape, "kv_format");
  if (!local_heads || !topk || !format || (*format != "fp8_ds_mla" && *format != "bf16")) {
    return std::nullopt;
  }
  return ServeShape{*local_heads, *topk, *format == "bf16" ? KvFormat::bf16 : KvFormat::fp8_ds_mla};
}

const DeployFamily& deploy_family() {
  using Args = tunedb_sparse_mla_decode_args;
  static constexpr ArgField fields[] = {
      {"q", ArgKind::device_pointer, offsetof(Args, q)},
      {"kv", ArgKind::device_pointer, offsetof(Args, kv)},
      {"indices", ArgKind::device_pointer, offsetof(Args, indices)},
      {"out", ArgKind::device_pointer, offsetof(Args, out)},
      {"lse", ArgKind::device_pointer, offsetof(Args, lse)},
      {"workspace", ArgKind::device_pointer, offsetof(Args, workspace)},
      {"workspace_bytes", ArgKind::u64, offsetof(Args, workspace_bytes)},
      {"softmax_scale", ArgKind::f32, offsetof(Args, softmax_scale)},
  };
  static const DeployFamily family{kFamilyName, sizeof(Args),     fields,
                                   &bind,       &workspace_bytes, &launch};
  return family;
}

}  // namespace tuner::smla_family
