#include "core/cuda_driver.hpp"

#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <utility>

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

#define TUNER_RESULT_NAME(code) \
  { code, #code }
struct KnownResult {
  CUresult code;
  const char* name;
};
// From cuda.h, for machines with no driver to ask.
constexpr KnownResult known_results[] = {
    TUNER_RESULT_NAME(CUDA_SUCCESS),
    TUNER_RESULT_NAME(CUDA_ERROR_ALREADY_ACQUIRED),
    TUNER_RESULT_NAME(CUDA_ERROR_ALREADY_MAPPED),
    TUNER_RESULT_NAME(CUDA_ERROR_ARRAY_IS_MAPPED),
    TUNER_RESULT_NAME(CUDA_ERROR_ASSERT),
    TUNER_RESULT_NAME(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER),
    TUNER_RESULT_NAME(CUDA_ERROR_CAPTURED_EVENT),
    TUNER_RESULT_NAME(CUDA_ERROR_CDP_NOT_SUPPORTED),
    TUNER_RESULT_NAME(CUDA_ERROR_CDP_VERSION_MISMATCH),
    TUNER_RESULT_NAME(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE),
    TUNER_RESULT_NAME(CUDA_ERROR_CONTAINED),
    TUNER_RESULT_NAME(CUDA_ERROR_CONTEXT_ALREADY_CURRENT),
    TUNER_RESULT_NAME(CUDA_ERROR_CONTEXT_ALREADY_IN_USE),
    TUNER_RESULT_NAME(CUDA_ERROR_CONTEXT_IS_DESTROYED),
    TUNER_RESULT_NAME(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE),
    TUNER_RESULT_NAME(CUDA_ERROR_DEINITIALIZED),
    TUNER_RESULT_NAME(CUDA_ERROR_DEVICE_NOT_LICENSED),
    TUNER_RESULT_NAME(CUDA_ERROR_DEVICE_UNAVAILABLE),
    TUNER_RESULT_NAME(CUDA_ERROR_ECC_UNCORRECTABLE),
    TUNER_RESULT_NAME(CUDA_ERROR_EXTERNAL_DEVICE),
    TUNER_RESULT_NAME(CUDA_ERROR_FILE_NOT_FOUND),
    TUNER_RESULT_NAME(CUDA_ERROR_FUNCTION_NOT_LOADED),
    TUNER_RESULT_NAME(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE),
    TUNER_RESULT_NAME(CUDA_ERROR_HARDWARE_STACK_ERROR),
    TUNER_RESULT_NAME(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED),
    TUNER_RESULT_NAME(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
    TUNER_RESULT_NAME(CUDA_ERROR_ILLEGAL_ADDRESS),
    TUNER_RESULT_NAME(CUDA_ERROR_ILLEGAL_INSTRUCTION),
    TUNER_RESULT_NAME(CUDA_ERROR_ILLEGAL_STATE),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_ADDRESS_SPACE),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_CLUSTER_SIZE),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_CONTEXT),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_DEVICE),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_HANDLE),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_IMAGE),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_PC),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_PTX),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_RESOURCE_TYPE),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_SOURCE),
    TUNER_RESULT_NAME(CUDA_ERROR_INVALID_VALUE),
    TUNER_RESULT_NAME(CUDA_ERROR_JIT_COMPILATION_DISABLED),
    TUNER_RESULT_NAME(CUDA_ERROR_JIT_COMPILER_NOT_FOUND),
    TUNER_RESULT_NAME(CUDA_ERROR_KEY_ROTATION),
    TUNER_RESULT_NAME(CUDA_ERROR_LAUNCH_FAILED),
    TUNER_RESULT_NAME(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING),
    TUNER_RESULT_NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
    TUNER_RESULT_NAME(CUDA_ERROR_LAUNCH_TIMEOUT),
    TUNER_RESULT_NAME(CUDA_ERROR_LOSSY_QUERY),
    TUNER_RESULT_NAME(CUDA_ERROR_MAP_FAILED),
    TUNER_RESULT_NAME(CUDA_ERROR_MISALIGNED_ADDRESS),
    TUNER_RESULT_NAME(CUDA_ERROR_MPS_CLIENT_TERMINATED),
    TUNER_RESULT_NAME(CUDA_ERROR_MPS_CONNECTION_FAILED),
    TUNER_RESULT_NAME(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED),
    TUNER_RESULT_NAME(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED),
    TUNER_RESULT_NAME(CUDA_ERROR_MPS_RPC_FAILURE),
    TUNER_RESULT_NAME(CUDA_ERROR_MPS_SERVER_NOT_READY),
    TUNER_RESULT_NAME(CUDA_ERROR_NOT_FOUND),
    TUNER_RESULT_NAME(CUDA_ERROR_NOT_INITIALIZED),
    TUNER_RESULT_NAME(CUDA_ERROR_NOT_MAPPED),
    TUNER_RESULT_NAME(CUDA_ERROR_NOT_MAPPED_AS_ARRAY),
    TUNER_RESULT_NAME(CUDA_ERROR_NOT_MAPPED_AS_POINTER),
    TUNER_RESULT_NAME(CUDA_ERROR_NOT_PERMITTED),
    TUNER_RESULT_NAME(CUDA_ERROR_NOT_READY),
    TUNER_RESULT_NAME(CUDA_ERROR_NOT_SUPPORTED),
    TUNER_RESULT_NAME(CUDA_ERROR_NO_BINARY_FOR_GPU),
    TUNER_RESULT_NAME(CUDA_ERROR_NO_DEVICE),
    TUNER_RESULT_NAME(CUDA_ERROR_NVLINK_UNCORRECTABLE),
    TUNER_RESULT_NAME(CUDA_ERROR_OPERATING_SYSTEM),
    TUNER_RESULT_NAME(CUDA_ERROR_OUT_OF_MEMORY),
    TUNER_RESULT_NAME(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED),
    TUNER_RESULT_NAME(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED),
    TUNER_RESULT_NAME(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED),
    TUNER_RESULT_NAME(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE),
    TUNER_RESULT_NAME(CUDA_ERROR_PROFILER_ALREADY_STARTED),
    TUNER_RESULT_NAME(CUDA_ERROR_PROFILER_ALREADY_STOPPED),
    TUNER_RESULT_NAME(CUDA_ERROR_PROFILER_DISABLED),
    TUNER_RESULT_NAME(CUDA_ERROR_PROFILER_NOT_INITIALIZED),
    TUNER_RESULT_NAME(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED),
    TUNER_RESULT_NAME(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND),
    TUNER_RESULT_NAME(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT),
    TUNER_RESULT_NAME(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
    TUNER_RESULT_NAME(CUDA_ERROR_STREAM_CAPTURE_ISOLATION),
    TUNER_RESULT_NAME(CUDA_ERROR_STREAM_CAPTURE_MERGE),
    TUNER_RESULT_NAME(CUDA_ERROR_STREAM_CAPTURE_UNJOINED),
    TUNER_RESULT_NAME(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED),
    TUNER_RESULT_NAME(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
    TUNER_RESULT_NAME(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD),
    TUNER_RESULT_NAME(CUDA_ERROR_STUB_LIBRARY),
    TUNER_RESULT_NAME(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH),
    TUNER_RESULT_NAME(CUDA_ERROR_SYSTEM_NOT_READY),
    TUNER_RESULT_NAME(CUDA_ERROR_TENSOR_MEMORY_LEAK),
    TUNER_RESULT_NAME(CUDA_ERROR_TIMEOUT),
    TUNER_RESULT_NAME(CUDA_ERROR_TOO_MANY_PEERS),
    TUNER_RESULT_NAME(CUDA_ERROR_UNKNOWN),
    TUNER_RESULT_NAME(CUDA_ERROR_UNMAP_FAILED),
    TUNER_RESULT_NAME(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC),
    TUNER_RESULT_NAME(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY),
    TUNER_RESULT_NAME(CUDA_ERROR_UNSUPPORTED_LIMIT),
    TUNER_RESULT_NAME(CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
};
#undef TUNER_RESULT_NAME

std::string fallback_result_name(CUresult result) {
  for (const KnownResult& known : known_results) {
    if (known.code == result) {
      return known.name;
    }
  }
  return "CUresult(" + std::to_string(static_cast<int>(result)) + ")";
}

// Usable while the driver is still being loaded (result_name would wait on the loading).
std::string result_name_from(const DriverApi& loaded_api, CUresult result) {
  const char* name = nullptr;
  if (loaded_api.get_error_name != nullptr &&
      loaded_api.get_error_name(result, &name) == CUDA_SUCCESS && name != nullptr) {
    return name;
  }
  return fallback_result_name(result);
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

const Driver& driver() {
  static std::once_flag once;
  static Driver loaded;
  std::call_once(once, [] { load_driver(loaded); });
  return loaded;
}

// The entry points; throws NoGpuError when the driver or a device is missing.
const DriverApi& api() {
  const Driver& loaded = driver();
  if (!loaded.usable) {
    throw NoGpuError("no usable NVIDIA GPU: " + loaded.why_unusable);
  }
  return loaded.api;
}

std::string join_context(const std::string& context, const std::string& detail) {
  return context.empty() ? detail : context + "; " + detail;
}

// For destructors: reports a failed release on stderr and carries on.
void warn_if_failed(CUresult result, const char* call, const std::string& context) noexcept {
  // At process exit the driver may be torn down before static RAII objects are.
  if (result == CUDA_SUCCESS || result == CUDA_ERROR_DEINITIALIZED) {
    return;
  }
  try {
    std::fprintf(stderr, "tuner: warning: %s failed: %s (%s); ignored in a destructor\n", call,
                 result_name(result).c_str(), context.c_str());
  } catch (...) {
    std::fprintf(stderr, "tuner: warning: %s failed in a destructor (ignored)\n", call);
  }
}

void release_primary_context(CUdevice device, CUcontext context) noexcept {
  if (context == nullptr) {
    return;
  }
  warn_if_failed(driver().api.primary_ctx_release(device), "cuDevicePrimaryCtxRelease",
                 "device " + std::to_string(device));
}

void unload_module(CUmodule module, const std::string& context) noexcept {
  if (module != nullptr) {
    warn_if_failed(driver().api.module_unload(module), "cuModuleUnload", context);
  }
}

void free_memory(CUdeviceptr pointer, const std::string& context) noexcept {
  if (pointer != 0) {
    warn_if_failed(driver().api.mem_free(pointer), "cuMemFree", context);
  }
}

void destroy_stream(CUstream stream) noexcept {
  if (stream != nullptr) {
    warn_if_failed(driver().api.stream_destroy(stream), "cuStreamDestroy", "stream");
  }
}

void destroy_event(CUevent event) noexcept {
  if (event != nullptr) {
    warn_if_failed(driver().api.event_destroy(event), "cuEventDestroy", "event");
  }
}

void destroy_graph(CUgraph graph) noexcept {
  if (graph != nullptr) {
    warn_if_failed(driver().api.graph_destroy(graph), "cuGraphDestroy", "graph");
  }
}

void destroy_graph_exec(CUgraphExec exec) noexcept {
  if (exec != nullptr) {
    warn_if_failed(driver().api.graph_exec_destroy(exec), "cuGraphExecDestroy", "graph exec");
  }
}

// The legacy default stream when `stream` is null (then the fill completes before returning).
template <typename MemsetAsync, typename Value>
void fill_elements(MemsetAsync memset_async, const char* call, CUdeviceptr pointer,
                   std::size_t bytes, std::size_t element_bytes, Value value, CUstream stream,
                   const std::string& context) {
  if (bytes % element_bytes != 0) {
    throw std::invalid_argument(std::string(call) + ": a buffer of " + std::to_string(bytes) +
                                " bytes is not a whole number of " + std::to_string(element_bytes) +
                                "-byte elements (" + context + ")");
  }
  if (bytes == 0) {
    return;
  }
  check(memset_async(pointer, value, bytes / element_bytes, stream), call, context);
  if (stream == nullptr) {
    check(api().stream_synchronize(nullptr), "cuStreamSynchronize", context);
  }
}

}  // namespace

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

void check(CUresult result, const char* call, const std::string& context) {
  if (result == CUDA_SUCCESS) {
    return;
  }
  throw CudaError(call, static_cast<int>(result), result_name(result), context);
}

std::string result_name(CUresult result) {
  const Driver& loaded = driver();
  if (!loaded.error_names_loaded) {
    return fallback_result_name(result);
  }
  return result_name_from(loaded.api, result);
}

int device_count() { return driver().device_count; }

int device_attribute(CUdevice_attribute attribute, int ordinal) {
  const DriverApi& entry = api();
  const std::string context = "device " + std::to_string(ordinal) + ", attribute " +
                              std::to_string(static_cast<int>(attribute));
  CUdevice device = 0;
  check(entry.device_get(&device, ordinal), "cuDeviceGet", context);
  int value = 0;
  check(entry.device_get_attribute(&value, attribute, device), "cuDeviceGetAttribute", context);
  return value;
}

DeviceInfo device_info(int ordinal) {
  const DriverApi& entry = api();
  const std::string context = "device " + std::to_string(ordinal);
  CUdevice device = 0;
  check(entry.device_get(&device, ordinal), "cuDeviceGet", context);
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  check(entry.device_get_name(name, sizeof(name), device), "cuDeviceGetName", context);
  info.name = name;
  info.cc_major = device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ordinal);
  info.cc_minor = device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ordinal);
  info.sm_count = device_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, ordinal);
  info.l2_cache_bytes = device_attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, ordinal);
  check(entry.device_total_mem(&info.total_memory_bytes, device), "cuDeviceTotalMem", context);
  check(entry.driver_get_version(&info.driver_version), "cuDriverGetVersion", context);
  return info;
}

