#pragma once
// The sparse MLA winners' structure on the H200 (BLOCK_T 64, 4 consumer + 2 producer warps, 2
// stages, f16 MMA in registers) at TARGET_CTAS 256, with a given merge: the kernel the merge
// variants' host tests (merge 3, merge 4) check the space's rules on.
#include "kernels/sparse_mla_decode/space.hpp"

namespace tuner::test {

inline smla_family::KernelConfig winners_structure(int merge) {
  return smla_family::KernelConfig{.block_t = 64,
                                   .num_warps = 4,
                                   .num_stages = 2,
                                   .mma_path = 1,
                                   .producers = 2,
                                   .target_ctas = 256,
                                   .merge = merge};
}

// A four-producer-warp kernel off the structure the sweep times them on (64-token tiles, 4
// consumer warps, cvt unpack; space.cpp's four_producers_trim): the compile test and the GPU
// matrix leave these out (a third more keys, CI and device time).
inline bool four_producers_off_structure(const smla_family::KernelConfig& config) {
  return config.producers == 4 &&
         (config.block_t != 64 || config.num_warps != 4 || config.kv_unpack != 0);
}

}  // namespace tuner::test
