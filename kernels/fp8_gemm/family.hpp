#pragma once
// The fp8 block-scaled GEMM family (w8a8, DeepSeek-V3 block scales) as one Family value.
#include "core/family.hpp"
#include "kernels/fp8_gemm/space.hpp"

namespace tuner::fp8_gemm {

const Family& family();

// n, k of a canonical shape ("block=128,k=7168,n=4096"); m as given.
GemmShape typed_shape(const tuner::Shape& shape, int m = 1);

// The NVRTC program of one compile key (the GEMM kernel and the split-K reduce).
CompileRequest gemm_program(const KernelConfig& config, int arch_sm);
// The reference kernel and the fills.
CompileRequest utility_program(int arch_sm);
const std::string& source_hash();

DeviceSession open_device(const DeviceSetup& setup);  // session.cpp

}  // namespace tuner::fp8_gemm