// --- Context ---------------------------------------------------------------------------------

Context::Context(int ordinal) {
  const DriverApi& entry = api();
  const std::string context = "device " + std::to_string(ordinal);
  check(entry.device_get(&device_, ordinal), "cuDeviceGet", context);
  check(entry.primary_ctx_retain(&context_, device_), "cuDevicePrimaryCtxRetain", context);
  const CUresult made_current = entry.ctx_set_current(context_);
  if (made_current != CUDA_SUCCESS) {
    release_primary_context(device_, std::exchange(context_, nullptr));
    check(made_current, "cuCtxSetCurrent", context);
  }
}

Context::~Context() { release_primary_context(device_, context_); }

Context::Context(Context&& other) noexcept
    : device_(other.device_), context_(std::exchange(other.context_, nullptr)) {}

Context& Context::operator=(Context&& other) noexcept {
  if (this != &other) {
    release_primary_context(device_, context_);
    device_ = other.device_;
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

void Context::make_current() const {
  check(api().ctx_set_current(context_), "cuCtxSetCurrent", "device " + std::to_string(device_));
}

void Context::synchronize(const std::string& context) const {
  check(api().ctx_synchronize(context_), "cuCtxSynchronize", context);
}

// --- Module ----------------------------------------------------------------------------------

Module::Module(const std::vector<char>& cubin, const std::string& context) : context_(context) {
  if (cubin.empty()) {
    throw std::invalid_argument("cuModuleLoadData: empty cubin (" + context + ")");
  }
  check(api().module_load_data(&module_, cubin.data()), "cuModuleLoadData", context);
}

Module::~Module() { unload_module(module_, context_); }

Module::Module(Module&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)), context_(std::move(other.context_)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    unload_module(module_, context_);
    module_ = std::exchange(other.module_, nullptr);
    context_ = std::move(other.context_);
  }
  return *this;
}

