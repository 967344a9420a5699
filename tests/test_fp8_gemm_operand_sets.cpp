// kernels/fp8_gemm/operand_sets.hpp: how many rotations of the GEMM operands a timing graph cycles
// through so that one replay reads >= 4x the L2, and the refusals. Expected values are worked out
// in the comments from the shapes, not copied from output.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "kernels/fp8_gemm/operand_sets.hpp"

using tuner::fp8_gemm::operand_sets;

namespace {

constexpr long long kH200L2 = 60LL << 20;  // 4x = 251658240 bytes

// One rotation of an m x n x k problem: A (m k), B (n k) fp8 and their fp32 scales per 128 of k.
double set_bytes(double m, double n, double k) {
  return m * k + n * k + (m + n / 128) * (k / 128) * 4;
}

}  // namespace

TEST_CASE("fp8 GEMM operand sets: a big weight already covers the L2 with the minimum") {
  // m 1, n 4096, k 7168: 29374688 bytes a set; 4x L2 takes ceil(251658240 / 29374688) = 9 sets,
  // 1 GiB holds 36; the 32-launch minimum cycles through 32 distinct sets (940 MB per replay).
  const double bytes = set_bytes(1, 4096, 7168);
  CHECK(bytes == 29374688.0);
  const auto sets = operand_sets(bytes, 1.0, kH200L2, 32, "m");
  CHECK(sets.sets == 32);
  CHECK(sets.launches == 32);
}

TEST_CASE("fp8 GEMM operand sets: a small weight needs more launches than the minimum") {
  // m 1, n 1024, k 1024: 1049888 bytes; ceil(251658240 / 1049888) = 240 sets and launches, and
  // they are the fewest: 239 sets would read less than 4x the L2.
  const double bytes = set_bytes(1, 1024, 1024);
  const auto sets = operand_sets(bytes, 1.0, kH200L2, 32, "m");
  CHECK(sets.sets == 240);
  CHECK(sets.launches == 240);
  CHECK(sets.sets * bytes >= 4.0 * kH200L2);
  CHECK((sets.sets - 1) * bytes < 4.0 * kH200L2);
  // Flushed between replays (l2 0): the minimum, over as many sets as fit up to it.
  const auto flushed = operand_sets(bytes, 1.0, 0, 32, "m");
  CHECK(flushed.sets == 32);
  CHECK(flushed.launches == 32);
  CHECK(operand_sets(set_bytes(1, 4096, 7168), 0.05, 0, 32, "m").sets == 1);  // 53.7 MB: 1 set
}

TEST_CASE("fp8 GEMM operand sets: footprints that cannot cover 4x the L2 are refused") {
  // Under 4x L2 as a whole.
  CHECK_THROWS_WITH_AS(operand_sets(set_bytes(1, 4096, 7168), 0.2, kH200L2, 32, "--memory-gib 0.2"),
                       doctest::Contains("--memory-gib 0.2 gives an input footprint of"),
                       tuner::InputError);
  // 0.25 GiB = 268 MB covers 4x L2, but holds only 2 whole sets of 100 MB (3 are needed).
  CHECK_THROWS_WITH_AS(operand_sets(100e6, 0.25, kH200L2, 32, "--memory-gib 0.25"),
                       doctest::Contains("holds 2 whole sets"), tuner::InputError);
  // Sets of 1 KB would need 245760 launches per graph.
  CHECK_THROWS_WITH_AS(operand_sets(1024, 1.0, kH200L2, 32, "--memory-gib 1"),
                       doctest::Contains("launches per graph (over 1024)"), tuner::InputError);
  // Smaller than a single set.
  CHECK_THROWS_AS(operand_sets(2e9, 1.0, 0, 32, "--memory-gib 1"), tuner::InputError);
}
