#pragma once
// The measurement protocol, in one place: launches captured in a CUDA graph (each launch its own
// inputs, so the L2 cannot serve repeats), warm-up replays excluded, event-timed replays repeated
// until the median is known to 1 % or a time cap is reached.
#include <functional>
#include <string>
#include <vector>

#include "core/cuda_driver.hpp"

namespace tuner {

// Part of every measured trial's resume key: bump it when the protocol below changes what a
// timing means, so that a resumed sweep measures again instead of mixing protocols.
//   1: 32 launches per graph (each family's session rotates that many input sets), whatever the
//      batch: at batch 1 one replay of a 32-launch graph touched ~41 MB, less than an H200's L2
//      (BENCHMARKS.md section 8).
//   2: the family's session sizes each timing graph (DeviceSession::launches_per_graph) so that one
//      replay touches >= kL2Factor x the device's L2 in distinct input bytes; per-launch quantiles
//      (Timing::launch_p10_us / launch_p90_us) are measured with event nodes inside the graph.
inline constexpr int kMeasureProtocolVersion = 2;

// L2-safe replays: every replay of the timing graph touches at least kL2Factor x the GPU's L2 in
// distinct input bytes, or the L2 would serve repeats and flatter small batches.
inline constexpr double kL2Factor = 4.0;
inline constexpr int kMaxLaunchesPerGraph = 1024;

// Throws InputError naming `option` (e.g. "--memory-gib 0.2") when an input footprint of
// `footprint_bytes` (the KV cache, the GEMM operand rotations) is smaller than kL2Factor x
// `l2_bytes`: no launch count could then keep the L2 from serving repeats.
void check_memory_covers_l2(double footprint_bytes, long long l2_bytes, const std::string& option);

// Launches per graph, at least `minimum`, whose independent index sets (each `rows_per_launch`
// valid rows drawn uniformly from `kv_rows` rows of `row_bytes`) touch >= kL2Factor x `l2_bytes`
// distinct bytes in expectation (D draws hit N (1 - exp(-D/N)) distinct rows of N). `l2_bytes` 0
// (an L2 flush between replays instead) gives `minimum`. Throws InputError naming `option` when
// that needs more than kMaxLaunchesPerGraph launches.
int l2_safe_launches(long long l2_bytes, long long kv_rows, double rows_per_launch, int row_bytes,
                     int minimum, const std::string& option);

struct Timing {
  double median_us = 0.0;  // per launch
  double p10_us = 0.0;
  double p90_us = 0.0;
  int samples = 0;  // graph replays timed
  // Relative standard error of the median: 1.2533 * sigma / sqrt(n) / median, with sigma estimated
  // robustly from the interquartile range (IQR / 1.349).
  double rel_spread = 0.0;
  // Launch-to-launch jitter: the 10th/90th percentiles of single launches (event nodes between the
  // launches of one graph), scaled by median_us / their own median so that they sit on the same
  // scale as the median (the event nodes cost a little time of their own). 0 when not measured.
  double launch_p10_us = 0.0;
  double launch_p90_us = 0.0;
};

struct MeasureOptions {
  int launches_per_graph = 32;
  int warmup_replays = 3;
  int min_samples = 10;
  int max_samples = 200;
  double target_rel_spread = 0.01;
  double time_cap_ms = 400.0;
  // Replays of the event-instrumented graph that give the per-launch quantiles (0: not measured).
  // One replay of an L2-safe graph already gives launches_per_graph samples.
  int launch_spread_replays = 2;
  // Enqueued before every replay, outside the timed events (e.g. an L2 flush); may be empty.
  std::function<void(CUstream)> before_replay;
};

// The batch search's screen: the same L2-safe graph as `full`, one warm-up replay and `replays`
// timed replays (no time cap, no target spread), no per-launch quantiles. A ranking of candidates,
// several times cheaper than the full protocol; the winner rule never compares screens.
MeasureOptions screen_options(MeasureOptions full, int replays);

// Enqueues launch number `launch` (0 .. launches_per_graph-1) on `stream`. Must be capturable.
using Enqueue = std::function<void(int launch, CUstream stream)>;

// Refuses (InputError) to run on a stream that is capturing: timing inside capture is meaningless
// and would break the caller's graph.
// `samples_out`, when given, receives every per-launch sample (for merging interleaved passes).
Timing time_graph(const Enqueue& enqueue, cuda::Stream& stream, const MeasureOptions& options,
                  std::vector<double>* samples_out = nullptr);

// Summary statistics of per-launch samples (microseconds); no launch quantiles.
Timing summarize(std::vector<double> samples_us);

// Sets timing.launch_p10_us / launch_p90_us from single-launch durations `launch_us`, scaled by
// timing.median_us / their median. Leaves them 0 when there are none.
void scale_launch_quantiles(Timing& timing, std::vector<double> launch_us);

// One timing from several passes (interleaved re-timing rounds): the statistics of all their
// samples, and per-launch quantiles at the passes' mean ratio to their medians.
Timing merge_passes(const std::vector<double>& samples_us, const std::vector<Timing>& passes);

// Device-to-device copy bandwidth in GB/s (bytes read + bytes written per second), from event-timed
// cuMemcpyDtoDAsync of `bytes`, median of `repeats`.
double copy_bandwidth_gbs(std::size_t bytes, cuda::Stream& stream, int repeats = 20);

}  // namespace tuner
