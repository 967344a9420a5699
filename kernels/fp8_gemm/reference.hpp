#pragma once
// The CPU fp64 reference (checks the GPU fp32 reference on small shapes) and the tolerance check
// that decides whether a candidate's output is right.
#include <cstdint>
#include <string>
#include <vector>

namespace tuner::fp8_gemm {

struct HostGemm {
  int m = 0, n = 0, k = 0;
  std::vector<unsigned char> a;  // [m][k] e4m3
  std::vector<float> a_scale;    // [m][k / 128]
  std::vector<unsigned char> b;  // [n][k] e4m3
  std::vector<float> b_scale;    // [n / 128][k / 128]
};

// e4m3 (no NaN handling: 0x7f / 0xff are never produced) to double, exactly.
double e4m3_value(unsigned char bits);
float bf16_value(std::uint16_t bits);

// [m][n] in fp64.
std::vector<double> cpu_reference(const HostGemm& gemm);

struct GemmAgreement {
  double rel_error = 0.0;      // ||c - ref|| / ||ref||
  double max_rel_error = 0.0;  // max |c - ref| / max |ref|
  long long non_finite = 0;    // NaN / inf outputs (unwritten elements stay NaN-poisoned)
  bool passes() const;
};

// ||c - ref|| / ||ref|| < 1e-2 and max |c - ref| < 2e-2 max |ref| (bf16 output: 2^-9 relative
// rounding per element; the fp32 sums differ only in order).
inline constexpr double kRelTolerance = 1e-2;
inline constexpr double kMaxRelTolerance = 2e-2;

GemmAgreement compare(const std::vector<float>& c, const std::vector<double>& ref);
std::string describe(const GemmAgreement& agreement);

}  // namespace tuner::fp8_gemm
