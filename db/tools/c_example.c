/* tunedb_c_example FROZEN_DB: looks up the fixture shape at a few batch sizes through the C API
 * (one-call lookups, then a shape resolved once and looked up by batch) and prints what it found.
 * Compiled as C99: proves db/tunedb/tunedb.h is plain C. */
#include <stdio.h>

#include "db/tunedb/tunedb.h"

int main(int argc, char** argv) {
  tunedb_handle* db = NULL;
  const int batches[] = {1, 8, 16, 512};
  size_t i = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: tunedb_c_example FROZEN_DB\n");
    return 2;
  }
  if (tunedb_open(argv[1], &db) != TUNEDB_OK) {
    fprintf(stderr, "tunedb_c_example: error: %s\n", tunedb_last_error());
    return 1;
  }
  for (i = 0; i < sizeof batches / sizeof batches[0]; ++i) {
    tunedb_result result;
    size_t p = 0;
    /* The family's canonical shape text (64 heads / TP 4 = 16 local heads). */
    if (tunedb_lookup(db, "sparse_mla_decode", "sm_120",
                      "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048", batches[i],
                      &result) != TUNEDB_OK) {
      fprintf(stderr, "tunedb_c_example: error: %s\n", tunedb_last_error());
      tunedb_close(db);
      return 1;
    }
    printf("batch=%d how=%s tuned_batch=%d median_us=%.1f measured_on=%s (%s) cubin=%zu bytes:",
           batches[i], tunedb_how_name(result.how), result.tuned_batch, result.median_us,
           result.device_name, result.measured_arch, result.cubin_size);
    for (p = 0; p < result.n_params; ++p) {
      printf(" %s=%lld", result.params[p].name, (long long)result.params[p].value);
    }
    printf("\n");
  }
  /* The serving path: resolve the shape once, then O(1) lookups per captured batch. */
  {
    tunedb_shape* shape = NULL;
    tunedb_result result;
    if (tunedb_shape_open(db, "sparse_mla_decode", "sm_120",
                          "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048",
                          &shape) != TUNEDB_OK ||
        tunedb_shape_lookup(shape, 512, &result) != TUNEDB_OK) {
      fprintf(stderr, "tunedb_c_example: error: %s\n", tunedb_last_error());
      tunedb_shape_close(shape);
      tunedb_close(db);
      return 1;
    }
    printf("shape handle: batch=512 how=%s tuned_batch=%d (largest tuned %d)\n",
           tunedb_how_name(result.how), result.tuned_batch,
           tunedb_shape_largest_tuned_batch(shape));
    tunedb_shape_close(shape);
  }
  tunedb_close(db);
  return 0;
}
