// fill 1 (deploy.hpp's split_plan): per-row splits of two sizes that fill TARGET_CTAS (one wave of
// resident CTAs at TARGET_CTAS 0). Split counts written by hand from the rule; every row's tiles
// covered once by the split grid over a wide range of shapes, each CTA's part found with the
// kernel's formula restated here
// (pipelined_work.cuh's splits_range is device code: the restatement can drift from it, and the
// GPU correctness matrix checks the kernel itself); the shape rules; the launch identity; and the
// serving launcher's parameter blocks.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "core/cluster_capacity.hpp"
#include "core/config.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "templates/sparse_mla_decode/params.h"
#include "tests/support/serving_launches.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

ClusterCapacity resident_only(int ctas) {
  ClusterCapacity capacity;
  capacity.clusters[1] = ctas;
  return capacity;
}

SplitPlan fill_plan(const DecodeDims& dims, int block_t, int target_ctas, int ctas, int fill = 1,
                    int merge = smla::kMergeCombineBf16) {
  return split_plan(dims, {block_t, 16, target_ctas, merge, smla::kScheduleSplits, fill},
                    resident_only(ctas));
}

// One CTA's row, split and tiles [first, end) in its row, as the kernel derives them from its
// linear index in the split grid (pipelined_work.cuh's split_cta, restated).
struct CtaRange {
  int row;
  int split;
  int first;
  int end;
};
CtaRange cta_range(const SplitPlan& plan, int block_t, const std::array<unsigned, 3>& grid,
                   int cta) {
  int row = 0;
  int split = 0;
  int tokens = plan.tokens_per_split;
  if (plan.short_rows == 0) {  // (splits, head groups, batch), x fastest
    split = cta % static_cast<int>(grid[0]);
    row = cta / static_cast<int>(grid[0]);
  } else if (cta < plan.short_rows * plan.short_splits) {
    row = cta / plan.short_splits;
    split = cta % plan.short_splits;
    tokens = plan.short_tokens_per_split;
  } else {
    const int index = cta - plan.short_rows * plan.short_splits;
    row = plan.short_rows + index / plan.num_splits;
    split = index % plan.num_splits;
  }
  const int first = split * (tokens / block_t);
  return {row, split, first, std::min(first + tokens / block_t, plan.tiles_per_row)};
}

}  // namespace

TEST_CASE("fill: two split counts written by hand") {
  // 16 heads in one head group, topk 2048 in 32 tiles of 64 tokens, 264 resident CTAs (the H200's
  // and the H100's 2 CTAs x 132 SMs). rows x lo splits first; the ctas left over give
  // floor(left / (hi - lo)) of the last rows hi splits.
  struct Case {
    int batch;
    int short_rows;
    int short_splits;
    int short_tokens;
    int splits;
    int tokens;
  };
  for (const Case& expected : {
           Case{69, 12, 3, 704, 4, 512},      // 264 - 207 = 57 rows of 4 splits, 12 of 3
           Case{72, 24, 3, 704, 4, 512},      // 264 - 216 = 48 of 4
           Case{92, 12, 2, 1024, 3, 704},     // 264 - 184 = 80 of 3 (11 tiles), 12 of 2
           Case{64, 56, 4, 512, 5, 448},      // 4 splits of 8, or 5 of 7 tiles for 8 rows
           Case{200, 136, 1, 2048, 2, 1024},  // 64 rows cut in two, 136 whole
           Case{9, 2, 16, 128, 32, 64},       // 16 splits of 2 tiles; 7 rows of 32 splits
           Case{66, 0, 0, 0, 4, 512},         // 264 / 66: every row 4, nothing left
           Case{264, 0, 0, 0, 1, 2048},       // one split a row fills it
           Case{300, 0, 0, 0, 1, 2048},       // past one wave of rows
           Case{8, 0, 0, 0, 32, 64},          // one tile a split: no larger count
       }) {
    CAPTURE(expected.batch);
    const SplitPlan plan = fill_plan({expected.batch, 16, 2048}, 64, kTargetOneWave, 264);
    CHECK(plan.short_rows == expected.short_rows);
    CHECK(plan.short_splits == expected.short_splits);
    CHECK(plan.short_tokens_per_split == expected.short_tokens);
    CHECK(plan.num_splits == expected.splits);
    CHECK(plan.tokens_per_split == expected.tokens);
  }
  // An explicit TARGET_CTAS is filled the same way: 256 - 207 = 49 rows of 4 splits at batch 69.
  const SplitPlan at_256 = fill_plan({69, 16, 2048}, 64, 256, 264);
  CHECK(at_256.short_rows == 20);
  CHECK(at_256.num_splits == 4);
  // No device known (plans, the launch identity): one split a row, nothing to fill.
  CHECK(split_plan({69, 16, 2048}, {64, 16, kTargetOneWave, 4, 0, 1}, {}).short_rows == 0);
  // fill 0 is the uniform plan.
  CHECK(fill_plan({69, 16, 2048}, 64, kTargetOneWave, 264, 0).num_splits == 3);
  CHECK(fill_plan({69, 16, 2048}, 64, kTargetOneWave, 264, 0).short_rows == 0);
}

