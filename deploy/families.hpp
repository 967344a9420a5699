#pragma once
// The deploy registry: the families the serving launcher can launch. Adding a family: its
// kernels/<family>/serve.cpp and one line in families.cpp.
#include <string_view>

#include "core/deploy_family.hpp"

namespace tunedb::cuda {

// nullptr when no family of that name has a serving launcher. Allocation-free.
const tuner::DeployFamily* deploy_family_by_name(std::string_view name) noexcept;

}  // namespace tunedb::cuda
