/* tunedb_c_example FROZEN_DB FAMILY SHAPE: looks up FAMILY's SHAPE (its canonical shape text, as
 * `tuner query` prints it) for sm_120 at a few batch sizes through the C API (one-call lookups,
 * then the shape resolved once and looked up by batch) and prints what it found. The family and
 * shape are arguments: libtunedb knows no kernel family, and neither does its example.
 * Compiled as C99: proves db/tunedb/tunedb.h is plain C. */
#include <stdio.h>

#include "db/tunedb/tunedb.h"

int main(int argc, char** argv) {
  tunedb_handle* db = NULL;
  const int batches[] = {1, 8, 16, 512};
  const char* family = NULL;
  const char* shape_text = NULL;
  size_t i = 0;
  if (argc != 4) {
    fprintf(stderr,
            "usage: tunedb_c_example FROZEN_DB FAMILY SHAPE\n"
            "  SHAPE: the family's canonical shape text, e.g. 'heads=16,topk=2048' (the text "
            "`tuner query` prints)\n");
    return 2;
  }
  family = argv[2];
  shape_text = argv[3];
  if (tunedb_open(argv[1], &db) != TUNEDB_OK) {
    fprintf(stderr, "tunedb_c_example: error: %s\n", tunedb_last_error());
    return 1;
  }
  for (i = 0; i < sizeof batches / sizeof batches[0]; ++i) {
    tunedb_result result;
    size_t p = 0;
    if (tunedb_lookup(db, family, "sm_120", shape_text, batches[i], &result) != TUNEDB_OK) {
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
    if (tunedb_shape_open(db, family, "sm_120", shape_text, &shape) != TUNEDB_OK ||
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
