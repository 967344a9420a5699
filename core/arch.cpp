#include "core/arch.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <stdexcept>

#include "core/cuda_driver.hpp"
#include "core/error.hpp"

namespace tuner {
namespace {

constexpr int kKiB = 1024;

const std::vector<int> kCarveoutsKbUpTo100 = {0, 8, 16, 32, 64, 100};
const std::vector<int> kCarveoutsKbUpTo164 = {0, 8, 16, 32, 64, 100, 132, 164};
const std::vector<int> kCarveoutsKbUpTo228 = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};

// Every table entry has 64 K registers per SM and per block, 255 per thread, 1024 threads per block
// and 1 KB of shared memory reserved per block; what varies is passed in.
Arch make_arch(int cc_major, int cc_minor, int max_blocks_per_sm, int max_warps_per_sm,
               int smem_per_sm_kb, int smem_optin_kb, const std::vector<int>& carveouts_kb) {
  Arch arch;
  arch.sm = cc_major * 10 + cc_minor;
  arch.name = "sm_" + std::to_string(arch.sm);
  arch.cc_major = cc_major;
  arch.cc_minor = cc_minor;
  arch.max_smem_per_block_optin_bytes = smem_optin_kb * kKiB;
  arch.max_smem_per_sm_bytes = smem_per_sm_kb * kKiB;
  arch.smem_carveouts_kb = carveouts_kb;
  arch.regs_per_sm = 65536;
  arch.max_regs_per_block = 65536;
  arch.max_blocks_per_sm = max_blocks_per_sm;
  arch.max_warps_per_sm = max_warps_per_sm;
  arch.max_threads_per_sm = max_warps_per_sm * arch.warp_size;
  return arch;
}

// Sources: CUDA C++ Programming Guide, "Compute Capabilities" appendix, table "Technical
// Specifications per Compute Capability" (blocks, warps, threads, registers per SM and per block,
// shared memory per SM and per block) and the per-architecture "Shared Memory" subsections
// (Compute Capability 8.x, 9.0, 10.0, 12.0: the carveout sizes and the opt-in maxima, "KB" being
// 1024 B); the toolkit's cuda_occupancy.h (carveout lists, blocks per SM by CC, 1 KB reserved per
// block from 8.0 on). Consistent with CUTLASS arch.h (sm120 smem capacity 101376 B).
std::vector<Arch> build_arch_table() {
  return {
      make_arch(8, 0, 32, 64, 164, 163, kCarveoutsKbUpTo164),
      make_arch(8, 6, 16, 48, 100, 99, kCarveoutsKbUpTo100),
      make_arch(8, 9, 24, 48, 100, 99, kCarveoutsKbUpTo100),
      make_arch(9, 0, 32, 64, 228, 227, kCarveoutsKbUpTo228),
      make_arch(10, 0, 32, 64, 228, 227, kCarveoutsKbUpTo228),
      make_arch(12, 0, 24, 48, 100, 99, kCarveoutsKbUpTo100),
  };
}

const Arch* find_by_sm(int sm) {
  for (const Arch& arch : arch_table()) {
    if (arch.sm == sm) {
      return &arch;
    }
  }
  return nullptr;
}

std::string lowercase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

int parse_digits(std::string_view digits) {
  int value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size()) {
    return -1;
  }
  return value;
}

// "sm_90" / "sm90" / "90" / "9.0" -> 90; -1 for anything else.
int parse_sm_number(std::string_view name) {
  const std::string lower = lowercase(name);
  std::string_view rest = lower;
  bool prefixed = false;
  for (std::string_view prefix : {"sm_", "sm"}) {
    if (rest.substr(0, prefix.size()) == prefix) {
      rest.remove_prefix(prefix.size());
      prefixed = true;
      break;
    }
  }
  if (all_digits(rest)) {
    return parse_digits(rest);
  }
  const std::size_t dot = rest.find('.');
  if (prefixed || dot == std::string_view::npos) {
    return -1;
  }
  const std::string_view major = rest.substr(0, dot);
  const std::string_view minor = rest.substr(dot + 1);
  if (!all_digits(major) || !all_digits(minor) || minor.size() != 1) {
    return -1;
  }
  const int major_value = parse_digits(major);
  return major_value < 0 ? -1 : major_value * 10 + parse_digits(minor);
}

struct OverridableField {
  const char* name;
  int Arch::*member;
  CUdevice_attribute attribute;
  bool zero_allowed;
};

const std::vector<OverridableField>& overridable_fields() {
  static const std::vector<OverridableField> fields = {
      {"max_smem_per_block_optin_bytes", &Arch::max_smem_per_block_optin_bytes,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, false},
      {"max_smem_per_sm_bytes", &Arch::max_smem_per_sm_bytes,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, false},
      {"reserved_smem_per_block_bytes", &Arch::reserved_smem_per_block_bytes,
       CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, true},
      {"regs_per_sm", &Arch::regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
       false},
      {"max_regs_per_block", &Arch::max_regs_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
       false},
      {"max_threads_per_block", &Arch::max_threads_per_block,
       CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, false},
      {"max_threads_per_sm", &Arch::max_threads_per_sm,
       CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, false},
      {"max_blocks_per_sm", &Arch::max_blocks_per_sm,
       CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, false},
  };
  return fields;
}

