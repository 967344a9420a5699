#include "core/occupancy.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <stdexcept>

namespace tuner {
namespace {

long long round_up(long long value, long long unit) { return (value + unit - 1) / unit * unit; }

int clamp_to_int(long long value) { return static_cast<int>(std::min<long long>(value, INT_MAX)); }

void validate(const BlockResources& block) {
  if (block.threads_per_block < 1) {
    throw std::invalid_argument("compute_occupancy: threads_per_block is " +
                                std::to_string(block.threads_per_block) +
                                "; it must be at least 1");
  }
  if (block.registers_per_thread < 0) {
    throw std::invalid_argument("compute_occupancy: registers_per_thread is " +
                                std::to_string(block.registers_per_thread) + "; it must be >= 0");
  }
  if (block.smem_bytes_per_block < 0) {
    throw std::invalid_argument("compute_occupancy: smem_bytes_per_block is " +
                                std::to_string(block.smem_bytes_per_block) + "; it must be >= 0");
  }
}

// Registers are allocated per warp in units of reg_alloc_unit_per_warp, and each of the SM's
// sub-partitions holds whole warps from its own quarter of the register file.
int blocks_by_registers(const Arch& arch, int regs_per_warp, int warps_per_block) {
  const int regs_per_sub_partition = arch.regs_per_sm / arch.reg_sub_partitions;
  const int warps_that_fit = arch.reg_sub_partitions * (regs_per_sub_partition / regs_per_warp);
  return warps_that_fit / warps_per_block;
}

// The hardware checks a block's registers as if its warps were spread over every sub-partition,
// so the warp count is rounded up to a multiple of the sub-partitions (cuda_occupancy.h).
long long regs_assumed_per_block(const Arch& arch, int regs_per_warp, int warps_per_block) {
  return static_cast<long long>(regs_per_warp) * round_up(warps_per_block, arch.reg_sub_partitions);
}

void add_failure(std::string& failures, const std::string& reason) {
  failures += (failures.empty() ? "" : "; ") + reason;
}

// Sets the failing limits to 0 and says why the block cannot launch.
void check_launch(const Arch& arch, const BlockResources& block, Occupancy& occupancy) {
  const std::string on_arch = arch.name + "'s maximum of ";
  if (block.threads_per_block > arch.max_threads_per_block) {
    occupancy.by_warps = 0;
    add_failure(occupancy.launch_failure, std::to_string(block.threads_per_block) +
                                              " threads per block exceed " + on_arch +
                                              std::to_string(arch.max_threads_per_block));
  }
  if (block.registers_per_thread > arch.max_regs_per_thread) {
    occupancy.by_registers = 0;
    add_failure(occupancy.launch_failure, std::to_string(block.registers_per_thread) +
                                              " registers per thread exceed " + on_arch +
                                              std::to_string(arch.max_regs_per_thread));
  }
  const long long regs_per_block =
      regs_assumed_per_block(arch, occupancy.regs_per_warp_allocated, occupancy.warps_per_block);
  if (regs_per_block > arch.max_regs_per_block) {
    occupancy.by_registers = 0;
    add_failure(occupancy.launch_failure,
                std::to_string(regs_per_block) + " registers per block (" +
                    std::to_string(occupancy.regs_per_warp_allocated) + " per warp x " +
                    std::to_string(occupancy.warps_per_block) +
                    " warps rounded up to a multiple of " +
                    std::to_string(arch.reg_sub_partitions) + ") exceed " + on_arch +
                    std::to_string(arch.max_regs_per_block));
  }
  if (block.smem_bytes_per_block > arch.max_smem_per_block_optin_bytes) {
    occupancy.by_smem = 0;
    add_failure(occupancy.launch_failure,
                std::to_string(block.smem_bytes_per_block) +
                    " B of shared memory per block exceed " + arch.name + "'s opt-in maximum of " +
                    std::to_string(arch.max_smem_per_block_optin_bytes) + " B");
  }
}

struct Limit {
  OccupancyLimiter limiter;
  int blocks;
  bool resource_used;
};

// The smallest limit; on a tie the earlier entry (shared_memory, registers, warps, blocks) wins.
Limit binding_limit(const Occupancy& occupancy, const BlockResources& block) {
  const std::array<Limit, 4> limits = {{
      {OccupancyLimiter::shared_memory, occupancy.by_smem, occupancy.smem_per_block_allocated > 0},
      {OccupancyLimiter::registers, occupancy.by_registers, block.registers_per_thread > 0},
      {OccupancyLimiter::warps, occupancy.by_warps, true},
      {OccupancyLimiter::blocks, occupancy.by_blocks, true},
  }};
  Limit binding = {OccupancyLimiter::blocks, INT_MAX, true};
  for (const Limit& limit : limits) {
    if (limit.resource_used && limit.blocks < binding.blocks) {
      binding = limit;
    }
  }
  return binding;
}

// The driver configures the smallest carveout that holds the resident blocks' shared memory.
int carveout_for(const Arch& arch, long long smem_bytes_needed) {
  for (int carveout_kb : arch.smem_carveouts_kb) {
    const long long carveout_bytes = 1024LL * carveout_kb;
    if (carveout_bytes >= smem_bytes_needed && carveout_bytes <= arch.max_smem_per_sm_bytes) {
      return static_cast<int>(carveout_bytes);
    }
  }
  return arch.max_smem_per_sm_bytes;
}

}  // namespace

std::string to_string(OccupancyLimiter limiter) {
  switch (limiter) {
    case OccupancyLimiter::warps:
      return "warps";
    case OccupancyLimiter::blocks:
      return "blocks";
    case OccupancyLimiter::registers:
      return "registers";
    case OccupancyLimiter::shared_memory:
      return "shared_memory";
  }
  return "unknown";
}

Occupancy compute_occupancy(const Arch& arch, const BlockResources& block) {
  validate(block);
  Occupancy occupancy;
  occupancy.warps_per_block =
      static_cast<int>(round_up(block.threads_per_block, arch.warp_size) / arch.warp_size);
  occupancy.by_warps = arch.max_warps_per_sm / occupancy.warps_per_block;
  occupancy.by_blocks = arch.max_blocks_per_sm;

  occupancy.regs_per_warp_allocated =
      clamp_to_int(round_up(static_cast<long long>(block.registers_per_thread) * arch.warp_size,
                            arch.reg_alloc_unit_per_warp));
  occupancy.by_registers =
      occupancy.regs_per_warp_allocated == 0
          ? arch.max_blocks_per_sm
          : blocks_by_registers(arch, occupancy.regs_per_warp_allocated, occupancy.warps_per_block);

  // Shared memory per block counts even with no user shared memory: the system's reserved bytes.
  occupancy.smem_per_block_allocated = clamp_to_int(round_up(
      static_cast<long long>(block.smem_bytes_per_block) + arch.reserved_smem_per_block_bytes,
      arch.smem_alloc_granularity_bytes));
  occupancy.by_smem = occupancy.smem_per_block_allocated == 0
                          ? arch.max_blocks_per_sm
                          : arch.max_smem_per_sm_bytes / occupancy.smem_per_block_allocated;

  check_launch(arch, block, occupancy);

  const Limit binding = binding_limit(occupancy, block);
  occupancy.limiter = binding.limiter;
  occupancy.blocks_per_sm = binding.blocks;
  if (occupancy.blocks_per_sm == 0 && occupancy.launch_failure.empty()) {
    occupancy.launch_failure = "no block fits on an SM: the " + to_string(binding.limiter) +
                               " limit allows 0 blocks on " + arch.name;
  }
  occupancy.active_warps_per_sm = occupancy.blocks_per_sm * occupancy.warps_per_block;
  occupancy.carveout_bytes =
      occupancy.blocks_per_sm == 0
          ? 0
          : carveout_for(arch, static_cast<long long>(occupancy.blocks_per_sm) *
                                   occupancy.smem_per_block_allocated);
  return occupancy;
}

int registers_for_blocks(const Arch& arch, int threads_per_block, int blocks_per_sm) {
  const int warps = static_cast<int>(round_up(threads_per_block, arch.warp_size) / arch.warp_size);
  for (int registers = arch.max_regs_per_thread; registers > 0; --registers) {
    const int per_warp = clamp_to_int(
        round_up(static_cast<long long>(registers) * arch.warp_size, arch.reg_alloc_unit_per_warp));
    if (blocks_by_registers(arch, per_warp, warps) >= blocks_per_sm) return registers;
  }
  return 0;
}

}  // namespace tuner
