#include "kernels/registry.hpp"

#include "core/error.hpp"
#include "kernels/fp8_gemm/family.hpp"
#include "kernels/sparse_mla_decode/family.hpp"

namespace tuner {

const std::vector<const Family*>& families() {
  static const std::vector<const Family*> all = {
      &smla_family::family(),
      &fp8_gemm::family(),
  };
  return all;
}

std::string family_names() {
  std::string names;
  for (const Family* family : families()) names += (names.empty() ? "" : ", ") + family->name;
  return names;
}

const Family& family_by_name(std::string_view name) {
  for (const Family* family : families()) {
    if (family->name == name) return *family;
  }
  throw InputError("unknown family '" + std::string(name) + "': known families are " +
                   family_names() + " (use --family " + families().front()->name + ")");
}

}  // namespace tuner
