#include "core/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace tuner {

namespace {

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double weight = position - static_cast<double>(lower);
  return sorted[lower] * (1.0 - weight) + sorted[upper] * weight;
}

void refuse_capturing(const cuda::Stream& stream) {
  if (stream.is_capturing()) {
    throw InputError(
        "the measuring stream is capturing a CUDA graph: tuner never benchmarks during capture; "
        "end the capture first (serving code should look configs up with tunedb instead)");
  }
}

}  // namespace

Timing summarize(std::vector<double> samples_us) {
  std::sort(samples_us.begin(), samples_us.end());
  Timing timing;
  timing.samples = static_cast<int>(samples_us.size());
  timing.median_us = quantile(samples_us, 0.5);
  timing.p10_us = quantile(samples_us, 0.1);
  timing.p90_us = quantile(samples_us, 0.9);
  const double sigma = (quantile(samples_us, 0.75) - quantile(samples_us, 0.25)) / 1.349;
  timing.rel_spread =
      timing.median_us > 0.0 && timing.samples > 0
          ? 1.2533 * sigma / std::sqrt(static_cast<double>(timing.samples)) / timing.median_us
          : 0.0;
  return timing;
}

namespace {

// Captures `launches` launches into a graph; with `events` (launches + 1 of them), an event record
// node before every launch and after the last.
cuda::GraphExec capture_graph(const Enqueue& enqueue, cuda::Stream& stream, int launches,
                              const std::vector<cuda::Event>* events) {
  cuda::begin_capture(stream, "time_graph capture");
  try {
    for (int launch = 0; launch < launches; ++launch) {
      if (events != nullptr)
        (*events)[static_cast<std::size_t>(launch)].record_in_capture(stream.get());
      enqueue(launch, stream.get());
    }
    if (events != nullptr) events->back().record_in_capture(stream.get());
  } catch (...) {
    cuda::Graph abandoned = cuda::end_capture(stream, "time_graph capture (abandoned)");
    throw;
  }
  const cuda::Graph graph = cuda::end_capture(stream, "time_graph capture");
  return graph.instantiate("time_graph instantiate");
}

void replay(const cuda::GraphExec& exec, cuda::Stream& stream, const MeasureOptions& options,
            const char* context) {
  if (options.before_replay) options.before_replay(stream.get());
  exec.launch(stream.get(), context);
}

// Single-launch durations (us) from `replays` replays of the graph with event nodes between its
// launches: launch-to-launch jitter that a replay's mean hides.
std::vector<double> launch_durations(const Enqueue& enqueue, cuda::Stream& stream,
                                     const MeasureOptions& options) {
  const int launches = options.launches_per_graph;
  const std::vector<cuda::Event> events(static_cast<std::size_t>(launches) + 1);
  const cuda::GraphExec exec = capture_graph(enqueue, stream, launches, &events);
  std::vector<double> durations_us;
  for (int round = -1; round < options.launch_spread_replays; ++round) {
    replay(exec, stream, options, "per-launch replay");
    events.back().synchronize();
    if (round < 0) continue;  // the first replay of a new graph pays for its upload
    for (std::size_t i = 0; i + 1 < events.size(); ++i)
      durations_us.push_back(1000.0 * events[i + 1].elapsed_ms_since(events[i]));
  }
  return durations_us;
}

}  // namespace

void scale_launch_quantiles(Timing& timing, std::vector<double> launch_us) {
  std::sort(launch_us.begin(), launch_us.end());
  const double median = quantile(launch_us, 0.5);
  if (launch_us.empty() || !(median > 0.0)) return;
  const double scale = timing.median_us / median;
  timing.launch_p10_us = quantile(launch_us, 0.1) * scale;
  timing.launch_p90_us = quantile(launch_us, 0.9) * scale;
}

Timing merge_passes(const std::vector<double>& samples_us, const std::vector<Timing>& passes) {
  Timing merged = summarize(samples_us);
  double p10_rel = 0.0;
  double p90_rel = 0.0;
  int counted = 0;
  for (const Timing& pass : passes) {
    if (!(pass.median_us > 0.0) || !(pass.launch_p10_us > 0.0)) continue;
    p10_rel += pass.launch_p10_us / pass.median_us;
    p90_rel += pass.launch_p90_us / pass.median_us;
    ++counted;
  }
  if (counted == 0) return merged;
  merged.launch_p10_us = merged.median_us * p10_rel / counted;
  merged.launch_p90_us = merged.median_us * p90_rel / counted;
  return merged;
}

