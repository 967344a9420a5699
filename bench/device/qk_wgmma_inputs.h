#pragma once
// Host side of bench/device/qk_wgmma.cu: one tile's inputs (64 tokens of an fp8_ds_mla cache, the
// 16 heads' q as e4m3 value + residual with per-group scales) and their fp64 reference.
#include <cmath>
#include <cstring>

namespace qk_bench {

constexpr int kTokens = 64;
constexpr int kHeads = 16;

struct Inputs {
  unsigned char nope[kTokens][512];
  unsigned short rope[kTokens][64];
  float k_scale[kTokens][4];
  unsigned char q_hi[kHeads][512];
  unsigned char q_lo[kHeads][512];
  unsigned short q_rope[kHeads][64];
  float q_scale[kHeads][4];
};

inline double e4m3(unsigned char byte) {
  const int exponent = (byte >> 3) & 15;
  const int mantissa = byte & 7;
  const double magnitude = exponent == 0 ? mantissa / 8.0 * std::ldexp(1.0, -6)
                                         : (1 + mantissa / 8.0) * std::ldexp(1.0, exponent - 7);
  return (byte >> 7) ? -magnitude : magnitude;
}
inline double bf16(unsigned short bits) {
  const unsigned word = static_cast<unsigned>(bits) << 16;
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}

inline unsigned next(unsigned& state) { return state = state * 1664525u + 1013904223u; }

// Random e4m3 bytes over the whole range (no NaN), bf16 in [-1, 1], scales powers of two and not.
inline void make_random(Inputs& in) {
  unsigned state = 12345u;
  auto e4m3_byte = [&] {
    unsigned char byte = static_cast<unsigned char>(next(state) >> 24);
    return (byte & 0x7F) == 0x7F ? static_cast<unsigned char>(byte ^ 0x08) : byte;
  };
  auto bf16_bits = [&] {
    const float value = (static_cast<int>(next(state) >> 8) % 2001 - 1000) / 1000.f;
    unsigned word;
    std::memcpy(&word, &value, 4);
    return static_cast<unsigned short>(word >> 16);
  };
  const float scales[4] = {0.5f, 0.0625f, 1.5f, 3.0f};
  for (int t = 0; t < kTokens; ++t) {
    for (int d = 0; d < 512; ++d) in.nope[t][d] = e4m3_byte();
    for (int d = 0; d < 64; ++d) in.rope[t][d] = bf16_bits();
    for (int g = 0; g < 4; ++g) in.k_scale[t][g] = scales[(t + g) % 4];
  }
  for (int h = 0; h < kHeads; ++h) {
    for (int d = 0; d < 512; ++d) {
      in.q_hi[h][d] = e4m3_byte();
      in.q_lo[h][d] = e4m3_byte() & 0xC7;  // |residual| <= 3.75
    }
    for (int d = 0; d < 64; ++d) in.q_rope[h][d] = bf16_bits();
    for (int g = 0; g < 4; ++g) in.q_scale[h][g] = scales[(h + 2 * g) % 4] / 4;
  }
}

// Values in {-1, 0, 1, 2}, unit scales, no residual: every partial sum is an integer below 2^12,
// exact in any accumulator, so any error is a layout error.
inline void make_integer(Inputs& in) {
  unsigned state = 777u;
  const unsigned char e4m3_values[4] = {0xB8, 0x00, 0x38, 0x40};
  const unsigned short bf16_values[4] = {0xBF80, 0x0000, 0x3F80, 0x4000};
  for (int t = 0; t < kTokens; ++t) {
    for (int d = 0; d < 512; ++d) in.nope[t][d] = e4m3_values[next(state) >> 30];
    for (int d = 0; d < 64; ++d) in.rope[t][d] = bf16_values[next(state) >> 30];
    for (int g = 0; g < 4; ++g) in.k_scale[t][g] = 1.f;
  }
  for (int h = 0; h < kHeads; ++h) {
    for (int d = 0; d < 512; ++d) {
      in.q_hi[h][d] = e4m3_values[next(state) >> 30];
      in.q_lo[h][d] = 0;
    }
    for (int d = 0; d < 64; ++d) in.q_rope[h][d] = bf16_values[next(state) >> 30];
    for (int g = 0; g < 4; ++g) in.q_scale[h][g] = 1.f;
  }
}

inline double score(const Inputs& in, int t, int h) {
  double total = 0;
  for (int d = 0; d < 512; ++d) {
    total += e4m3(in.nope[t][d]) * (e4m3(in.q_hi[h][d]) + e4m3(in.q_lo[h][d])) *
             in.k_scale[t][d / 128] * in.q_scale[h][d / 128];
  }
  for (int d = 0; d < 64; ++d) total += bf16(in.rope[t][d]) * bf16(in.q_rope[h][d]);
  return total;
}

// One tile's attention for head h: out[512] = softmax(score x scale_log2 in log2 units) . V,
// V = the scaled latent; returns the lse (natural log, of the scores x scale_log2 x ln 2).
inline double attention(const Inputs& in, int h, double scale_log2, double* out) {
  double x[kTokens];
  double top = -INFINITY;
  for (int t = 0; t < kTokens; ++t) top = std::fmax(top, x[t] = score(in, t, h) * scale_log2);
  double sum = 0;
  for (int d = 0; d < 512; ++d) out[d] = 0;
  for (int t = 0; t < kTokens; ++t) {
    const double p = std::exp2(x[t] - top);
    sum += p;
    for (int d = 0; d < 512; ++d) out[d] += p * e4m3(in.nope[t][d]) * in.k_scale[t][d / 128];
  }
  for (int d = 0; d < 512; ++d) out[d] /= sum;
  return (top + std::log2(sum)) * std::log(2.0);
}

}  // namespace qk_bench
