// Kernel launches: checked (launch) and the serving hot path's unchecked one (launch_unchecked),
// in stream order or as a programmatic dependent, optionally as thread-block clusters.
#include <string>

#include "core/cuda_driver.hpp"
#include "core/cuda_driver_api.hpp"

namespace tuner::cuda {

void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned dynamic_smem, CUstream stream,
            void** args, const std::string& context, LaunchOrder order, unsigned cluster_x) {
  if (order == LaunchOrder::programmatic || cluster_x > 1) {
    check(
        launch_unchecked(function, grid.x, grid.y, grid.z, block.x, dynamic_smem, stream, args,
                         order, cluster_x),
        order == LaunchOrder::programmatic ? "cuLaunchKernelEx (programmatic stream serialization)"
                                           : "cuLaunchKernelEx (cluster dimension)",
        cluster_x > 1 ? context + ", clusters of " + std::to_string(cluster_x) + " CTAs" : context);
    return;
  }
  check(api().launch_kernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                            dynamic_smem, stream, args, nullptr),
        "cuLaunchKernel", context);
}

CUresult launch_unchecked(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                          unsigned block_x, unsigned dynamic_smem, CUstream stream, void** params,
                          LaunchOrder order, unsigned cluster_x) noexcept {
  if (order == LaunchOrder::stream && cluster_x <= 1) {
    return driver().api.launch_kernel(function, grid_x, grid_y, grid_z, block_x, 1, 1, dynamic_smem,
                                      stream, params, nullptr);
  }
  CUlaunchAttribute attributes[2]{};
  unsigned count = 0;
  if (order == LaunchOrder::programmatic) {
    attributes[count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attributes[count++].value.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster_x > 1) {
    attributes[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[count].value.clusterDim.x = cluster_x;
    attributes[count].value.clusterDim.y = 1;
    attributes[count++].value.clusterDim.z = 1;
  }
  CUlaunchConfig config{};
  config.gridDimX = grid_x;
  config.gridDimY = grid_y;
  config.gridDimZ = grid_z;
  config.blockDimX = block_x;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = dynamic_smem;
  config.hStream = stream;
  config.attrs = attributes;
  config.numAttrs = count;
  return driver().api.launch_kernel_ex(&config, function, params, nullptr);
}

}  // namespace tuner::cuda
