#pragma once
// The resource limits of one compute capability: a built-in table (the CUDA C++ Programming Guide's
// figures) that a present device can override with its own cuDeviceGetAttribute answers.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tuner {

struct Arch {
  std::string name;  // "sm_90"
  int sm = 0;        // 90
  int cc_major = 0;
  int cc_minor = 0;

  int max_smem_per_block_optin_bytes = 0;    // what a block may request after opting in
  int max_smem_per_sm_bytes = 0;             // the largest carveout
  int reserved_smem_per_block_bytes = 1024;  // taken by the system from every block (CC >= 8.0)
  int smem_alloc_granularity_bytes = 128;
  // The L1/shared splits an SM can be configured to, ascending; the last is the whole SM.
  std::vector<int> smem_carveouts_kb;

  int regs_per_sm = 0;
  int max_regs_per_block = 0;
  int max_regs_per_thread = 255;
  int reg_alloc_unit_per_warp = 256;  // registers are handed to a warp in units of this many
  int reg_sub_partitions = 4;         // each SM's register file is split evenly among these

  int max_threads_per_block = 1024;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int max_warps_per_sm = 0;
  int warp_size = 32;

  std::string source = "table";  // "table", or "device <name>" when a GPU's answers were applied
};

// The built-in entries: sm_80, sm_86, sm_89, sm_90, sm_100, sm_120, in that order.
const std::vector<Arch>& arch_table();

// Accepts "sm_90", "sm90", "90" and "9.0" (case-insensitive prefix). Throws InputError naming the
// input and listing the known archs.
Arch arch_by_name(std::string_view name);

// "sm_80, sm_86, sm_89, sm_90, sm_100, sm_120"
std::string known_arch_names();

// One field where the table and the device differ; the device's value is the one used.
struct ArchDisagreement {
  std::string field;
  long long table_value = 0;
  long long device_value = 0;
};

// The Arch fields a device may override, keyed as in `device_values` below:
// max_smem_per_block_optin_bytes, max_smem_per_sm_bytes, reserved_smem_per_block_bytes,
// regs_per_sm, max_regs_per_block, max_threads_per_block, max_threads_per_sm, max_blocks_per_sm.
const std::vector<std::string>& device_overridable_fields();

// Replaces the table entry's fields with the device's values (keys: Arch field names, from
// device_overridable_fields()) and appends one ArchDisagreement per differing field. Derived
// fields follow: max_warps_per_sm = max_threads_per_sm / warp_size (reported when it changes), and
// the carveout list is cut to the device's shared memory per SM (which is added as the last
// carveout when the table's list stops short of it). `source` is left as it was.
// Throws std::invalid_argument for an unknown key or a value that cannot be a limit (negative, zero
// for anything but the reserved bytes, or over INT_MAX).
Arch apply_device_attributes(Arch table_entry,
                             const std::map<std::string, long long>& device_values,
                             std::vector<ArchDisagreement>* disagreements);

// The table entry for the device's compute capability with the device's own limits applied;
// `source` becomes "device <name>". Throws NoGpuError without a GPU, InputError when the device's
// compute capability has no table entry, CudaError when an attribute query fails.
Arch arch_from_device(int ordinal, std::vector<ArchDisagreement>* disagreements);

// One line per disagreement: "max_blocks_per_sm: table 32, device 24 (device value used)".
// Empty for none.
std::string format_disagreements(const std::vector<ArchDisagreement>& disagreements);

}  // namespace tuner
