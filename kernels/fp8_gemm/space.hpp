#pragma once
// The fp8 block-scaled GEMM family's parameter space, its typed view of a config, the named rules
// and the static budget (from templates/fp8_gemm/layout.h, the header the kernel uses).
#include <string>
#include <vector>

#include "core/budget.hpp"
#include "core/config.hpp"

namespace tuner::fp8_gemm {

inline constexpr const char* kFamilyName = "fp8_gemm";

struct GemmShape {
  int n = 0;  // output features (weight rows)
  int k = 0;  // reduction length; a multiple of 128
  int m = 1;  // the batch (decode tokens), set per measurement
};

struct KernelConfig {
  int block_m = 16;
  int block_n = 64;
  int block_k = 128;
  int num_warps = 4;
  int num_stages = 3;
  int split_k = 1;  // launch-only: CTAs along K
  bool operator==(const KernelConfig& other) const = default;
};

// BLOCK_M {16,32,64}, BLOCK_N {32,64,128}, BLOCK_K {64,128}, NUM_WARPS {4,8},
// NUM_STAGES {2,3,4}, SPLIT_K {1,2,4,8} (launch-only).
const std::vector<Parameter>& parameter_space();
KernelConfig default_config();
KernelConfig from_config(const Config& config);
Config to_config(const KernelConfig& config);

std::string gemm_kernel_name(const KernelConfig& config);
std::string reduce_kernel_name();

// Empty when the config can run the shape, else the first failing rule's reason.
std::string rules(const KernelConfig& config, const GemmShape& shape);

StaticBudget static_budget(const KernelConfig& config);

}  // namespace tuner::fp8_gemm
