// The C API over tunedb::TuningDb: exceptions stop here and become a status plus a thread-local
// message.
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "db/tunedb/freeze.hpp"
#include "db/tunedb/shape.hpp"
#include "db/tunedb/shape_handle.hpp"
#include "db/tunedb/tunedb.h"
#include "db/tunedb/tunedb.hpp"

struct tunedb_handle {
  tunedb::TuningDb db;
  std::vector<std::vector<tunedb_param>> params;  // by Config::index, names point into db
};

// A shape resolved once (tunedb_shape_open); points into its tunedb_handle.
struct tunedb_shape {
  const tunedb_handle* owner = nullptr;
  tunedb::ShapeHandle handle;
};

namespace {

thread_local std::string last_error;

template <class Body>
tunedb_status guarded(Body body) noexcept {
  try {
    last_error.clear();
    body();
    return TUNEDB_OK;
  } catch (const tunedb::DbInputError& error) {
    last_error = error.what();
    return TUNEDB_ERROR_INPUT;
  } catch (const tunedb::DbError& error) {
    last_error = error.what();
    return TUNEDB_ERROR_DB;
  } catch (const std::bad_alloc&) {
    last_error = "tunedb: out of memory";
    return TUNEDB_ERROR_INTERNAL;
  } catch (const std::exception& error) {
    last_error = error.what();
    return TUNEDB_ERROR_INTERNAL;
  } catch (...) {
    last_error = "tunedb: unknown exception";
    return TUNEDB_ERROR_INTERNAL;
  }
}

tunedb_status null_argument(const char* function, const char* argument) noexcept {
  try {
    last_error = std::string(function) + ": " + argument + " is NULL";
  } catch (...) {
  }
  return TUNEDB_ERROR_INPUT;
}

// Allocates only on this error path; a canonical shape costs no allocation.
tunedb_status not_canonical(const char* shape) noexcept {
  try {
    last_error = std::string("tunedb_lookup: shape '") + shape + "' is not canonical (" +
                 tunedb::shape_problem(shape).value_or("?") +
                 "): write name=value pairs sorted by name, joined by ',' without spaces, e.g. "
                 "'m=64,n=2048' (the text `tuner query` prints)";
  } catch (...) {
  }
  return TUNEDB_ERROR_INPUT;
}

// The C view of a lookup: pointers into the handle's params arrays and interned strings.
void fill_result(const tunedb_handle& handle, const tunedb::Lookup& found,
                 tunedb_result* result) noexcept {
  // String views in a Lookup point at interned NUL-terminated strings (or are empty literals).
  const auto c_str = [](std::string_view text) { return text.empty() ? "" : text.data(); };
  *result = tunedb_result{};
  result->how = static_cast<int>(found.how);
  result->miss = static_cast<int>(found.miss);
  result->tuned_batch = found.tuned_batch;
  result->default_kept = found.default_kept ? 1 : 0;
  result->median_us = found.median_us;
  result->run_id = found.run_id;
  result->params_json = "";
  if (found.config != nullptr) {
    const auto& params = handle.params[found.config->index];
    result->params = params.data();
    result->n_params = params.size();
    result->params_json = c_str(found.config->params_json);
  }
  result->measured_arch = c_str(found.measured_arch);
  result->device_name = c_str(found.device_name);
  result->kernel_names = "";
  if (found.cubin != nullptr) {
    result->cubin = found.cubin->bytes.data();
    result->cubin_size = found.cubin->bytes.size();
    result->kernel_names = c_str(found.cubin->kernel_names_text);
  }
}

// Allocates only on this error path.
tunedb_status not_a_batch(int batch) noexcept {
  try {
    last_error = "tunedb_shape_lookup: batch " + std::to_string(batch) +
                 " is not a batch size: pass a batch of 1 or more";
  } catch (...) {
  }
  return TUNEDB_ERROR_INPUT;
}

}  // namespace

