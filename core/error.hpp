#pragma once
// Errors that carry the failing call, the result code's name and the context (config, arch, file).
#include <stdexcept>
#include <string>

namespace tuner {

// A failed CUDA Driver API call. `call` is the API name, `code_name` the CUresult's name
// (CUDA_ERROR_ILLEGAL_ADDRESS), `context` what was being done (config, arch, buffer).
class CudaError : public std::runtime_error {
 public:
  CudaError(std::string call, int code, std::string code_name, std::string context);
  const std::string& call() const noexcept { return call_; }
  int code() const noexcept { return code_; }
  const std::string& code_name() const noexcept { return code_name_; }
  const std::string& context() const noexcept { return context_; }
  // True for errors after which the CUDA context is unusable (illegal address, launch failure,
  // timeout...): the caller must drop the context, or the worker process must restart.
  bool is_sticky() const noexcept;

 private:
  std::string call_;
  int code_;
  std::string code_name_;
  std::string context_;
};

// The CUDA driver library or a GPU is not present on this machine.
class NoGpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// NVRTC failed. For a compile failure `log` holds NVRTC's whole program log.
class NvrtcError : public std::runtime_error {
 public:
  NvrtcError(std::string call, int code, std::string code_name, std::string context,
             std::string log);
  const std::string& call() const noexcept { return call_; }
  int code() const noexcept { return code_; }
  const std::string& log() const noexcept { return log_; }

 private:
  std::string call_;
  int code_;
  std::string log_;
};

// Bad user input (a shape field, a CLI value, a file): the CLI maps it to exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tuner
