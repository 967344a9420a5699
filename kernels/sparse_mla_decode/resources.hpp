#pragma once
// Static resource figures of a config, from the same layout function the kernel uses.
#include "core/budget.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/space.hpp"

namespace tuner::smla_family {

// smem_bytes_per_block: the dynamic shared memory the split kernel asks for.
using StaticBudget = tuner::StaticBudget;

StaticBudget static_budget(const KernelConfig& config, KvFormat kv_format);

}  // namespace tuner::smla_family
