// Module (a loaded cubin) and what is asked of its functions: attributes, the dynamic shared
// memory limit, occupancy.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda_driver.hpp"
#include "core/cuda_driver_api.hpp"

namespace tuner::cuda {
namespace {

void unload_module(CUmodule module, const std::string& context) noexcept {
  if (module != nullptr) {
    warn_if_failed(driver().api.module_unload(module), "cuModuleUnload", context);
  }
}

}  // namespace

Module::Module(const std::vector<char>& cubin, const std::string& context) : context_(context) {
  if (cubin.empty()) {
    throw std::invalid_argument("cuModuleLoadData: empty cubin (" + context + ")");
  }
  check(api().module_load_data(&module_, cubin.data()), "cuModuleLoadData", context);
}

Module::~Module() { unload_module(module_, context_); }

Module::Module(Module&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)), context_(std::move(other.context_)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    unload_module(module_, context_);
    module_ = std::exchange(other.module_, nullptr);
    context_ = std::move(other.context_);
  }
  return *this;
}

CUfunction Module::function(const std::string& mangled_name) const {
  CUfunction function = nullptr;
  check(api().module_get_function(&function, module_, mangled_name.c_str()), "cuModuleGetFunction",
        join_context(context_, "function " + mangled_name));
  return function;
}

void set_max_dynamic_smem(CUfunction function, int bytes, const std::string& context) {
  check(api().func_set_attribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
        "cuFuncSetAttribute",
        join_context(context, "max dynamic shared memory " + std::to_string(bytes) + " bytes"));
}

int function_attribute(CUfunction function, CUfunction_attribute attribute,
                       const std::string& context) {
  int value = 0;
  check(api().func_get_attribute(&value, attribute, function), "cuFuncGetAttribute",
        join_context(context, "attribute " + std::to_string(static_cast<int>(attribute))));
  return value;
}

int max_active_blocks_per_sm(CUfunction function, int threads, std::size_t dynamic_smem,
                             const std::string& context) {
  int blocks = 0;
  check(api().occupancy_max_active_blocks(&blocks, function, threads, dynamic_smem),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        join_context(context, std::to_string(threads) + " threads, " +
                                  std::to_string(dynamic_smem) + " bytes dynamic smem"));
  return blocks;
}

ClusterCapacity cluster_capacity(CUfunction function, unsigned threads,
                                 unsigned dynamic_smem) noexcept {
  ClusterCapacity capacity;
  for (int size = 1; size <= ClusterCapacity::kMaxSize; ++size) {
    CUlaunchAttribute cluster{};
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = static_cast<unsigned>(size);
    cluster.value.clusterDim.y = 1;
    cluster.value.clusterDim.z = 1;
    CUlaunchConfig config{};
    config.gridDimX =
        static_cast<unsigned>(size);  // a multiple of the cluster; the count ignores it
    config.gridDimY = 1;
    config.gridDimZ = 1;
    config.blockDimX = threads;
    config.blockDimY = 1;
    config.blockDimZ = 1;
    config.sharedMemBytes = dynamic_smem;
    config.attrs = &cluster;
    config.numAttrs = 1;
    int clusters = 0;
    if (api().occupancy_max_active_clusters(&clusters, function, &config) == CUDA_SUCCESS)
      capacity.clusters[size] = clusters;
  }
  return capacity;
}

}  // namespace tuner::cuda
