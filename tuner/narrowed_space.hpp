#pragma once
// The cross product a plan enumerates row by row: the family's space less the parameter values its
// value_rule rules out for the whole shape. Each such value is one fate for every member it stands
// for, recorded once (tuner/plan_record.hpp): at 16 local heads BLOCK_H 32 and 64 are two thirds
// of the sparse MLA plan's 1.18 M members, and writing their rows one by one was most of a cold
// sweep's plan phase (BENCHMARKS.md section 7, twenty-ninth session).
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/family.hpp"
#include "core/shape.hpp"

namespace tuner {

struct NarrowedValue {
  std::string param;
  int value = 0;
  std::string reason;  // the value_rule's
  // The members of the family's cross product it stands for: those with this value whose earlier
  // parameters (space order) hold no narrowed value, so that every member stands under one fate.
  long long members = 0;
};

struct NarrowedSpace {
  std::vector<Parameter> kept;          // the space, in order, less the narrowed values
  std::vector<NarrowedValue> narrowed;  // in space order, then value order
};

// The family's space for `shape`: every value the family's value_rule rules out moves to
// `narrowed` (nothing when the family has no value_rule).
NarrowedSpace narrow_space(const Family& family, const Shape& shape);

// The members of a space's cross product (the product of its value counts).
long long cross_product_size(const std::vector<Parameter>& space);

// A narrowed value's plan row as the store keeps it: the one-parameter config {"param":value}.
Config narrowed_config(const NarrowedValue& narrowed);

}  // namespace tuner
