#include "kernels/fp8_gemm/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace tuner::fp8_gemm {

double e4m3_value(unsigned char bits) {
  const int exponent = (bits >> 3) & 15;
  const int mantissa = bits & 7;
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 10);
  return (bits & 0x80) != 0 ? -magnitude : magnitude;
}

float bf16_value(std::uint16_t bits) {
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float value = 0.f;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

std::vector<double> cpu_reference(const HostGemm& g) {
  const int groups = g.k / 128;
  std::vector<double> c(static_cast<std::size_t>(g.m) * g.n, 0.0);
  for (int row = 0; row < g.m; ++row) {
    for (int col = 0; col < g.n; ++col) {
      double total = 0.0;
      for (int group = 0; group < groups; ++group) {
        double sum = 0.0;
        for (int kk = group * 128; kk < (group + 1) * 128; ++kk) {
          sum += e4m3_value(g.a[static_cast<std::size_t>(row) * g.k + kk]) *
                 e4m3_value(g.b[static_cast<std::size_t>(col) * g.k + kk]);
        }
        total += sum * g.a_scale[static_cast<std::size_t>(row) * groups + group] *
                 g.b_scale[static_cast<std::size_t>(col / 128) * groups + group];
      }
      c[static_cast<std::size_t>(row) * g.n + col] = total;
    }
  }
  return c;
}

bool GemmAgreement::passes() const {
  return non_finite == 0 && rel_error < kRelTolerance && max_rel_error < kMaxRelTolerance;
}

GemmAgreement compare(const std::vector<float>& c, const std::vector<double>& ref) {
  GemmAgreement agreement;
  double diff2 = 0.0;
  double ref2 = 0.0;
  double max_diff = 0.0;
  double max_ref = 0.0;
  for (std::size_t i = 0; i < c.size() && i < ref.size(); ++i) {
    if (!std::isfinite(c[i])) {
      ++agreement.non_finite;
      continue;
    }
    const double diff = static_cast<double>(c[i]) - ref[i];
    diff2 += diff * diff;
    ref2 += ref[i] * ref[i];
    max_diff = std::max(max_diff, std::abs(diff));
    max_ref = std::max(max_ref, std::abs(ref[i]));
  }
  agreement.rel_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  agreement.max_rel_error = max_ref > 0 ? max_diff / max_ref : max_diff;
  return agreement;
}

std::string describe(const GemmAgreement& agreement) {
  char text[200];
  std::snprintf(text, sizeof text,
                "rel error %.2e (tolerance %.0e), max rel error %.2e (tolerance %.0e), %lld "
                "non-finite",
                agreement.rel_error, kRelTolerance, agreement.max_rel_error, kMaxRelTolerance,
                agreement.non_finite);
  return text;
}

}  // namespace tuner::fp8_gemm
