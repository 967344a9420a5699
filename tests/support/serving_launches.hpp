#pragma once
// The sparse MLA decode family's serving launches of one config at one batch, bound from the
// launch facts `tuner freeze` writes (frozen_launches) and recorded through a LaunchKernelFn that
// stands in for cuLaunchKernel (recorded_launches.hpp): what the driver would be handed, taken from
// the serving launcher's path (serve.cpp), not from the tuner's geometry.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/serve.hpp"
#include "kernels/sparse_mla_decode/serve_args.h"
#include "kernels/sparse_mla_decode/space.hpp"
#include "tests/support/recorded_launches.hpp"

namespace tuner::test {

// The fake functions the combine roles are bound to: the general kernel and the whole-row one.
inline constexpr std::uintptr_t kServedCombine = 0x300;
inline constexpr std::uintptr_t kServedCombineWholeRow = 0x301;

inline std::vector<RecordedLaunch> serving_launches(const smla_family::KernelConfig& config,
                                                    smla_family::KvFormat kv, int batch,
                                                    int local_heads = 16,
                                                    const ClusterCapacity& clusters = {}) {
  smla_family::Shape shape;
  shape.kv_format = kv;
  shape.batch = batch;
  shape.n_heads = local_heads;
  shape.attn_tp = 1;
  const std::vector<FrozenLaunch> facts = smla_family::family().frozen_launches(
      smla_family::to_config(config), {smla_family::canonical_shape(shape)});
  REQUIRE(facts.size() == 3);  // this format's split, then the two combine kernels
  REQUIRE(facts[1].role == smla_family::kCombineRole);
  REQUIRE(facts[2].role == smla_family::kCombineWholeRowRole);
  const BoundKernel split{fake_function(0x100), static_cast<unsigned>(facts[0].block_threads),
                          static_cast<unsigned>(facts[0].dynamic_smem), clusters};
  const BoundKernel combine{fake_function(kServedCombine),
                            static_cast<unsigned>(facts[1].block_threads),
                            static_cast<unsigned>(facts[1].dynamic_smem),
                            {}};
  const BoundKernel whole_row{fake_function(kServedCombineWholeRow),
                              static_cast<unsigned>(facts[2].block_threads),
                              static_cast<unsigned>(facts[2].dynamic_smem),
                              {}};
  const Config values = config_from_json(facts[0].launch_params_json);
  const BoundConfig bound = smla_family::deploy_family().bind(
      [&](std::string_view role) -> const BoundKernel* {
        if (role == smla_family::split_role(kv)) return &split;
        if (role == smla_family::kCombineRole) return &combine;
        return role == smla_family::kCombineWholeRowRole ? &whole_row : nullptr;
      },
      [&](std::string_view name) -> std::optional<std::int64_t> { return values.at(name); });
  const tunedb_sparse_mla_decode_args args{0x1000, 0x2000,     0x3000,     0x4000,
                                           0x5000, 0x10000000, 1ull << 32, 0.0625f};
  recorded.clear();
  const std::string text = smla_family::canonical_shape(shape).canonical();
  REQUIRE(smla_family::deploy_family()
              .launch(bound, text, batch, &args, nullptr,
                      &record_launch<smla::SplitParams, smla::CombineParams, kServedCombine,
                                     kServedCombineWholeRow>)
              .status == ServeStatus::ok);
  return recorded;
}

}  // namespace tuner::test
