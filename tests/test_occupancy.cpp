#include "core/occupancy.hpp"

#include <doctest/doctest.h>

#include <cuda_occupancy.h>

#include <sstream>
#include <stdexcept>

#include "core/arch.hpp"

using tuner::Arch;
using tuner::BlockResources;
using tuner::Occupancy;
using tuner::OccupancyLimiter;
using tuner::registers_for_blocks;

// Figures used below. sm_90: 64 warps, 32 blocks, 65536 regs (16384 per sub-partition),
// 233472 B smem per SM, 232448 B opt-in. sm_120: 48 warps, 24 blocks, 65536 regs,
// 102400 B smem per SM, 101376 B opt-in. Both: 1024 B reserved per block, 128 B and 256-register
// granularity.

TEST_CASE("occupancy: shared memory binds (sm_120, 128 threads, 64 regs, 60416 B)") {
  // warps:     48 / (128/32 = 4) = 12
  // blocks:    24
  // registers: roundup(64*32, 256) = 2048 per warp; 16384/2048 = 8 warps per sub-partition
  //            -> 32 warps -> 32/4 = 8 blocks
  // smem:      roundup(60416 + 1024, 128) = 61440 per block; 102400/61440 = 1.67 -> 1 block
  // carveout:  1 * 61440 fits 64 KB = 65536 (32 KB = 32768 does not)
  const Occupancy occupancy =
      tuner::compute_occupancy(tuner::arch_by_name("sm_120"), BlockResources{128, 64, 60416});
  CHECK(occupancy.by_warps == 12);
  CHECK(occupancy.by_blocks == 24);
  CHECK(occupancy.by_registers == 8);
  CHECK(occupancy.by_smem == 1);
  CHECK(occupancy.blocks_per_sm == 1);
  CHECK(occupancy.limiter == OccupancyLimiter::shared_memory);
  CHECK(occupancy.warps_per_block == 4);
  CHECK(occupancy.active_warps_per_sm == 4);
  CHECK(occupancy.regs_per_warp_allocated == 2048);
  CHECK(occupancy.smem_per_block_allocated == 61440);
  CHECK(occupancy.carveout_bytes == 65536);
  CHECK(occupancy.launch_failure.empty());
}

TEST_CASE("occupancy: registers bind (sm_90, 256 threads, 128 regs, 16384 B)") {
  // warps:     64 / 8 = 8
  // registers: roundup(128*32, 256) = 4096 per warp; 16384/4096 = 4 per sub-partition
  //            -> 16 warps -> 16/8 = 2 blocks
  // smem:      roundup(16384 + 1024, 128) = 17408; 233472/17408 = 13.4 -> 13
  // carveout:  2 * 17408 = 34816 > 32 KB -> 64 KB = 65536
  const Occupancy occupancy =
      tuner::compute_occupancy(tuner::arch_by_name("sm_90"), BlockResources{256, 128, 16384});
  CHECK(occupancy.by_warps == 8);
  CHECK(occupancy.by_blocks == 32);
  CHECK(occupancy.by_registers == 2);
  CHECK(occupancy.by_smem == 13);
  CHECK(occupancy.blocks_per_sm == 2);
  CHECK(occupancy.limiter == OccupancyLimiter::registers);
  CHECK(occupancy.regs_per_warp_allocated == 4096);
  CHECK(occupancy.smem_per_block_allocated == 17408);
  CHECK(occupancy.carveout_bytes == 65536);
  CHECK(occupancy.active_warps_per_sm == 16);
}

