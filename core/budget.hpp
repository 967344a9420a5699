#pragma once
// Static figures of a config before any compile, from a family's one layout header.

namespace tuner {

struct StaticBudget {
  int smem_bytes_per_block = 0;  // dynamic shared memory the main kernel asks for
  int registers_per_thread = 0;  // estimate before compiling
  int threads_per_block = 0;
  // The main kernel's __launch_bounds__ minimum of resident blocks per SM (0: none). ptxas then
  // keeps registers at what that many blocks allow (core/occupancy: registers_for_blocks), spilling
  // if it must; the plan prunes a config whose other resources cannot hold that many blocks.
  int min_blocks_per_sm = 0;
};

}  // namespace tuner
