#pragma once
// The shape of row_errors.cuh's output, shared by the kernel and the host that reads it
// (kernels/sparse_mla_decode/verify.cpp). Plain C++ only (NVRTC has no standard headers).

namespace smla {

constexpr int kRowErrorsThreads = 128;  // one block per (batch, head) row
// Per row, in this order: sum (out - ref)^2 and sum ref^2 over the row's finite outputs, its
// NaN/inf outputs, its NaN/inf reference values (fp64 each).
constexpr int kRowSums = 4;

}  // namespace smla
