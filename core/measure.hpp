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
//   1: 32 launches per graph (each family's session rotates that many input sets).
// (The L2-sized launch counts of branch issue-11 were sparse-MLA-specific worker code; they did
// not survive the merge into the generic worker and are still to be moved into the families.)
inline constexpr int kMeasureProtocolVersion = 1;

// L2-safe replays: every replay of the timing graph touches at least kL2Factor x the GPU's L2 in
// distinct KV bytes, or the L2 would serve repeats and flatter small batches.
inline constexpr double kL2Factor = 4.0;
inline constexpr int kMaxLaunchesPerGraph = 1024;

// Throws InputError naming `option` (e.g. "--kv-gib 0.2") when a KV cache of `kv_bytes` is
// smaller than kL2Factor x `l2_bytes`.
void check_kv_covers_l2(double kv_bytes, long long l2_bytes, const std::string& option);

// Launches per graph, at least `minimum`, whose independent index sets (each `rows_per_launch`
// valid rows drawn uniformly from `kv_rows` rows of `row_bytes`) touch >= kL2Factor x `l2_bytes`
// distinct bytes in expectation (D draws hit N (1 - exp(-D/N)) distinct rows of N). Throws
// InputError naming `option` when that needs more than kMaxLaunchesPerGraph launches.
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
};

struct MeasureOptions {
  int launches_per_graph = 32;
  int warmup_replays = 3;
  int min_samples = 10;
  int max_samples = 200;
  double target_rel_spread = 0.01;
  double time_cap_ms = 400.0;
};

// Enqueues launch number `launch` (0 .. launches_per_graph-1) on `stream`. Must be capturable.
using Enqueue = std::function<void(int launch, CUstream stream)>;

// Refuses (InputError) to run on a stream that is capturing: timing inside capture is meaningless
// and would break the caller's graph.
// `samples_out`, when given, receives every per-launch sample (for merging interleaved passes).
Timing time_graph(const Enqueue& enqueue, cuda::Stream& stream, const MeasureOptions& options,
                  std::vector<double>* samples_out = nullptr);

// Summary statistics of per-launch samples (microseconds).
Timing summarize(std::vector<double> samples_us);

// Device-to-device copy bandwidth in GB/s (bytes read + bytes written per second), from event-timed
// cuMemcpyDtoDAsync of `bytes`, median of `repeats`.
double copy_bandwidth_gbs(std::size_t bytes, cuda::Stream& stream, int repeats = 20);

}  // namespace tuner
