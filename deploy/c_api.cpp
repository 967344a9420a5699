// The C API of libtunedb_cuda over tunedb::cuda::Launcher. Errors are kept per thread in a fixed
// buffer, so a refused launch on the hot path does not allocate either.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "deploy/launcher.hpp"
#include "deploy/tunedb_cuda.h"

struct tunedb_cuda_launcher {
  tunedb::cuda::Launcher launcher;
};

namespace {

thread_local char last_error[2048] = "";

int fail(int code, const char* message) noexcept {
  std::snprintf(last_error, sizeof last_error, "%s", message);
  return code;
}

int status_code(tunedb::cuda::ServeStatus status) noexcept {
  using tunedb::cuda::ServeStatus;
  switch (status) {
    case ServeStatus::ok:
      return TUNEDB_CUDA_OK;
    case ServeStatus::workspace_too_small:
      return TUNEDB_CUDA_ERROR_WORKSPACE;
    case ServeStatus::launch_failed:
      return TUNEDB_CUDA_ERROR_LAUNCH;
    default:
      return TUNEDB_CUDA_ERROR_INPUT;
  }
}

// Maps the exception in flight to a code and its message.
int fail_current() noexcept {
  try {
    throw;
  } catch (const tunedb::DbInputError& error) {
    return fail(TUNEDB_CUDA_ERROR_INPUT, error.what());
  } catch (const tuner::NoGpuError& error) {
    return fail(TUNEDB_CUDA_ERROR_NO_GPU, error.what());
  } catch (const std::exception& error) {
    return fail(TUNEDB_CUDA_ERROR_DB, error.what());
  } catch (...) {
    return fail(TUNEDB_CUDA_ERROR_DB, "unknown error");
  }
}

}  // namespace

extern "C" {

TUNEDB_CUDA_API int tunedb_cuda_open(const char* path, int device_ordinal,
                                     tunedb_cuda_launcher** out) {
  if (path == nullptr || out == nullptr) {
    return fail(TUNEDB_CUDA_ERROR_INPUT, "tunedb_cuda_open: path and out must not be NULL");
  }
  try {
    *out = new tunedb_cuda_launcher{tunedb::cuda::Launcher::open(path, device_ordinal)};
    last_error[0] = '\0';
    return TUNEDB_CUDA_OK;
  } catch (...) {
    *out = nullptr;
    return fail_current();
  }
}

TUNEDB_CUDA_API const char* tunedb_cuda_arch(const tunedb_cuda_launcher* launcher) {
  return launcher == nullptr ? "" : launcher->launcher.arch().c_str();
}

TUNEDB_CUDA_API int tunedb_cuda_workspace_bytes(const tunedb_cuda_launcher* launcher,
                                                const char* family, const char* shape,
                                                int max_batch, uint64_t* bytes) {
  if (launcher == nullptr || family == nullptr || shape == nullptr || bytes == nullptr) {
    return fail(TUNEDB_CUDA_ERROR_INPUT, "tunedb_cuda_workspace_bytes: NULL argument");
  }
  try {
    *bytes = launcher->launcher.workspace_bytes(family, shape, max_batch);
    last_error[0] = '\0';
    return TUNEDB_CUDA_OK;
  } catch (...) {
    return fail_current();
  }
}

TUNEDB_CUDA_API int tunedb_cuda_launch(const tunedb_cuda_launcher* launcher, const char* family,
                                       const char* shape, int batch, const void* args,
                                       size_t args_size, void* stream, tunedb_cuda_report* report) {
  if (launcher == nullptr || family == nullptr || shape == nullptr) {
    return fail(TUNEDB_CUDA_ERROR_INPUT, "tunedb_cuda_launch: NULL argument");
  }
  tunedb::cuda::LaunchReport ran;
  const tunedb::cuda::ServeResult result = launcher->launcher.launch(
      family, shape, batch, args, args_size, static_cast<CUstream>(stream), &ran);
  if (report != nullptr) {
    report->how = ran.how_text;
    report->miss = ran.miss_text;
    report->tuned_batch = ran.tuned_batch;
    report->params_json = ran.config == nullptr ? "" : ran.config->params_json.data();
    report->cuda_result = static_cast<int>(result.cuda_result);
  }
  if (result.status == tunedb::cuda::ServeStatus::ok) {
    last_error[0] = '\0';
    return TUNEDB_CUDA_OK;
  }
  // A failed launch names the driver's code (CUDA_ERROR_...); only this error path allocates.
  const std::string code = result.status == tunedb::cuda::ServeStatus::launch_failed
                               ? " " + tuner::cuda::result_name(result.cuda_result)
                               : std::string();
  std::snprintf(last_error, sizeof last_error, "tunedb_cuda_launch %s shape %s batch %d: %s: %s%s",
                family, shape, batch, tunedb::cuda::status_name(result.status), result.what,
                code.c_str());
  return status_code(result.status);
}

TUNEDB_CUDA_API int tunedb_cuda_launch_sparse_mla_decode(const tunedb_cuda_launcher* launcher,
                                                         const char* shape, int batch,
                                                         const tunedb_sparse_mla_decode_args* args,
                                                         void* stream, tunedb_cuda_report* report) {
  return tunedb_cuda_launch(launcher, "sparse_mla_decode", shape, batch, args,
                            sizeof(tunedb_sparse_mla_decode_args), stream, report);
}

TUNEDB_CUDA_API const char* tunedb_cuda_last_error(void) { return last_error; }

TUNEDB_CUDA_API void tunedb_cuda_close(tunedb_cuda_launcher* launcher) { delete launcher; }

}  // extern "C"