TEST_CASE("occupancy: register granularity rounds a warp's registers up to 256") {
  // 72 regs: 72*32 = 2304 = 9*256 (already a multiple); 73 regs: 2336 -> 2560.
  // sm_90, 128 threads (4 warps), no smem:
  //   72: 16384/2304 = 7.1 -> 7 per sub-partition -> 28 warps -> 28/4 = 7 blocks
  //   73: 16384/2560 = 6.4 -> 6 per sub-partition -> 24 warps -> 24/4 = 6 blocks
  const Arch sm90 = tuner::arch_by_name("sm_90");
  const Occupancy at72 = tuner::compute_occupancy(sm90, BlockResources{128, 72, 0});
  const Occupancy at73 = tuner::compute_occupancy(sm90, BlockResources{128, 73, 0});
  CHECK(at72.regs_per_warp_allocated == 2304);
  CHECK(at72.by_registers == 7);
  CHECK(at73.regs_per_warp_allocated == 2560);
  CHECK(at73.by_registers == 6);
  CHECK(at73.limiter == OccupancyLimiter::registers);
}

TEST_CASE("occupancy: warps bind (sm_90, 512 threads, 16 regs, no smem)") {
  // warps:     64 / 16 = 4
  // registers: roundup(16*32, 256) = 512; 16384/512 = 32 per sub-partition -> 128 -> 128/16 = 8
  // smem:      roundup(0 + 1024, 128) = 1024 (the reserved KB); 233472/1024 = 228
  // carveout:  4 * 1024 = 4096 -> 8 KB = 8192
  const Occupancy occupancy =
      tuner::compute_occupancy(tuner::arch_by_name("sm_90"), BlockResources{512, 16, 0});
  CHECK(occupancy.by_warps == 4);
  CHECK(occupancy.by_registers == 8);
  CHECK(occupancy.by_smem == 228);
  CHECK(occupancy.blocks_per_sm == 4);
  CHECK(occupancy.limiter == OccupancyLimiter::warps);
  CHECK(occupancy.smem_per_block_allocated == 1024);
  CHECK(occupancy.carveout_bytes == 8192);
}

TEST_CASE("occupancy: blocks bind (sm_120, 32 threads, 32 regs, 2048 B)") {
  // warps:     48 / 1 = 48
  // blocks:    24
  // registers: 1024 per warp; 16384/1024 = 16 per sub-partition -> 64 warps -> 64 blocks
  // smem:      roundup(2048 + 1024, 128) = 3072; 102400/3072 = 33.3 -> 33
  // carveout:  24 * 3072 = 73728 > 64 KB -> 100 KB = 102400
  const Occupancy occupancy =
      tuner::compute_occupancy(tuner::arch_by_name("sm_120"), BlockResources{32, 32, 2048});
  CHECK(occupancy.by_warps == 48);
  CHECK(occupancy.by_blocks == 24);
  CHECK(occupancy.by_registers == 64);
  CHECK(occupancy.by_smem == 33);
  CHECK(occupancy.blocks_per_sm == 24);
  CHECK(occupancy.limiter == OccupancyLimiter::blocks);
  CHECK(occupancy.carveout_bytes == 102400);
}

TEST_CASE("occupancy: ties go to shared_memory, registers, warps, blocks in that order") {
  const Arch sm90 = tuner::arch_by_name("sm_90");
  // smem vs registers, sm_90, 256 threads, 128 regs, 100000 B:
  //   registers: 2 (as in the registers case)
  //   smem: roundup(100000 + 1024, 128) = 101120; 233472/101120 = 2.3 -> 2
  //   carveout: 2 * 101120 = 202240 > 196 KB = 200704 -> 228 KB = 233472
  const Occupancy smem_tie = tuner::compute_occupancy(sm90, BlockResources{256, 128, 100000});
  CHECK(smem_tie.by_registers == 2);
  CHECK(smem_tie.by_smem == 2);
  CHECK(smem_tie.smem_per_block_allocated == 101120);
  CHECK(smem_tie.limiter == OccupancyLimiter::shared_memory);
  CHECK(smem_tie.carveout_bytes == 233472);
  // warps vs blocks, sm_90, 64 threads, 16 regs, no smem:
  //   warps 64/2 = 32 = blocks 32; registers 512 per warp -> 128 warps -> 64; smem 228
  //   carveout: 32 * 1024 = 32768 -> exactly 32 KB
  const Occupancy warps_tie = tuner::compute_occupancy(sm90, BlockResources{64, 16, 0});
  CHECK(warps_tie.by_warps == 32);
  CHECK(warps_tie.by_blocks == 32);
  CHECK(warps_tie.blocks_per_sm == 32);
  CHECK(warps_tie.limiter == OccupancyLimiter::warps);
  CHECK(warps_tie.carveout_bytes == 32768);
}

