#pragma once
// The CUDA Driver API, loaded at run time from libcuda.so.1 (so the tool starts on machines with no
// driver), with a small move-only RAII type for every handle. Every call is checked; a failure
// throws CudaError carrying the call, the result's name and the caller's context string.
#include <cuda.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/cluster_capacity.hpp"
#include "core/launch_order.hpp"

namespace tuner::cuda {

// Loads the driver and runs cuInit once. Returns false (and why) when there is no driver library,
// cuInit fails, or no device is visible. Never throws.
bool gpu_available(std::string* why_not = nullptr);

// Throws NoGpuError (with the reason from gpu_available) when there is none.
void require_gpu();

// Throws CudaError when result != CUDA_SUCCESS.
void check(CUresult result, const char* call, const std::string& context);

// The name of a CUresult ("CUDA_ERROR_ILLEGAL_ADDRESS"), or "CUresult(N)".
std::string result_name(CUresult result);

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t total_memory_bytes = 0;
  int l2_cache_bytes = 0;
  int driver_version = 0;  // e.g. 13000
  int arch_sm() const { return cc_major * 10 + cc_minor; }
};

// 0 when gpu_available() is false.
int device_count();
DeviceInfo device_info(int ordinal);
int device_attribute(CUdevice_attribute attribute, int ordinal);

// The device's primary context, retained and made current on the calling thread.
class Context {
 public:
  explicit Context(int ordinal);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  Context(Context&& other) noexcept;
  Context& operator=(Context&& other) noexcept;
  CUcontext get() const { return context_; }
  CUdevice device() const { return device_; }
  void make_current() const;
  void synchronize(const std::string& context) const;

 private:
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

class Module {
 public:
  Module(const std::vector<char>& cubin, const std::string& context);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  CUmodule get() const { return module_; }
  // Throws CudaError (CUDA_ERROR_NOT_FOUND) naming the function when it is absent.
  CUfunction function(const std::string& mangled_name) const;

 private:
  CUmodule module_ = nullptr;
  std::string context_;
};

void set_max_dynamic_smem(CUfunction function, int bytes, const std::string& context);
int function_attribute(CUfunction function, CUfunction_attribute attribute,
                       const std::string& context);
int max_active_blocks_per_sm(CUfunction function, int threads, std::size_t dynamic_smem,
                             const std::string& context);
// Clusters of each size 1..8 (along x) of `function` resident at once with this block and dynamic
// shared memory; size 1 is the kernel's resident CTAs on the whole device (one wave of an ordinary
// launch). A size the device or kernel cannot launch (before sm_90, or over its limits) stays 0,
// "not known".
ClusterCapacity cluster_capacity(CUfunction function, unsigned threads,
                                 unsigned dynamic_smem) noexcept;

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t bytes, const std::string& context);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  CUdeviceptr get() const { return pointer_; }
  std::size_t size() const { return bytes_; }
  explicit operator bool() const { return pointer_ != 0; }
  // Both synchronise the current context (upload after the copy, download before it), so that
  // work on non-blocking streams sees the data and is finished. Out-of-range: std::out_of_range.
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0) const;
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;
  // On `stream`, or with a null stream complete on return. The size must be a whole number of
  // elements (std::invalid_argument otherwise).
  void fill_u8(unsigned char value, CUstream stream = nullptr) const;
  void fill_u16(unsigned short value, CUstream stream = nullptr) const;
  void fill_u32(unsigned int value, CUstream stream = nullptr) const;

 private:
  CUdeviceptr pointer_ = 0;
  std::size_t bytes_ = 0;
  std::string context_;
};

class Stream {
 public:
  Stream();  // non-blocking stream
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  CUstream get() const { return stream_; }
  void synchronize(const std::string& context) const;
  // True while the stream is capturing a graph.
  bool is_capturing() const;

 private:
  CUstream stream_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  CUevent get() const { return event_; }
  void record(CUstream stream) const;
  // On a capturing stream: an event record node of the graph (CU_EVENT_RECORD_EXTERNAL), so that
  // each replay records this event where the node sits (for timing single launches in a graph).
  void record_in_capture(CUstream stream) const;
  void synchronize() const;
  // Milliseconds from start to this event (both recorded and complete).
  float elapsed_ms_since(const Event& start) const;

 private:
  CUevent event_ = nullptr;
};

class GraphExec;

// A graph captured from a stream: begin_capture ... end_capture.
class Graph {
 public:
  Graph() = default;
  explicit Graph(CUgraph graph) : graph_(graph) {}
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  CUgraph get() const { return graph_; }
  GraphExec instantiate(const std::string& context) const;

 private:
  CUgraph graph_ = nullptr;
};

class GraphExec {
 public:
  GraphExec() = default;
  explicit GraphExec(CUgraphExec exec) : exec_(exec) {}
  ~GraphExec();
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  GraphExec(GraphExec&& other) noexcept;
  GraphExec& operator=(GraphExec&& other) noexcept;
  CUgraphExec get() const { return exec_; }
  void launch(CUstream stream, const std::string& context) const;

 private:
  CUgraphExec exec_ = nullptr;
};

void begin_capture(const Stream& stream, const std::string& context);
Graph end_capture(const Stream& stream, const std::string& context);

// Asynchronous device-to-device copy on `stream` (cuMemcpyDtoDAsync).
void copy_device_to_device(CUdeviceptr destination, CUdeviceptr source, std::size_t bytes,
                           CUstream stream, const std::string& context);

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// cuLaunchKernel with `args` as kernel parameters (cuLaunchKernelEx for a programmatic launch or
// clusters of `cluster_x` CTAs along x, 1-D blocks); checks the launch.
void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned dynamic_smem, CUstream stream,
            void** args, const std::string& context, LaunchOrder order = LaunchOrder::stream,
            unsigned cluster_x = 1);

// cuLaunchKernel with a 1-D block, unchecked and allocation-free: for the serving launcher's hot
// path (core/deploy_family.hpp's LaunchKernelFn), which reports the result itself. Call only after
// require_gpu() succeeded.
CUresult launch_unchecked(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                          unsigned block_x, unsigned dynamic_smem, CUstream stream, void** params,
                          LaunchOrder order, unsigned cluster_x) noexcept;

}  // namespace tuner::cuda