extern "C" {

tunedb_status tunedb_open(const char* path, tunedb_handle** handle) {
  if (handle == nullptr) return null_argument("tunedb_open", "handle");
  *handle = nullptr;
  if (path == nullptr) return null_argument("tunedb_open", "path");
  return guarded([&] {
    auto opened = std::make_unique<tunedb_handle>(tunedb_handle{tunedb::TuningDb::open(path), {}});
    opened->params.resize(opened->db.config_count());
    for (std::size_t index = 0; index < opened->db.config_count(); ++index) {
      for (const tunedb::Param& param : opened->db.config(index).params) {
        // Names are interned NUL-terminated strings owned by the TuningDb.
        opened->params[index].push_back({param.name.data(), param.value});
      }
    }
    *handle = opened.release();
  });
}

tunedb_status tunedb_lookup(const tunedb_handle* handle, const char* family, const char* arch,
                            const char* shape, int batch, tunedb_result* result) {
  if (handle == nullptr) return null_argument("tunedb_lookup", "handle");
  if (family == nullptr) return null_argument("tunedb_lookup", "family");
  if (arch == nullptr) return null_argument("tunedb_lookup", "arch");
  if (shape == nullptr) return null_argument("tunedb_lookup", "shape");
  if (result == nullptr) return null_argument("tunedb_lookup", "result");
  if (!tunedb::is_canonical_shape(shape)) return not_canonical(shape);
  fill_result(*handle, handle->db.lookup(family, arch, shape, batch), result);
  last_error.clear();
  return TUNEDB_OK;
}

tunedb_status tunedb_shape_open(const tunedb_handle* handle, const char* family, const char* arch,
                                const char* shape, tunedb_shape** resolved) {
  if (resolved == nullptr) return null_argument("tunedb_shape_open", "resolved");
  *resolved = nullptr;
  if (handle == nullptr) return null_argument("tunedb_shape_open", "handle");
  if (family == nullptr) return null_argument("tunedb_shape_open", "family");
  if (arch == nullptr) return null_argument("tunedb_shape_open", "arch");
  if (shape == nullptr) return null_argument("tunedb_shape_open", "shape");
  return guarded([&] {
    auto opened = std::make_unique<tunedb_shape>();
    opened->owner = handle;
    opened->handle = tunedb::resolve_shape(handle->db, family, arch, shape);
    *resolved = opened.release();
  });
}

tunedb_status tunedb_shape_lookup(const tunedb_shape* shape, int batch, tunedb_result* result) {
  if (shape == nullptr) return null_argument("tunedb_shape_lookup", "shape");
  if (result == nullptr) return null_argument("tunedb_shape_lookup", "result");
  if (batch < 1) return not_a_batch(batch);
  fill_result(*shape->owner, shape->handle.lookup(batch), result);
  last_error.clear();
  return TUNEDB_OK;
}

int tunedb_shape_largest_tuned_batch(const tunedb_shape* shape) {
  return shape == nullptr ? 0 : shape->handle.largest_tuned_batch();
}

void tunedb_shape_close(tunedb_shape* shape) { delete shape; }

tunedb_status tunedb_verify(const char* path) {
  if (path == nullptr) return null_argument("tunedb_verify", "path");
  return guarded([&] { tunedb::verify(path); });
}

void tunedb_close(tunedb_handle* handle) { delete handle; }

const char* tunedb_last_error(void) { return last_error.c_str(); }

const char* tunedb_how_name(int how) {
  if (how < TUNEDB_HOW_EXACT || how > TUNEDB_HOW_NOT_FOUND) return "unknown";
  return tunedb::how_name(static_cast<tunedb::How>(how));
}

const char* tunedb_miss_name(int miss) {
  if (miss < TUNEDB_MISS_NONE || miss > TUNEDB_MISS_SHAPE_NOT_TUNED) return "unknown";
  return tunedb::miss_name(static_cast<tunedb::Miss>(miss));
}

}  // extern "C"