TEST_CASE("occupancy: a resource the block does not use never limits") {
  // 0 registers (ptxas can report that for a trivial kernel): by_registers is reported as the
  // blocks cap, 32, which ties with warps (64/2 = 32) but must not be named the limiter.
  const Arch sm90 = tuner::arch_by_name("sm_90");
  const Occupancy no_regs = tuner::compute_occupancy(sm90, BlockResources{64, 0, 0});
  CHECK(no_regs.by_registers == 32);
  CHECK(no_regs.regs_per_warp_allocated == 0);
  CHECK(no_regs.blocks_per_sm == 32);
  CHECK(no_regs.limiter == OccupancyLimiter::warps);
  // No shared memory and no reserved bytes: no smem limit (and no division by zero).
  Arch unreserved = sm90;
  unreserved.reserved_smem_per_block_bytes = 0;
  const Occupancy no_smem = tuner::compute_occupancy(unreserved, BlockResources{32, 16, 0});
  CHECK(no_smem.smem_per_block_allocated == 0);
  CHECK(no_smem.by_smem == 32);
  CHECK(no_smem.blocks_per_sm == 32);
  CHECK(no_smem.limiter == OccupancyLimiter::blocks);
  CHECK(no_smem.carveout_bytes == 0);
}

TEST_CASE("occupancy: the opt-in maximum itself fits one block (sm_120, 101376 B)") {
  // roundup(101376 + 1024, 128) = 102400 = the whole 100 KB; 102400/102400 = 1
  const Occupancy occupancy =
      tuner::compute_occupancy(tuner::arch_by_name("sm_120"), BlockResources{128, 32, 101376});
  CHECK(occupancy.launch_failure.empty());
  CHECK(occupancy.by_smem == 1);
  CHECK(occupancy.blocks_per_sm == 1);
  CHECK(occupancy.carveout_bytes == 102400);
}

TEST_CASE("occupancy: launch failure, shared memory over the opt-in maximum (sm_120, 101377 B)") {
  const Occupancy occupancy =
      tuner::compute_occupancy(tuner::arch_by_name("sm_120"), BlockResources{128, 32, 101377});
  CHECK(occupancy.launch_failure ==
        "101377 B of shared memory per block exceed sm_120's opt-in maximum of 101376 B");
  CHECK(occupancy.by_smem == 0);
  CHECK(occupancy.blocks_per_sm == 0);
  CHECK(occupancy.limiter == OccupancyLimiter::shared_memory);
  CHECK(occupancy.carveout_bytes == 0);
  CHECK(occupancy.active_warps_per_sm == 0);
}

TEST_CASE("occupancy: launch failure, 256 registers per thread (sm_90, 128 threads)") {
  // 256 regs alone would still fit (8192 per warp, 2 per sub-partition, 8 warps, 2 blocks), but
  // no thread may hold more than 255.
  const Occupancy occupancy =
      tuner::compute_occupancy(tuner::arch_by_name("sm_90"), BlockResources{128, 256, 0});
  CHECK(occupancy.launch_failure == "256 registers per thread exceed sm_90's maximum of 255");
  CHECK(occupancy.by_registers == 0);
  CHECK(occupancy.by_warps == 16);
  CHECK(occupancy.blocks_per_sm == 0);
  CHECK(occupancy.limiter == OccupancyLimiter::registers);
}

