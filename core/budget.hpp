#pragma once
// Static figures of a config before any compile, from a family's one layout header.

namespace tuner {

struct StaticBudget {
  int smem_bytes_per_block = 0;  // dynamic shared memory the main kernel asks for
  int registers_per_thread = 0;  // estimate before compiling
  int threads_per_block = 0;
};

}  // namespace tuner
