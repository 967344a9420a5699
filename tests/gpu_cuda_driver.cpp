// The driver module on a real GPU: compile with NVRTC for the device's arch, load, launch, copy,
// time, capture a graph, and see a sticky fault. The sticky fault test comes last in the file:
// doctest runs a file's cases in line order, and the fault leaves the process's context poisoned.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster_probe.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/nvrtc.hpp"

namespace cuda = tuner::cuda;
using tuner::ClusterCapacity;

namespace {

const char* const kKernels = R"(
template <typename T>
__global__ void axpy(T* y, const T* x, T a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void increment(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

extern "C" __global__ void staged_copy(float* out, const float* in, int n) {
  __shared__ float staged[256];
  staged[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  if (threadIdx.x < n) out[threadIdx.x] = staged[threadIdx.x];
}

extern "C" __global__ void uses_dynamic_smem(float* out) {
  extern __shared__ float dynamic[];
  dynamic[threadIdx.x] = float(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = dynamic[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

extern "C" __global__ void write_to(float* address) { *address = 1.0f; }
)";

// Compiled once for the device's arch (NVRTC needs no context).
const tuner::CompileResult& compiled_kernels() {
  static const tuner::CompileResult result = [] {
    tuner::CompileRequest request;
    request.source_name = "gpu_cuda_driver.cu";
    request.source_text = kKernels;
    request.name_expressions = {"axpy<float>"};
    request.arch_sm = cuda::device_info(0).arch_sm();
    request.context = "gpu_cuda_driver kernels sm_" + std::to_string(request.arch_sm);
    return tuner::compile(request);
  }();
  return result;
}

struct Loaded {
  cuda::Context context{0};
  cuda::Module module{compiled_kernels().cubin, "gpu_cuda_driver kernels"};
};

unsigned blocks_for(int n, unsigned threads) {
  return (static_cast<unsigned>(n) + threads - 1) / threads;
}

}  // namespace

TEST_CASE("device_info describes device 0") {
  const cuda::DeviceInfo info = cuda::device_info(0);
  CHECK_FALSE(info.name.empty());
  CHECK(info.ordinal == 0);
  CHECK(info.cc_major >= 7);
  CHECK(info.sm_count > 0);
  CHECK(info.sm_count == cuda::device_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
  CHECK(info.total_memory_bytes > (std::size_t{1} << 30));
  CHECK(info.l2_cache_bytes > 0);
  CHECK(info.driver_version >= CUDA_VERSION);
  const std::vector<int> archs = tuner::nvrtc_supported_archs();
  CHECK(std::find(archs.begin(), archs.end(), info.arch_sm()) != archs.end());
  CHECK(cuda::device_count() >= 1);
  CHECK_THROWS_AS(cuda::device_info(cuda::device_count()), tuner::CudaError);
}

TEST_CASE("a kernel compiled by NVRTC loads, launches and computes") {
  Loaded loaded;
  const std::string lowered = compiled_kernels().lowered_names.at("axpy<float>");
  const CUfunction axpy = loaded.module.function(lowered);

  const int n = 10000;
  std::vector<float> x(n);
  std::vector<float> y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(2 * i + 1);
  }
  const cuda::DeviceBuffer x_device(n * sizeof(float), "x");
  const cuda::DeviceBuffer y_device(n * sizeof(float), "y");
  x_device.upload(x.data(), n * sizeof(float));
  y_device.upload(y.data(), n * sizeof(float));

  const cuda::Stream stream;
  CUdeviceptr y_pointer = y_device.get();
  CUdeviceptr x_pointer = x_device.get();
  float a = 3.0F;
  int count = n;
  void* args[] = {&y_pointer, &x_pointer, &a, &count};
  cuda::launch(axpy, {blocks_for(n, 256)}, {256}, 0, stream.get(), args, "axpy");
  stream.synchronize("axpy");

  std::vector<float> result(n);
  y_device.download(result.data(), n * sizeof(float));
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    REQUIRE(result[i] == 3.0F * static_cast<float>(i) + static_cast<float>(2 * i + 1));
  }
}

TEST_CASE("ptxas's report agrees with the driver's function attributes") {
  Loaded loaded;
  const auto& ptxas = compiled_kernels().ptxas;
  for (const std::string name : {"staged_copy", "increment", "spin"}) {
    CAPTURE(name);
    const CUfunction function = loaded.module.function(name);
    // Seen once on the H200 (2026-12-02, 1 of 2 runs): no report for staged_copy; the log says why.
    INFO("NVRTC log:\n", compiled_kernels().log);
    REQUIRE(ptxas.count(name) == 1);
    CHECK(cuda::function_attribute(function, CU_FUNC_ATTRIBUTE_NUM_REGS, name) ==
          ptxas.at(name).registers);
    CHECK(cuda::function_attribute(function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, name) ==
          ptxas.at(name).static_smem_bytes);
  }
  CHECK(ptxas.at("staged_copy").static_smem_bytes == 1024);
  const CUfunction increment = loaded.module.function("increment");
  const int blocks = cuda::max_active_blocks_per_sm(increment, 256, 0, "increment");
  CHECK(blocks > 0);
  CHECK(blocks * 256 <=
        cuda::device_attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 0));
}

TEST_CASE("cluster capacity: within the SMs' resident CTAs, and size 1 is all of them") {
  Loaded loaded;
  const CUfunction increment = loaded.module.function("increment");
  const int sms = cuda::device_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
  const int per_sm = cuda::max_active_blocks_per_sm(increment, 256, 0, "increment");
  const ClusterCapacity capacity = cuda::cluster_capacity(increment, 256, 0);
  if (cuda::device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) < 9) return;
  // Size 1 (the balanced schedule's one wave): every SM's resident CTAs, no GPC to stay inside.
  CHECK(capacity.at(1) == sms * per_sm);
  for (int size = 2; size <= ClusterCapacity::kMaxSize; ++size) {
    CAPTURE(size);
    CHECK(capacity.at(size) > 0);
    // Clusters never hold more CTAs than the SMs do (a cluster stays in one GPC: fewer may fit).
    CHECK(capacity.at(size) * size <= sms * per_sm);
  }
}

TEST_CASE("cluster probe: a kernel of k CTAs per SM holds the probe's clusters at k") {
  if (cuda::device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) < 9) return;
  const std::vector<ClusterCapacity> probed =
      cuda::cluster_capacity_by_occupancy(0, cuda::kClusterProbeOccupancy);
  REQUIRE(probed.size() == static_cast<std::size_t>(cuda::kClusterProbeOccupancy) + 1);
  Loaded loaded;
  // Another kernel (256 threads, its own registers), held to k CTAs per SM by its own dynamic
  // shared memory: the SM's shared memory over k, less a 4 KB margin for the reservation.
  const CUfunction increment = loaded.module.function("increment");
  const int per_sm =
      cuda::device_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 0);
  const int sms = cuda::device_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
  for (int ctas = 1; ctas <= cuda::kClusterProbeOccupancy; ++ctas) {
    CAPTURE(ctas);
    const int smem = per_sm / ctas - 4096;
    cuda::set_max_dynamic_smem(increment, smem, "increment");
    REQUIRE(cuda::max_active_blocks_per_sm(increment, 256, smem, "increment") == ctas);
    const ClusterCapacity own = cuda::cluster_capacity(increment, 256, static_cast<unsigned>(smem));
    CHECK(probed[ctas].at(1) == sms * ctas);
    for (int size = 1; size <= ClusterCapacity::kMaxSize; ++size) {
      CAPTURE(size);
      CHECK(probed[ctas].at(size) == own.at(size));
    }
  }
}

