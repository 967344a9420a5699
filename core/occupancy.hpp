#pragma once
// Blocks resident per SM for a block's resources on an Arch: the minimum of four limits (warps,
// blocks, registers, shared memory), computed as the toolkit's cuda_occupancy.h does with no
// carveout preference: the shared memory limit divides the SM's whole shared memory (the largest
// carveout, which the driver may configure), and carveout_bytes then names the smallest carveout
// that holds the resident blocks. One deliberate difference: 256 registers per thread is a launch
// failure here (the Programming Guide's 255; ptxas never exceeds it), cuda_occupancy.h allows 256.
// The driver's cuOccupancyMaxActiveBlocksPerMultiprocessor is the ground truth on a GPU.
#include <string>

#include "core/arch.hpp"

namespace tuner {

enum class OccupancyLimiter { warps, blocks, registers, shared_memory };

// "warps", "blocks", "registers", "shared_memory"
std::string to_string(OccupancyLimiter limiter);

struct BlockResources {
  int threads_per_block = 0;
  int registers_per_thread = 0;
  int smem_bytes_per_block = 0;  // static + dynamic, without the reserved KB
};

struct Occupancy {
  int blocks_per_sm = 0;
  // The limit that gives blocks_per_sm. Ties go, in this order, to shared_memory, registers, warps,
  // blocks (the resources a config can trade first); a resource the block does not use never
  // limits.
  OccupancyLimiter limiter = OccupancyLimiter::blocks;
  // Blocks each limit alone allows. A resource the block does not use (0 registers, or no shared
  // memory and no reserved bytes) reports max_blocks_per_sm; the resource that makes a launch fail
  // reports 0.
  int by_warps = 0;
  int by_blocks = 0;
  int by_registers = 0;
  int by_smem = 0;
  int warps_per_block = 0;
  int active_warps_per_sm = 0;  // blocks_per_sm * warps_per_block
  int regs_per_warp_allocated = 0;
  int smem_per_block_allocated = 0;  // roundup(smem + reserved, granularity)
  // The smallest listed carveout holding blocks_per_sm blocks (the one the driver needs to reach
  // this occupancy); 0 when no block fits.
  int carveout_bytes = 0;
  // Non-empty when the block cannot launch at all (then blocks_per_sm is 0): threads over the
  // per-block maximum, registers per thread over 255, registers per block over the limit, shared
  // memory over the opt-in limit. Several reasons are joined with "; ".
  std::string launch_failure;
};

// Throws std::invalid_argument when threads_per_block < 1 or a count is negative.
Occupancy compute_occupancy(const Arch& arch, const BlockResources& block);

// The most registers per thread with which `blocks_per_sm` blocks of `threads_per_block` stay
// resident by the register limit (what __launch_bounds__(threads, blocks) asks of ptxas); 0 when
// not even a 1-register thread allows that many.
int registers_for_blocks(const Arch& arch, int threads_per_block, int blocks_per_sm);

}  // namespace tuner
