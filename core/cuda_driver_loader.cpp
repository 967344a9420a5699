// Loading libcuda.so.1 at run time: every entry point resolved through cuGetProcAddress for the
// ABI of CUDA_VERSION, the driver version checked, cuInit run and the devices counted, once.
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <exception>
#include <mutex>
#include <string>
#include <type_traits>

#include "core/cuda_driver.hpp"
#include "core/cuda_driver_api.hpp"
#include "core/error.hpp"

namespace tuner::cuda {
namespace {

// The function pointer types must be the ABI that cuGetProcAddress returns for CUDA_VERSION, which
// is the one cuda.h declares (its macros map e.g. cuMemAlloc to cuMemAlloc_v2).
#define TUNER_SAME_ABI(pfn, function) \
  static_assert(std::is_same_v<pfn, decltype(&::function)>, #pfn " is not the ABI of " #function)
TUNER_SAME_ABI(PFN_cuGetErrorName_v6000, cuGetErrorName);
TUNER_SAME_ABI(PFN_cuDriverGetVersion_v2020, cuDriverGetVersion);
TUNER_SAME_ABI(PFN_cuInit_v2000, cuInit);
TUNER_SAME_ABI(PFN_cuDeviceGetCount_v2000, cuDeviceGetCount);
TUNER_SAME_ABI(PFN_cuDeviceGet_v2000, cuDeviceGet);
TUNER_SAME_ABI(PFN_cuDeviceGetName_v2000, cuDeviceGetName);
TUNER_SAME_ABI(PFN_cuDeviceGetAttribute_v2000, cuDeviceGetAttribute);
TUNER_SAME_ABI(PFN_cuDeviceTotalMem_v3020, cuDeviceTotalMem);
TUNER_SAME_ABI(PFN_cuDevicePrimaryCtxRetain_v7000, cuDevicePrimaryCtxRetain);
TUNER_SAME_ABI(PFN_cuDevicePrimaryCtxRelease_v11000, cuDevicePrimaryCtxRelease);
TUNER_SAME_ABI(PFN_cuCtxSetCurrent_v4000, cuCtxSetCurrent);
// CUDA 13 gave cuCtxSynchronize a context argument; cuda.h declares that ABI as _v2.
TUNER_SAME_ABI(PFN_cuCtxSynchronize_v13000, cuCtxSynchronize_v2);
TUNER_SAME_ABI(PFN_cuModuleLoadData_v2000, cuModuleLoadData);
TUNER_SAME_ABI(PFN_cuModuleUnload_v2000, cuModuleUnload);
TUNER_SAME_ABI(PFN_cuModuleGetFunction_v2000, cuModuleGetFunction);
TUNER_SAME_ABI(PFN_cuFuncSetAttribute_v9000, cuFuncSetAttribute);
TUNER_SAME_ABI(PFN_cuFuncGetAttribute_v2020, cuFuncGetAttribute);
TUNER_SAME_ABI(PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050,
               cuOccupancyMaxActiveBlocksPerMultiprocessor);
TUNER_SAME_ABI(PFN_cuMemAlloc_v3020, cuMemAlloc);
TUNER_SAME_ABI(PFN_cuMemFree_v3020, cuMemFree);
TUNER_SAME_ABI(PFN_cuMemcpyHtoD_v3020, cuMemcpyHtoD);
TUNER_SAME_ABI(PFN_cuMemcpyDtoH_v3020, cuMemcpyDtoH);
TUNER_SAME_ABI(PFN_cuMemsetD8Async_v3020, cuMemsetD8Async);
TUNER_SAME_ABI(PFN_cuMemsetD16Async_v3020, cuMemsetD16Async);
TUNER_SAME_ABI(PFN_cuMemsetD32Async_v3020, cuMemsetD32Async);
TUNER_SAME_ABI(PFN_cuMemcpyDtoDAsync_v3020, cuMemcpyDtoDAsync);
TUNER_SAME_ABI(PFN_cuStreamCreate_v2000, cuStreamCreate);
TUNER_SAME_ABI(PFN_cuStreamDestroy_v4000, cuStreamDestroy);
TUNER_SAME_ABI(PFN_cuStreamSynchronize_v2000, cuStreamSynchronize);
TUNER_SAME_ABI(PFN_cuStreamIsCapturing_v10000, cuStreamIsCapturing);
TUNER_SAME_ABI(PFN_cuStreamBeginCapture_v10010, cuStreamBeginCapture);
TUNER_SAME_ABI(PFN_cuStreamEndCapture_v10000, cuStreamEndCapture);
TUNER_SAME_ABI(PFN_cuEventCreate_v2000, cuEventCreate);
TUNER_SAME_ABI(PFN_cuEventDestroy_v4000, cuEventDestroy);
TUNER_SAME_ABI(PFN_cuEventRecord_v2000, cuEventRecord);
TUNER_SAME_ABI(PFN_cuEventRecordWithFlags_v11010, cuEventRecordWithFlags);
TUNER_SAME_ABI(PFN_cuEventSynchronize_v2000, cuEventSynchronize);
TUNER_SAME_ABI(PFN_cuEventElapsedTime_v12080, cuEventElapsedTime);
TUNER_SAME_ABI(PFN_cuGraphInstantiateWithFlags_v11040, cuGraphInstantiateWithFlags);
TUNER_SAME_ABI(PFN_cuGraphLaunch_v10000, cuGraphLaunch);
TUNER_SAME_ABI(PFN_cuGraphDestroy_v10000, cuGraphDestroy);
TUNER_SAME_ABI(PFN_cuGraphExecDestroy_v10000, cuGraphExecDestroy);
TUNER_SAME_ABI(PFN_cuLaunchKernel_v4000, cuLaunchKernel);
TUNER_SAME_ABI(PFN_cuLaunchKernelEx_v11060, cuLaunchKernelEx);
#undef TUNER_SAME_ABI

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Resolves entry points by base name through cuGetProcAddress, for the ABI of CUDA_VERSION.
class EntryPointResolver {
 public:
  explicit EntryPointResolver(PFN_cuGetProcAddress_v12000 get_proc_address)
      : get_proc_address_(get_proc_address) {}

  template <typename FunctionPointer>
  void resolve(FunctionPointer& target, const char* symbol) {
    if (!failure_.empty()) {
      return;
    }
    void* pointer = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const CUresult result =
        get_proc_address_(symbol, &pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (result == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && pointer != nullptr) {
      target = reinterpret_cast<FunctionPointer>(pointer);
      return;
    }
    failure_ = std::string("libcuda.so.1 has no ") + symbol + " for CUDA " +
               cuda_version_text(CUDA_VERSION) +
               (status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                    ? " (the driver is too old): install a driver for CUDA " +
                          cuda_version_text(CUDA_VERSION) + " or newer"
                    : "");
  }
  // Empty while every symbol so far resolved.
  const std::string& failure() const { return failure_; }

 private:
  PFN_cuGetProcAddress_v12000 get_proc_address_;
  std::string failure_;
};

void resolve_error_names(EntryPointResolver& resolver, DriverApi& api) {
  resolver.resolve(api.get_error_name, "cuGetErrorName");
  resolver.resolve(api.driver_get_version, "cuDriverGetVersion");
}

void resolve_the_rest(EntryPointResolver& resolver, DriverApi& api) {
  resolver.resolve(api.init, "cuInit");
  resolver.resolve(api.device_get_count, "cuDeviceGetCount");
  resolver.resolve(api.device_get, "cuDeviceGet");
  resolver.resolve(api.device_get_name, "cuDeviceGetName");
  resolver.resolve(api.device_get_attribute, "cuDeviceGetAttribute");
  resolver.resolve(api.device_total_mem, "cuDeviceTotalMem");
  resolver.resolve(api.primary_ctx_retain, "cuDevicePrimaryCtxRetain");
  resolver.resolve(api.primary_ctx_release, "cuDevicePrimaryCtxRelease");
  resolver.resolve(api.ctx_set_current, "cuCtxSetCurrent");
  resolver.resolve(api.ctx_synchronize, "cuCtxSynchronize");
  resolver.resolve(api.module_load_data, "cuModuleLoadData");
  resolver.resolve(api.module_unload, "cuModuleUnload");
  resolver.resolve(api.module_get_function, "cuModuleGetFunction");
  resolver.resolve(api.func_set_attribute, "cuFuncSetAttribute");
  resolver.resolve(api.func_get_attribute, "cuFuncGetAttribute");
  resolver.resolve(api.occupancy_max_active_blocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  resolver.resolve(api.occupancy_max_active_clusters, "cuOccupancyMaxActiveClusters");
  resolver.resolve(api.mem_alloc, "cuMemAlloc");
  resolver.resolve(api.mem_free, "cuMemFree");
  resolver.resolve(api.memcpy_htod, "cuMemcpyHtoD");
  resolver.resolve(api.memcpy_dtoh, "cuMemcpyDtoH");
  resolver.resolve(api.memset_d8_async, "cuMemsetD8Async");
  resolver.resolve(api.memset_d16_async, "cuMemsetD16Async");
  resolver.resolve(api.memset_d32_async, "cuMemsetD32Async");
  resolver.resolve(api.memcpy_dtod_async, "cuMemcpyDtoDAsync");
  resolver.resolve(api.stream_create, "cuStreamCreate");
  resolver.resolve(api.stream_destroy, "cuStreamDestroy");
  resolver.resolve(api.stream_synchronize, "cuStreamSynchronize");
  resolver.resolve(api.stream_is_capturing, "cuStreamIsCapturing");
  resolver.resolve(api.stream_begin_capture, "cuStreamBeginCapture");
  resolver.resolve(api.stream_end_capture, "cuStreamEndCapture");
  resolver.resolve(api.event_create, "cuEventCreate");
  resolver.resolve(api.event_destroy, "cuEventDestroy");
  resolver.resolve(api.event_record, "cuEventRecord");
  resolver.resolve(api.event_record_with_flags, "cuEventRecordWithFlags");
  resolver.resolve(api.event_synchronize, "cuEventSynchronize");
  resolver.resolve(api.event_elapsed_time, "cuEventElapsedTime");
  // cuda.h maps cuGraphInstantiate to cuGraphInstantiateWithFlags since CUDA 12; naming the
  // latter leaves no doubt about the ABI.
  resolver.resolve(api.graph_instantiate, "cuGraphInstantiateWithFlags");
  resolver.resolve(api.graph_launch, "cuGraphLaunch");
  resolver.resolve(api.graph_destroy, "cuGraphDestroy");
  resolver.resolve(api.graph_exec_destroy, "cuGraphExecDestroy");
  resolver.resolve(api.launch_kernel, "cuLaunchKernel");
  resolver.resolve(api.launch_kernel_ex, "cuLaunchKernelEx");
}

// Fills `driver` as far as this machine allows; `why_unusable` says where it stopped.
void load_driver(Driver& driver) {
  // Never dlclose'd: RAII objects with static storage release their handles at exit.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    driver.why_unusable = std::string("libcuda.so.1 could not be loaded (") +
                          (reason != nullptr ? reason : "no reason given") +
                          "); is an NVIDIA driver installed?";
    return;
  }
  auto get_proc_address =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc_address == nullptr) {
    driver.why_unusable =
        "libcuda.so.1 has no cuGetProcAddress_v2: the driver predates CUDA 12; install a driver "
        "for CUDA " +
        cuda_version_text(CUDA_VERSION) + " or newer";
    return;
  }
  EntryPointResolver resolver(get_proc_address);
  resolve_error_names(resolver, driver.api);
  if (!resolver.failure().empty()) {
    driver.why_unusable = resolver.failure();
    return;
  }
  driver.error_names_loaded = true;
  int version = 0;
  if (driver.api.driver_get_version(&version) == CUDA_SUCCESS && version < CUDA_VERSION) {
    driver.why_unusable = "the driver supports CUDA " + cuda_version_text(version) +
                          ", this build needs CUDA " + cuda_version_text(CUDA_VERSION) +
                          ": install a newer driver";
    return;
  }
  resolve_the_rest(resolver, driver.api);
  if (!resolver.failure().empty()) {
    driver.why_unusable = resolver.failure();
    return;
  }
  const CUresult initialized = driver.api.init(0);
  if (initialized != CUDA_SUCCESS) {
    driver.why_unusable = "cuInit failed: " + result_name_from(driver.api, initialized);
    return;
  }
  const CUresult counted = driver.api.device_get_count(&driver.device_count);
  if (counted != CUDA_SUCCESS) {
    driver.why_unusable = "cuDeviceGetCount failed: " + result_name_from(driver.api, counted);
    driver.device_count = 0;
    return;
  }
  if (driver.device_count == 0) {
    driver.why_unusable = "the driver sees no CUDA device (cuDeviceGetCount returned 0)";
    return;
  }
  driver.usable = true;
}

}  // namespace

const Driver& driver() {
  static std::once_flag once;
  static Driver loaded;
  std::call_once(once, [] { load_driver(loaded); });
  return loaded;
}

const DriverApi& api() {
  const Driver& loaded = driver();
  if (!loaded.usable) {
    throw NoGpuError("no usable NVIDIA GPU: " + loaded.why_unusable);
  }
  return loaded.api;
}

bool gpu_available(std::string* why_not) {
  try {
    const Driver& loaded = driver();
    if (why_not != nullptr) {
      *why_not = loaded.why_unusable;
    }
    return loaded.usable;
  } catch (const std::exception& error) {  // std::bad_alloc or std::system_error from call_once
    if (why_not != nullptr) {
      *why_not = error.what();
    }
    return false;
  }
}

void require_gpu() {
  std::string why_not;
  if (!gpu_available(&why_not)) {
    throw NoGpuError("no usable NVIDIA GPU: " + why_not);
  }
}

}  // namespace tuner::cuda