TEST_CASE("a missing function is a CudaError naming it") {
  Loaded loaded;
  try {
    loaded.module.function("no_such_kernel");
    FAIL("found a function that does not exist");
  } catch (const tuner::CudaError& error) {
    CHECK(error.code() == CUDA_ERROR_NOT_FOUND);
    CHECK(error.call() == "cuModuleGetFunction");
    CHECK(std::string(error.what()).find("no_such_kernel") != std::string::npos);
    CHECK_FALSE(error.is_sticky());
  }
}

TEST_CASE("a bad cubin is refused with CUDA_ERROR_INVALID_IMAGE") {
  const cuda::Context context(0);
  const std::vector<char> garbage(256, 'x');
  try {
    const cuda::Module module(garbage, "garbage image");
    FAIL("loaded a garbage image");
  } catch (const tuner::CudaError& error) {
    CHECK(error.call() == "cuModuleLoadData");
    CHECK(error.code_name() == "CUDA_ERROR_INVALID_IMAGE");
    CHECK(error.context() == "garbage image");
  }
}

TEST_CASE("fills write the pattern, synchronously or on a stream") {
  const cuda::Context context(0);
  const std::size_t bytes = 4096;
  const cuda::DeviceBuffer buffer(bytes, "fill");
  std::vector<unsigned char> host(bytes);

  buffer.fill_u8(0xAB);
  buffer.download(host.data(), bytes);
  CHECK(std::all_of(host.begin(), host.end(), [](unsigned char b) { return b == 0xAB; }));

  const cuda::Stream stream;
  buffer.fill_u16(0x1234, stream.get());
  stream.synchronize("fill_u16");
  std::vector<std::uint16_t> halves(bytes / 2);
  buffer.download(halves.data(), bytes);
  CHECK(std::all_of(halves.begin(), halves.end(), [](std::uint16_t h) { return h == 0x1234; }));

  buffer.fill_u32(0xDEADBEEF);
  std::vector<std::uint32_t> words(bytes / 4);
  buffer.download(words.data(), bytes);
  CHECK(std::all_of(words.begin(), words.end(), [](std::uint32_t w) { return w == 0xDEADBEEF; }));

  // A partial download at an offset.
  std::uint32_t last = 0;
  buffer.download(&last, sizeof(last), bytes - sizeof(last));
  CHECK(last == 0xDEADBEEF);
}

