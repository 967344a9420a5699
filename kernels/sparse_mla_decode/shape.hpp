#pragma once
// The problem shape of one sparse MLA decode call, validated once at the edge.
#include <string>
#include <string_view>

namespace tuner::smla_family {

enum class KvFormat { fp8_ds_mla = 0, bf16 = 1 };

std::string_view to_string(KvFormat format);
// Throws InputError naming the value and the accepted ones.
KvFormat parse_kv_format(std::string_view text);
int kv_row_bytes(KvFormat format);

struct Shape {
  int n_heads = 64;
  int attn_tp = 4;
  int topk = 2048;
  KvFormat kv_format = KvFormat::fp8_ds_mla;
  int page_size = 64;
  int batch = 1;

  int n_local_heads() const { return n_heads / attn_tp; }
};

// Throws InputError naming the field: heads not divisible by TP, page size not a multiple of 16,
// non-positive topk, batch, heads or TP.
void validate(const Shape& shape);

}  // namespace tuner::smla_family
