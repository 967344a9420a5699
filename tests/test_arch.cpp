#include "core/arch.hpp"

#include <doctest/doctest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cuda_driver.hpp"
#include "core/error.hpp"

using tuner::Arch;
using tuner::ArchDisagreement;

namespace {

const char* const kUnknownArchSuffix =
    "': known archs are sm_80, sm_86, sm_89, sm_90, sm_100, sm_120 (use --arch sm_XX)";

// What the H200 reports (hardware.md), for the sm_90 entry.
std::map<std::string, long long> h200_values() {
  return {{"max_smem_per_block_optin_bytes", 232448},
          {"max_smem_per_sm_bytes", 233472},
          {"reserved_smem_per_block_bytes", 1024},
          {"regs_per_sm", 65536},
          {"max_regs_per_block", 65536},
          {"max_threads_per_block", 1024},
          {"max_threads_per_sm", 2048},
          {"max_blocks_per_sm", 32}};
}

}  // namespace

TEST_CASE("arch_table lists sm_80, sm_86, sm_89, sm_90, sm_100, sm_120 in order") {
  std::vector<std::string> names;
  std::vector<int> sms;
  for (const Arch& arch : tuner::arch_table()) {
    names.push_back(arch.name);
    sms.push_back(arch.sm);
    CHECK(arch.sm == arch.cc_major * 10 + arch.cc_minor);
    CHECK(arch.max_warps_per_sm * arch.warp_size == arch.max_threads_per_sm);
    // The opt-in maximum plus the reserved KB is the whole SM's shared memory on every listed arch.
    CHECK(arch.max_smem_per_block_optin_bytes + arch.reserved_smem_per_block_bytes ==
          arch.max_smem_per_sm_bytes);
    CHECK(arch.smem_carveouts_kb.back() * 1024 == arch.max_smem_per_sm_bytes);
    CHECK(arch.source == "table");
  }
  CHECK(names == std::vector<std::string>{"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"});
  CHECK(sms == std::vector<int>{80, 86, 89, 90, 100, 120});
  CHECK(tuner::known_arch_names() == "sm_80, sm_86, sm_89, sm_90, sm_100, sm_120");
}

TEST_CASE("arch table: every sm_90 field") {
  const Arch arch = tuner::arch_by_name("sm_90");
  CHECK(arch.name == "sm_90");
  CHECK(arch.sm == 90);
  CHECK(arch.cc_major == 9);
  CHECK(arch.cc_minor == 0);
  CHECK(arch.max_smem_per_block_optin_bytes == 232448);  // 227 KB
  CHECK(arch.max_smem_per_sm_bytes == 233472);           // 228 KB
  CHECK(arch.reserved_smem_per_block_bytes == 1024);
  CHECK(arch.smem_alloc_granularity_bytes == 128);
  CHECK(arch.smem_carveouts_kb == std::vector<int>{0, 8, 16, 32, 64, 100, 132, 164, 196, 228});
  CHECK(arch.regs_per_sm == 65536);
  CHECK(arch.max_regs_per_block == 65536);
  CHECK(arch.max_regs_per_thread == 255);
  CHECK(arch.reg_alloc_unit_per_warp == 256);
  CHECK(arch.reg_sub_partitions == 4);
  CHECK(arch.max_threads_per_block == 1024);
  CHECK(arch.max_threads_per_sm == 2048);
  CHECK(arch.max_blocks_per_sm == 32);
  CHECK(arch.max_warps_per_sm == 64);
  CHECK(arch.warp_size == 32);
  CHECK(arch.source == "table");
}

TEST_CASE("arch table: every sm_120 field") {
  const Arch arch = tuner::arch_by_name("sm_120");
  CHECK(arch.name == "sm_120");
  CHECK(arch.sm == 120);
  CHECK(arch.cc_major == 12);
  CHECK(arch.cc_minor == 0);
  CHECK(arch.max_smem_per_block_optin_bytes == 101376);  // 99 KB
  CHECK(arch.max_smem_per_sm_bytes == 102400);           // 100 KB
  CHECK(arch.reserved_smem_per_block_bytes == 1024);
  CHECK(arch.smem_alloc_granularity_bytes == 128);
  CHECK(arch.smem_carveouts_kb == std::vector<int>{0, 8, 16, 32, 64, 100});
  CHECK(arch.regs_per_sm == 65536);
  CHECK(arch.max_regs_per_block == 65536);
  CHECK(arch.max_regs_per_thread == 255);
  CHECK(arch.reg_alloc_unit_per_warp == 256);
  CHECK(arch.reg_sub_partitions == 4);
  CHECK(arch.max_threads_per_block == 1024);
  CHECK(arch.max_threads_per_sm == 1536);
  CHECK(arch.max_blocks_per_sm == 24);
  CHECK(arch.max_warps_per_sm == 48);
  CHECK(arch.warp_size == 32);
  CHECK(arch.source == "table");
}

