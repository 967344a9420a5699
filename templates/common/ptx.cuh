#pragma once
// Thin wrappers over the PTX instructions the kernels use. Only instructions that exist on both
// sm_90 and sm_120 (mma.sync, ldmatrix, cp.async, cvt): one source serves both targets.

namespace ptx {

// -inf without a constant expression: NVRTC has no __builtin_huge_valf and no math headers.
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000u); }

// The compiler's own conversion, not an asm: it knows the result is a 32-bit shared-window offset,
// so tile addresses stay 32-bit with immediate offsets (an opaque cvta asm made every ldmatrix
// address a 64-bit generic add chain: Nsight Compute, BENCHMARKS.md section 7).
__device__ __forceinline__ unsigned smem_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// 2^x, approximate (2 ulp), flushing denormals; 2^-inf = +0. exp2f is the exact path with range
// checks and selects that the softmax does not need.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 16-byte global -> shared copy; src_bytes 0 zero-fills the destination without reading.
__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src,
                                            int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(shared_dst)),
               "l"(global_src), "r"(src_bytes)
               : "memory");
}

// 4-byte global -> shared copy (both addresses 4-byte aligned).
__device__ __forceinline__ void cp_async_4(void* shared_dst, const void* global_src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_address(shared_dst)),
               "l"(global_src)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// ldmatrix only reads shared memory: volatile keeps it in order with the barriers and waits (all
// volatile, with memory clobbers), and without a clobber of its own the compiler may keep other
// shared loads (the per-token scales) in registers across it instead of reloading them.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&regs)[4], const void* shared_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(regs[0]), "=r"(regs[1]), "=r"(regs[2]), "=r"(regs[3])
               : "r"(smem_address(shared_row)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&regs)[4], const void* shared_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(regs[0]), "=r"(regs[1]), "=r"(regs[2]), "=r"(regs[3])
               : "r"(smem_address(shared_row)));
}

// D = A(16x16 bf16, row) * B(16x8 bf16, col) + D, fp32 accumulate.
__device__ __forceinline__ void mma_bf16_16816(float (&acc)[4], const unsigned (&a)[4], unsigned b0,
                                               unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// D = A(16x16 f16, row) * B(16x8 f16, col) + D, fp32 accumulate (same rate as bf16).
__device__ __forceinline__ void mma_f16_16816(float (&acc)[4], const unsigned (&a)[4], unsigned b0,
                                              unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// D = A(16x32 e4m3, row) * B(32x8 e4m3, col) + D, fp32 accumulate. Native on sm_89 and
// sm_120; ptxas emulates it on sm_90 (unpack to f16 + two HMMA).
__device__ __forceinline__ void mma_e4m3_16832(float (&acc)[4], const unsigned (&a)[4], unsigned b0,
                                               unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats -> packed f16x2 (lo in the low half), round to nearest even.
__device__ __forceinline__ unsigned pack_f16x2(float lo, float hi) {
  unsigned packed;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}

// Four e4m3 bytes -> four f16 (exact), one cvt per pair: the cheap dequantization path.
__device__ __forceinline__ void e4m3x4_to_f16x4(unsigned four_bytes, unsigned& out01,
                                                unsigned& out23) {
  asm("{\n"
      ".reg .b16 lo, hi;\n"
      "mov.b32 {lo, hi}, %2;\n"
      "cvt.rn.f16x2.e4m3x2 %0, lo;\n"
      "cvt.rn.f16x2.e4m3x2 %1, hi;\n"
      "}\n"
      : "=r"(out01), "=r"(out23)
      : "r"(four_bytes));
}

// Four e4m3 bytes -> four f16 scaled by 2^-8 (exact), by shifts and masks on the integer pipe
// instead of the conversion unit (F2FP, which sm_90 runs at a low rate): e4m3's 4-bit exponent and
// 3-bit mantissa land in f16's exponent and mantissa fields as they are, so every value comes out
// divided by 2^(15-7) = 256, subnormals included; callers fold the 256 into a scale they apply in
// fp32 anyway. Pairs differ from e4m3x4_to_f16x4: out02 = (byte 0, byte 2), out13 = (1, 3).
// NaN bytes (0x7f, 0xff) become finite; KV caches hold none.
__device__ __forceinline__ void e4m3x4_to_f16x4_bits(unsigned four_bytes, unsigned& out02,
                                                     unsigned& out13) {
  out02 = ((four_bytes & 0x007f007fu) << 7) | ((four_bytes & 0x00800080u) << 8);
  out13 = ((four_bytes & 0x7f007f00u) >> 1) | (four_bytes & 0x80008000u);
}

// Two floats -> packed bf16x2 (lo in the low half), round to nearest even.
__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
  unsigned packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}

__device__ __forceinline__ float bf16_to_float(unsigned short bits) {
  return __uint_as_float(static_cast<unsigned>(bits) << 16);
}

// Four e4m3 bytes -> four bf16 (exact: every e4m3 value is a bf16 value), through f16x2.
__device__ __forceinline__ void e4m3x4_to_bf16x4(unsigned four_bytes, unsigned& out01,
                                                 unsigned& out23) {
  asm("{\n"
      ".reg .b16 lo, hi, h0, h1, h2, h3;\n"
      ".reg .b32 p01, p23;\n"
      ".reg .f32 f0, f1, f2, f3;\n"
      "mov.b32 {lo, hi}, %2;\n"
      "cvt.rn.f16x2.e4m3x2 p01, lo;\n"
      "cvt.rn.f16x2.e4m3x2 p23, hi;\n"
      "mov.b32 {h0, h1}, p01;\n"
      "mov.b32 {h2, h3}, p23;\n"
      "cvt.f32.f16 f0, h0;\n"
      "cvt.f32.f16 f1, h1;\n"
      "cvt.f32.f16 f2, h2;\n"
      "cvt.f32.f16 f3, h3;\n"
      "cvt.rn.bf16x2.f32 %0, f1, f0;\n"
      "cvt.rn.bf16x2.f32 %1, f3, f2;\n"
      "}\n"
      : "=r"(out01), "=r"(out23)
      : "r"(four_bytes));
}

// Programmatic dependent launch (sm_90+; no-ops on older targets and when the grid was launched
// without the attribute). The secondary grid may start while the primary's last CTAs still run;
// it must wait before reading what the primary wrote (the wait covers the whole primary grid's
// completion and memory flush). The primary lets its dependents start once every CTA triggered.
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// A 32-bit load with acquire semantics at GPU scope: what the writer stored before its release
// (a fence, then the atomic this load observes) is visible to this thread after it.
__device__ __forceinline__ unsigned ld_acquire_gpu(const unsigned* address) {
  unsigned value;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(value) : "l"(address) : "memory");
#else
  value = *reinterpret_cast<const volatile unsigned*>(address);
#endif
  return value;
}

// The GPU's global nanosecond timer (%globaltimer): bounds a spin by wall time.
__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(ns));
  return ns;
}

__device__ __forceinline__ float warp_max(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  return value;
}

__device__ __forceinline__ float warp_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

}  // namespace ptx
