#include "kernels/sparse_mla_decode/shape.hpp"

#include "core/error.hpp"
#include "templates/sparse_mla_decode/layout.h"

namespace tuner::smla_family {

std::string_view to_string(KvFormat format) {
  return format == KvFormat::fp8_ds_mla ? "fp8_ds_mla" : "bf16";
}

KvFormat parse_kv_format(std::string_view text) {
  if (text == "fp8_ds_mla") return KvFormat::fp8_ds_mla;
  if (text == "bf16") return KvFormat::bf16;
  throw InputError("unknown KV format '" + std::string(text) +
                   "': use --kv fp8_ds_mla (656 B/token) or --kv bf16 (1152 B/token)");
}

int kv_row_bytes(KvFormat format) { return smla::kv_row_bytes(static_cast<int>(format)); }

namespace {
void require_positive(int value, const char* field) {
  if (value <= 0) {
    throw InputError(std::string(field) + " must be positive, got " + std::to_string(value));
  }
}
}  // namespace

void validate(const Shape& shape) {
  require_positive(shape.n_heads, "heads");
  require_positive(shape.attn_tp, "tp");
  require_positive(shape.topk, "topk");
  require_positive(shape.batch, "batch");
  require_positive(shape.page_size, "page size");
  if (shape.n_heads % shape.attn_tp != 0) {
    throw InputError("heads " + std::to_string(shape.n_heads) + " is not divisible by tp " +
                     std::to_string(shape.attn_tp) +
                     ": each attention-TP rank needs a whole number of heads");
  }
  if (shape.page_size % 16 != 0) {
    throw InputError("page size " + std::to_string(shape.page_size) +
                     " is not a multiple of 16: pages hold whole 16-token tiles");
  }
}

}  // namespace tuner::smla_family
