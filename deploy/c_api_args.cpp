// The C API's family registry and argument-record description (deploy/tunedb_cuda.h): what a
// caller without a family's header (Python's ctypes, a generic C host) builds the record from.
// No GPU and no launcher needed.
#include <cstdio>

#include "deploy/c_errors.hpp"
#include "deploy/launcher.hpp"
#include "deploy/tunedb_cuda.h"

namespace {

using tunedb::cuda::c_api::fail;

// The family, or nullptr with an error naming the families there are.
const tuner::DeployFamily* find(const char* call, const char* family) noexcept {
  if (family == nullptr) {
    fail(TUNEDB_CUDA_ERROR_INPUT, "%s: family must not be NULL", call);
    return nullptr;
  }
  const tuner::DeployFamily* found = tunedb::cuda::deploy_family_by_name(family);
  if (found == nullptr) {
    char names[512] = "";
    std::size_t used = 0;
    for (const tuner::DeployFamily* each : tunedb::cuda::deploy_families()) {
      const int n = std::snprintf(names + used, sizeof names - used, "%s%.*s", used ? ", " : "",
                                  static_cast<int>(each->name.size()), each->name.data());
      if (n < 0 || used + static_cast<std::size_t>(n) >= sizeof names) break;
      used += static_cast<std::size_t>(n);
    }
    fail(TUNEDB_CUDA_ERROR_INPUT,
         "%s: libtunedb_cuda has no serving launcher for family '%s'; it launches: %s", call,
         family, names);
  }
  return found;
}

}  // namespace

extern "C" {

TUNEDB_CUDA_API const char* tunedb_cuda_family(size_t index) {
  const auto families = tunedb::cuda::deploy_families();
  return index < families.size() ? families[index]->name.data() : nullptr;
}

TUNEDB_CUDA_API int tunedb_cuda_args_layout(const char* family, size_t* args_size,
                                            size_t* field_count) {
  const tuner::DeployFamily* found = find("tunedb_cuda_args_layout", family);
  if (found == nullptr) return TUNEDB_CUDA_ERROR_INPUT;
  if (args_size != nullptr) *args_size = found->args_size;
  if (field_count != nullptr) *field_count = found->fields.size();
  return tunedb::cuda::c_api::succeed();
}

TUNEDB_CUDA_API int tunedb_cuda_args_field(const char* family, size_t index,
                                           tunedb_cuda_arg_field* field) {
  const tuner::DeployFamily* found = find("tunedb_cuda_args_field", family);
  if (found == nullptr) return TUNEDB_CUDA_ERROR_INPUT;
  if (field == nullptr || index >= found->fields.size()) {
    return fail(TUNEDB_CUDA_ERROR_INPUT,
                "tunedb_cuda_args_field: %s has %zu fields (index 0..%zu), asked for %zu%s", family,
                found->fields.size(), found->fields.size() - 1, index,
                field == nullptr ? " with a NULL field" : "");
  }
  const tuner::ArgField& declared = found->fields[index];
  *field = {declared.name, static_cast<int>(declared.kind), declared.offset};
  return tunedb::cuda::c_api::succeed();
}

TUNEDB_CUDA_API int tunedb_cuda_check_args(const char* family, const void* args, size_t args_size) {
  const tuner::DeployFamily* found = find("tunedb_cuda_check_args", family);
  if (found == nullptr) return TUNEDB_CUDA_ERROR_INPUT;
  if (args == nullptr || args_size != found->args_size) {
    return fail(TUNEDB_CUDA_ERROR_INPUT,
                "%s's argument record is %zu bytes, got %s of %zu bytes: pass the family's "
                "record (kernels/%s/serve_args.h) with sizeof it, or build it from "
                "tunedb_cuda_args_layout / tunedb_cuda_args_field",
                family, found->args_size, args == nullptr ? "NULL args" : "args_size", args_size,
                family);
  }
  return tunedb::cuda::c_api::succeed();
}

}  // extern "C"
