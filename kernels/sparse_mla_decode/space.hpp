#pragma once
// The parameter space of the sparse MLA decode family and its typed view of a config.
#include <string>
#include <vector>

#include "core/config.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner::smla_family {

inline constexpr const char* kFamilyName = "sparse_mla_decode";

struct KernelConfig {
  int block_t = 16;  // tokens per tile
  int block_h = 16;  // heads per CTA
  int num_warps = 4;
  int num_stages = 2;     // cp.async ring depth
  int target_ctas = 512;  // launch-only: drives the split count
  bool operator==(const KernelConfig& other) const = default;
};

// BLOCK_T {16,32,64}, BLOCK_H {16,32,64}, NUM_WARPS {2,4,8}, NUM_STAGES {1,2,3,4},
// TARGET_CTAS {128,256,512,1024} (launch-only).
const std::vector<Parameter>& parameter_space();

// The seeds' baseline: BLOCK_T 16, BLOCK_H 16, 4 warps, 2 stages, TARGET_CTAS 512.
KernelConfig default_config();

KernelConfig from_config(const Config& config);
Config to_config(const KernelConfig& config);

// The template instantiations a compile of this config must produce.
std::string split_kernel_name(const KernelConfig& config, KvFormat kv_format);
std::string combine_kernel_name();

// Empty when the config can run this shape; otherwise why not ("BLOCK_H 32 > 16 local heads").
std::string shape_mismatch(const KernelConfig& config, const Shape& shape);

}  // namespace tuner::smla_family
