#include "kernels/fp8_gemm/space.hpp"

#include "kernels/fp8_gemm/deploy.hpp"
#include "templates/fp8_gemm/layout.h"

namespace tuner::fp8_gemm {

const std::vector<Parameter>& parameter_space() {
  static const std::vector<Parameter> space = {
      {"block_m", {16, 32, 64}, false}, {"block_n", {32, 64, 128}, false},
      {"block_k", {64, 128}, false},    {"num_warps", {4, 8}, false},
      {"num_stages", {2, 3, 4}, false}, {"split_k", {1, 2, 4, 8}, true},
  };
  return space;
}

KernelConfig default_config() { return KernelConfig{}; }

KernelConfig from_config(const Config& config) {
  return KernelConfig{config.at("block_m"),   config.at("block_n"),    config.at("block_k"),
                      config.at("num_warps"), config.at("num_stages"), config.at("split_k")};
}

Config to_config(const KernelConfig& config) {
  return Config{{{"block_m", config.block_m},
                 {"block_n", config.block_n},
                 {"block_k", config.block_k},
                 {"num_warps", config.num_warps},
                 {"num_stages", config.num_stages},
                 {"split_k", config.split_k}}};
}

std::string gemm_kernel_name(const KernelConfig& config) {
  return "fp8_gemm<" + std::to_string(config.block_m) + ", " + std::to_string(config.block_n) +
         ", " + std::to_string(config.block_k) + ", " + std::to_string(config.num_warps) + ", " +
         std::to_string(config.num_stages) + ">";
}

std::string reduce_kernel_name() {
  return "fp8_gemm_reduce<" + std::to_string(kReduceThreads) + ">";
}

std::string rules(const KernelConfig& config, const GemmShape& shape) {
  if (!fp8gemm::tiling_ok(config.block_m, config.block_n, config.num_warps)) {
    return "tiling: " + std::to_string(config.num_warps) + " warps cannot tile " +
           std::to_string(config.block_m) + "x" + std::to_string(config.block_n) +
           " in whole 16x8 mma tiles";
  }
  if (shape.n % config.block_n != 0) {
    return "n_tiles: N " + std::to_string(shape.n) + " is not a multiple of BLOCK_N " +
           std::to_string(config.block_n);
  }
  const int groups = shape.k / fp8gemm::kScaleBlock;
  if (config.split_k > groups) {
    return "split_k: SPLIT_K " + std::to_string(config.split_k) + " > " + std::to_string(groups) +
           " K groups of 128";
  }
  return {};
}

StaticBudget static_budget(const KernelConfig& config) {
  return StaticBudget{
      fp8gemm::smem_bytes(config.block_m, config.block_n, config.block_k, config.num_stages),
      fp8gemm::estimated_registers(config.block_m, config.block_n, config.num_warps),
      config.num_warps * 32,
  };
}

}  // namespace tuner::fp8_gemm
