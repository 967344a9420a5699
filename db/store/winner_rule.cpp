#include "db/store/winner_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tuner::db {
namespace {

void check_timing(const Timing& timing, const char* which) {
  const bool finite = std::isfinite(timing.median_us) && std::isfinite(timing.p10_us) &&
                      std::isfinite(timing.p90_us) && std::isfinite(timing.rel_spread);
  if (!finite || timing.median_us <= 0.0 || timing.p10_us <= 0.0 || timing.rel_spread < 0.0 ||
      timing.p10_us > timing.median_us || timing.median_us > timing.p90_us || timing.samples < 1) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "decide_winner: %s timing is invalid (median %g us, p10 %g us, p90 %g us, "
                  "%d samples, spread %g): want 0 < p10 <= median <= p90, samples >= 1",
                  which, timing.median_us, timing.p10_us, timing.p90_us, timing.samples,
                  timing.rel_spread);
    throw std::invalid_argument(text);
  }
  const bool no_launch = timing.launch_p10_us == 0.0 && timing.launch_p90_us == 0.0;
  if (!no_launch &&
      !(timing.launch_p10_us > 0.0 && timing.launch_p10_us <= timing.median_us &&
        timing.median_us <= timing.launch_p90_us && std::isfinite(timing.launch_p90_us))) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "decide_winner: %s per-launch quantiles are invalid (launch p10 %g us, median "
                  "%g us, launch p90 %g us): want 0 < p10 <= median <= p90, or both 0",
                  which, timing.launch_p10_us, timing.median_us, timing.launch_p90_us);
    throw std::invalid_argument(text);
  }
}

bool has_launch_quantiles(const Timing& timing) { return timing.launch_p10_us > 0.0; }

// The per-launch part of the noise threshold (see the header), 0 unless both timings carry it.
double launch_jitter(const Timing& best, const Timing& default_timing) {
  if (!has_launch_quantiles(best) || !has_launch_quantiles(default_timing)) return 0.0;
  return std::max(default_timing.median_us - default_timing.launch_p10_us,
                  best.launch_p90_us - best.median_us) /
         default_timing.median_us;
}

// `value` with `decimals` digits after the point.
std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string percent(double fraction) { return fixed(100.0 * fraction, 1) + "%"; }
std::string micros(double us) { return fixed(us, 2) + " us"; }

}  // namespace

WinnerDecision decide_winner(const Timing& best, const Timing& default_timing) {
  check_timing(best, "best");
  check_timing(default_timing, "default");
  WinnerDecision result;
  result.gain_rel = (default_timing.median_us - best.median_us) / default_timing.median_us;
  result.jitter_rel = launch_jitter(best, default_timing);
  result.noise_rel =
      std::max({best.rel_spread, default_timing.rel_spread, kNoiseFloorRel, result.jitter_rel});

  if (best.samples < kMinSamples || default_timing.samples < kMinSamples) {
    result.reason = "default kept: too few samples to judge noise (best " +
                    std::to_string(best.samples) + ", default " +
                    std::to_string(default_timing.samples) + ", need " +
                    std::to_string(kMinSamples) + ")";
  } else if (result.gain_rel == 0.0) {
    result.reason = "default kept: best is exactly as fast as the default";
  } else if (result.gain_rel < 0.0) {
    result.reason =
        "default kept: best is " + percent(-result.gain_rel) + " slower than the default";
  } else if (result.gain_rel <= result.noise_rel && result.jitter_rel == result.noise_rel) {
    result.reason = "default kept: " + percent(result.gain_rel) +
                    " faster is within the launch-to-launch jitter (" + percent(result.jitter_rel) +
                    ": default launch p10 " + micros(default_timing.launch_p10_us) +
                    ", best launch p90 " + micros(best.launch_p90_us) + ")";
  } else if (result.gain_rel <= result.noise_rel) {
    result.reason = "default kept: " + percent(result.gain_rel) +
                    " faster is within noise (spread " + percent(result.noise_rel) + ")";
  } else if (best.p90_us >= default_timing.p10_us) {
    result.reason = "default kept: " + percent(result.gain_rel) +
                    " faster but the timings overlap (best p90 " + micros(best.p90_us) +
                    " >= default p10 " + micros(default_timing.p10_us) + ")";
  } else {
    result.decision = Decision::tuned;
    result.speedup_vs_default = default_timing.median_us / best.median_us;
    result.reason =
        "tuned: " + percent(result.gain_rel) + " faster than the default (" +
        micros(default_timing.median_us) + " -> " + micros(best.median_us) + "), beyond noise " +
        percent(result.noise_rel) +
        (result.jitter_rel > 0.0 ? " (launch-to-launch jitter " + percent(result.jitter_rel) + ")"
                                 : std::string());
  }
  return result;
}

}  // namespace tuner::db
