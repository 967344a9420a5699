#include "db/tunedb/cubin_elf.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>

namespace tunedb {

namespace {

// ELF64 header offsets and the values NVIDIA's cubins use (checked against NVRTC's output for
// sm_80 ... sm_120 in tests/test_nvrtc.cpp).
constexpr std::size_t kHeaderSize = 64;
constexpr std::size_t kClassOffset = 4;       // EI_CLASS: 2 = 64-bit
constexpr std::size_t kDataOffset = 5;        // EI_DATA: 1 = little endian
constexpr std::size_t kAbiVersionOffset = 8;  // EI_ABIVERSION: 7 (CUDA < 12.8) or 8
constexpr std::size_t kMachineOffset = 18;    // e_machine: 190 = EM_CUDA
constexpr std::size_t kFlagsOffset = 48;      // e_flags
constexpr std::uint16_t kEmCuda = 190;
constexpr unsigned char kAbiV1 = 7;  // SM in e_flags bits 0-7
constexpr unsigned char kAbiV2 = 8;  // SM in e_flags bits 8-15

std::uint32_t read_le(const unsigned char* bytes, std::size_t count) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < count; ++i) value |= std::uint32_t{bytes[i]} << (8 * i);
  return value;
}

}  // namespace

std::optional<int> arch_sm(std::string_view arch) {
  if (!arch.starts_with("sm_")) return std::nullopt;
  arch.remove_prefix(3);
  if (arch.ends_with('a') || arch.ends_with('f')) arch.remove_suffix(1);
  int sm = 0;
  const auto [end, error] = std::from_chars(arch.data(), arch.data() + arch.size(), sm);
  if (error != std::errc() || end != arch.data() + arch.size() || sm <= 0) return std::nullopt;
  return sm;
}

std::string cubin_arch_problem(const void* bytes, std::size_t size, std::string_view arch) {
  const std::optional<int> wanted = arch_sm(arch);
  if (!wanted) return "has an arch '" + std::string(arch) + "' that is not of the form sm_XX";
  const auto* header = static_cast<const unsigned char*>(bytes);
  if (size < kHeaderSize || std::memcmp(header,
                                        "\x7f"
                                        "ELF",
                                        4) != 0) {
    return "is not an ELF file (no \\x7fELF magic in a 64-byte header)";
  }
  if (header[kClassOffset] != 2 || header[kDataOffset] != 1 ||
      read_le(header + kMachineOffset, 2) != kEmCuda) {
    return "is not a 64-bit little-endian CUDA ELF image (e_machine " +
           std::to_string(read_le(header + kMachineOffset, 2)) + ", wanted 190 = EM_CUDA)";
  }
  const std::uint32_t flags = read_le(header + kFlagsOffset, 4);
  const unsigned char abi = header[kAbiVersionOffset];
  int sm = 0;
  if (abi == kAbiV1) {
    sm = static_cast<int>(flags & 0xffU);
  } else if (abi == kAbiV2) {
    sm = static_cast<int>((flags >> 8) & 0xffU);
  } else {
    return "has CUDA ELF ABI version " + std::to_string(abi) + " (this build reads 7 and 8)";
  }
  if (sm != *wanted) {
    return "is an ELF image for sm_" + std::to_string(sm) + ", not " + std::string(arch);
  }
  return {};
}

std::vector<char> stand_in_cubin(std::string_view arch, std::string_view payload) {
  std::array<char, kHeaderSize> header{};
  std::memcpy(header.data(),
              "\x7f"
              "ELF",
              4);
  header[kClassOffset] = 2;
  header[kDataOffset] = 1;
  header[6] = 1;     // EI_VERSION
  header[7] = 0x41;  // EI_OSABI, as NVRTC writes it
  header[kAbiVersionOffset] = static_cast<char>(kAbiV2);
  header[16] = 2;  // e_type: ET_EXEC
  header[kMachineOffset] = static_cast<char>(kEmCuda & 0xff);
  const std::uint32_t flags = (static_cast<std::uint32_t>(arch_sm(arch).value_or(0)) << 8) | 2U;
  for (std::size_t i = 0; i < 4; ++i)
    header[kFlagsOffset + i] = static_cast<char>(flags >> (8 * i));
  std::string image(header.data(), header.size());
  image.append(payload);
  return {image.begin(), image.end()};
}

}  // namespace tunedb
