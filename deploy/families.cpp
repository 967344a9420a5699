#include "deploy/families.hpp"

#include "kernels/sparse_mla_decode/serve.hpp"

namespace tunedb::cuda {

const tuner::DeployFamily* deploy_family_by_name(std::string_view name) noexcept {
  static const tuner::DeployFamily* const families[] = {
      &tuner::smla_family::deploy_family(),
  };
  for (const tuner::DeployFamily* family : families) {
    if (family->name == name) return family;
  }
  return nullptr;
}

}  // namespace tunedb::cuda
