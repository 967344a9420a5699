#include "kernels/sparse_mla_decode/serve.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

#include "kernels/sparse_mla_decode/serve_args.h"
#include "kernels/sparse_mla_decode/space.hpp"

namespace tuner::smla_family {

namespace {

// BoundConfig slots.
constexpr int kSplitFp8 = 0;
constexpr int kSplitBf16 = 1;
constexpr int kCombine = 2;
constexpr int kBlockT = 0;
constexpr int kBlockH = 1;
constexpr int kTargetCtas = 2;

constexpr int kMaxGridY = 65535;  // grid.y and grid.z limits of cuLaunchKernel

bool parse_int(std::string_view text, int* value) noexcept {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size() && *value > 0;
}

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
  planned.plan = split_plan(planned.dims, {static_cast<int>(config.values[kBlockT]),
                                           static_cast<int>(config.values[kBlockH]),
                                           static_cast<int>(config.values[kTargetCtas])});
  return planned;
}

BoundConfig bind(const std::function<const BoundKernel*(std::string_view)>& kernel,
                 const std::function<std::optional<std::int64_t>(std::string_view)>& value) {
  BoundConfig bound;
  const BoundKernel* roles[] = {kernel(split_role(KvFormat::fp8_ds_mla)),
                                kernel(split_role(KvFormat::bf16)), kernel(kCombineRole)};
  for (int slot = 0; slot < 3; ++slot) {
    if (roles[slot] != nullptr) bound.kernels[slot] = *roles[slot];
  }
  const char* names[] = {"block_t", "block_h", "target_ctas"};
  for (int slot = 0; slot < 3; ++slot) {
    const std::optional<std::int64_t> found = value(names[slot]);
    if (!found || *found < 1) {
      throw std::runtime_error(std::string(kFamilyName) + " config has no positive " + names[slot] +
                               ": the frozen DB is not one this launcher reads");
    }
    bound.values[slot] = *found;
  }
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
  if (needed > 0 && (args.workspace == 0 || args.workspace_bytes < needed)) {
    return refuse(ServeStatus::workspace_too_small,
                  "workspace smaller than this launch needs: size it with the workspace query "
                  "for the largest batch");
  }
  return {};
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
  if (split.function == nullptr || (planned.plan.runs_combine() && combine.function == nullptr)) {
    return refuse(ServeStatus::no_kernel, "the frozen cubin has no kernel for this kv_format");
  }
  const DecodeBuffers buffers{given.q,
                              given.kv,
                              given.indices,
                              given.out,
                              given.lse,
                              given.workspace,
                              given.workspace + layout.partial_lse_offset};
  smla::SplitParams split_params =
      pack_split(buffers, planned.dims, planned.plan, given.softmax_scale);
  void* split_args[] = {&split_params};
  CUresult result =
      launch_kernel(split.function, static_cast<unsigned>(planned.plan.num_splits),
                    static_cast<unsigned>(planned.plan.head_groups), static_cast<unsigned>(batch),
                    split.block_threads, split.dynamic_smem, stream, split_args);
  if (result == CUDA_SUCCESS && planned.plan.runs_combine()) {
    smla::CombineParams combine_params = pack_combine(buffers, planned.dims, planned.plan);
    void* combine_args[] = {&combine_params};
    result = launch_kernel(combine.function, static_cast<unsigned>(planned.dims.local_heads),
                           static_cast<unsigned>(batch), 1, combine.block_threads,
                           combine.dynamic_smem, stream, combine_args);
  }
  if (result != CUDA_SUCCESS) return {ServeStatus::launch_failed, "cuLaunchKernel failed", result};
  return {};
}

}  // namespace

std::string_view split_role(KvFormat kv_format) {
  return kv_format == KvFormat::fp8_ds_mla ? "split.fp8_ds_mla" : "split.bf16";
}

std::optional<ServeShape> parse_serve_shape(std::string_view shape) noexcept {
  ServeShape parsed;
  bool have_format = false;
  while (!shape.empty()) {
    const std::size_t comma = std::min(shape.find(','), shape.size());
    const std::string_view pair = shape.substr(0, comma);
    shape.remove_prefix(std::min(comma + 1, shape.size()));
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const std::string_view name = pair.substr(0, equals);
    const std::string_view value = pair.substr(equals + 1);
    if (name == "local_heads" && !parse_int(value, &parsed.local_heads)) return std::nullopt;
    if (name == "topk" && !parse_int(value, &parsed.topk)) return std::nullopt;
    if (name == "kv_format") {
      if (value != "fp8_ds_mla" && value != "bf16") return std::nullopt;
      parsed.kv_format = value == "bf16" ? KvFormat::bf16 : KvFormat::fp8_ds_mla;
      have_format = true;
    }
  }
  if (!have_format || parsed.local_heads == 0 || parsed.topk == 0) return std::nullopt;
  return parsed;
}

const DeployFamily& deploy_family() {
  static const DeployFamily family{kFamilyName, sizeof(tunedb_sparse_mla_decode_args), &bind,
                                   &workspace_bytes, &launch};
  return family;
}

}  // namespace tuner::smla_family
