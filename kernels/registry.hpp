#pragma once
// The families this tuner knows, by name. The engine and the CLI find families only here.
#include <string>
#include <string_view>
#include <vector>

#include "core/family.hpp"

namespace tuner {

const std::vector<const Family*>& families();

// Throws InputError naming the unknown name and the known families.
const Family& family_by_name(std::string_view name);

// "sparse_mla_decode, fp8_gemm"
std::string family_names();

}  // namespace tuner
