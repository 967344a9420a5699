// Does compute-sanitizer racecheck tell the CTAs of a thread-block cluster apart? Each CTA writes
// and reads only its own shared memory, at the same offsets as the other CTA but at different
// times (rank 0 reads late, rank 1 writes late): no CTA touches another's memory, so there is no
// race. A hazard reported for the cluster kernel and none for the same kernel launched without
// a cluster means racecheck keys cluster shared memory by offset across CTAs, which is what the
// cluster merge's report looks like (BENCHMARKS.md section 7, seventh session).
// Build and run on an sm_90 GPU:
//   nvcc -arch=sm_90 -o probe scripts/racecheck_cluster_probe.cu
//   compute-sanitizer --tool racecheck ./probe cluster
//   compute-sanitizer --tool racecheck ./probe plain
#include <cooperative_groups.h>
#include <cstdio>
#include <cstring>

namespace cg = cooperative_groups;

__device__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Rank 0: fills its buffer, then reads it for a long while. Rank 1: waits, then overwrites its own
// buffer at the same offsets while rank 0 is still reading.
__device__ void own_memory_only(unsigned rank, float* out) {
  __shared__ float buffer[128];
  buffer[threadIdx.x] = float(threadIdx.x);
  __syncthreads();
  float sum = 0.f;
  if (rank == 0) {
    for (int i = 0; i < 64; ++i) {
      sum += buffer[(threadIdx.x + i) % 128];
      spin(2000);
    }
  } else {
    spin(20000);
    buffer[threadIdx.x] = sum + 1.f;
  }
  out[blockIdx.x * 128 + threadIdx.x] = sum;
}

__global__ void __cluster_dims__(2, 1, 1) probe_cluster(float* out) {
  own_memory_only(cg::this_cluster().block_rank(), out);
  cg::this_cluster().sync();  // neither CTA exits while the other may still run
}

__global__ void probe_plain(float* out) { own_memory_only(blockIdx.x % 2, out); }

int main(int argc, char** argv) {
  const bool cluster = argc > 1 && std::strcmp(argv[1], "cluster") == 0;
  float* out = nullptr;
  cudaMalloc(&out, 2 * 128 * sizeof(float));
  if (cluster) {
    probe_cluster<<<2, 128>>>(out);
  } else {
    probe_plain<<<2, 128>>>(out);
  }
  const cudaError_t status = cudaDeviceSynchronize();
  std::printf("%s: %s\n", cluster ? "cluster" : "plain", cudaGetErrorString(status));
  cudaFree(out);
  return status == cudaSuccess ? 0 : 1;
}