CUfunction Module::function(const std::string& mangled_name) const {
  CUfunction function = nullptr;
  check(api().module_get_function(&function, module_, mangled_name.c_str()), "cuModuleGetFunction",
        join_context(context_, "function " + mangled_name));
  return function;
}

void set_max_dynamic_smem(CUfunction function, int bytes, const std::string& context) {
  check(api().func_set_attribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
        "cuFuncSetAttribute",
        join_context(context, "max dynamic shared memory " + std::to_string(bytes) + " bytes"));
}

int function_attribute(CUfunction function, CUfunction_attribute attribute,
                       const std::string& context) {
  int value = 0;
  check(api().func_get_attribute(&value, attribute, function), "cuFuncGetAttribute",
        join_context(context, "attribute " + std::to_string(static_cast<int>(attribute))));
  return value;
}

int max_active_blocks_per_sm(CUfunction function, int threads, std::size_t dynamic_smem,
                             const std::string& context) {
  int blocks = 0;
  check(api().occupancy_max_active_blocks(&blocks, function, threads, dynamic_smem),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        join_context(context, std::to_string(threads) + " threads, " +
                                  std::to_string(dynamic_smem) + " bytes dynamic smem"));
  return blocks;
}

// --- DeviceBuffer ----------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::size_t bytes, const std::string& context)
    : bytes_(bytes), context_(context) {
  if (bytes == 0) {
    return;  // cuMemAlloc refuses 0 bytes; an empty buffer needs no memory
  }
  check(api().mem_alloc(&pointer_, bytes), "cuMemAlloc",
        join_context(context, std::to_string(bytes) + " bytes"));
}