TEST_CASE("buffer misuse is refused before reaching the driver") {
  const cuda::Context context(0);
  const cuda::DeviceBuffer odd(3, "odd");
  CHECK_THROWS_AS(odd.fill_u16(1), std::invalid_argument);
  CHECK_THROWS_AS(odd.fill_u32(1), std::invalid_argument);
  std::vector<char> host(8);
  CHECK_THROWS_AS(odd.upload(host.data(), 4), std::out_of_range);
  CHECK_THROWS_AS(odd.download(host.data(), 2, 2), std::out_of_range);
  CHECK_NOTHROW(odd.download(host.data(), 1, 2));

  cuda::DeviceBuffer moved_to;
  moved_to = cuda::DeviceBuffer(64, "moved");
  CHECK(moved_to);
  CHECK(moved_to.size() == 64);
  cuda::DeviceBuffer taken(std::move(moved_to));
  CHECK_FALSE(moved_to);
  CHECK(taken.size() == 64);
}

TEST_CASE("events time work on a stream") {
  Loaded loaded;
  const CUfunction spin = loaded.module.function("spin");
  const cuda::Stream stream;
  const cuda::Event start;
  const cuda::Event stop;
  long long cycles = 2'000'000;  // about a millisecond
  void* args[] = {&cycles};
  start.record(stream.get());
  cuda::launch(spin, {1}, {1}, 0, stream.get(), args, "spin");
  stop.record(stream.get());
  stop.synchronize();
  const float elapsed_ms = stop.elapsed_ms_since(start);
  CHECK(elapsed_ms > 0.1F);
  CHECK(elapsed_ms < 1000.0F);
}

