/* libtunedb_cuda from C: the families the library launches with their argument records (no GPU
 * needed), then a frozen DB opened for GPU 0 and, given a family and shape, its workspace for the
 * largest batch served. Usage: tunedb_cuda_c_example FROZEN.db [FAMILY SHAPE [MAX_BATCH]]
 * Exit codes: the TUNEDB_CUDA_* code of the failing call (3: no GPU), 0 on success. */
#include <stdio.h>
#include <stdlib.h>

#include "deploy/tunedb_cuda.h"

static const char* kind_name(int kind) {
  switch (kind) {
    case TUNEDB_CUDA_ARG_POINTER:
      return "pointer";
    case TUNEDB_CUDA_ARG_U64:
      return "u64";
    case TUNEDB_CUDA_ARG_I32:
      return "i32";
    case TUNEDB_CUDA_ARG_F32:
      return "f32";
    default:
      return "?";
  }
}

/* One line per family: "family NAME: N bytes: field kind @offset, ...". */
static int print_families(void) {
  size_t index, field;
  const char* family;
  for (index = 0; (family = tunedb_cuda_family(index)) != NULL; ++index) {
    size_t size = 0, count = 0;
    tunedb_cuda_arg_field f;
    if (tunedb_cuda_args_layout(family, &size, &count) != TUNEDB_CUDA_OK) return 2;
    printf("family %s: %zu bytes:", family, size);
    for (field = 0; field < count; ++field) {
      if (tunedb_cuda_args_field(family, field, &f) != TUNEDB_CUDA_OK) return 2;
      printf("%s %s %s @%zu", field ? "," : "", f.name, kind_name(f.kind), f.offset);
    }
    printf("\n");
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* family = argc > 3 ? argv[2] : NULL;
  const char* shape = argc > 3 ? argv[3] : NULL;
  const int max_batch = argc > 4 ? atoi(argv[4]) : 512;
  tunedb_cuda_launcher* launcher = NULL;
  uint64_t workspace = 0;
  int rc;
  if (argc < 2 || argc == 3) {
    fprintf(stderr, "usage: %s FROZEN.db [FAMILY SHAPE [MAX_BATCH]]\n", argv[0]);
    return 2;
  }
  if (print_families() != 0) {
    fprintf(stderr, "argument records: %s\n", tunedb_cuda_last_error());
    return 2;
  }
  rc = tunedb_cuda_open(argv[1], 0, &launcher);
  if (rc != TUNEDB_CUDA_OK) {
    fprintf(stderr, "tunedb_cuda_open: %s\n", tunedb_cuda_last_error());
    return rc;
  }
  printf("arch=%s\n", tunedb_cuda_arch(launcher));
  if (family != NULL) {
    rc = tunedb_cuda_workspace_bytes(launcher, family, shape, max_batch, &workspace);
    if (rc != TUNEDB_CUDA_OK) {
      fprintf(stderr, "tunedb_cuda_workspace_bytes: %s\n", tunedb_cuda_last_error());
    } else {
      printf("%s workspace_bytes=%llu max_batch=%d\n", family, (unsigned long long)workspace,
             max_batch);
    }
  }
  tunedb_cuda_close(launcher);
  return rc;
}
