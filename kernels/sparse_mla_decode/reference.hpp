#pragma once
// The CPU fp64 reference (checks the GPU reference on small shapes). The tolerance check that
// decides whether a candidate's output is right is in verify.hpp.
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

}  // namespace tuner::smla_family
