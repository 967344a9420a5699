#pragma once
// Reads the target architecture out of a cubin's ELF header, so that a frozen file never hands
// out an image built for another GPU than its row says. Public: the tuner and tests use it too.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunedb {

// "sm_120" -> 120, "sm_90a" -> 90; nullopt for anything else.
std::optional<int> arch_sm(std::string_view arch);

// What is wrong with `bytes` as a cubin for `arch` ("sm_120"): empty when it is a 64-bit
// little-endian CUDA ELF (e_machine EM_CUDA) whose e_flags name that SM; otherwise a phrase such
// as "is not an ELF file (no \x7fELF magic)" or "is an ELF image for sm_90, not sm_120".
std::string cubin_arch_problem(const void* bytes, std::size_t size, std::string_view arch);

// The smallest header cubin_arch_problem accepts for `arch` (CUDA ELF ABI version 8), followed by
// `payload`: stand-in images for tests, fixtures and benchmarks, which never launch them.
std::vector<char> stand_in_cubin(std::string_view arch, std::string_view payload);

}  // namespace tunedb
