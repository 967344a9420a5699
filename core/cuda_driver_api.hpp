#pragma once
// Internal to the CUDA driver wrapper (core/cuda_driver.hpp is the interface): the entry points
// resolved from libcuda.so.1 and what every handle's file shares. cuda_driver_loader.cpp loads
// the driver once per process; cuda_check.cpp names results and checks them.
#include <cudaTypedefs.h>

#include <string>

namespace tuner::cuda {

struct DriverApi {
  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuDriverGetVersion_v2020 driver_get_version = nullptr;
  PFN_cuInit_v2000 init = nullptr;
  PFN_cuDeviceGetCount_v2000 device_get_count = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetName_v2000 device_get_name = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  PFN_cuDeviceTotalMem_v3020 device_total_mem = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_ctx_retain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 primary_ctx_release = nullptr;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current = nullptr;
  PFN_cuCtxSynchronize_v13000 ctx_synchronize = nullptr;
  PFN_cuModuleLoadData_v2000 module_load_data = nullptr;
  PFN_cuModuleUnload_v2000 module_unload = nullptr;
  PFN_cuModuleGetFunction_v2000 module_get_function = nullptr;
  PFN_cuFuncSetAttribute_v9000 func_set_attribute = nullptr;
  PFN_cuFuncGetAttribute_v2020 func_get_attribute = nullptr;
  PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050 occupancy_max_active_blocks = nullptr;
  PFN_cuOccupancyMaxActiveClusters_v11070 occupancy_max_active_clusters = nullptr;
  PFN_cuMemAlloc_v3020 mem_alloc = nullptr;
  PFN_cuMemFree_v3020 mem_free = nullptr;
  PFN_cuMemcpyHtoD_v3020 memcpy_htod = nullptr;
  PFN_cuMemcpyDtoH_v3020 memcpy_dtoh = nullptr;
  PFN_cuMemsetD8Async_v3020 memset_d8_async = nullptr;
  PFN_cuMemsetD16Async_v3020 memset_d16_async = nullptr;
  PFN_cuMemsetD32Async_v3020 memset_d32_async = nullptr;
  PFN_cuMemcpyDtoDAsync_v3020 memcpy_dtod_async = nullptr;
  PFN_cuStreamCreate_v2000 stream_create = nullptr;
  PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
  PFN_cuStreamSynchronize_v2000 stream_synchronize = nullptr;
  PFN_cuStreamIsCapturing_v10000 stream_is_capturing = nullptr;
  PFN_cuStreamBeginCapture_v10010 stream_begin_capture = nullptr;
  PFN_cuStreamEndCapture_v10000 stream_end_capture = nullptr;
  PFN_cuEventCreate_v2000 event_create = nullptr;
  PFN_cuEventDestroy_v4000 event_destroy = nullptr;
  PFN_cuEventRecord_v2000 event_record = nullptr;
  PFN_cuEventRecordWithFlags_v11010 event_record_with_flags = nullptr;
  PFN_cuEventSynchronize_v2000 event_synchronize = nullptr;
  PFN_cuEventElapsedTime_v12080 event_elapsed_time = nullptr;
  PFN_cuGraphInstantiateWithFlags_v11040 graph_instantiate = nullptr;
  PFN_cuGraphLaunch_v10000 graph_launch = nullptr;
  PFN_cuGraphDestroy_v10000 graph_destroy = nullptr;
  PFN_cuGraphExecDestroy_v10000 graph_exec_destroy = nullptr;
  PFN_cuLaunchKernel_v4000 launch_kernel = nullptr;
  PFN_cuLaunchKernelEx_v11060 launch_kernel_ex = nullptr;
};

// The process-wide driver: loaded, resolved and initialised once.
struct Driver {
  DriverApi api;
  bool error_names_loaded = false;  // cuGetErrorName can be called
  bool usable = false;              // every entry point resolved, cuInit done, a device visible
  int device_count = 0;
  std::string why_unusable;
};

// Loaded, resolved and initialised on first use; never throws NoGpuError (see api()).
const Driver& driver();

// The entry points; throws NoGpuError when the driver or a device is missing.
const DriverApi& api();

// Usable while the driver is still being loaded (result_name would wait on the loading).
std::string result_name_from(const DriverApi& loaded_api, CUresult result);

std::string join_context(const std::string& context, const std::string& detail);

// For destructors: reports a failed release on stderr and carries on.
void warn_if_failed(CUresult result, const char* call, const std::string& context) noexcept;

}  // namespace tuner::cuda
