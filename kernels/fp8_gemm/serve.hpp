#pragma once
// The fp8 GEMM as the serving launcher sees it (core/deploy_family.hpp): roles, binding,
// workspace and the launch, over deploy.hpp's geometry and packing.
#include <optional>
#include <string_view>

#include "core/deploy_family.hpp"

namespace tuner::fp8_gemm {

// Frozen kernel roles.
inline constexpr std::string_view kGemmRole = "gemm";
inline constexpr std::string_view kReduceRole = "reduce";

// n and k of the canonical shape text ("block=128,k=7168,n=4096"), parsed without allocating;
// nullopt unless both are positive multiples of 128 and block (when given) is 128.
struct ServeShape {
  int n = 0;
  int k = 0;
};
std::optional<ServeShape> parse_serve_shape(std::string_view shape) noexcept;

const DeployFamily& deploy_family();

}  // namespace tuner::fp8_gemm
