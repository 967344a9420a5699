/* tunedb_cuda: launch the winners of a frozen tuning DB from C (libtunedb_cuda.so). Depends on the
 * CUDA driver (loaded at run time) and tunedb; no tuner, no compiler. Each family's launch takes
 * its argument record: a plain C struct (kernels/<family>/serve_args.h, with a typed wrapper in
 * kernels/<family>/client.h), or one built at run time from the fields the family declares
 * (tunedb_cuda_args_layout / tunedb_cuda_args_field: name, kind, offset).
 *
 *   tunedb_cuda_launcher* l;
 *   if (tunedb_cuda_open("frozen.db", 0, &l) != TUNEDB_CUDA_OK)
 *     fprintf(stderr, "%s\n", tunedb_cuda_last_error());
 *   uint64_t ws_bytes;            // at start-up, for the largest batch served
 *   tunedb_cuda_workspace_bytes(l, FAMILY, SHAPE, 512, &ws_bytes);
 *   family_args a = {..., ws, ws_bytes, ...};   // the family's record
 *   tunedb_cuda_report r;         // hot path: allocation-free, graph-capturable
 *   tunedb_cuda_launch(l, FAMILY, SHAPE, batch, &a, sizeof a, stream, &r);
 *   tunedb_cuda_close(l);
 *
 * The calling thread must have the device's primary context current (as the CUDA runtime and
 * PyTorch leave it); tunedb_cuda_open makes it current on the opening thread. */
#ifndef TUNEDB_CUDA_H
#define TUNEDB_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tunedb_cuda_launcher tunedb_cuda_launcher;

enum {
  TUNEDB_CUDA_OK = 0,
  TUNEDB_CUDA_ERROR_DB = 1,        /* damaged DB, CUDA failure at open */
  TUNEDB_CUDA_ERROR_INPUT = 2,     /* bad path, no cubin for the arch, bad shape/batch/args */
  TUNEDB_CUDA_ERROR_NO_GPU = 3,    /* no driver or no device */
  TUNEDB_CUDA_ERROR_WORKSPACE = 4, /* the workspace is smaller than the launch needs */
  TUNEDB_CUDA_ERROR_LAUNCH = 5     /* cuLaunchKernel failed (code in the report) */
};

/* What a launch ran. Strings are static or live as long as the launcher. */
typedef struct tunedb_cuda_report {
  const char* how;         /* "exact", "bucket", "default" */
  const char* miss;        /* "none", "arch_not_in_db", "family_not_in_db", "shape_not_tuned" */
  int tuned_batch;         /* the winner's batch, 0 for the default */
  const char* params_json; /* the config launched */
  int cuda_result;         /* CUresult of a failed launch, else 0 */
} tunedb_cuda_report;

int tunedb_cuda_open(const char* path, int device_ordinal, tunedb_cuda_launcher** out);
const char* tunedb_cuda_arch(const tunedb_cuda_launcher* launcher);
int tunedb_cuda_workspace_bytes(const tunedb_cuda_launcher* launcher, const char* family,
                                const char* shape, int max_batch, uint64_t* bytes);
/* `stream` is a CUstream (or cudaStream_t); `args` points to the family's argument record of
 * `args_size` bytes (checked as tunedb_cuda_check_args does). */
int tunedb_cuda_launch(const tunedb_cuda_launcher* launcher, const char* family, const char* shape,
                       int batch, const void* args, size_t args_size, void* stream,
                       tunedb_cuda_report* report);

/* A family's argument record, described (no GPU and no launcher needed). */
enum {
  TUNEDB_CUDA_ARG_POINTER = 1, /* uint64_t device address */
  TUNEDB_CUDA_ARG_U64 = 2,     /* uint64_t (a size in bytes) */
  TUNEDB_CUDA_ARG_I32 = 3,     /* int32_t */
  TUNEDB_CUDA_ARG_F32 = 4      /* float */
};
typedef struct tunedb_cuda_arg_field {
  const char* name; /* static */
  int kind;         /* TUNEDB_CUDA_ARG_* */
  size_t offset;    /* byte offset in the record */
} tunedb_cuda_arg_field;
/* The name of the index-th family this library launches; NULL past the last. */
const char* tunedb_cuda_family(size_t index);
/* The family's record size (the args_size tunedb_cuda_launch wants) and its number of fields. */
int tunedb_cuda_args_layout(const char* family, size_t* args_size, size_t* field_count);
/* Field `index` (0 .. field_count - 1) of the family's record. */
int tunedb_cuda_args_field(const char* family, size_t index, tunedb_cuda_arg_field* field);
/* Whether `args` / `args_size` is a record of `family` (what tunedb_cuda_launch checks first). */
int tunedb_cuda_check_args(const char* family, const void* args, size_t args_size);
/* The last error of this thread ("" after success); valid until the next call on the thread. */
const char* tunedb_cuda_last_error(void);
void tunedb_cuda_close(tunedb_cuda_launcher* launcher);

#ifdef __cplusplus
}
#endif

#endif
