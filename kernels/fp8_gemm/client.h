/* Serving the fp8 block-scaled GEMM from a frozen DB with libtunedb_cuda: the family's argument
 * record (serve_args.h) and a typed wrapper over the generic tunedb_cuda_launch. Installed under
 * include/tunedb/kernels/fp8_gemm/; a serving application includes it (nothing of the tuner
 * does: it is the one header under kernels/ that looks up, at deploy/tunedb_cuda.h).
 *
 *   tunedb_fp8_gemm_args a = {a, a_scale, b, b_scale, c, ws, ws_bytes};
 *   tunedb_cuda_launch_fp8_gemm(launcher, "block=128,k=7168,n=4096", m, &a, stream, &report);
 *
 * From C++, Launcher::launch(TUNEDB_FP8_GEMM, shape, m, a, stream) does the same. */
#ifndef TUNEDB_FP8_GEMM_CLIENT_H
#define TUNEDB_FP8_GEMM_CLIENT_H

#include "deploy/tunedb_cuda.h"
#include "kernels/fp8_gemm/serve_args.h"

#define TUNEDB_FP8_GEMM "fp8_gemm"

static inline int tunedb_cuda_launch_fp8_gemm(const tunedb_cuda_launcher* launcher,
                                              const char* shape, int m,
                                              const tunedb_fp8_gemm_args* args, void* stream,
                                              tunedb_cuda_report* report) {
  return tunedb_cuda_launch(launcher, TUNEDB_FP8_GEMM, shape, m, args, sizeof(tunedb_fp8_gemm_args),
                            stream, report);
}

#endif