TEST_CASE("arch table: the other entries' distinguishing limits") {
  const Arch sm80 = tuner::arch_by_name("sm_80");
  CHECK(sm80.max_smem_per_block_optin_bytes == 166912);  // 163 KB
  CHECK(sm80.max_smem_per_sm_bytes == 167936);           // 164 KB
  CHECK(sm80.max_blocks_per_sm == 32);
  CHECK(sm80.max_warps_per_sm == 64);
  const Arch sm86 = tuner::arch_by_name("sm_86");
  CHECK(sm86.max_blocks_per_sm == 16);
  CHECK(sm86.max_warps_per_sm == 48);
  CHECK(sm86.max_smem_per_block_optin_bytes == 101376);
  const Arch sm89 = tuner::arch_by_name("sm_89");
  CHECK(sm89.max_blocks_per_sm == 24);
  CHECK(sm89.max_warps_per_sm == 48);
  const Arch sm100 = tuner::arch_by_name("sm_100");
  CHECK(sm100.max_smem_per_block_optin_bytes == 232448);
  CHECK(sm100.smem_carveouts_kb == tuner::arch_by_name("sm_90").smem_carveouts_kb);
  CHECK(sm100.max_blocks_per_sm == 32);
}

TEST_CASE("arch_by_name accepts sm_90, sm90, 90, 9.0 and an upper-case prefix") {
  for (const char* form : {"sm_90", "sm90", "90", "9.0", "SM_90"}) {
    CAPTURE(form);
    CHECK(tuner::arch_by_name(form).name == "sm_90");
  }
  for (const char* form : {"sm_120", "sm120", "120", "12.0"}) {
    CAPTURE(form);
    CHECK(tuner::arch_by_name(form).name == "sm_120");
  }
  CHECK(tuner::arch_by_name("10.0").name == "sm_100");
  CHECK(tuner::arch_by_name("8.6").name == "sm_86");
}

TEST_CASE("arch_by_name names the bad input and lists the known archs") {
  CHECK_THROWS_WITH_AS(tuner::arch_by_name("sm_75"),
                       (std::string("unknown arch 'sm_75") + kUnknownArchSuffix).c_str(),
                       tuner::InputError);
  // Near misses are rejected rather than guessed at: a lone major, a dotted form with a prefix,
  // an arch-specific suffix, a two-digit minor, garbage and the empty string.
  for (const char* bad : {"9", "sm_9.0", "sm_90a", "9.00", "hopper", "", "sm_", "9."}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(tuner::arch_by_name(bad),
                         (std::string("unknown arch '") + bad + kUnknownArchSuffix).c_str(),
                         tuner::InputError);
  }
}

TEST_CASE("apply_device_attributes: a device agreeing with the table changes nothing") {
  const Arch table = tuner::arch_by_name("sm_90");
  std::vector<ArchDisagreement> disagreements;
  const Arch applied = tuner::apply_device_attributes(table, h200_values(), &disagreements);
  CHECK(disagreements.empty());
  CHECK(applied.max_smem_per_sm_bytes == table.max_smem_per_sm_bytes);
  CHECK(applied.smem_carveouts_kb == table.smem_carveouts_kb);
  CHECK(applied.max_warps_per_sm == 64);
  CHECK(applied.source == "table");
  CHECK(tuner::format_disagreements(disagreements).empty());
}

