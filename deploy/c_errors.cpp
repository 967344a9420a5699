#include "deploy/c_errors.hpp"

#include <cstdarg>
#include <cstdio>
#include <exception>

#include "core/error.hpp"
#include "deploy/launcher.hpp"
#include "deploy/tunedb_cuda.h"

namespace tunedb::cuda::c_api {

namespace {

thread_local char message[2048] = "";

}  // namespace

int fail(int code, const char* format, ...) noexcept {
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  return code;
}

int fail_current() noexcept {
  try {
    throw;
  } catch (const DbInputError& error) {
    return fail(TUNEDB_CUDA_ERROR_INPUT, "%s", error.what());
  } catch (const tuner::NoGpuError& error) {
    return fail(TUNEDB_CUDA_ERROR_NO_GPU, "%s", error.what());
  } catch (const std::exception& error) {
    return fail(TUNEDB_CUDA_ERROR_DB, "%s", error.what());
  } catch (...) {
    return fail(TUNEDB_CUDA_ERROR_DB, "unknown error");
  }
}

int succeed() noexcept {
  message[0] = '\0';
  return TUNEDB_CUDA_OK;
}

const char* last_error() noexcept { return message; }

}  // namespace tunedb::cuda::c_api
