#pragma once
// Static resource figures of a config, from the same layout function the kernel uses.
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/space.hpp"

namespace tuner::smla_family {

struct StaticBudget {
  int smem_bytes_per_block = 0;  // dynamic shared memory the split kernel asks for
  int registers_per_thread = 0;  // estimate before compiling
  int threads_per_block = 0;
};

StaticBudget static_budget(const KernelConfig& config, KvFormat kv_format);

}  // namespace tuner::smla_family