TEST_CASE("apply_device_attributes: the device's values win and each difference is reported") {
  std::map<std::string, long long> device = h200_values();
  device["max_blocks_per_sm"] = 24;
  device["max_threads_per_sm"] = 1536;
  std::vector<ArchDisagreement> disagreements;
  const Arch applied =
      tuner::apply_device_attributes(tuner::arch_by_name("sm_90"), device, &disagreements);
  CHECK(applied.max_blocks_per_sm == 24);
  CHECK(applied.max_threads_per_sm == 1536);
  CHECK(applied.max_warps_per_sm == 48);  // derived from the threads
  CHECK(applied.max_regs_per_block == 65536);
  REQUIRE(disagreements.size() == 3);
  // Fields in key order, then the derived warps.
  CHECK(disagreements[0].field == "max_blocks_per_sm");
  CHECK(disagreements[0].table_value == 32);
  CHECK(disagreements[0].device_value == 24);
  CHECK(disagreements[1].field == "max_threads_per_sm");
  CHECK(disagreements[1].table_value == 2048);
  CHECK(disagreements[1].device_value == 1536);
  CHECK(disagreements[2].field == "max_warps_per_sm");
  CHECK(disagreements[2].table_value == 64);
  CHECK(disagreements[2].device_value == 48);
  CHECK(tuner::format_disagreements(disagreements) ==
        "max_blocks_per_sm: table 32, device 24 (device value used)\n"
        "max_threads_per_sm: table 2048, device 1536 (device value used)\n"
        "max_warps_per_sm: table 64, device 48 (device value used)\n");
}

TEST_CASE("apply_device_attributes: the carveout list follows the device's shared memory per SM") {
  const Arch sm90 = tuner::arch_by_name("sm_90");
  std::vector<ArchDisagreement> disagreements;
  const Arch smaller =
      tuner::apply_device_attributes(sm90, {{"max_smem_per_sm_bytes", 102400}}, &disagreements);
  CHECK(smaller.smem_carveouts_kb == std::vector<int>{0, 8, 16, 32, 64, 100});
  REQUIRE(disagreements.size() == 1);
  CHECK(disagreements[0].field == "max_smem_per_sm_bytes");
  CHECK(disagreements[0].table_value == 233472);
  CHECK(disagreements[0].device_value == 102400);
  // A size between listed carveouts becomes the last carveout; no pointer for the report is fine.
  const Arch odd =
      tuner::apply_device_attributes(sm90, {{"max_smem_per_sm_bytes", 200 * 1024}}, nullptr);
  CHECK(odd.smem_carveouts_kb == std::vector<int>{0, 8, 16, 32, 64, 100, 132, 164, 196, 200});
}

TEST_CASE("apply_device_attributes rejects an unknown field and an unusable value") {
  const Arch sm90 = tuner::arch_by_name("sm_90");
  CHECK_THROWS_WITH_AS(
      tuner::apply_device_attributes(sm90, {{"max_smem", 1}}, nullptr),
      "apply_device_attributes: unknown field 'max_smem': overridable fields are "
      "max_smem_per_block_optin_bytes, max_smem_per_sm_bytes, reserved_smem_per_block_bytes, "
      "regs_per_sm, max_regs_per_block, max_threads_per_block, max_threads_per_sm, "
      "max_blocks_per_sm",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(tuner::apply_device_attributes(sm90, {{"regs_per_sm", 0}}, nullptr),
                       "apply_device_attributes: device value 0 for regs_per_sm is not a usable "
                       "limit (expected 1..2147483647)",
                       std::invalid_argument);
  // Zero reserved bytes is a real answer, not an error.
  CHECK(tuner::apply_device_attributes(sm90, {{"reserved_smem_per_block_bytes", 0}}, nullptr)
            .reserved_smem_per_block_bytes == 0);
  CHECK(tuner::device_overridable_fields().size() == 8);
}

TEST_CASE("arch_from_device: NoGpuError without a GPU, the device's CC with one") {
  std::string why_not;
  std::vector<ArchDisagreement> disagreements;
  if (!tuner::cuda::gpu_available(&why_not)) {
    CHECK_THROWS_AS(tuner::arch_from_device(0, &disagreements), tuner::NoGpuError);
    return;
  }
  const tuner::cuda::DeviceInfo info = tuner::cuda::device_info(0);
  const Arch arch = tuner::arch_from_device(0, &disagreements);
  CHECK(arch.sm == info.arch_sm());
  CHECK(arch.source == "device " + info.name);
  CHECK(arch.max_smem_per_block_optin_bytes > 0);
  MESSAGE("device 0 vs table:\n" << tuner::format_disagreements(disagreements));
}