TEST_CASE("occupancy: 0 blocks when registers fit no block (sm_90, 1024 threads, 255 regs)") {
  // registers: roundup(255*32 = 8160, 256) = 8192 per warp; 16384/8192 = 2 per sub-partition
  //            -> 8 warps per SM; 8/32 = 0 blocks.
  // per-block check: 8192 * roundup(32 warps, 4) = 262144 > 65536, so it cannot launch either.
  const Occupancy occupancy =
      tuner::compute_occupancy(tuner::arch_by_name("sm_90"), BlockResources{1024, 255, 0});
  CHECK(occupancy.by_registers == 0);
  CHECK(occupancy.by_warps == 2);
  CHECK(occupancy.blocks_per_sm == 0);
  CHECK(occupancy.limiter == OccupancyLimiter::registers);
  CHECK(occupancy.launch_failure ==
        "262144 registers per block (8192 per warp x 32 warps rounded up to a multiple of 4) "
        "exceed sm_90's maximum of 65536");
}

TEST_CASE("occupancy: the per-block register check rounds warps up to the sub-partitions") {
  // sm_90, 960 threads = 30 warps, 68 regs: roundup(68*32 = 2176, 256) = 2304 per warp.
  // 30 * 2304 = 69120 and 32 * 2304 = 73728, both over 65536 -> cannot launch.
  // 960 threads, 64 regs: 2048 per warp; 32 * 2048 = 65536 fits (30 warps alone: 61440);
  // 16384/2048 = 8 per sub-partition -> 32 warps -> 32/30 = 1 block.
  const Arch sm90 = tuner::arch_by_name("sm_90");
  const Occupancy over = tuner::compute_occupancy(sm90, BlockResources{960, 68, 0});
  CHECK(over.blocks_per_sm == 0);
  CHECK(over.launch_failure ==
        "73728 registers per block (2304 per warp x 30 warps rounded up to a multiple of 4) "
        "exceed sm_90's maximum of 65536");
  const Occupancy fits = tuner::compute_occupancy(sm90, BlockResources{960, 64, 0});
  CHECK(fits.launch_failure.empty());
  CHECK(fits.by_registers == 1);
  CHECK(fits.blocks_per_sm == 1);
}

TEST_CASE("occupancy: launch failure, threads over 1024, and several reasons at once") {
  const Arch sm90 = tuner::arch_by_name("sm_90");
  // 1025 threads = 33 warps; 64/33 would give 1, but the block cannot launch.
  const Occupancy threads = tuner::compute_occupancy(sm90, BlockResources{1025, 32, 0});
  CHECK(threads.launch_failure == "1025 threads per block exceed sm_90's maximum of 1024");
  CHECK(threads.by_warps == 0);
  CHECK(threads.blocks_per_sm == 0);
  CHECK(threads.limiter == OccupancyLimiter::warps);
  // Threads and shared memory both fail: both reasons, limiter by precedence (shared_memory).
  const Occupancy both = tuner::compute_occupancy(sm90, BlockResources{1025, 32, 300000});
  CHECK(both.launch_failure ==
        "1025 threads per block exceed sm_90's maximum of 1024; "
        "300000 B of shared memory per block exceed sm_90's opt-in maximum of 232448 B");
  CHECK(both.limiter == OccupancyLimiter::shared_memory);
}

TEST_CASE("occupancy: 0 blocks without a per-block failure still says why") {
  // A device reporting less shared memory per SM than opt-in + reserved (here 232448): a block of
  // 232448 B passes the opt-in check but needs roundup(232448 + 1024, 128) = 233472 > 232448.
  Arch arch = tuner::arch_by_name("sm_90");
  arch.max_smem_per_sm_bytes = 232448;
  const Occupancy occupancy = tuner::compute_occupancy(arch, BlockResources{128, 32, 232448});
  CHECK(occupancy.by_smem == 0);
  CHECK(occupancy.blocks_per_sm == 0);
  CHECK(occupancy.limiter == OccupancyLimiter::shared_memory);
  CHECK(occupancy.launch_failure ==
        "no block fits on an SM: the shared_memory limit allows 0 blocks on sm_90");
}

