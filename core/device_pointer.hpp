#pragma once
// A device address (a CUdeviceptr, or the 64-bit integer a C ABI carries) as the typed pointer a
// kernel's parameter block holds. Header-only and free of the driver, so that the serving
// library's geometry code (kernels/<family>/deploy.cpp) can use it too.
#include <cstdint>

namespace tuner {

template <typename T>
T* device_pointer(std::uint64_t address) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(address));
}

}  // namespace tuner
