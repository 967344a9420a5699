// The C API of libtunedb_cuda over tunedb::cuda::Launcher (deploy/tunedb_cuda.h). Errors are kept
// per thread in a fixed buffer (c_errors), so a refused launch on the hot path does not allocate.
#include <string>

#include "core/cuda_driver.hpp"
#include "deploy/c_errors.hpp"
#include "deploy/launcher.hpp"
#include "deploy/tunedb_cuda.h"

struct tunedb_cuda_launcher {
  tunedb::cuda::Launcher launcher;
};

namespace {

using tunedb::cuda::c_api::fail;
using tunedb::cuda::c_api::fail_current;
using tunedb::cuda::c_api::succeed;

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

}  // namespace

extern "C" {

TUNEDB_CUDA_API int tunedb_cuda_open(const char* path, int device_ordinal,
                                     tunedb_cuda_launcher** out) {
  if (path == nullptr || out == nullptr) {
    return fail(TUNEDB_CUDA_ERROR_INPUT, "tunedb_cuda_open: path and out must not be NULL");
  }
  try {
    *out = new tunedb_cuda_launcher{tunedb::cuda::Launcher::open(path, device_ordinal)};
    return succeed();
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
    return succeed();
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
  if (const int checked = tunedb_cuda_check_args(family, args, args_size);
      checked != TUNEDB_CUDA_OK) {
    return checked;
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
  if (result.status == tunedb::cuda::ServeStatus::ok) return succeed();
  // A failed launch names the driver's code (CUDA_ERROR_...); only this error path allocates.
  const std::string code = result.status == tunedb::cuda::ServeStatus::launch_failed
                               ? " " + tuner::cuda::result_name(result.cuda_result)
                               : std::string();
  return fail(status_code(result.status), "tunedb_cuda_launch %s shape %s batch %d: %s: %s%s",
              family, shape, batch, tunedb::cuda::status_name(result.status), result.what,
              code.c_str());
}

TUNEDB_CUDA_API const char* tunedb_cuda_last_error(void) {
  return tunedb::cuda::c_api::last_error();
}

TUNEDB_CUDA_API void tunedb_cuda_close(tunedb_cuda_launcher* launcher) { delete launcher; }

}  // extern "C"