TEST_CASE("occupancy: impossible block descriptions are rejected by name") {
  const Arch sm90 = tuner::arch_by_name("sm_90");
  CHECK_THROWS_WITH_AS(tuner::compute_occupancy(sm90, BlockResources{0, 32, 0}),
                       "compute_occupancy: threads_per_block is 0; it must be at least 1",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tuner::compute_occupancy(sm90, BlockResources{128, -1, 0}),
                       "compute_occupancy: registers_per_thread is -1; it must be >= 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tuner::compute_occupancy(sm90, BlockResources{128, 32, -4}),
                       "compute_occupancy: smem_bytes_per_block is -4; it must be >= 0",
                       std::invalid_argument);
}

namespace {

cudaOccDeviceProp occupancy_calculator_device(const Arch& arch) {
  cudaOccDeviceProp device;
  device.computeMajor = arch.cc_major;
  device.computeMinor = arch.cc_minor;
  device.maxThreadsPerBlock = arch.max_threads_per_block;
  device.maxThreadsPerMultiprocessor = arch.max_threads_per_sm;
  device.regsPerBlock = arch.max_regs_per_block;
  device.regsPerMultiprocessor = arch.regs_per_sm;
  device.warpSize = arch.warp_size;
  device.sharedMemPerBlock = 48 * 1024;
  device.sharedMemPerMultiprocessor = static_cast<size_t>(arch.max_smem_per_sm_bytes);
  device.numSms = 1;
  device.sharedMemPerBlockOptin = static_cast<size_t>(arch.max_smem_per_block_optin_bytes);
  device.reservedSharedMemPerBlock = static_cast<size_t>(arch.reserved_smem_per_block_bytes);
  return device;
}

// A kernel that opted in to the arch's maximum dynamic shared memory and uses one barrier, as the
// tuner's kernels do.
cudaOccFuncAttributes occupancy_calculator_kernel(const Arch& arch, int registers_per_thread) {
  cudaOccFuncAttributes kernel;
  kernel.maxThreadsPerBlock = arch.max_threads_per_block;
  kernel.numRegs = registers_per_thread;
  kernel.sharedSizeBytes = 0;
  kernel.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  kernel.maxDynamicSharedSizeBytes = static_cast<size_t>(arch.max_smem_per_block_optin_bytes);
  kernel.numBlockBarriers = 1;
  return kernel;
}

unsigned limiting_factor_bit(OccupancyLimiter limiter) {
  switch (limiter) {
    case OccupancyLimiter::warps:
      return OCC_LIMIT_WARPS;
    case OccupancyLimiter::blocks:
      return OCC_LIMIT_BLOCKS;
    case OccupancyLimiter::registers:
      return OCC_LIMIT_REGISTERS;
    case OccupancyLimiter::shared_memory:
      return OCC_LIMIT_SHARED_MEMORY;
  }
  return 0;
}

}  // namespace

