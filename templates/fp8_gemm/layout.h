#pragma once
// fp8 block-scaled GEMM: the one shared-memory layout, warp tiling and register estimate, included
// by the host (budget, rules) and by the kernel (gemm.cuh). Plain constexpr: no CUDA or std
// headers, so NVRTC and the host compiler read the same text.
//
// C[M][N] bf16 = sum over K of A[M][K] e4m3 * a_scale[M][K/128] x B[N][K] e4m3 *
// b_scale[N/128][K/128]: one fp32 scale per (row, 128-column group) of A and per 128x128 block of
// B (DeepSeek-V3 / vLLM block-fp8 w8a8).

namespace fp8gemm {

constexpr int kScaleBlock = 128;  // scale granularity along K (A and B) and along N (B)
constexpr int kMmaM = 16;         // mma.sync.m16n8k32 e4m3
constexpr int kMmaN = 8;
constexpr int kMmaK = 32;
// Bytes of padding per shared-memory row: rows of BLOCK_K (64 or 128) bytes would put the 8 rows a
// fragment load touches in one bank; +16 spreads them over all 32 banks and keeps cp.async's
// 16-byte alignment.
constexpr int kRowPad = 16;

constexpr int row_bytes(int block_k) { return block_k + kRowPad; }

// One pipeline stage: the A tile (BLOCK_M rows) and the B tile (BLOCK_N rows), BLOCK_K bytes each.
constexpr int stage_bytes(int block_m, int block_n, int block_k) {
  return (block_m + block_n) * row_bytes(block_k);
}

constexpr int smem_bytes(int block_m, int block_n, int block_k, int stages) {
  return stages * stage_bytes(block_m, block_n, block_k);
}

// Warps tile the CTA's BLOCK_M x BLOCK_N: as many along M as 16-row mma tiles allow, the rest
// along N.
constexpr int warps_m(int block_m, int warps) {
  return warps < block_m / kMmaM ? warps : block_m / kMmaM;
}
constexpr int warps_n(int block_m, int warps) { return warps / warps_m(block_m, warps); }
constexpr int warp_tile_m(int block_m, int warps) { return block_m / warps_m(block_m, warps); }
constexpr int warp_tile_n(int block_m, int block_n, int warps) {
  return block_n / warps_n(block_m, warps);
}

// The warps can tile the CTA: whole 16-row and 8-column mma tiles per warp.
constexpr bool tiling_ok(int block_m, int block_n, int warps) {
  return block_m % kMmaM == 0 && warps % warps_m(block_m, warps) == 0 &&
         block_n % warps_n(block_m, warps) == 0 && warp_tile_n(block_m, block_n, warps) >= kMmaN &&
         warp_tile_n(block_m, block_n, warps) % kMmaN == 0;
}

// Registers per thread before compiling: two accumulator sets (the scaled total and the current
// 128-wide K group), the A and B fragments of one k32 step, and a fixed part for addresses, loop
// state and the scales. Calibrated against ptxas on sm_90/sm_120 only roughly: the plan's audit
// (tuner plan --audit) reports where the estimate misjudges.
constexpr int estimated_registers(int block_m, int block_n, int warps) {
  const int mi = warp_tile_m(block_m, warps) / kMmaM;
  const int ni = warp_tile_n(block_m, block_n, warps) / kMmaN;
  return 2 * mi * ni * 4 + mi * 4 + ni * 2 + 40;
}

}  // namespace fp8gemm
