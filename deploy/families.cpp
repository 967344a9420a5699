// The deploy registry: the families libtunedb_cuda launches. Adding a family: its
// kernels/<family>/serve.cpp and one line here.
#include "deploy/launcher.hpp"
#include "kernels/fp8_gemm/serve.hpp"
#include "kernels/sparse_mla_decode/serve.hpp"

namespace tunedb::cuda {

std::span<const tuner::DeployFamily* const> deploy_families() noexcept {
  static const tuner::DeployFamily* const families[] = {
      &tuner::smla_family::deploy_family(),
      &tuner::fp8_gemm::deploy_family(),
  };
  return families;
}

const tuner::DeployFamily* deploy_family_by_name(std::string_view name) noexcept {
  for (const tuner::DeployFamily* family : deploy_families()) {
    if (family->name == name) return family;
  }
  return nullptr;
}

}  // namespace tunedb::cuda