DeviceBuffer::~DeviceBuffer() { free_memory(pointer_, context_); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(std::exchange(other.pointer_, 0)),
      bytes_(std::exchange(other.bytes_, 0)),
      context_(std::move(other.context_)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    free_memory(pointer_, context_);
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    context_ = std::move(other.context_);
  }
  return *this;
}

namespace {

void check_range(std::size_t buffer_bytes, std::size_t bytes, std::size_t offset,
                 const char* operation, const std::string& context) {
  if (offset <= buffer_bytes && bytes <= buffer_bytes - offset) {
    return;
  }
  throw std::out_of_range(std::string(operation) + " of " + std::to_string(bytes) +
                          " bytes at offset " + std::to_string(offset) +
                          " runs past the end of a " + std::to_string(buffer_bytes) +
                          "-byte device buffer (" + context + ")");
}

}  // namespace

void DeviceBuffer::upload(const void* host, std::size_t bytes, std::size_t offset) const {
  check_range(bytes_, bytes, offset, "upload", context_);
  if (bytes == 0) {
    return;
  }
  const DriverApi& entry = api();
  check(entry.memcpy_htod(pointer_ + offset, host, bytes), "cuMemcpyHtoD", context_);
  // From pageable memory the copy may still be in flight when cuMemcpyHtoD returns, and kernels
  // on non-blocking streams do not wait for the legacy stream.
  check(entry.ctx_synchronize(nullptr), "cuCtxSynchronize", join_context(context_, "upload"));
}

void DeviceBuffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  check_range(bytes_, bytes, offset, "download", context_);
  if (bytes == 0) {
    return;
  }
  const DriverApi& entry = api();
  // cuMemcpyDtoH does not wait for kernels on non-blocking streams.
  check(entry.ctx_synchronize(nullptr), "cuCtxSynchronize", join_context(context_, "download"));
  check(entry.memcpy_dtoh(host, pointer_ + offset, bytes), "cuMemcpyDtoH", context_);
}

void DeviceBuffer::fill_u8(unsigned char value, CUstream stream) const {
  fill_elements(api().memset_d8_async, "cuMemsetD8Async", pointer_, bytes_, 1, value, stream,
                context_);
}

void DeviceBuffer::fill_u16(unsigned short value, CUstream stream) const {
  fill_elements(api().memset_d16_async, "cuMemsetD16Async", pointer_, bytes_, 2, value, stream,
                context_);
}

void DeviceBuffer::fill_u32(unsigned int value, CUstream stream) const {
  fill_elements(api().memset_d32_async, "cuMemsetD32Async", pointer_, bytes_, 4, value, stream,
                context_);
}

void copy_device_to_device(CUdeviceptr destination, CUdeviceptr source, std::size_t bytes,
                           CUstream stream, const std::string& context) {
  check(api().memcpy_dtod_async(destination, source, bytes, stream), "cuMemcpyDtoDAsync", context);
}

// --- Stream, Event ---------------------------------------------------------------------------