std::string joined_field_names() {
  std::string names;
  for (const OverridableField& field : overridable_fields()) {
    names += (names.empty() ? "" : ", ") + std::string(field.name);
  }
  return names;
}

const OverridableField& overridable_field(const std::string& name) {
  for (const OverridableField& field : overridable_fields()) {
    if (name == field.name) {
      return field;
    }
  }
  throw std::invalid_argument("apply_device_attributes: unknown field '" + name +
                              "': overridable fields are " + joined_field_names());
}

int checked_limit(const OverridableField& field, long long value) {
  const long long minimum = field.zero_allowed ? 0 : 1;
  if (value < minimum || value > INT_MAX) {
    throw std::invalid_argument("apply_device_attributes: device value " + std::to_string(value) +
                                " for " + field.name + " is not a usable limit (expected " +
                                std::to_string(minimum) + ".." + std::to_string(INT_MAX) + ")");
  }
  return static_cast<int>(value);
}

void set_field(Arch& arch, int Arch::*member, const std::string& name, int device_value,
               std::vector<ArchDisagreement>* disagreements) {
  if (arch.*member != device_value && disagreements != nullptr) {
    disagreements->push_back({name, arch.*member, device_value});
  }
  arch.*member = device_value;
}

// A carveout larger than the SM's shared memory cannot be configured; the SM's whole shared memory
// always can.
void fit_carveouts_to_smem_per_sm(Arch& arch) {
  const int smem_per_sm_kb = arch.max_smem_per_sm_bytes / kKiB;
  std::vector<int>& carveouts = arch.smem_carveouts_kb;
  carveouts.erase(std::remove_if(carveouts.begin(), carveouts.end(),
                                 [&](int kb) { return kb > smem_per_sm_kb; }),
                  carveouts.end());
  if (carveouts.empty() || carveouts.back() < smem_per_sm_kb) {
    carveouts.push_back(smem_per_sm_kb);
  }
}

}  // namespace

const std::vector<Arch>& arch_table() {
  static const std::vector<Arch> table = build_arch_table();
  return table;
}

std::string known_arch_names() {
  std::string names;
  for (const Arch& arch : arch_table()) {
    names += (names.empty() ? "" : ", ") + arch.name;
  }
  return names;
}

Arch arch_by_name(std::string_view name) {
  if (const Arch* arch = find_by_sm(parse_sm_number(name))) {
    return *arch;
  }
  throw InputError("unknown arch '" + std::string(name) + "': known archs are " +
                   known_arch_names() + " (use --arch sm_XX)");
}

const std::vector<std::string>& device_overridable_fields() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const OverridableField& field : overridable_fields()) {
      list.emplace_back(field.name);
    }
    return list;
  }();
  return names;
}

Arch apply_device_attributes(Arch table_entry,
                             const std::map<std::string, long long>& device_values,
                             std::vector<ArchDisagreement>* disagreements) {
  Arch arch = std::move(table_entry);
  for (const auto& [name, value] : device_values) {
    const OverridableField& field = overridable_field(name);
    set_field(arch, field.member, name, checked_limit(field, value), disagreements);
  }
  set_field(arch, &Arch::max_warps_per_sm, "max_warps_per_sm",
            arch.max_threads_per_sm / arch.warp_size, disagreements);
  fit_carveouts_to_smem_per_sm(arch);
  return arch;
}

Arch arch_from_device(int ordinal, std::vector<ArchDisagreement>* disagreements) {
  cuda::require_gpu();
  const cuda::DeviceInfo info = cuda::device_info(ordinal);
  const Arch* table_entry = find_by_sm(info.arch_sm());
  if (table_entry == nullptr) {
    throw InputError("device " + std::to_string(ordinal) + " (" + info.name +
                     ") has compute capability " + std::to_string(info.cc_major) + "." +
                     std::to_string(info.cc_minor) +
                     ", which the arch table lacks: known archs are " + known_arch_names() +
                     " (run on one of those, or add the arch to core/arch.cpp)");
  }
  std::map<std::string, long long> device_values;
  for (const OverridableField& field : overridable_fields()) {
    device_values[field.name] = cuda::device_attribute(field.attribute, ordinal);
  }
  Arch arch = apply_device_attributes(*table_entry, device_values, disagreements);
  arch.source = "device " + info.name;
  return arch;
}

std::string format_disagreements(const std::vector<ArchDisagreement>& disagreements) {
  std::string text;
  for (const ArchDisagreement& d : disagreements) {
    text += d.field + ": table " + std::to_string(d.table_value) + ", device " +
            std::to_string(d.device_value) + " (device value used)\n";
  }
  return text;
}

}  // namespace tuner