TEST_CASE("a captured graph replays the launches it captured") {
  Loaded loaded;
  const CUfunction increment = loaded.module.function("increment");
  const int n = 1000;
  const cuda::DeviceBuffer data(n * sizeof(int), "graph data");
  data.fill_u32(0);

  const cuda::Stream stream;
  CHECK_FALSE(stream.is_capturing());
  cuda::begin_capture(stream, "capture increment");
  CHECK(stream.is_capturing());
  CUdeviceptr pointer = data.get();
  int count = n;
  void* args[] = {&pointer, &count};
  cuda::launch(increment, {blocks_for(n, 128)}, {128}, 0, stream.get(), args, "increment");
  cuda::launch(increment, {blocks_for(n, 128)}, {128}, 0, stream.get(), args, "increment");
  const cuda::Graph graph = cuda::end_capture(stream, "capture increment");
  CHECK_FALSE(stream.is_capturing());
  REQUIRE(graph.get() != nullptr);

  // Capturing records the launches without running them.
  std::vector<int> host(n, -1);
  data.download(host.data(), n * sizeof(int));
  CHECK(std::all_of(host.begin(), host.end(), [](int v) { return v == 0; }));

  const cuda::GraphExec exec = graph.instantiate("increment graph");
  for (int replay = 0; replay < 5; ++replay) {
    exec.launch(stream.get(), "increment graph");
  }
  stream.synchronize("increment graph");
  data.download(host.data(), n * sizeof(int));
  CHECK(std::all_of(host.begin(), host.end(), [](int v) { return v == 10; }));
}

TEST_CASE("dynamic shared memory above 48 KiB needs set_max_dynamic_smem") {
  Loaded loaded;
  const CUfunction function = loaded.module.function("uses_dynamic_smem");
  const unsigned threads = 256;
  const unsigned smem_bytes = 100 * 1024;
  const cuda::DeviceBuffer out(threads * sizeof(float), "dynamic smem out");
  CUdeviceptr pointer = out.get();
  void* args[] = {&pointer};
  const cuda::Stream stream;
  try {
    cuda::launch(function, {1}, {threads}, smem_bytes, stream.get(), args, "100 KiB smem");
    FAIL("launched with 100 KiB dynamic smem without opting in");
  } catch (const tuner::CudaError& error) {
    CHECK(error.call() == "cuLaunchKernel");
    CHECK(error.context() == "100 KiB smem");
    CHECK_FALSE(error.is_sticky());
  }
  cuda::set_max_dynamic_smem(function, smem_bytes, "uses_dynamic_smem");
  CHECK(cuda::function_attribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 "uses_dynamic_smem") == static_cast<int>(smem_bytes));
  cuda::launch(function, {1}, {threads}, smem_bytes, stream.get(), args, "100 KiB smem");
  stream.synchronize("100 KiB smem");
  std::vector<float> host(threads);
  out.download(host.data(), threads * sizeof(float));
  CHECK(host.front() == static_cast<float>(threads - 1));
  CHECK(host.back() == 0.0F);
}

TEST_CASE("contexts and streams move without double release") {
  cuda::Context first(0);
  const CUcontext raw = first.get();
  cuda::Context second(std::move(first));
  CHECK(first.get() == nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  CHECK(second.get() == raw);
  second.make_current();
  second.synchronize("moved context");

  cuda::Stream stream_a;
  const CUstream raw_stream = stream_a.get();
  cuda::Stream stream_b(std::move(stream_a));
  CHECK(stream_a.get() == nullptr);  // NOLINT(bugprone-use-after-move)
  CHECK(stream_b.get() == raw_stream);
  stream_b.synchronize("moved stream");
}

// Keep last: the illegal address leaves the context unusable for the rest of the process.
TEST_CASE("a write to a bogus address is a sticky CudaError") {
  Loaded loaded;
  const CUfunction write_to = loaded.module.function("write_to");
  const cuda::Stream stream;
  CUdeviceptr bogus = 0x10;
  void* args[] = {&bogus};
  cuda::launch(write_to, {1}, {1}, 0, stream.get(), args, "write to 0x10");
  try {
    stream.synchronize("write to 0x10");
    FAIL("the bogus write was not reported");
  } catch (const tuner::CudaError& error) {
    CHECK(error.code() == CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK(error.is_sticky());
    CHECK(error.context() == "write to 0x10");
  }
  // Sticky: later calls in the same context fail too.
  try {
    loaded.context.synchronize("after the fault");
    FAIL("the context still works after an illegal address");
  } catch (const tuner::CudaError& error) {
    CHECK(error.is_sticky());
  }
}
