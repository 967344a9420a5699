/* The argument record of one sparse MLA decode launch from a frozen DB (libtunedb_cuda): plain C,
 * installed with the family's client header (client.h). serve.cpp declares the same fields by
 * name (DeployFamily::fields), which is what callers without this header build the record from.
 * Every pointer is a device address on the launcher's device; all tensors are contiguous,
 * row-major. */
#ifndef TUNEDB_SPARSE_MLA_DECODE_ARGS_H
#define TUNEDB_SPARSE_MLA_DECODE_ARGS_H

#include <stdint.h> /* NOLINT(modernize-deprecated-headers): plain C */

#ifdef __cplusplus
extern "C" {
#endif

/* NOLINTBEGIN(modernize-use-using) */
typedef struct tunedb_sparse_mla_decode_args {
  uint64_t q;               /* [batch][local_heads][576] bf16 */
  uint64_t kv;              /* [tokens][row bytes]: 656 for fp8_ds_mla, 1152 for bf16 */
  uint64_t indices;         /* [batch][topk] int32 flat token ids, -1 = invalid */
  uint64_t out;             /* [batch][local_heads][512] bf16 */
  uint64_t lse;             /* [batch][local_heads] fp32, natural log */
  uint64_t workspace;       /* split partials: tunedb_cuda_workspace_bytes for the largest batch */
  uint64_t workspace_bytes; /* its size; a launch that needs more is refused, nothing enqueued */
  float softmax_scale;
} tunedb_sparse_mla_decode_args;
/* NOLINTEND(modernize-use-using) */

#ifdef __cplusplus
}
#endif

#endif
