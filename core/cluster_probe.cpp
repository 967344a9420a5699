#include "core/cluster_probe.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/cuda_driver.hpp"
#include "core/nvrtc.hpp"

namespace tuner::cuda {

namespace {

constexpr int kProbeThreads = 32;  // one warp: threads never limit the CTAs per SM here

// Dynamic shared memory that lets exactly `ctas_per_sm` probe CTAs share an SM: the SM's shared
// memory split k ways, less the driver's reservation per CTA, within the per-block opt-in limit.
int probe_smem_bytes(int device, int ctas_per_sm) {
  const int per_sm =
      device_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, device);
  const int reserved =
      device_attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, device);
  const int per_block =
      device_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device);
  return std::min(per_block, per_sm / ctas_per_sm - reserved);
}

}  // namespace

std::vector<ClusterCapacity> cluster_capacity_by_occupancy(int device, int max_ctas_per_sm) {
  const Context context(device);
  CompileRequest request;
  request.source_name = "cluster_probe.cu";
  request.source_text = "extern \"C\" __global__ void tuner_cluster_probe() {}\n";
  request.arch_sm = device_info(device).arch_sm();
  request.context = "the cluster capacity probe";
  const Module module(compile(request).cubin, request.context);
  const CUfunction probe = module.function("tuner_cluster_probe");
  std::vector<ClusterCapacity> by_occupancy(static_cast<std::size_t>(max_ctas_per_sm) + 1);
  for (int ctas = 1; ctas <= max_ctas_per_sm; ++ctas) {
    const int smem = probe_smem_bytes(device, ctas);
    const std::string what = request.context + " at " + std::to_string(ctas) + " CTAs per SM";
    set_max_dynamic_smem(probe, smem, what);
    const int resident = max_active_blocks_per_sm(probe, kProbeThreads, smem, what);
    if (resident != ctas) {
      throw std::runtime_error(what + ": " + std::to_string(smem) + " bytes of shared memory let " +
                               std::to_string(resident) + " CTAs share an SM");
    }
    by_occupancy[static_cast<std::size_t>(ctas)] =
        cluster_capacity(probe, kProbeThreads, static_cast<unsigned>(smem));
  }
  return by_occupancy;
}

}  // namespace tuner::cuda
