#pragma once
// The noise-aware winner rule: a tuned config replaces the family's default only when it is
// faster by more than the measurement noise AND its timing distribution does not overlap the
// default's. Pure function, no I/O.
//
// Rule (with gain = (default.median - best.median) / default.median,
//       jitter = max(default.median - default.launch_p10, best.launch_p90 - best.median)
//                / default.median when both timings carry per-launch quantiles, else 0, and
//       noise = max(best.rel_spread, default.rel_spread, kNoiseFloorRel, jitter)):
//   1. either timing has fewer than kMinSamples samples -> default kept (no spread to judge by);
//   2. gain <= 0                                         -> default kept (not faster);
//   3. gain <= noise                                     -> default kept (within noise);
//   4. best.p90_us >= default.p10_us                     -> default kept (distributions overlap);
//   5. otherwise                                         -> tuned.
// The jitter term (timing protocol 2) asks that the best's median launch be faster than the
// default's fast launches (its p10) and the default's median slower than the best's slow launches
// (its p90): a replay mean hides launch-to-launch spread, and a serving stack runs single launches.
// The 1 % floor stands for run-to-run drift (clocks, placement) that one run's spread does not
// show. Keeping the default on a tie is deliberate: a change must pay for itself, since a retune
// on another day would otherwise flip between equivalent configs.
#include <string>

#include "db/store/records.hpp"

namespace tuner::db {

inline constexpr double kNoiseFloorRel = 0.01;
inline constexpr int kMinSamples = 3;

struct Timing {
  double median_us = 0.0;
  double p10_us = 0.0;
  double p90_us = 0.0;
  int samples = 0;
  double rel_spread = 0.0;  // (p90_us - p10_us) / median_us
  // Single-launch percentiles on median_us's scale; both 0 when not measured (protocol 1).
  double launch_p10_us = 0.0;
  double launch_p90_us = 0.0;
};

struct WinnerDecision {
  Decision decision = Decision::default_kept;
  double gain_rel = 0.0;            // best's measured gain over the default (negative: slower)
  double noise_rel = 0.0;           // the threshold the gain had to beat
  double jitter_rel = 0.0;          // its per-launch part (0: no per-launch quantiles)
  double speedup_vs_default = 1.0;  // of the chosen config: 1.0 when the default is kept
  std::string reason;               // "default kept: 1.2% faster is within noise (spread 1.5%)"
};

// Throws std::invalid_argument when a timing is not finite, not positive, or p10 > median > p90
// (for the replay quantiles, and for the per-launch ones when given).
WinnerDecision decide_winner(const Timing& best, const Timing& default_timing);

}  // namespace tuner::db
