#pragma once
// Parameter blocks of the fp8 GEMM kernels, shared by the host (launch) and the device code.

namespace fp8gemm {

struct GemmParams {
  const unsigned char* a;  // [m][k] e4m3
  const float* a_scale;    // [m][k / 128]
  const unsigned char* b;  // [n][k] e4m3 (the weight, K contiguous)
  const float* b_scale;    // [n / 128][k / 128]
  unsigned short* c;       // [m][n] bf16 (split_k == 1)
  float* partial;          // [split_k][m][n] fp32 (split_k > 1)
  int m;
  int n;
  int k;
  int split_k;  // CTAs along K (gridDim.z); each owns whole 128-wide K groups
};

struct ReduceParams {
  const float* partial;  // [split_k][m][n]
  unsigned short* c;     // [m][n] bf16
  int m;
  int n;
  int split_k;
};

struct ReferenceParams {
  const unsigned char* a;
  const float* a_scale;
  const unsigned char* b;
  const float* b_scale;
  float* c;  // [m][n] fp32
  int m;
  int n;
  int k;
};

}  // namespace fp8gemm
