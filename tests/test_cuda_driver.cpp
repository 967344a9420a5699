// The driver module on any machine: what it reports without a GPU, result names, error texts.
#include <dlfcn.h>

#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "core/cuda_driver.hpp"
#include "core/error.hpp"

namespace cuda = tuner::cuda;

namespace {

// Asked independently of the module under test.
bool libcuda_loadable() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return false;
  }
  dlclose(library);
  return true;
}

}  // namespace

TEST_CASE("gpu_available says why there is no GPU, or that there is one") {
  std::string why_not = "not overwritten";
  const bool available = cuda::gpu_available(&why_not);
  if (available) {
    CHECK(why_not.empty());
    CHECK(cuda::device_count() > 0);
  } else {
    CHECK_FALSE(why_not.empty());
    CHECK(why_not != "not overwritten");
    CHECK(cuda::device_count() == 0);
    if (!libcuda_loadable()) {
      CHECK(why_not.find("libcuda.so.1") != std::string::npos);
    }
  }
  // A second call gives the same answer (the driver is loaded once).
  std::string why_not_again;
  CHECK(cuda::gpu_available(&why_not_again) == available);
  CHECK(why_not_again == why_not);
  CHECK(cuda::gpu_available() == available);
}

TEST_CASE("require_gpu throws NoGpuError carrying the reason exactly when there is no GPU") {
  std::string why_not;
  if (cuda::gpu_available(&why_not)) {
    CHECK_NOTHROW(cuda::require_gpu());
  } else {
    CHECK_THROWS_WITH_AS(cuda::require_gpu(), ("no usable NVIDIA GPU: " + why_not).c_str(),
                         tuner::NoGpuError);
  }
}

TEST_CASE("without a GPU the RAII types refuse with NoGpuError instead of crashing") {
  if (cuda::gpu_available()) {
    return;  // covered by gpu_cuda_driver
  }
  CHECK_THROWS_AS(cuda::Context(0), tuner::NoGpuError);
  CHECK_THROWS_AS(cuda::Stream(), tuner::NoGpuError);
  CHECK_THROWS_AS(cuda::Event(), tuner::NoGpuError);
  CHECK_THROWS_AS(cuda::DeviceBuffer(64, "test buffer"), tuner::NoGpuError);
  CHECK_THROWS_AS(cuda::device_info(0), tuner::NoGpuError);
  CHECK_THROWS_AS(cuda::device_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0),
                  tuner::NoGpuError);
}

TEST_CASE("empty handles need no driver to construct, move or destroy") {
  cuda::DeviceBuffer buffer;
  CHECK_FALSE(buffer);
  CHECK(buffer.size() == 0);
  cuda::DeviceBuffer moved(std::move(buffer));
  CHECK_FALSE(moved);
  cuda::Graph graph;
  cuda::Graph moved_graph(std::move(graph));
  CHECK(moved_graph.get() == nullptr);
  cuda::GraphExec exec;
  exec = cuda::GraphExec();
  CHECK(exec.get() == nullptr);
}

TEST_CASE("result_name names CUresults with or without a driver") {
  CHECK(cuda::result_name(CUDA_ERROR_ILLEGAL_ADDRESS) == "CUDA_ERROR_ILLEGAL_ADDRESS");
  CHECK(cuda::result_name(CUDA_SUCCESS) == "CUDA_SUCCESS");
  CHECK(cuda::result_name(CUDA_ERROR_INVALID_IMAGE) == "CUDA_ERROR_INVALID_IMAGE");
  CHECK(cuda::result_name(CUDA_ERROR_TENSOR_MEMORY_LEAK) == "CUDA_ERROR_TENSOR_MEMORY_LEAK");
  CHECK(cuda::result_name(static_cast<CUresult>(12345)) == "CUresult(12345)");
}

TEST_CASE("check throws CudaError naming the call, the result and the context") {
  CHECK_NOTHROW(cuda::check(CUDA_SUCCESS, "cuModuleLoadData", "config a"));
  CHECK_THROWS_WITH_AS(
      cuda::check(CUDA_ERROR_INVALID_IMAGE, "cuModuleLoadData", "split<16,16,4,2,0> sm_90"),
      "cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE (split<16,16,4,2,0> sm_90)",
      tuner::CudaError);
  try {
    cuda::check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc", "kv cache");
    FAIL("check did not throw");
  } catch (const tuner::CudaError& error) {
    CHECK(error.call() == "cuMemAlloc");
    CHECK(error.code() == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(error.code_name() == "CUDA_ERROR_OUT_OF_MEMORY");
    CHECK(error.context() == "kv cache");
  }
}

TEST_CASE("CudaError leaves out the parentheses when there is no context") {
  const tuner::CudaError error("cuInit", CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "");
  CHECK(std::string(error.what()) == "cuInit failed: CUDA_ERROR_NO_DEVICE");
}

TEST_CASE("is_sticky is true exactly for the errors that poison the context") {
  const CUresult sticky[] = {CUDA_ERROR_ILLEGAL_ADDRESS,      CUDA_ERROR_LAUNCH_FAILED,
                             CUDA_ERROR_LAUNCH_TIMEOUT,       CUDA_ERROR_ILLEGAL_INSTRUCTION,
                             CUDA_ERROR_MISALIGNED_ADDRESS,   CUDA_ERROR_INVALID_ADDRESS_SPACE,
                             CUDA_ERROR_INVALID_PC,           CUDA_ERROR_HARDWARE_STACK_ERROR,
                             CUDA_ERROR_ECC_UNCORRECTABLE,    CUDA_ERROR_ASSERT,
                             CUDA_ERROR_CONTEXT_IS_DESTROYED, CUDA_ERROR_CONTAINED,
                             CUDA_ERROR_TENSOR_MEMORY_LEAK};
  for (const CUresult code : sticky) {
    const tuner::CudaError error("cuStreamSynchronize", code, cuda::result_name(code), "run");
    CHECK_MESSAGE(error.is_sticky(), cuda::result_name(code));
  }
  const CUresult recoverable[] = {CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY,
                                  CUDA_ERROR_NOT_FOUND,     CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                                  CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_NO_BINARY_FOR_GPU};
  for (const CUresult code : recoverable) {
    const tuner::CudaError error("cuLaunchKernel", code, cuda::result_name(code), "run");
    CHECK_FALSE_MESSAGE(error.is_sticky(), cuda::result_name(code));
  }
}