Stream::Stream() {
  check(api().stream_create(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate",
        "non-blocking stream");
}

Stream::~Stream() { destroy_stream(stream_); }

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    destroy_stream(stream_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::synchronize(const std::string& context) const {
  check(api().stream_synchronize(stream_), "cuStreamSynchronize", context);
}

bool Stream::is_capturing() const {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  check(api().stream_is_capturing(stream_, &status), "cuStreamIsCapturing", "stream");
  // An invalidated capture is still open until cuStreamEndCapture.
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

Event::Event() {
  check(api().event_create(&event_, CU_EVENT_DEFAULT), "cuEventCreate", "timing event");
}

Event::~Event() { destroy_event(event_); }

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy_event(event_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record(CUstream stream) const {
  check(api().event_record(event_, stream), "cuEventRecord", "timing event");
}

void Event::record_in_capture(CUstream stream) const {
  check(api().event_record_with_flags(event_, stream, CU_EVENT_RECORD_EXTERNAL),
        "cuEventRecordWithFlags",
        "timing event node (CU_EVENT_RECORD_EXTERNAL) in a graph capture");
}

void Event::synchronize() const {
  check(api().event_synchronize(event_), "cuEventSynchronize", "timing event");
}

float Event::elapsed_ms_since(const Event& start) const {
  float milliseconds = 0.0F;
  check(api().event_elapsed_time(&milliseconds, start.event_, event_), "cuEventElapsedTime",
        "timing event");
  return milliseconds;
}

// --- Graphs ----------------------------------------------------------------------------------

Graph::~Graph() { destroy_graph(graph_); }

Graph::Graph(Graph&& other) noexcept : graph_(std::exchange(other.graph_, nullptr)) {}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    destroy_graph(graph_);
    graph_ = std::exchange(other.graph_, nullptr);
  }
  return *this;
}

GraphExec Graph::instantiate(const std::string& context) const {
  CUgraphExec exec = nullptr;
  check(api().graph_instantiate(&exec, graph_, 0), "cuGraphInstantiateWithFlags", context);
  return GraphExec(exec);
}

GraphExec::~GraphExec() { destroy_graph_exec(exec_); }

GraphExec::GraphExec(GraphExec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}

GraphExec& GraphExec::operator=(GraphExec&& other) noexcept {
  if (this != &other) {
    destroy_graph_exec(exec_);
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

void GraphExec::launch(CUstream stream, const std::string& context) const {
  check(api().graph_launch(exec_, stream), "cuGraphLaunch", context);
}

void begin_capture(const Stream& stream, const std::string& context) {
  // Thread-local: other threads (compile workers) may keep calling the driver meanwhile.
  check(api().stream_begin_capture(stream.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
        "cuStreamBeginCapture", context);
}

Graph end_capture(const Stream& stream, const std::string& context) {
  CUgraph graph = nullptr;
  check(api().stream_end_capture(stream.get(), &graph), "cuStreamEndCapture", context);
  return Graph(graph);
}

void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned dynamic_smem, CUstream stream,
            void** args, const std::string& context, LaunchOrder order) {
  if (order == LaunchOrder::programmatic) {
    check(launch_unchecked(function, grid.x, grid.y, grid.z, block.x, dynamic_smem, stream, args,
                           order),
          "cuLaunchKernelEx (programmatic stream serialization)", context);
    return;
  }
  check(api().launch_kernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                            dynamic_smem, stream, args, nullptr),
        "cuLaunchKernel", context);
}

}  // namespace tuner::cuda

namespace tuner::cuda {

CUresult launch_unchecked(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                          unsigned block_x, unsigned dynamic_smem, CUstream stream, void** params,
                          LaunchOrder order) noexcept {
  if (order == LaunchOrder::stream) {
    return driver().api.launch_kernel(function, grid_x, grid_y, grid_z, block_x, 1, 1, dynamic_smem,
                                      stream, params, nullptr);
  }
  CUlaunchAttribute attribute{};
  attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attribute.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid_x;
  config.gridDimY = grid_y;
  config.gridDimZ = grid_z;
  config.blockDimX = block_x;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = dynamic_smem;
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return driver().api.launch_kernel_ex(&config, function, params, nullptr);
}

}  // namespace tuner::cuda