// The toolkit's own calculator (cuda_occupancy.h, plain host code) with the default carveout
// preference is the model this one follows; they must agree on every limit over a grid of blocks
// that crosses each granularity and launch limit, on every table arch.
TEST_CASE("occupancy agrees with the toolkit's cuda_occupancy.h on every table arch") {
  const int thread_counts[] = {1,   32,  33,  64,  96,  128, 160, 192,  256,
                               320, 384, 480, 512, 640, 768, 960, 1024, 1025};
  // No 256: cuda_occupancy.h accepts 256 registers per thread from CC 7.0 on (its allocation
  // maximum), while the Programming Guide's limit, which ptxas never exceeds, is 255.
  const int register_counts[] = {0,  16, 24, 32,  40,  48,  56,  64,  72,
                                 73, 80, 96, 128, 168, 200, 232, 248, 255};
  const int smem_sizes[] = {0,      1,      1024,   4096,   16384,  49152,  60416,
                            100000, 101376, 101377, 166912, 166913, 232448, 232449};
  const cudaOccDeviceState default_carveout;
  int compared = 0;
  for (const Arch& arch : tuner::arch_table()) {
    const cudaOccDeviceProp device = occupancy_calculator_device(arch);
    for (int registers : register_counts) {
      const cudaOccFuncAttributes kernel = occupancy_calculator_kernel(arch, registers);
      for (int threads : thread_counts) {
        for (int smem : smem_sizes) {
          cudaOccResult expected{};
          REQUIRE(cudaOccMaxActiveBlocksPerMultiprocessor(
                      &expected, &device, &kernel, &default_carveout, threads,
                      static_cast<size_t>(smem)) == CUDA_OCC_SUCCESS);
          const Occupancy got =
              tuner::compute_occupancy(arch, BlockResources{threads, registers, smem});
          const int expected_by_registers =
              registers == 0 ? arch.max_blocks_per_sm : expected.blockLimitRegs;
          const bool agree = got.blocks_per_sm == expected.activeBlocksPerMultiprocessor &&
                             got.by_warps == expected.blockLimitWarps &&
                             got.by_blocks == expected.blockLimitBlocks &&
                             got.by_registers == expected_by_registers &&
                             got.by_smem == expected.blockLimitSharedMem &&
                             got.smem_per_block_allocated ==
                                 static_cast<int>(expected.allocatedSharedMemPerBlock) &&
                             (expected.limitingFactors & limiting_factor_bit(got.limiter)) != 0 &&
                             got.launch_failure.empty() == (got.blocks_per_sm > 0);
          if (!agree) {
            std::ostringstream case_text;
            case_text << arch.name << " threads " << threads << " regs " << registers << " smem "
                      << smem << ": got " << got.blocks_per_sm << " (" << got.by_warps << "/"
                      << got.by_blocks << "/" << got.by_registers << "/" << got.by_smem << " "
                      << tuner::to_string(got.limiter) << "), cuda_occupancy.h "
                      << expected.activeBlocksPerMultiprocessor << " (" << expected.blockLimitWarps
                      << "/" << expected.blockLimitBlocks << "/" << expected.blockLimitRegs << "/"
                      << expected.blockLimitSharedMem << " factors " << expected.limitingFactors
                      << ")";
            FAIL_CHECK(case_text.str());
          }
          ++compared;
        }
      }
    }
  }
  CHECK(compared == 6 * 18 * 18 * 14);
}

TEST_CASE("OccupancyLimiter to_string") {
  CHECK(tuner::to_string(OccupancyLimiter::warps) == "warps");
  CHECK(tuner::to_string(OccupancyLimiter::blocks) == "blocks");
  CHECK(tuner::to_string(OccupancyLimiter::registers) == "registers");
  CHECK(tuner::to_string(OccupancyLimiter::shared_memory) == "shared_memory");
}

TEST_CASE("occupancy: registers a launch bound leaves (registers_for_blocks)") {
  const Arch sm90 = tuner::arch_by_name("sm_90");
  // By hand: 4 sub-partitions of 16384 registers, 256-register units per warp, whole warps per
  // sub-partition. 4 warps x 1 block: 1 warp per sub-partition -> the 255 per-thread cap.
  CHECK(registers_for_blocks(sm90, 128, 1) == 255);
  // 5 warps x 3 blocks = 15 warps -> 4 per sub-partition -> 4096 per warp -> 128 per thread.
  CHECK(registers_for_blocks(sm90, 160, 3) == 128);
  // 32 warps x 3 blocks = 96 warps -> 24 per sub-partition -> 682 -> 512 per warp -> 16.
  CHECK(registers_for_blocks(sm90, 1024, 3) == 16);
  // 32 warps x 9 blocks = 288 warps: even 8 registers per thread hold only 256.
  CHECK(registers_for_blocks(sm90, 1024, 9) == 0);
  // The answer gives at least that many blocks, and one more register would not.
  for (int threads : {96, 160, 192, 320}) {
    for (int blocks : {1, 2, 3}) {
      const int registers = registers_for_blocks(sm90, threads, blocks);
      REQUIRE(registers > 0);
      CHECK(tuner::compute_occupancy(sm90, {threads, registers, 0}).by_registers >= blocks);
      if (registers < sm90.max_regs_per_thread) {
        CHECK(tuner::compute_occupancy(sm90, {threads, registers + 1, 0}).by_registers < blocks);
      }
    }
  }
}
