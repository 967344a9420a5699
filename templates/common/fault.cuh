#pragma once
// Test-only: a kernel that writes far out of bounds, so that the sweep's fault isolation can be
// proven on a real GPU fault (CUDA_ERROR_ILLEGAL_ADDRESS). Never part of a search space.
__global__ void tuner_test_out_of_bounds_write(float* base) {
  base[(1ll << 40) + threadIdx.x] = 1.f;
}
