#pragma once
// Thread-block clusters (sm_90+): the CTA's rank, the cluster barrier and loads from another
// CTA's shared memory (distributed shared memory). On older targets the functions trap: the host
// launches cluster code on sm_90 or newer only (the plan's arch rule).
#include "common/ptx.cuh"

namespace ptx {

__device__ __forceinline__ unsigned cluster_ctarank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
#else
  __trap();
  return 0;
#endif
}

// Every non-exited thread of the cluster arrives, then waits: shared-memory writes before it
// (release) are visible to every CTA of the cluster after it (acquire). All lanes of a warp call
// it.
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
#else
  __trap();
#endif
}

// The shared::cluster address of `local` (a shared::cta address of this CTA) in CTA `rank`.
__device__ __forceinline__ unsigned cluster_map(unsigned local, unsigned rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
#else
  __trap();
  return 0;
#endif
}

__device__ __forceinline__ float ld_cluster_f32(unsigned address) {
  float value = 0.f;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(value) : "r"(address) : "memory");
#else
  __trap();
#endif
  return value;
}

__device__ __forceinline__ float4 ld_cluster_f32x4(unsigned address) {
  float4 value = make_float4(0.f, 0.f, 0.f, 0.f);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(value.x), "=f"(value.y), "=f"(value.z), "=f"(value.w)
               : "r"(address)
               : "memory");
#else
  __trap();
#endif
  return value;
}

}  // namespace ptx
