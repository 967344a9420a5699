#pragma once
// The CPU fp64 reference (checks the GPU reference on small shapes) and the tolerance check that
// decides whether a candidate's output is right.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner::smla_family {

struct HostInputs {
  Shape shape;
  std::vector<std::uint16_t> q;       // [batch][n_local_heads][576] bf16 bits
  std::vector<unsigned char> kv;      // [num_tokens][row bytes]
  std::vector<std::int32_t> indices;  // [batch][topk]
  double softmax_scale = 0.0;
};

struct HostOutputs {
  std::vector<double> out;  // [batch][n_local_heads][512]
  std::vector<double> lse;  // [batch][n_local_heads]; -inf when no index is valid
};

double e4m3_to_double(unsigned char bits);
double bf16_to_double(std::uint16_t bits);

HostOutputs cpu_reference(const HostInputs& inputs);

struct Agreement {
  double out_rel_error = 0.0;  // ||out - ref|| / ||ref|| (ref all zero: ||out||)
  double lse_rel_error = 0.0;  // max over rows of |lse - ref| / max(|ref|, 1); -inf must match
  long long non_finite = 0;    // NaN / inf outputs (unwritten elements stay NaN-poisoned)
  std::string mismatch;        // first structural problem (an -inf mismatch, a NaN), empty if none
  bool passes(double out_tolerance, double lse_tolerance) const {
    return non_finite == 0 && mismatch.empty() && out_rel_error < out_tolerance &&
           lse_rel_error < lse_tolerance;
  }
};

inline constexpr double kOutTolerance = 1e-2;
inline constexpr double kLseTolerance = 1e-3;

// `out` and `lse` are what the candidate wrote (out as floats already converted from bf16).
Agreement compare(const std::vector<float>& out, const std::vector<float>& lse,
                  const std::vector<double>& ref_out, const std::vector<double>& ref_lse);

std::string describe(const Agreement& agreement);

}  // namespace tuner::smla_family
