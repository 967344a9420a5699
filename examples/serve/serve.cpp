// Serving sparse MLA decode from a frozen DB with libtunedb_cuda (the README's C++ snippet).
// Usage: serve_cpp FROZEN.db [BATCH...]   (default batches 1 37 512)
// The inputs are zeros: every token's value is 0, so out must be 0 and lse = ln(topk) (2048 equal
// scores): the program checks that and exits 1 when a launch disagrees.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "deploy/launcher.hpp"
#include "kernels/sparse_mla_decode/serve_args.h"  // the family's argument record

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FROZEN.db [BATCH...]\n", argv[0]);
    return 2;
  }
  const char* family = "sparse_mla_decode";
  const char* shape = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048";
  const int heads = 16, topk = 2048, max_batch = 512, tokens = 4096;
  // Start-up: load every cubin for this GPU once, size the workspace for the largest batch.
  const tunedb::cuda::Launcher launcher = tunedb::cuda::Launcher::open(argv[1]);
  const std::size_t workspace_bytes = launcher.workspace_bytes(family, shape, max_batch);
  void *q, *kv, *indices, *out, *lse, *workspace;
  cudaMalloc(&q, std::size_t{max_batch} * heads * 576 * 2);
  cudaMalloc(&kv, std::size_t{tokens} * 656);
  cudaMalloc(&indices, std::size_t{max_batch} * topk * 4);
  cudaMalloc(&out, std::size_t{max_batch} * heads * 512 * 2);
  cudaMalloc(&lse, std::size_t{max_batch} * heads * 4);
  cudaMalloc(&workspace, workspace_bytes);
  cudaMemset(q, 0, std::size_t{max_batch} * heads * 576 * 2);
  cudaMemset(kv, 0, std::size_t{tokens} * 656);
  cudaMemset(indices, 0, std::size_t{max_batch} * topk * 4);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  const auto address = [](void* p) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
  };
  const tunedb_sparse_mla_decode_args args{
      address(q),   address(kv),        address(indices), address(out),
      address(lse), address(workspace), workspace_bytes,  1.0f / std::sqrt(576.0f)};
  int failures = 0;
  std::vector<int> batches;
  for (int i = 2; i < argc; ++i) batches.push_back(std::atoi(argv[i]));
  if (batches.empty()) batches = {1, 37, 512};
  for (const int batch : batches) {
    // The hot path: a lookup, the family's geometry and the launches; capturable.
    tunedb::cuda::LaunchReport report;
    cudaGraph_t graph;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    const tunedb::cuda::ServeResult result =
        launcher.launch(family, shape, batch, args, stream, &report);
    cudaStreamEndCapture(stream, &graph);
    if (result.status != tunedb::cuda::ServeStatus::ok) {
      std::fprintf(stderr, "batch %d: %s\n", batch, result.what);
      return 1;
    }
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    cudaMemsetAsync(lse, 0xff, std::size_t{max_batch} * heads * 4, stream);  // NaN
    cudaGraphLaunch(exec, stream);
    std::vector<float> lse_host(static_cast<std::size_t>(batch) * heads);
    cudaMemcpyAsync(lse_host.data(), lse, lse_host.size() * 4, cudaMemcpyDeviceToHost, stream);
    const cudaError_t status = cudaStreamSynchronize(stream);
    const bool ok = status == cudaSuccess && std::fabs(lse_host.back() - std::log(2048.0f)) < 1e-3f;
    failures += ok ? 0 : 1;
    std::printf("batch %d: %s (tuned batch %d) %s lse %.4f (want %.4f) %s\n", batch,
                report.how_text, report.tuned_batch,
                std::string(report.config->params_json).c_str(), lse_host.back(), std::log(2048.0f),
                ok ? "ok" : "WRONG");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  return failures == 0 ? 0 : 1;
}
