#pragma once
// A plan written by hand for the plan-record tests: `count` configs of the sparse MLA family's
// cross product (every `stride`-th), row i with fate i % 5 (every plan fate) and reason
// "reason i % 7", for 16 local heads on sm_90. No compile ran: callers add what their case needs.
#include <cstddef>
#include <string>
#include <vector>

#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "tuner/plan.hpp"

namespace tuner::test {

inline PlanResult hand_made_plan(std::size_t count, std::size_t stride) {
  const Family& family = smla_family::family();
  PlanResult plan;
  plan.family = family.name;
  plan.shape = smla_family::canonical_shape(smla_family::Shape{});
  plan.arch = arch_by_name("sm_90");
  const std::vector<Config> configs = cross_product(family.space());
  for (std::size_t index = 0; index < count; ++index) {
    PlanRow row;
    row.config = configs.at(index * stride);
    row.fate = static_cast<Fate>(index % 5);
    row.reason = "reason " + std::to_string(index % 7);
    plan.rows.push_back(row);
  }
  return plan;
}

}  // namespace tuner::test