Timing time_graph(const Enqueue& enqueue, cuda::Stream& stream, const MeasureOptions& options,
                  std::vector<double>* samples_out) {
  refuse_capturing(stream);
  const cuda::GraphExec exec = capture_graph(enqueue, stream, options.launches_per_graph, nullptr);
  for (int warm = 0; warm < options.warmup_replays; ++warm)
    replay(exec, stream, options, "warm-up");
  stream.synchronize("warm-up");
  cuda::Event start;
  cuda::Event stop;
  std::vector<double> samples_us;
  const auto began = std::chrono::steady_clock::now();
  while (static_cast<int>(samples_us.size()) < options.max_samples) {
    // The flush (before_replay) is enqueued before the start event: it is never timed.
    if (options.before_replay) options.before_replay(stream.get());
    start.record(stream.get());
    exec.launch(stream.get(), "timed replay");
    stop.record(stream.get());
    stop.synchronize();
    samples_us.push_back(1000.0 * stop.elapsed_ms_since(start) / options.launches_per_graph);
    if (static_cast<int>(samples_us.size()) < options.min_samples) continue;
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    if (summarize(samples_us).rel_spread < options.target_rel_spread ||
        elapsed_ms > options.time_cap_ms) {
      break;
    }
  }
  if (samples_out != nullptr) *samples_out = samples_us;
  Timing timing = summarize(samples_us);
  if (options.launch_spread_replays > 0)
    scale_launch_quantiles(timing, launch_durations(enqueue, stream, options));
  return timing;
}

MeasureOptions screen_options(MeasureOptions full, int replays) {
  full.warmup_replays = 1;
  full.min_samples = replays;
  full.max_samples = replays;
  full.launch_spread_replays = 0;
  return full;
}

void check_memory_covers_l2(double footprint_bytes, long long l2_bytes, const std::string& option) {
  const double wanted = kL2Factor * static_cast<double>(l2_bytes);
  if (footprint_bytes < wanted) {
    char text[512];
    std::snprintf(text, sizeof text,
                  "%s gives an input footprint of %.1f MiB, less than %gx this GPU's L2 (%.1f MiB "
                  "of L2, so at least %.1f MiB): the L2 would serve repeated reads and flatter the "
                  "timings; pass --memory-gib %.2f or more (the default 1 GiB is enough for an L2 "
                  "of up to 256 MiB)",
                  option.c_str(), footprint_bytes / 1048576.0, kL2Factor,
                  static_cast<double>(l2_bytes) / 1048576.0, wanted / 1048576.0,
                  std::ceil(wanted / 1073741824.0 * 100.0) / 100.0);
    throw InputError(text);
  }
}

int l2_safe_launches(long long l2_bytes, long long kv_rows, double rows_per_launch, int row_bytes,
                     int minimum, const std::string& option) {
  const double target_rows = kL2Factor * static_cast<double>(l2_bytes) / row_bytes;
  const auto rows = static_cast<double>(kv_rows);
  const double fraction = target_rows / rows;
  const double draws = fraction < 1.0 ? -rows * std::log1p(-fraction) : HUGE_VAL;
  const double launches = std::ceil(draws / std::max(rows_per_launch, 1.0));
  if (!(launches <= kMaxLaunchesPerGraph)) {
    throw InputError(option + ": a KV cache of " + std::to_string(kv_rows) +
                     " rows is too close to 4x this GPU's L2 for " +
                     std::to_string(static_cast<long long>(rows_per_launch)) +
                     " rows per launch (over " + std::to_string(kMaxLaunchesPerGraph) +
                     " launches per graph would be needed); pass a larger KV cache");
  }
  return std::max(minimum, static_cast<int>(launches));
}

double copy_bandwidth_gbs(std::size_t bytes, cuda::Stream& stream, int repeats) {
  const cuda::DeviceBuffer source(bytes, "copy bandwidth source");
  const cuda::DeviceBuffer destination(bytes, "copy bandwidth destination");
  source.fill_u32(0x3f800000u, stream.get());
  cuda::copy_device_to_device(destination.get(), source.get(), bytes, stream.get(),
                              "copy bandwidth");
  cuda::Event start;
  cuda::Event stop;
  std::vector<double> seconds;
  for (int i = 0; i < repeats; ++i) {
    start.record(stream.get());
    cuda::copy_device_to_device(destination.get(), source.get(), bytes, stream.get(),
                                "copy bandwidth");
    stop.record(stream.get());
    stop.synchronize();
    seconds.push_back(stop.elapsed_ms_since(start) / 1000.0);
  }
  std::sort(seconds.begin(), seconds.end());
  return 2.0 * static_cast<double>(bytes) / seconds[seconds.size() / 2] / 1e9;
}

}  // namespace tuner
