#pragma once
// Warpgroup MMA (wgmma, sm_90a only: compile with an arch-specific target) and the matrix store
// that feeds its results back to shared memory, for bench/device/qk_wgmma.cu. A warpgroup is 4
// consecutive warps; every wgmma.* here is executed by all 128 threads of it. Register operands of
// an MMA in flight must not change until a wait covers it (ptxas serialises the MMAs, with a
// warning, where it cannot prove that).
#include "common/ptx.cuh"

namespace wgmma {

// A shared-memory matrix descriptor without swizzle (the canonical K-major "interleaved"
// layout): 8 rows x 16 bytes are one core matrix of 128 contiguous bytes; `sbo` bytes from one
// 8-row group to the next, `lbo` bytes from one 16-byte K chunk to the next. Addresses and
// offsets go in 16-byte units: a descriptor plus (bytes >> 4) addresses `bytes` further.
__device__ __forceinline__ unsigned long long descriptor(const void* start, unsigned lbo,
                                                         unsigned sbo) {
  const unsigned address = ptx::smem_address(start);
  return static_cast<unsigned long long>((address & 0x3FFFFu) >> 4) |
         (static_cast<unsigned long long>((lbo >> 4) & 0x3FFFu) << 16) |
         (static_cast<unsigned long long>((sbo >> 4) & 0x3FFFu) << 32);
}

// Orders this thread's register writes before the next MMAs read them.
__device__ __forceinline__ void fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most N committed groups are still running.
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// d (+)= A . B, m64n32k32, e4m3 x e4m3 -> fp32: A from registers (the warp's 16 rows x 32 bytes,
// the m16n8k32 A fragment), B (32 x 32 bytes, K-major) through its descriptor. accumulate 0
// overwrites d.
__device__ __forceinline__ void mma_e4m3_n32(float (&d)[16], const unsigned (&a)[4],
                                             unsigned long long b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
      "{%16, %17, %18, %19}, %20, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}

// d (+)= A . B, m64n16k16, bf16 x bf16 -> fp32: A from registers (the m16n8k16 A fragment), B
// (16 x 32 bytes, K-major) through its descriptor.
__device__ __forceinline__ void mma_bf16_n16(float (&d)[8], const unsigned (&a)[4],
                                             unsigned long long b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}

// Four 8x8 16-bit matrices from the mma accumulator layout (lane g, c: row g, columns 2c, 2c+1),
// each stored transposed: the row address lane l gives (of matrix l / 8, row l % 8) receives
// column l % 8 of that matrix.
__device__ __forceinline__ void stmatrix_x4_trans(void* shared_row, const unsigned (&regs)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   ptx::smem_address(shared_row)),
               "r"(regs[0]), "r"(regs[1]), "r"(regs[2]), "r"(regs[3])
               : "memory");
}

}  // namespace wgmma
