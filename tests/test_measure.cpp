// The measurement protocol's pure parts (core/measure.hpp, core/l2_flush.hpp): the L2-safe launch
// count, the footprint refusal, per-launch quantiles, merging passes, the flush size. Expected
// values are worked out in the comments or checked against a simulation, not copied from output.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <unordered_set>
#include <vector>

#include "core/error.hpp"
#include "core/l2_flush.hpp"
#include "core/measure.hpp"

using tuner::InputError;

namespace {

constexpr long long kH200L2 = 60LL << 20;  // 60 MiB
constexpr long long kGiB = 1LL << 30;

// Expected distinct bytes of `launches` launches of `rows_per_launch` uniform draws from `rows`.
double expected_distinct_bytes(int launches, double rows_per_launch, double rows, int row_bytes) {
  return rows * (1.0 - std::exp(-launches * rows_per_launch / rows)) * row_bytes;
}

}  // namespace

TEST_CASE("l2-safe launches: the smallest count whose draws cover 4x the L2") {
  // Sparse MLA fp8_ds_mla at batch 1: 656-byte rows, 1 GiB of them (1636802 rows), topk 2048 with
  // 3 % invalid entries = 1986.56 rows per launch. 4 x 60 MiB / 656 B = 383625 distinct rows are
  // needed; D = -N ln(1 - 383625/1636802) = 437129 draws = 220.04 launches -> 221.
  const long long rows = kGiB / 656 + 1;
  const double per_launch = 2048 * 0.97;
  const int launches =
      tuner::l2_safe_launches(kH200L2, rows, per_launch, 656, 32, "--memory-gib 1");
  CHECK(launches == 221);
  // Minimal: one launch less would not reach 4x L2 in expectation, this one does.
  CHECK(expected_distinct_bytes(launches, per_launch, rows, 656) >= 4.0 * kH200L2);
  CHECK(expected_distinct_bytes(launches - 1, per_launch, rows, 656) < 4.0 * kH200L2);
  // Batch 8 reads 8x as many rows per launch: 28 would do, the minimum of 32 applies.
  CHECK(tuner::l2_safe_launches(kH200L2, rows, 8 * per_launch, 656, 32, "x") == 32);
  // No L2 to cover (flushed between replays instead): the minimum.
  CHECK(tuner::l2_safe_launches(0, rows, per_launch, 656, 32, "x") == 32);
  // A smaller L2 needs proportionally fewer launches: 10 MiB -> 4x10 MiB / 656 B = 63937 rows,
  // -N ln(1 - 63937/1636802) = 65220 draws = 32.8 launches -> 33.
  CHECK(tuner::l2_safe_launches(10LL << 20, rows, per_launch, 656, 1, "x") == 33);
}

TEST_CASE("l2-safe launches: a simulation of the draws touches 4x the L2") {
  // Draw the index sets as the device fill does (uniform rows, 3 % left out) and count the
  // distinct rows one replay of the chosen graph reads: the expectation formula must hold.
  const long long rows = kGiB / 656 + 1;
  const int launches = tuner::l2_safe_launches(kH200L2, rows, 2048 * 0.97, 656, 32, "x");
  std::mt19937_64 random(12345);
  std::uniform_int_distribution<long long> row(0, rows - 1);
  std::uniform_int_distribution<int> per_mille(0, 999);
  std::unordered_set<long long> touched;
  for (int launch = 0; launch < launches; ++launch) {
    for (int i = 0; i < 2048; ++i) {
      if (per_mille(random) >= 30) touched.insert(row(random));
    }
  }
  CHECK(static_cast<double>(touched.size()) * 656 >= 0.99 * 4.0 * kH200L2);
}

TEST_CASE("l2-safe launches: a cache too close to 4x the L2 is refused, naming the option") {
  // 4x L2 is the whole cache: every row would have to be drawn, which takes infinitely many.
  const long long rows = 4 * kH200L2 / 656;
  CHECK_THROWS_WITH_AS(
      tuner::l2_safe_launches(kH200L2, rows, 1986.56, 656, 32, "--memory-gib 0.23"),
      doctest::Contains("--memory-gib 0.23"), InputError);
}

