#include "kernels/sparse_mla_decode/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "templates/sparse_mla_decode/layout.h"

namespace tuner::smla_family {

double e4m3_to_double(unsigned char bits) {
  const int exponent = (bits >> 3) & 0xf;
  const int mantissa = bits & 0x7;
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return (bits & 0x80) ? -magnitude : magnitude;
}

double bf16_to_double(std::uint16_t bits) {
  const std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &widened, sizeof value);
  return value;
}

namespace {

// The dequantized value of `dim` (0..575) of one KV row.
double kv_value(const unsigned char* row, KvFormat format, int dim) {
  if (format == KvFormat::bf16) {
    std::uint16_t bits;
    std::memcpy(&bits, row + static_cast<std::ptrdiff_t>(dim) * 2, 2);
    return bf16_to_double(bits);
  }
  if (dim < smla::kLatentDim) {
    float scale;
    const std::ptrdiff_t group = dim / smla::kGroupDim;
    std::memcpy(&scale, row + smla::kFp8ScaleOffset + group * 4, 4);
    return e4m3_to_double(row[dim]) * static_cast<double>(scale);
  }
  std::uint16_t bits;
  const std::ptrdiff_t rope_dim = dim - smla::kLatentDim;
  std::memcpy(&bits, row + smla::kFp8RopeOffset + rope_dim * 2, 2);
  return bf16_to_double(bits);
}

}  // namespace

HostOutputs cpu_reference(const HostInputs& inputs) {
  const Shape& shape = inputs.shape;
  const int heads = shape.n_local_heads();
  const auto row_bytes = static_cast<std::size_t>(kv_row_bytes(shape.kv_format));
  HostOutputs outputs;
  outputs.out.assign(static_cast<std::size_t>(shape.batch) * heads * smla::kLatentDim, 0.0);
  outputs.lse.assign(static_cast<std::size_t>(shape.batch) * heads,
                     -std::numeric_limits<double>::infinity());
  std::vector<double> scores(static_cast<std::size_t>(shape.topk));
  for (int b = 0; b < shape.batch; ++b) {
    const std::int32_t* indices = inputs.indices.data() + static_cast<std::size_t>(b) * shape.topk;
    for (int h = 0; h < heads; ++h) {
      const std::size_t bh = static_cast<std::size_t>(b) * heads + h;
      const std::uint16_t* q = inputs.q.data() + bh * smla::kHeadDim;
      double max_score = -std::numeric_limits<double>::infinity();
      for (int t = 0; t < shape.topk; ++t) {
        scores[t] = -std::numeric_limits<double>::infinity();
        if (indices[t] < 0) continue;
        const unsigned char* row =
            inputs.kv.data() + static_cast<std::size_t>(indices[t]) * row_bytes;
        double dot = 0.0;
        for (int d = 0; d < smla::kHeadDim; ++d)
          dot += bf16_to_double(q[d]) * kv_value(row, shape.kv_format, d);
        scores[t] = dot * inputs.softmax_scale;
        max_score = std::max(max_score, scores[t]);
      }
      if (std::isinf(max_score)) continue;
      double sum = 0.0;
      double* out = outputs.out.data() + bh * smla::kLatentDim;
      for (int t = 0; t < shape.topk; ++t) {
        if (indices[t] < 0) continue;
        const double weight = std::exp(scores[t] - max_score);
        sum += weight;
        const unsigned char* row =
            inputs.kv.data() + static_cast<std::size_t>(indices[t]) * row_bytes;
        for (int d = 0; d < smla::kLatentDim; ++d)
          out[d] += weight * kv_value(row, shape.kv_format, d);
      }
      for (int d = 0; d < smla::kLatentDim; ++d) out[d] /= sum;
      outputs.lse[bh] = max_score + std::log(sum);
    }
  }
  return outputs;
}

}  // namespace tuner::smla_family
