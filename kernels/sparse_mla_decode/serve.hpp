#pragma once
// The family as the serving launcher sees it (core/deploy_family.hpp): roles, binding, workspace
// and the launch, over deploy.hpp's geometry and packing.
#include <optional>
#include <string_view>

#include "core/deploy_family.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner::smla_family {

// Frozen kernel roles: "split.fp8_ds_mla", "split.bf16", "combine", "combine.whole_row" (DBs
// frozen before the whole-row kernel lack it: their "combine" merges every plan).
std::string_view split_role(KvFormat kv_format);
inline constexpr std::string_view kCombineRole = "combine";
inline constexpr std::string_view kCombineWholeRowRole = "combine.whole_row";

// What a launch reads from the canonical shape text, parsed without allocating; nullopt when the
// text lacks local_heads, topk or a known kv_format.
struct ServeShape {
  int local_heads = 0;
  int topk = 0;
  KvFormat kv_format = KvFormat::fp8_ds_mla;
};
std::optional<ServeShape> parse_serve_shape(std::string_view shape) noexcept;

const DeployFamily& deploy_family();

}  // namespace tuner::smla_family
