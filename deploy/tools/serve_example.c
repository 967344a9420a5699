/* libtunedb_cuda from C: open a frozen DB for GPU 0 and size the sparse MLA decode workspace for
 * the largest batch served. Usage: tunedb_cuda_c_example FROZEN.db [SHAPE] [MAX_BATCH]
 * Exit codes: the TUNEDB_CUDA_* code of the failing call (3: no GPU), 0 on success. */
#include <stdio.h>
#include <stdlib.h>

#include "deploy/tunedb_cuda.h"

int main(int argc, char** argv) {
  const char* shape =
      argc > 2 ? argv[2] : "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048";
  const int max_batch = argc > 3 ? atoi(argv[3]) : 512;
  tunedb_cuda_launcher* launcher = NULL;
  uint64_t workspace = 0;
  int rc;
  if (argc < 2) {
    fprintf(stderr, "usage: %s FROZEN.db [SHAPE] [MAX_BATCH]\n", argv[0]);
    return 2;
  }
  rc = tunedb_cuda_open(argv[1], 0, &launcher);
  if (rc != TUNEDB_CUDA_OK) {
    fprintf(stderr, "tunedb_cuda_open: %s\n", tunedb_cuda_last_error());
    return rc;
  }
  rc = tunedb_cuda_workspace_bytes(launcher, "sparse_mla_decode", shape, max_batch, &workspace);
  if (rc != TUNEDB_CUDA_OK) {
    fprintf(stderr, "tunedb_cuda_workspace_bytes: %s\n", tunedb_cuda_last_error());
  } else {
    printf("arch=%s workspace_bytes=%llu max_batch=%d\n", tunedb_cuda_arch(launcher),
           (unsigned long long)workspace, max_batch);
  }
  tunedb_cuda_close(launcher);
  return rc;
}