TEST_CASE("fill: merges that count a row's splits as the grid's keep one count") {
  for (const int merge : {smla::kMergeCluster, smla::kMergeLastCta, smla::kMergeRowSlices}) {
    CAPTURE(merge);
    const SplitPlan filled = fill_plan({69, 16, 2048}, 64, 256, 264, 1, merge);
    const SplitPlan uniform = fill_plan({69, 16, 2048}, 64, 256, 264, 0, merge);
    CHECK(filled.short_rows == 0);
    CHECK(filled.num_splits == uniform.num_splits);
    CHECK(filled.tokens_per_split == uniform.tokens_per_split);
  }
}

TEST_CASE("fill: every row's tiles covered once, within the target, the longer splits first") {
  int filled = 0;
  for (const int ctas : {264, 188, 132}) {
    for (const int block_t : {16, 32, 64}) {
      for (const int topk : {2048, 600, 5}) {
        for (const int heads : {16, 64}) {
          for (int batch = 1; batch <= 400; ++batch) {
            CAPTURE(ctas);
            CAPTURE(block_t);
            CAPTURE(topk);
            CAPTURE(heads);
            CAPTURE(batch);
            const DecodeDims dims{batch, heads, topk};
            const SplitPlan plan = fill_plan(dims, block_t, kTargetOneWave, ctas);
            const SplitPlan uniform = fill_plan(dims, block_t, kTargetOneWave, ctas, 0);
            const int rows = batch * plan.head_groups;
            const std::array<unsigned, 3> grid = split_grid(dims, plan);
            const int launched = static_cast<int>(grid[0] * grid[1] * grid[2]);
            std::vector<int> next(rows, 0);  // each row's tiles so far, in split order
            std::vector<int> splits(rows, 0);
            int longest_short = 0;
            int longest_long = 0;
            bool covered = true;
            for (int cta = 0; cta < launched; ++cta) {
              const CtaRange range = cta_range(plan, block_t, grid, cta);
              covered = covered && range.row < rows && range.split == splits[range.row] &&
                        range.first == next[range.row] && range.end > range.first;
              if (!covered) break;
              next[range.row] = range.end;
              ++splits[range.row];
              int& longest = range.row < plan.short_rows ? longest_short : longest_long;
              longest = std::max(longest, range.end - range.first);
            }
            for (int row = 0; covered && row < rows; ++row) {
              covered =
                  next[row] == plan.tiles_per_row &&
                  splits[row] == (row < plan.short_rows ? plan.short_splits : plan.num_splits);
            }
            CHECK(covered);
            CHECK(launched >= rows * uniform.num_splits);
            if (plan.short_rows == 0) {
              CHECK(plan.num_splits * rows == launched);
              continue;
            }
            ++filled;
            CHECK(launched <= ctas);
            // No further row could take the larger count.
            CHECK(launched + plan.num_splits - plan.short_splits > ctas);
            CHECK(plan.short_splits == uniform.num_splits);
            CHECK(longest_short >= longest_long);
          }
        }
      }
    }
  }
  CHECK(filled > 1000);  // the checks above ran on many two-count plans, not a few
}

