// The noise-aware winner rule (db/store/winner_rule.hpp): replay spread, the 1 % floor, overlap,
// and (timing protocol 2) launch-to-launch jitter. Expected figures are worked out by hand in the
// comments, not copied from output.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "db/store/winner_rule.hpp"

using namespace tuner::db;

TEST_CASE("winner rule: a clear win replaces the default") {
  const Timing best{16.0, 15.9, 16.2, 200, 0.02};
  const Timing default_timing{18.6, 18.3, 19.0, 200, 0.04};
  const WinnerDecision decision = decide_winner(best, default_timing);
  CHECK(decision.decision == Decision::tuned);
  CHECK(decision.gain_rel == doctest::Approx(2.6 / 18.6));
  CHECK(decision.noise_rel == 0.04);
  CHECK(decision.speedup_vs_default == doctest::Approx(18.6 / 16.0));
  CHECK(decision.reason ==
        "tuned: 14.0% faster than the default (18.60 us -> 16.00 us), beyond noise 4.0%");
}

TEST_CASE("winner rule: a gain within the noise keeps the default") {
  const Timing best{18.38, 18.2, 18.6, 200, 0.015};
  const Timing default_timing{18.6, 18.5, 18.75, 200, 0.013};
  const WinnerDecision decision = decide_winner(best, default_timing);
  CHECK(decision.decision == Decision::default_kept);
  CHECK(decision.speedup_vs_default == 1.0);
  CHECK(decision.reason == "default kept: 1.2% faster is within noise (spread 1.5%)");
}

TEST_CASE("winner rule: the 1% floor applies when both spreads are tiny") {
  const Timing best{18.45, 18.44, 18.46, 200, 0.001};
  const Timing default_timing{18.6, 18.59, 18.61, 200, 0.001};
  const WinnerDecision decision = decide_winner(best, default_timing);
  CHECK(decision.decision == Decision::default_kept);
  CHECK(decision.noise_rel == kNoiseFloorRel);
  CHECK(decision.reason == "default kept: 0.8% faster is within noise (spread 1.0%)");
}

TEST_CASE("winner rule: overlapping distributions keep the default") {
  // 5% faster in the median, beyond the 4% spread, but best's slow tail reaches default's fast
  // one.
  const Timing best{17.67, 17.0, 18.4, 200, 0.04};
  const Timing default_timing{18.6, 18.3, 18.9, 200, 0.03};
  const WinnerDecision decision = decide_winner(best, default_timing);
  CHECK(decision.decision == Decision::default_kept);
  CHECK(decision.reason ==
        "default kept: 5.0% faster but the timings overlap (best p90 18.40 us >= default p10 "
        "18.30 us)");
}

TEST_CASE("winner rule: slower, tied and under-sampled candidates keep the default") {
  const Timing default_timing{18.6, 18.5, 18.7, 200, 0.01};
  CHECK(decide_winner(Timing{19.0, 18.9, 19.1, 200, 0.01}, default_timing).reason ==
        "default kept: best is 2.2% slower than the default");
  CHECK(decide_winner(default_timing, default_timing).reason ==
        "default kept: best is exactly as fast as the default");
  const WinnerDecision few = decide_winner(Timing{10.0, 9.9, 10.1, 2, 0.02}, default_timing);
  CHECK(few.decision == Decision::default_kept);
  CHECK(few.reason == "default kept: too few samples to judge noise (best 2, default 200, need 3)");
}

TEST_CASE(
    "winner rule: a win in the replay means but within the per-launch jitter keeps the "
    "default") {
  // The same replay figures as the clear win above (14% faster, spreads 2% and 4%), but single
  // launches of the default spread down to 15.5 us: 18.6 - 15.5 = 3.1 us = 16.7% of 18.6 us, more
  // than the 2.6 us (14.0%) gain. Without the per-launch quantiles this is "tuned".
  const Timing best{16.0, 15.9, 16.2, 200, 0.02, 15.0, 17.0};
  const Timing default_timing{18.6, 18.3, 19.0, 200, 0.04, 15.5, 21.0};
  const WinnerDecision decision = decide_winner(best, default_timing);
  CHECK(decision.decision == Decision::default_kept);
  CHECK(decision.jitter_rel == doctest::Approx(3.1 / 18.6));
  CHECK(decision.noise_rel == doctest::Approx(3.1 / 18.6));
  CHECK(decision.reason ==
        "default kept: 14.0% faster is within the launch-to-launch jitter (16.7%: default launch "
        "p10 15.50 us, best launch p90 17.00 us)");
  // The best's slow launches count too: best launch p90 18.0 us is 2.0 us = 10.8% above its
  // median, the default's launch p10 17.9 us only 0.7 us (3.8%) below its own: 10.8% < 14.0%.
  const Timing tight_default{18.6, 18.3, 19.0, 200, 0.04, 17.9, 19.2};
  const Timing slow_tail{16.0, 15.9, 16.2, 200, 0.02, 15.5, 18.0};
  const WinnerDecision tuned = decide_winner(slow_tail, tight_default);
  CHECK(tuned.decision == Decision::tuned);
  CHECK(tuned.jitter_rel == doctest::Approx(2.0 / 18.6));
  CHECK(tuned.reason ==
        "tuned: 14.0% faster than the default (18.60 us -> 16.00 us), beyond noise 10.8% "
        "(launch-to-launch jitter 10.8%)");
  // A best launch p90 of 18.8 us (2.8 us = 15.1% above its median) is beyond the 14.0% gain.
  const Timing slower_tail{16.0, 15.9, 16.2, 200, 0.02, 15.5, 18.8};
  CHECK(decide_winner(slower_tail, tight_default).decision == Decision::default_kept);
}

TEST_CASE("winner rule: per-launch quantiles count only when both timings have them") {
  // Protocol-1 trials (no quantiles) next to protocol-2 ones: the replay rule alone, as before.
  const Timing best{16.0, 15.9, 16.2, 200, 0.02, 10.0, 30.0};
  const Timing default_timing{18.6, 18.3, 19.0, 200, 0.04};
  const WinnerDecision decision = decide_winner(best, default_timing);
  CHECK(decision.decision == Decision::tuned);
  CHECK(decision.jitter_rel == 0.0);
  CHECK(decision.noise_rel == 0.04);
}

TEST_CASE("winner rule: impossible per-launch quantiles are a programming error") {
  const Timing good{18.6, 18.5, 18.7, 200, 0.01};
  // launch p10 above the median; launch p90 below it; one of the two missing.
  CHECK_THROWS_AS(decide_winner(Timing{16.0, 15.9, 16.2, 200, 0.02, 16.5, 17.0}, good),
                  std::invalid_argument);
  CHECK_THROWS_AS(decide_winner(Timing{16.0, 15.9, 16.2, 200, 0.02, 15.0, 15.5}, good),
                  std::invalid_argument);
  CHECK_THROWS_AS(decide_winner(good, Timing{16.0, 15.9, 16.2, 200, 0.02, 15.0, 0.0}),
                  std::invalid_argument);
}

TEST_CASE("winner rule: an impossible timing is a programming error") {
  const Timing good{18.6, 18.5, 18.7, 200, 0.01};
  CHECK_THROWS_AS(decide_winner(Timing{0.0, 0.0, 0.0, 10, 0.0}, good), std::invalid_argument);
  CHECK_THROWS_AS(decide_winner(good, Timing{18.6, 18.9, 18.7, 10, 0.01}), std::invalid_argument);
  CHECK_THROWS_AS(decide_winner(Timing{NAN, 1.0, 2.0, 10, 0.01}, good), std::invalid_argument);
}
