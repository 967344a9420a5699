// Device memory: DeviceBuffer (allocation, upload, download, fills) and device-to-device copies.
#include <stdexcept>
#include <string>
#include <utility>

#include "core/cuda_driver.hpp"
#include "core/cuda_driver_api.hpp"

namespace tuner::cuda {
namespace {

void free_memory(CUdeviceptr pointer, const std::string& context) noexcept {
  if (pointer != 0) {
    warn_if_failed(driver().api.mem_free(pointer), "cuMemFree", context);
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

}  // namespace tuner::cuda
