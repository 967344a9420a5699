#pragma once
// The bytes one decode call must move through device memory: q read once, every distinct selected
// KV row read once, indices read once, out and lse written once. Partials are not counted: they are
// the kernel's own overhead, which the achieved fraction of copy bandwidth is meant to expose.
#include <cstdint>
#include <vector>

#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner::smla_family {

double bytes_must_move(const Shape& shape, const std::vector<std::int32_t>& indices);

}  // namespace tuner::smla_family
