/* The argument record of one fp8 block-scaled GEMM launch from a frozen DB (libtunedb_cuda):
 * C[m][n] bf16 = (A * a_scale) x (B * b_scale)^T with m the batch. Plain C, installed with the
 * family's client header (client.h); serve.cpp declares the same fields by name
 * (DeployFamily::fields). Every pointer is a device address on the launcher's device; all
 * tensors are contiguous, row-major; a and b 16-byte aligned (the kernel copies 16 B at a time). */
#ifndef TUNEDB_FP8_GEMM_ARGS_H
#define TUNEDB_FP8_GEMM_ARGS_H

#include <stdint.h> /* NOLINT(modernize-deprecated-headers): plain C */

#ifdef __cplusplus
extern "C" {
#endif

/* NOLINTBEGIN(modernize-use-using) */
typedef struct tunedb_fp8_gemm_args {
  uint64_t a;               /* [m][k] e4m3 (activations) */
  uint64_t a_scale;         /* [m][k / 128] fp32: one scale per row and 128-column group */
  uint64_t b;               /* [n][k] e4m3 (the weight, K contiguous) */
  uint64_t b_scale;         /* [n / 128][k / 128] fp32: one scale per 128x128 block */
  uint64_t c;               /* [m][n] bf16 (the output) */
  uint64_t workspace;       /* split-K partials: tunedb_cuda_workspace_bytes for the largest m */
  uint64_t workspace_bytes; /* its size; a launch that needs more is refused, nothing enqueued */
} tunedb_fp8_gemm_args;
/* NOLINTEND(modernize-use-using) */

#ifdef __cplusplus
}
#endif

#endif
