#pragma once
// A family's launch contract: a fingerprint of what its frozen cubins and the serving launcher
// must agree on (the parameter blocks the host packs, the layout and schedule it computes for the
// kernels). `tuner freeze` records it with each cubin; libtunedb_cuda refuses a cubin recorded
// under another contract, because a kernel that reads its parameter block under another layout
// runs without an error and writes wrong output. Generated at build time from the family's files
// (cmake/LaunchContracts.cmake), so any edit to them changes it.
#include <string_view>

namespace tuner {

// "sha256:<64 hex digits>", or empty for a name that is no family with a serving launcher.
std::string_view launch_contract(std::string_view family) noexcept;

}  // namespace tuner
