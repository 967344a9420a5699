#include "kernels/fp8_gemm/operand_sets.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/measure.hpp"

namespace tuner::fp8_gemm {

OperandSets operand_sets(double set_bytes, double memory_gib, long long l2_bytes, int min_launches,
                         const std::string& option) {
  const double memory_bytes = memory_gib * static_cast<double>(1LL << 30);
  const double fit = std::floor(memory_bytes / set_bytes);
  if (fit < 1.0) {
    throw InputError(option + " is smaller than one set of GEMM operands (" +
                     std::to_string(set_bytes / 1048576.0) + " MiB): pass a larger --memory-gib");
  }
  double needed = 1.0;
  if (l2_bytes > 0) {
    check_memory_covers_l2(memory_bytes, l2_bytes, option);
    needed = std::ceil(kL2Factor * static_cast<double>(l2_bytes) / set_bytes);
  }
  char text[320];
  if (needed > kMaxLaunchesPerGraph) {
    std::snprintf(text, sizeof text,
                  "%s: one set of GEMM operands is %.3f MiB, so %g launches per graph (over %d) "
                  "would be needed to read %gx the L2 per replay; tune a larger shape",
                  option.c_str(), set_bytes / 1048576.0, needed, kMaxLaunchesPerGraph, kL2Factor);
    throw InputError(text);
  }
  if (fit < needed) {
    std::snprintf(text, sizeof text,
                  "%s holds %g whole sets of GEMM operands of %.1f MiB, fewer than the %g that "
                  "reach %gx the L2: pass a --memory-gib of at least %.2f",
                  option.c_str(), fit, set_bytes / 1048576.0, needed, kL2Factor,
                  needed * set_bytes / static_cast<double>(1LL << 30) + 0.01);
    throw InputError(text);
  }
  const double launches = std::max(static_cast<double>(min_launches), needed);
  return OperandSets{static_cast<int>(std::min(fit, launches)), static_cast<int>(launches)};
}

}  // namespace tuner::fp8_gemm
