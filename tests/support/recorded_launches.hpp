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

// The parameter is a First for the first launch and a Rest for the others; with REST_FUNCTIONS
// (fake_function ids) given, a Rest for the launches of those functions and a First otherwise (the
// sparse MLA merge 3 launches its combine kernel before the split; either combine kernel takes
// the same parameter block).
template <typename First, typename Rest, std::uintptr_t... REST_FUNCTIONS>
CUresult record_launch(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned block,
                       unsigned smem, CUstream, void** params, LaunchOrder order,
                       unsigned cluster_x) {
  const auto* bytes = static_cast<const unsigned char*>(params[0]);
  const bool rest = sizeof...(REST_FUNCTIONS) > 0
                        ? ((function == reinterpret_cast<CUfunction>(REST_FUNCTIONS)) || ...)
                        : !recorded.empty();
  const std::size_t size = rest ? sizeof(Rest) : sizeof(First);
  recorded.push_back(
      {function, {gx, gy, gz}, block, smem, order, cluster_x, {bytes, bytes + size}});
  return CUDA_SUCCESS;
}

// A stand-in CUfunction, told apart by its value only.
inline CUfunction fake_function(std::uintptr_t id) { return reinterpret_cast<CUfunction>(id); }

}  // namespace tuner::test