TEST_CASE("memory check: a footprint under 4x the L2 is refused with the sizes and the fix") {
  // 0.2 GiB = 204.8 MiB < 240 MiB = 4 x 60 MiB; the fix asks for ceil(240/1024 * 100)/100 = 0.24.
  CHECK_THROWS_WITH_AS(
      tuner::check_memory_covers_l2(0.2 * kGiB, kH200L2, "--memory-gib 0.2"),
      doctest::Contains("--memory-gib 0.2 gives an input footprint of 204.8 MiB, less than 4x this "
                        "GPU's L2 (60.0 MiB of L2, so at least 240.0 MiB)"),
      InputError);
  CHECK_THROWS_WITH_AS(tuner::check_memory_covers_l2(0.2 * kGiB, kH200L2, "--memory-gib 0.2"),
                       doctest::Contains("pass --memory-gib 0.24 or more"), InputError);
  CHECK_NOTHROW(tuner::check_memory_covers_l2(4.0 * kH200L2, kH200L2, "x"));
  CHECK_NOTHROW(tuner::check_memory_covers_l2(1.0 * kGiB, kH200L2, "x"));
  CHECK_THROWS_AS(tuner::check_memory_covers_l2(4.0 * kH200L2 - 1, kH200L2, "x"), InputError);
}

TEST_CASE("per-launch quantiles are scaled to the graph median") {
  // Single launches 10, 11, ..., 20 us (median 15, p10 11, p90 19); the replays' median is 30 us,
  // so the scale is 2: launch p10 22 us, launch p90 38 us.
  tuner::Timing timing;
  timing.median_us = 30.0;
  std::vector<double> launches;
  for (int us = 20; us >= 10; --us) launches.push_back(us);  // unsorted on purpose
  tuner::scale_launch_quantiles(timing, launches);
  CHECK(timing.launch_p10_us == doctest::Approx(22.0));
  CHECK(timing.launch_p90_us == doctest::Approx(38.0));
  tuner::Timing none;
  none.median_us = 30.0;
  tuner::scale_launch_quantiles(none, {});
  CHECK(none.launch_p10_us == 0.0);
  CHECK(none.launch_p90_us == 0.0);
}

TEST_CASE("merged passes keep the passes' per-launch spread relative to the merged median") {
  // Pass 1: median 10, launch p10/p90 9/12 (0.9, 1.2); pass 2: median 20, launch 16/26 (0.8, 1.3).
  // Merged samples {10, 10, 20, 20, 20}: median 20; ratios average 0.85 and 1.25 -> 17 and 25.
  tuner::Timing first;
  first.median_us = 10.0;
  first.launch_p10_us = 9.0;
  first.launch_p90_us = 12.0;
  tuner::Timing second;
  second.median_us = 20.0;
  second.launch_p10_us = 16.0;
  second.launch_p90_us = 26.0;
  const tuner::Timing merged = tuner::merge_passes({10, 10, 20, 20, 20}, {first, second});
  CHECK(merged.median_us == 20.0);
  CHECK(merged.samples == 5);
  CHECK(merged.launch_p10_us == doctest::Approx(17.0));
  CHECK(merged.launch_p90_us == doctest::Approx(25.0));
  // Passes without quantiles (protocol 1) leave them unmeasured.
  const tuner::Timing bare = tuner::merge_passes({10, 20}, {tuner::Timing{}});
  CHECK(bare.launch_p10_us == 0.0);
}

TEST_CASE("L2 flush: twice the L2 in whole 4-byte words, refused without an L2") {
  CHECK(tuner::l2_flush_bytes(kH200L2) == 125829120u);  // 2 x 62914560
  CHECK(tuner::l2_flush_bytes(5) == 12u);               // 10 bytes rounded up to 3 words
  CHECK_THROWS_WITH_AS(tuner::l2_flush_bytes(0), doctest::Contains("use --l2 sets"), InputError);
}

TEST_CASE("screen options: the same graph, one warm-up, a fixed number of replays, no quantiles") {
  tuner::MeasureOptions full;
  full.launches_per_graph = 221;  // the family's L2-safe count: a screen keeps it
  const tuner::MeasureOptions screen = tuner::screen_options(full, 4);
  CHECK(screen.launches_per_graph == 221);
  CHECK(screen.warmup_replays == 1);
  CHECK(screen.min_samples == 4);
  CHECK(screen.max_samples == 4);
  CHECK(screen.launch_spread_replays == 0);
  CHECK(full.launch_spread_replays > 0);  // the full protocol's figures stay what they were
  CHECK(full.min_samples > screen.min_samples);
}
