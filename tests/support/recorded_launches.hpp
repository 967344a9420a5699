#pragma once
// A LaunchKernelFn (core/deploy_family.hpp) that records instead of launching, so that a family's
// serving launch runs on a machine without a driver: each launch's function, grid, block size,
// dynamic shared memory, launch order, cluster size along x and the bytes of its one parameter
// block (the first launch's is a `First`, later ones a `Rest`).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/deploy_family.hpp"

namespace tuner::test {

struct RecordedLaunch {
  CUfunction function;
  unsigned grid[3];
  unsigned block;
  unsigned smem;
  LaunchOrder order;
  unsigned cluster_x;
  std::vector<unsigned char> params;
};

inline std::vector<RecordedLaunch> recorded;

template <typename First, typename Rest>
CUresult record_launch(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned block,
                       unsigned smem, CUstream, void** params, LaunchOrder order,
                       unsigned cluster_x) {
  const auto* bytes = static_cast<const unsigned char*>(params[0]);
  const std::size_t size = recorded.empty() ? sizeof(First) : sizeof(Rest);
  recorded.push_back(
      {function, {gx, gy, gz}, block, smem, order, cluster_x, {bytes, bytes + size}});
  return CUDA_SUCCESS;
}

// A stand-in CUfunction, told apart by its value only.
inline CUfunction fake_function(std::uintptr_t id) { return reinterpret_cast<CUfunction>(id); }

}  // namespace tuner::test
