#pragma once
// The sparse MLA winners' structure (BLOCK_T 64, BLOCK_H 16, TARGET_CTAS 256) bound for the
// serving launcher with a given merge, as a frozen DB would bind it: the fp8 split kernel (fake
// function 0x100, 192 threads, 115,200 B) and the combine (0x300, 128 threads), no cubin. The
// merge variants' serving tests (merge 4, merge 5) record the launches it makes.
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/cluster_capacity.hpp"
#include "core/deploy_family.hpp"
#include "kernels/sparse_mla_decode/serve.hpp"
#include "tests/support/recorded_launches.hpp"

namespace tuner::test {

inline constexpr std::uintptr_t kBoundSplitId = 0x100;
inline constexpr std::uintptr_t kBoundCombineId = 0x300;

// `split_capacity`: the resident CTAs / clusters the launcher's device holds of the split kernel.
inline BoundConfig bound_winners(std::int64_t merge, const ClusterCapacity& split_capacity = {}) {
  const BoundKernel split{fake_function(kBoundSplitId), 192, 115200, split_capacity};
  const BoundKernel combine{fake_function(kBoundCombineId), 128, 0, {}};
  return smla_family::deploy_family().bind(
      [&](std::string_view role) -> const BoundKernel* {
        if (role == "split.fp8_ds_mla") return &split;
        if (role == "combine") return &combine;
        return nullptr;
      },
      [&](std::string_view name) -> std::optional<std::int64_t> {
        if (name == "block_t") return 64;
        if (name == "block_h") return 16;
        if (name == "target_ctas") return 256;
        if (name == "merge") return merge;
        return std::nullopt;
      });
}

}  // namespace tuner::test
