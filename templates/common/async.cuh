#pragma once
// mbarriers, bulk (TMA 1-D) copies, named barriers and the fp8 instructions of the pipelined
// kernels. All exist on sm_90 and sm_120 without an arch-specific ("a") target, so one source
// serves both (hardware.md: m16n8k32 e4m3 MMA is native on sm_120, emulated by ptxas on sm_90).
#include "common/ptx.cuh"

namespace ptx {

__device__ __forceinline__ void mbarrier_init(unsigned long long* barrier, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(barrier)), "r"(count)
               : "memory");
}

// Makes the initialised barriers visible to the async proxy (bulk copies complete on them).
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// Release-arrive: this thread's earlier shared-memory writes are visible to the phase's waiters.
__device__ __forceinline__ void mbarrier_arrive(unsigned long long* barrier) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(
                   smem_address(barrier))
               : "memory");
}

// Arrive and announce `bytes` of bulk copies that will complete on this barrier's phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned long long* barrier,
                                                          unsigned bytes) {
  asm volatile(
      "{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(
          smem_address(barrier)),
      "r"(bytes)
      : "memory");
}

// Spins until the phase with this parity has completed (acquire).
__device__ __forceinline__ void mbarrier_wait(unsigned long long* barrier, unsigned parity) {
  const unsigned address = smem_address(barrier);
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred ready;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], %2;\n"
        "selp.u32 %0, 1, 0, ready;\n}\n"
        : "=r"(done)
        : "r"(address), "r"(parity)
        : "memory");
  } while (done == 0);
}

// The same wait for a warp that is usually early (producers waiting for a free stage): the
// suspend-time hint lets the thread sleep until the phase completes (or SUSPEND_NS pass) instead
// of re-polling, which was ~13 % of the instructions the batch-128 winner issued (BENCHMARKS.md
// section 7; its time did not measurably change, 63.54 vs 63.80 us: the slots were spare).
template <unsigned SUSPEND_NS>
__device__ __forceinline__ void mbarrier_wait_sleeping(unsigned long long* barrier,
                                                       unsigned parity) {
  const unsigned address = smem_address(barrier);
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred ready;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], %2, %3;\n"
        "selp.u32 %0, 1, 0, ready;\n}\n"
        : "=r"(done)
        : "r"(address), "r"(parity), "n"(SUSPEND_NS)
        : "memory");
  } while (done == 0);
}

// One bulk copy global -> shared (16-byte aligned addresses, size a multiple of 16) that completes
// its bytes on `barrier`.
__device__ __forceinline__ void bulk_copy_to_shared(void* shared_dst, const void* global_src,
                                                    unsigned bytes, unsigned long long* barrier) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(smem_address(shared_dst)),
      "l"(global_src), "r"(bytes), "r"(smem_address(barrier))
      : "memory");
}

// Orders this thread's earlier generic-proxy shared-memory accesses (ld.shared, ldmatrix,
// st.shared) before later async-proxy ones (bulk copies) that a release (an mbarrier arrive) hands
// them to. Without it ptxas may issue the arrive while the thread's last ldmatrix of the stage is
// still in flight: seen in the sm_90 build of the pipelined kernel at ctas_per_sm 2 (BENCHMARKS.md
// section 7, thirteenth session), whose results moved between launches on the H200.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Ends a barrier's life before its shared memory is used for anything else (PTX requires it).
__device__ __forceinline__ void mbarrier_inval(unsigned long long* barrier) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(smem_address(barrier)) : "memory");
}

// Barrier over a subset of the block's warps (the consumer warps): id 0 is __syncthreads'.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Four floats -> four e4m3 bytes (v0 in the lowest byte), round to nearest, saturating.
__device__ __forceinline__ unsigned pack_e4m3x4(float v0, float v1, float v2, float v3) {
  unsigned packed;
  asm("{\n.reg .b16 lo, hi;\n"
      "cvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n"
      "cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n"
      "mov.b32 %0, {lo, hi};\n}\n"
      : "=r"(packed)
      : "f"(v0), "f"(v1), "f"(v2), "f"(v3));
  return packed;
}

// Four e4m3 bytes (byte 0 first) -> four floats, exact.
__device__ __forceinline__ void e4m3x4_to_floats(unsigned four_bytes, float (&out)[4]) {
  unsigned pair01;
  unsigned pair23;
  e4m3x4_to_f16x4(four_bytes, pair01, pair23);
  asm("{\n.reg .b16 h0, h1, h2, h3;\n"
      "mov.b32 {h0, h1}, %4;\n"
      "mov.b32 {h2, h3}, %5;\n"
      "cvt.f32.f16 %0, h0;\ncvt.f32.f16 %1, h1;\ncvt.f32.f16 %2, h2;\ncvt.f32.f16 %3, h3;\n}\n"
      : "=f"(out[0]), "=f"(out[1]), "=f"(out[2]), "=f"(out[3])
      : "r"(pair01), "r"(pair23));
}

// Byte permute: result byte i = byte selector[4i+3:4i] of {b, a} (a: bytes 0-3, b: 4-7).
__device__ __forceinline__ unsigned byte_perm(unsigned a, unsigned b, unsigned selector) {
  unsigned result;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(result) : "r"(a), "r"(b), "r"(selector));
  return result;
}

}  // namespace ptx
