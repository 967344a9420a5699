// Kernel launches: checked (launch) and the serving hot path's unchecked one (launch_unchecked),
// in stream order or as a programmatic dependent.
#include <string>

#include "core/cuda_driver.hpp"
#include "core/cuda_driver_api.hpp"

namespace tuner::cuda {

void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned dynamic_smem, CUstream stream,
            void** args, const std::string& context, LaunchOrder order) {
  if (order == LaunchOrder::programmatic) {
    check(launch_unchecked(function, grid.x, grid.y, grid.z, block.x, dynamic_smem, stream, args,
                           order),
          "cuLaunchKernelEx (programmatic stream serialization)", context);
    return;
  }
  check(api().launch_kernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                            dynamic_smem, stream, args, nullptr),
        "cuLaunchKernel", context);
}

CUresult launch_unchecked(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                          unsigned block_x, unsigned dynamic_smem, CUstream stream, void** params,
                          LaunchOrder order) noexcept {
  if (order == LaunchOrder::stream) {
    return driver().api.launch_kernel(function, grid_x, grid_y, grid_z, block_x, 1, 1, dynamic_smem,
                                      stream, params, nullptr);
  }
  CUlaunchAttribute attribute{};
  attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attribute.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid_x;
  config.gridDimY = grid_y;
  config.gridDimZ = grid_z;
  config.blockDimX = block_x;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = dynamic_smem;
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return driver().api.launch_kernel_ex(&config, function, params, nullptr);
}

}  // namespace tuner::cuda
