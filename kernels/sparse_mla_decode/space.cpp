#include "kernels/sparse_mla_decode/space.hpp"

#include <algorithm>

namespace tuner::smla_family {

const std::vector<Parameter>& parameter_space() {
  static const std::vector<Parameter> space = {
      {"block_t", {16, 32, 64}, false},
      {"block_h", {16, 32, 64}, false},
      {"num_warps", {2, 4, 8}, false},
      {"num_stages", {1, 2, 3, 4}, false},
      {"target_ctas", {128, 256, 512, 1024}, true},
  };
  return space;
}

KernelConfig default_config() { return KernelConfig{}; }

KernelConfig from_config(const Config& config) {
  return KernelConfig{config.at("block_t"), config.at("block_h"), config.at("num_warps"),
                      config.at("num_stages"), config.at("target_ctas")};
}

Config to_config(const KernelConfig& config) {
  return Config{{{"block_t", config.block_t},
                 {"block_h", config.block_h},
                 {"num_warps", config.num_warps},
                 {"num_stages", config.num_stages},
                 {"target_ctas", config.target_ctas}}};
}

std::string split_kernel_name(const KernelConfig& config, KvFormat kv_format) {
  return "sparse_mla_decode_split<" + std::to_string(config.block_t) + ", " +
         std::to_string(config.block_h) + ", " + std::to_string(config.num_warps) + ", " +
         std::to_string(config.num_stages) + ", " + std::to_string(static_cast<int>(kv_format)) +
         ">";
}

std::string combine_kernel_name() { return "sparse_mla_decode_combine<128>"; }

std::string shape_mismatch(const KernelConfig& config, const Shape& shape) {
  // Head groups are padded to the 16-row mma tile, so a CTA may be wider than the local heads only
  // up to that padding.
  const int widest_useful = std::max(16, (shape.n_local_heads() + 15) / 16 * 16);
  if (config.block_h > widest_useful) {
    return "BLOCK_H " + std::to_string(config.block_h) + " > " +
           std::to_string(shape.n_local_heads()) + " local heads";
  }
  return {};
}

}  // namespace tuner::smla_family
