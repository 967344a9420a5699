#include "core/error.hpp"

#include <cuda.h>

#include <utility>

namespace tuner {
namespace {

std::string failure_message(const std::string& call, const std::string& code_name,
                            const std::string& context) {
  std::string message = call + " failed: " + code_name;
  if (!context.empty()) {
    message += " (" + context + ")";
  }
  return message;
}

}  // namespace

CudaError::CudaError(std::string call, int code, std::string code_name, std::string context)
    : std::runtime_error(failure_message(call, code_name, context)),
      call_(std::move(call)),
      code_(code),
      code_name_(std::move(code_name)),
      context_(std::move(context)) {}

bool CudaError::is_sticky() const noexcept {
  // The driver reports these for every later call in the context ("sticky" errors): the context,
  // and with it every module and buffer, has to be thrown away.
  switch (code_) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
      return true;
    default:
      return false;
  }
}

// code_name and context are taken by value to match CudaError's constructor (error.hpp).
NvrtcError::NvrtcError(std::string call, int code,
                       std::string code_name,  // NOLINT(performance-unnecessary-value-param)
                       std::string context,    // NOLINT(performance-unnecessary-value-param)
                       std::string log)
    : std::runtime_error(failure_message(call, code_name, context) +
                         (log.empty() ? std::string() : "\n" + log)),
      call_(std::move(call)),
      code_(code),
      log_(std::move(log)) {}

}  // namespace tuner
