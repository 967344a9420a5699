#include "kernels/fp8_gemm/family.hpp"

#include <charconv>

#include "core/error.hpp"
#include "core/templates.hpp"
#include "kernels/fp8_gemm/deploy.hpp"
#include "kernels/fp8_gemm/serve.hpp"

namespace tuner::fp8_gemm {
namespace {

int multiple_of_128(const std::map<std::string, std::string>& values, const std::string& dim) {
  const auto found = values.find(dim);
  if (found == values.end()) throw InputError("fp8_gemm needs shape dimension --" + dim);
  const std::string& text = found->second;
  int value = 0;
  const auto [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || ptr != text.data() + text.size() || value <= 0 ||
      value % 128 != 0) {
    throw InputError("--" + dim + " needs a positive multiple of 128 (the scale block), got '" +
                     text + "'");
  }
  return value;
}

tuner::Shape canonicalize(const std::map<std::string, std::string>& values) {
  for (const auto& [name, value] : values) {
    if (name != "n" && name != "k" && name != "block") {
      throw InputError("fp8_gemm has no shape dimension '" + name +
                       "': its dimensions are n, k, block");
    }
  }
  const auto block = values.find("block");
  if (block != values.end() && block->second != "128") {
    throw InputError("--block '" + block->second +
                     "' is not supported: fp8_gemm scales 128x128 blocks (use --block 128)");
  }
  const int n = multiple_of_128(values, "n");
  const int k = multiple_of_128(values, "k");
  tuner::Shape shape;
  shape.dims = {{"block", "128"}, {"k", std::to_string(k)}, {"n", std::to_string(n)}};
  return shape;
}

std::string describe_shape(const tuner::Shape& shape) {
  return "N " + shape.text("n") + ", K " + shape.text("k") + ", block " + shape.text("block") +
         "x" + shape.text("block");
}

Config default_params() { return to_config(default_config()); }

std::string family_rules(const Config& config, const tuner::Shape& shape) {
  return rules(from_config(config), typed_shape(shape));
}

StaticBudget budget(const Config& config, const tuner::Shape& /*shape*/) {
  return static_budget(from_config(config));
}

CompileRequest program(const Config& config, const tuner::Shape& /*shape*/, int arch_sm) {
  return gemm_program(from_config(config), arch_sm);
}

std::string main_kernel(const Config& config, const tuner::Shape& /*shape*/) {
  return gemm_kernel_name(from_config(config));
}

// N and K are launch arguments: one cubin serves every shape.
CompileRequest frozen_program(const Config& config, const std::vector<tuner::Shape>& /*shapes*/,
                              int arch_sm) {
  return gemm_program(from_config(config), arch_sm);
}

// The GEMM kernel with its layout's dynamic shared memory (also its max-dynamic-smem attribute)
// and the split-K reduce (deploy.hpp's block size); the geometry reads BLOCK_M, BLOCK_N, SPLIT_K.
std::vector<FrozenLaunch> frozen_launches(const Config& config,
                                          const std::vector<tuner::Shape>& /*shapes*/) {
  const KernelConfig kernel = from_config(config);
  const StaticBudget budget = static_budget(kernel);
  const std::string params = "{\"block_m\":" + std::to_string(kernel.block_m) +
                             ",\"block_n\":" + std::to_string(kernel.block_n) +
                             ",\"split_k\":" + std::to_string(kernel.split_k) + "}";
  return {{std::string(kGemmRole), gemm_kernel_name(kernel), budget.threads_per_block,
           budget.smem_bytes_per_block, budget.smem_bytes_per_block, params},
          {std::string(kReduceRole), reduce_kernel_name(), static_cast<int>(kReduceThreads), 0, 0,
           params}};
}

// vLLM's block-fp8 tuned-config file (vllm/model_executor/layers/quantization/utils/configs/):
// "N={N},K={K},device_name={device},dtype=fp8_w8a8,block_shape=[128,128].json".
std::string export_name(const tuner::Shape& shape, const std::string& device_name) {
  return "N=" + shape.text("n") + ",K=" + shape.text("k") + ",device_name=" + device_name +
         ",dtype=fp8_w8a8,block_shape=[" + shape.text("block") + "," + shape.text("block") +
         "].json";
}

// BLOCK_SIZE_M/N/K, num_warps and num_stages map one to one. GROUP_SIZE_M (Triton's tile
// swizzle) has no counterpart here and is written as 1; SPLIT_K has no field in vLLM's format
// (its Triton kernel does not split K) and is kept as an extra key vLLM ignores.
std::string export_entry(const Config& params) {
  const KernelConfig c = from_config(params);
  return R"({"BLOCK_SIZE_M":)" + std::to_string(c.block_m) + R"(,"BLOCK_SIZE_N":)" +
         std::to_string(c.block_n) + R"(,"BLOCK_SIZE_K":)" + std::to_string(c.block_k) +
         R"(,"GROUP_SIZE_M":1,"num_warps":)" + std::to_string(c.num_warps) + R"(,"num_stages":)" +
         std::to_string(c.num_stages) + R"(,"SPLIT_K":)" + std::to_string(c.split_k) + "}";
}

std::map<std::string, std::string> gemm_shape(int n, int k) {
  return {{"n", std::to_string(n)}, {"k", std::to_string(k)}, {"block", "128"}};
}

Family make_family() {
  Family f;
  f.name = kFamilyName;
  f.summary = "fp8 e4m3 block-scaled GEMM (w8a8, 1x128 activation and 128x128 weight scales)";
  f.dims = {
      {"n", "7168", "output features N (weight rows), a multiple of 128", {}},
      {"k", "4096", "reduction length K, a multiple of 128", {}},
      {"block", "128", "scale block size", {"128"}},
  };
  // DeepSeek-V3 (hidden 7168, 128 heads, q_lora 1536, kv_lora 512, dense intermediate 18432,
  // expert intermediate 2048) at TP 4: the linear layers whose weights are block-fp8. M is the
  // decode batch. The routed experts run as a grouped MoE kernel, not this one; the shared expert
  // is a plain GEMM.
  f.default_shapes = {
      {"attn o_proj (16384/4 -> 7168)", gemm_shape(7168, 4096)},
      {"attn q_b_proj (1536 -> 24576/4)", gemm_shape(6144, 1536)},
      {"attn kv_b_proj (512 -> 32768/4)", gemm_shape(8192, 512)},
      {"dense mlp gate_up (7168 -> 2x18432/4)", gemm_shape(9216, 7168)},
      {"dense mlp down (18432/4 -> 7168)", gemm_shape(7168, 4608)},
      {"shared expert gate_up (7168 -> 2x2048/4)", gemm_shape(1024, 7168)},
      {"shared expert down (2048/4 -> 7168)", gemm_shape(7168, 512)},
  };
  f.canonicalize = &canonicalize;
  f.describe_shape = &describe_shape;
  f.space = &parameter_space;
  f.default_config = &default_params;
  f.rules = &family_rules;
  f.budget = &budget;
  f.program = &program;
  f.main_kernel = &main_kernel;
  f.frozen_program = &frozen_program;
  f.frozen_launches = &frozen_launches;
  f.source_hash = &source_hash;
  f.open_device = &open_device;
  f.tolerance = "||c - ref|| / ||ref|| < 1e-2, max |c - ref| < 2e-2 max |ref| (fp32 reference)";
  f.export_name = &export_name;
  f.export_entry = &export_entry;
  return f;
}

}  // namespace

GemmShape typed_shape(const tuner::Shape& shape, int m) {
  return GemmShape{static_cast<int>(shape.integer("n")), static_cast<int>(shape.integer("k")), m};
}

const std::string& source_hash() {
  static const std::string hash = templates_hash({"common/", "fp8_gemm/"});
  return hash;
}

CompileRequest gemm_program(const KernelConfig& config, int arch_sm) {
  CompileRequest request;
  request.source_name = "fp8_gemm/program.cu";
  request.source_text = "#include \"fp8_gemm/gemm.cuh\"\n";
  request.headers = template_files({"common/", "fp8_gemm/"});
  request.name_expressions = {gemm_kernel_name(config), reduce_kernel_name()};
  request.arch_sm = arch_sm;
  request.context = std::string(kFamilyName) + " " + describe(to_config(config)) + " sm_" +
                    std::to_string(arch_sm);
  return request;
}

CompileRequest utility_program(int arch_sm) {
  CompileRequest request;
  request.source_name = "fp8_gemm/utility.cu";
  request.source_text = "#include \"fp8_gemm/reference.cuh\"\n";
  request.headers = template_files({"common/", "fp8_gemm/"});
  request.name_expressions = {"fp8_gemm_reference", "fp8_gemm_fill_e4m3", "fp8_gemm_fill_scale"};
  request.arch_sm = arch_sm;
  request.context = std::string(kFamilyName) + " utility program sm_" + std::to_string(arch_sm);
  return request;
}

const Family& family() {
  static const Family value = make_family();
  return value;
}

}  // namespace tuner::fp8_gemm
