#include "kernels/sparse_mla_decode/resources.hpp"

#include "templates/sparse_mla_decode/layout.h"

namespace tuner::smla_family {

StaticBudget static_budget(const KernelConfig& config, KvFormat kv_format) {
  const int format = static_cast<int>(kv_format);
  const smla::SmemLayout layout =
      smla::smem_layout(config.block_t, config.block_h, config.num_warps, config.num_stages, format,
                        config.mma_path, config.producers);
  return StaticBudget{
      static_cast<int>(smla::split_smem_bytes(layout, config.block_h, config.merge)),
      smla::estimated_registers(config.block_t, config.block_h, config.num_warps, config.num_stages,
                                format, config.mma_path),
      (config.num_warps + config.producers) * 32,
      config.ctas_per_sm,
  };
}

}  // namespace tuner::smla_family
