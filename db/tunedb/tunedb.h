/* tunedb C API: serving-side lookup of tuned kernel configurations from a frozen tuning DB (or a
 * tuning store). Links SQLite only. Thread safety: after tunedb_open, any number of threads may
 * call tunedb_lookup on one handle; tunedb_close must not race with them. Every pointer inside a
 * tunedb_result stays valid until tunedb_close. Lookup rules: see db/README.md (exact, bucket,
 * default, not_found). */
#ifndef TUNEDB_H
#define TUNEDB_H

/* This header must stay plain C (examples/serve/lookup.c is built as C99), so it keeps the C
 * headers and typedefs that clang-tidy's C++ checks would replace. */
#include <stddef.h> /* NOLINT(modernize-deprecated-headers) */
#include <stdint.h> /* NOLINT(modernize-deprecated-headers) */

#if defined(__GNUC__)
#define TUNEDB_API __attribute__((visibility("default")))
#else
#define TUNEDB_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* NOLINTBEGIN(modernize-use-using) */
typedef struct tunedb_handle tunedb_handle;
typedef struct tunedb_shape tunedb_shape; /* a shape resolved once: O(1) lookups by batch */

typedef enum tunedb_status {
  TUNEDB_OK = 0,
  TUNEDB_ERROR_INPUT = 1,   /* missing, foreign or newer file; a bad argument */
  TUNEDB_ERROR_DB = 2,      /* damaged file, checksum mismatch, SQLite failure */
  TUNEDB_ERROR_INTERNAL = 3 /* out of memory or another unexpected failure */
} tunedb_status;

typedef enum tunedb_how {
  TUNEDB_HOW_EXACT = 0,    /* tuned at this batch */
  TUNEDB_HOW_BUCKET = 1,   /* tuned at another batch of this shape (see tuned_batch) */
  TUNEDB_HOW_DEFAULT = 2,  /* nothing tuned: the family's default config (see miss) */
  TUNEDB_HOW_NOT_FOUND = 3 /* nothing tuned and no default known: n_params == 0 */
} tunedb_how;

typedef enum tunedb_miss {
  TUNEDB_MISS_NONE = 0,
  TUNEDB_MISS_ARCH_NOT_IN_DB = 1,   /* the file holds no winners for this arch */
  TUNEDB_MISS_FAMILY_NOT_IN_DB = 2, /* ... none for this family on this arch */
  TUNEDB_MISS_SHAPE_NOT_TUNED = 3   /* ... none for this shape */
} tunedb_miss;

typedef struct tunedb_param {
  const char* name;
  int64_t value;
} tunedb_param;

typedef struct tunedb_result {
  int how;                    /* tunedb_how */
  int miss;                   /* tunedb_miss */
  int tuned_batch;            /* 0 unless exact or bucket */
  int default_kept;           /* 1 when the sweep kept the default config (nothing beat it) */
  double median_us;           /* the winner's median time; NaN unless exact or bucket */
  int64_t run_id;             /* the sweep that found the winner; 0 unless exact or bucket */
  const tunedb_param* params; /* sorted by name */
  size_t n_params;
  const char* params_json;   /* canonical JSON of params; "" when not found */
  const char* measured_arch; /* where the winner was timed, e.g. "sm_90"; "" otherwise */
  const char* device_name;   /* e.g. "NVIDIA H200"; "" otherwise */
  const void* cubin;         /* frozen kernel image for params and arch, or NULL */
  size_t cubin_size;
  const char* kernel_names; /* mangled kernel names in the image, one per line; "" if none */
} tunedb_result;
/* NOLINTEND(modernize-use-using) */

/* Opens `path` (frozen files: read-only, immutable, checksum verified) and loads every winner. */
TUNEDB_API tunedb_status tunedb_open(const char* path, tunedb_handle** handle);

/* `arch` is the deployment arch the winners were tuned for (e.g. "sm_120"); `shape` the family's
 * canonical shape text: name=value pairs sorted by name, joined by ',' without spaces, e.g.
 * "block=128,k=7168,n=4096" (family names and dimensions are data to tunedb); `tuner query`
 * prints it for a model-level shape.
 * Fails (TUNEDB_ERROR_INPUT, see tunedb_last_error) only for NULL arguments or a shape that is not
 * canonical; never allocates otherwise. */
TUNEDB_API tunedb_status tunedb_lookup(const tunedb_handle* handle, const char* family,
                                       const char* arch, const char* shape, int batch,
                                       tunedb_result* result);

/* Resolves (family, arch, shape) once into a dense table indexed by batch: tunedb_shape_lookup
 * then answers exactly what tunedb_lookup answers (exact / bucket / default, the same pointers)
 * in O(1), without allocating. A batch above the largest tuned one gets the largest tuned batch's
 * config (how = BUCKET, tuned_batch < batch); an untuned shape the family default (how = DEFAULT,
 * miss says why). The shape must be closed (tunedb_shape_close) before its handle. Fails
 * (TUNEDB_ERROR_INPUT) for NULL arguments or a shape that is not canonical text. */
TUNEDB_API tunedb_status tunedb_shape_open(const tunedb_handle* handle, const char* family,
                                           const char* arch, const char* shape,
                                           tunedb_shape** resolved);

/* Fails (TUNEDB_ERROR_INPUT, see tunedb_last_error) for a NULL argument or batch < 1. */
TUNEDB_API tunedb_status tunedb_shape_lookup(const tunedb_shape* shape, int batch,
                                             tunedb_result* result);

/* The largest tuned batch of the shape (batches above it share its config); 0 when untuned. */
TUNEDB_API int tunedb_shape_largest_tuned_batch(const tunedb_shape* shape);

TUNEDB_API void tunedb_shape_close(tunedb_shape* shape);

/* Recomputes a frozen file's checksum and checks its schema. */
TUNEDB_API tunedb_status tunedb_verify(const char* path);

TUNEDB_API void tunedb_close(tunedb_handle* handle);

/* The message of this thread's last failed call ("" if none). Valid until the thread's next
 * tunedb call. */
TUNEDB_API const char* tunedb_last_error(void);

TUNEDB_API const char* tunedb_how_name(int how);
TUNEDB_API const char* tunedb_miss_name(int miss);

#ifdef __cplusplus
}
#endif

#endif /* TUNEDB_H */
