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

}  // namespace tuner::test
