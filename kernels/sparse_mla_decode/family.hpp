#pragma once
// The sparse MLA decode family as one Family value (core/family.hpp): the functions of this folder
// (space, shape_mismatch, static_budget, split_program, launch, verify, traffic) wrapped, their
// bodies unchanged.
#include "core/family.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner::smla_family {

const Family& family();

// The typed shape of a canonical one (local_heads, topk, kv_format, page_size); n_heads holds the
// local heads and attn_tp is 1. `batch` as given.
Shape typed_shape(const tuner::Shape& shape, int batch = 1);

// The canonical shape of a typed one: 64 heads / TP 4 and 128 heads / TP 8 give the same.
tuner::Shape canonical_shape(const Shape& shape);

// The GPU side (session.cpp).
DeviceSession open_device(const DeviceSetup& setup);

}  // namespace tuner::smla_family