TEST_CASE("fill: the shape rules and the trim") {
  smla_family::Shape shape;
  KernelConfig config{.block_t = 64,
                      .num_stages = 2,
                      .mma_path = 1,
                      .producers = 2,
                      .target_ctas = kTargetOneWave,
                      .merge = smla::kMergeCombineBf16,
                      .fill = 1};
  CHECK(shape_mismatch(config, shape).empty());
  CHECK(measured_trim(config).empty());
  KernelConfig other = config;
  other.target_ctas = 256;
  CHECK(measured_trim(other).rfind("left out for sweep time: fill 1", 0) == 0);
  other = config;
  other.schedule = smla::kScheduleBalanced;
  CHECK(shape_mismatch(other, shape).rfind("fill 1 gives per-row splits", 0) == 0);
  other = config;
  other.mma_path = 0;
  other.producers = 0;
  CHECK(shape_mismatch(other, shape).find("pipelined kernels") != std::string::npos);
  for (const int merge : {smla::kMergeCluster, smla::kMergeLastCta, smla::kMergeRowSlices}) {
    other = config;
    other.merge = merge;
    CHECK(shape_mismatch(other, shape).rfind("merge " + std::to_string(merge) + " counts", 0) == 0);
  }
}

TEST_CASE("fill: a launch of its own, and the launch facts name the short rows") {
  smla_family::Shape shape;
  shape.batch = 69;
  KernelConfig config{.block_t = 64,
                      .num_stages = 2,
                      .mma_path = 1,
                      .producers = 2,
                      .target_ctas = kTargetOneWave,
                      .merge = smla::kMergeCombineBf16};
  const std::string uniform =
      family().launch_identity(to_config(config), canonical_shape(shape), 69);
  config.fill = 1;
  CHECK(family().launch_identity(to_config(config), canonical_shape(shape), 69) != uniform);
  // At an explicit count the plan is known without a device: 20 rows of 3 splits x 704 tokens.
  config.target_ctas = 256;
  CHECK(launch_facts_text(config, shape).find(" short_rows=20x3x704 ") != std::string::npos);
  config.fill = 0;
  CHECK(launch_facts_text(config, shape).find("short_rows") == std::string::npos);
}

TEST_CASE("fill: the serving launcher passes the short rows to the split and the combine") {
  const KernelConfig config{.block_t = 64,
                            .num_stages = 2,
                            .mma_path = 1,
                            .producers = 2,
                            .target_ctas = kTargetOneWave,
                            .merge = smla::kMergeCombineBf16,
                            .fill = 1};
  const std::vector<test::RecordedLaunch> launches =
      test::serving_launches(config, KvFormat::fp8_ds_mla, 69, 16, resident_only(264));
  REQUIRE(launches.size() == 2);                  // the split, then the combine
  CHECK(launches[0].grid[0] == 12 * 3 + 57 * 4);  // one dimension: every row's splits
  CHECK(launches[0].grid[1] == 1);
  CHECK(launches[0].grid[2] == 1);
  smla::SplitParams split{};
  REQUIRE(launches[0].params.size() == sizeof split);
  std::memcpy(&split, launches[0].params.data(), sizeof split);
  CHECK(split.num_splits == 4);
  CHECK(split.tokens_per_split == 512);
  CHECK(split.short_rows == 12);
  CHECK(split.short_tokens_per_split == 704);
  CHECK(split.short_splits == 3);
  CHECK(split.balanced_ctas == 0);
  smla::CombineParams combine{};
  REQUIRE(launches[1].params.size() == sizeof combine);
  std::memcpy(&combine, launches[1].params.data(), sizeof combine);
  CHECK(combine.num_splits == 4);
  CHECK(combine.short_rows == 12);
  CHECK(combine.short_splits == 3);
}
