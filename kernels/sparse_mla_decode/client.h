/* Serving sparse MLA decode from a frozen DB with libtunedb_cuda: the family's argument record
 * (serve_args.h) and a typed wrapper over the generic tunedb_cuda_launch. Installed under
 * include/tunedb/kernels/sparse_mla_decode/; a serving application includes it (nothing of the
 * tuner does: it is the one header under kernels/ that looks up, at deploy/tunedb_cuda.h).
 *
 *   tunedb_sparse_mla_decode_args a = {q, kv, indices, out, lse, ws, ws_bytes, softmax_scale};
 *   tunedb_cuda_launch_sparse_mla_decode(launcher, SHAPE, batch, &a, stream, &report);
 *
 * From C++, Launcher::launch(TUNEDB_SPARSE_MLA_DECODE, shape, batch, a, stream) does the same. */
#ifndef TUNEDB_SPARSE_MLA_DECODE_CLIENT_H
#define TUNEDB_SPARSE_MLA_DECODE_CLIENT_H

#include "deploy/tunedb_cuda.h"
#include "kernels/sparse_mla_decode/serve_args.h"

#define TUNEDB_SPARSE_MLA_DECODE "sparse_mla_decode"

static inline int tunedb_cuda_launch_sparse_mla_decode(const tunedb_cuda_launcher* launcher,
                                                       const char* shape, int batch,
                                                       const tunedb_sparse_mla_decode_args* args,
                                                       void* stream, tunedb_cuda_report* report) {
  return tunedb_cuda_launch(launcher, TUNEDB_SPARSE_MLA_DECODE, shape, batch, args,
                            sizeof(tunedb_sparse_mla_decode_args), stream, report);
}

#endif
