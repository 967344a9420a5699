// Devices: their count, attributes and DeviceInfo, and Context (the device's primary context).
#include <string>
#include <utility>

#include "core/cuda_driver.hpp"
#include "core/cuda_driver_api.hpp"

namespace tuner::cuda {
namespace {

void release_primary_context(CUdevice device, CUcontext context) noexcept {
  if (context == nullptr) {
    return;
  }
  warn_if_failed(driver().api.primary_ctx_release(device), "cuDevicePrimaryCtxRelease",
                 "device " + std::to_string(device));
}

}  // namespace

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

}  // namespace tuner::cuda
