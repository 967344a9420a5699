#include "kernels/sparse_mla_decode/traffic.hpp"

#include <algorithm>

#include "templates/sparse_mla_decode/layout.h"

namespace tuner::smla_family {

double bytes_must_move(const Shape& shape, const std::vector<std::int32_t>& indices) {
  std::vector<std::int32_t> distinct;
  distinct.reserve(indices.size());
  for (std::int32_t index : indices) {
    if (index >= 0) distinct.push_back(index);
  }
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const double rows = static_cast<double>(shape.batch) * shape.n_local_heads();
  return rows * smla::kHeadDim * 2 +
         static_cast<double>(distinct.size()) * kv_row_bytes(shape.kv_format) +
         static_cast<double>(indices.size()) * 4 + rows * (smla::kLatentDim * 2 + 4);
}

}  // namespace tuner::smla_family
