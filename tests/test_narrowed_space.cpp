// The values a shape rules out alone (tuner/narrowed_space.hpp): which ones the sparse MLA family
// narrows for a few shapes (hand-known), that every member of the full cross product with such a
// value fails the family's rules (each config judged by `rules`, not by value_rule), and that the
// members each value stands for, counted here by walking the whole cross product, are the ones
// narrow_space computes. No GPU.
#include "tuner/narrowed_space.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernels/fp8_gemm/family.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"

using namespace tuner;

namespace {

Shape smla_shape(int heads, int tp, smla_family::KvFormat kv_format) {
  smla_family::Shape shape;
  shape.n_heads = heads;
  shape.attn_tp = tp;
  shape.kv_format = kv_format;
  return smla_family::canonical_shape(shape);
}

std::vector<std::string> narrowed_names(const NarrowedSpace& space) {
  std::vector<std::string> names;
  for (const NarrowedValue& value : space.narrowed) {
    names.push_back(value.param + "=" + std::to_string(value.value));
  }
  return names;
}

// Walks the family's whole cross product: each member stands under its first narrowed value in
// space order (or is kept); checks that the rules refuse every narrowed member.
void check_against_the_rules(const Family& family, const Shape& shape) {
  const NarrowedSpace narrowed = narrow_space(family, shape);
  std::map<std::pair<std::string, int>, long long> counted;
  long long kept = 0;
  long long accepted_narrowed = 0;
  for (const Config& config : cross_product(family.space())) {
    const NarrowedValue* under = nullptr;
    for (const auto& [name, value] : config.values) {
      for (const NarrowedValue& candidate : narrowed.narrowed) {
        if (candidate.param == name && candidate.value == value) under = &candidate;
      }
      if (under != nullptr) break;
    }
    if (under == nullptr) {
      ++kept;
      continue;
    }
    ++counted[{under->param, under->value}];
    if (family.rules(config, shape).empty()) ++accepted_narrowed;
  }
  CHECK(accepted_narrowed == 0);
  CHECK(kept == cross_product_size(narrowed.kept));
  for (const NarrowedValue& value : narrowed.narrowed) {
    const long long walked = counted[std::make_pair(value.param, value.value)];
    CHECK_MESSAGE(walked == value.members, (value.param + "=" + std::to_string(value.value)));
  }
}

}  // namespace

TEST_CASE("narrowed space: the sparse MLA values each shape rules out") {
  const Family& smla = smla_family::family();
  using smla_family::KvFormat;
  // 16 local heads: BLOCK_H 32 and 64 are wider than the 16-row padded head group.
  CHECK(narrowed_names(narrow_space(smla, smla_shape(64, 4, KvFormat::fp8_ds_mla))) ==
        std::vector<std::string>{"block_h=32", "block_h=64"});
  // 20 local heads pad to 32: only 64 is too wide.
  CHECK(narrowed_names(narrow_space(smla, smla_shape(20, 1, KvFormat::fp8_ds_mla))) ==
        std::vector<std::string>{"block_h=64"});
  CHECK(narrow_space(smla, smla_shape(64, 1, KvFormat::fp8_ds_mla)).narrowed.empty());
  // The bf16 cache has no e4m3 MMA and nothing to unpack bitwise.
  CHECK(narrowed_names(narrow_space(smla, smla_shape(64, 1, KvFormat::bf16))) ==
        std::vector<std::string>{"mma_path=2", "kv_unpack=1", "kv_unpack=2"});
  const NarrowedSpace both = narrow_space(smla, smla_shape(64, 4, KvFormat::bf16));
  CHECK(both.narrowed.size() == 5);
  CHECK(both.narrowed[0].reason == "BLOCK_H 32 > 16 local heads");
  // The kept space is the space less those values, in order.
  REQUIRE(both.kept.size() == smla.space().size());
  CHECK(both.kept[1].values == std::vector<int>{16});
  CHECK(both.kept[4].values == std::vector<int>{0, 1});
  CHECK(both.kept[6].values == std::vector<int>{0});
  CHECK(cross_product_size(both.kept) + both.narrowed[0].members + both.narrowed[1].members +
            both.narrowed[2].members + both.narrowed[3].members + both.narrowed[4].members ==
        cross_product_size(smla.space()));
}

TEST_CASE("narrowed space: every narrowed member fails the rules, and is counted once") {
  const Family& smla = smla_family::family();
  using smla_family::KvFormat;
  check_against_the_rules(smla, smla_shape(64, 4, KvFormat::fp8_ds_mla));
  check_against_the_rules(smla, smla_shape(64, 4, KvFormat::bf16));
  check_against_the_rules(smla, smla_shape(20, 1, KvFormat::bf16));
}

TEST_CASE("narrowed space: a family without a value rule keeps its whole space") {
  const Family& gemm = fp8_gemm::family();
  const bool has_value_rule = gemm.value_rule != nullptr;
  REQUIRE_FALSE(has_value_rule);
  std::map<std::string, std::string> defaults;
  for (const ShapeDim& dim : gemm.dims) defaults[dim.name] = dim.default_value;
  const NarrowedSpace space = narrow_space(gemm, gemm.canonicalize(defaults));
  CHECK(space.narrowed.empty());
  CHECK(cross_product_size(space.kept) == cross_product_size(gemm.space()));
}
