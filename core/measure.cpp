#include "core/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

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

Timing time_graph(const Enqueue& enqueue, cuda::Stream& stream, const MeasureOptions& options,
                  std::vector<double>* samples_out) {
  refuse_capturing(stream);
  cuda::begin_capture(stream, "time_graph capture");
  try {
    for (int launch = 0; launch < options.launches_per_graph; ++launch)
      enqueue(launch, stream.get());
  } catch (...) {
    cuda::Graph abandoned = cuda::end_capture(stream, "time_graph capture (abandoned)");
    throw;
  }
  const cuda::Graph graph = cuda::end_capture(stream, "time_graph capture");
  const cuda::GraphExec exec = graph.instantiate("time_graph instantiate");
  for (int replay = 0; replay < options.warmup_replays; ++replay)
    exec.launch(stream.get(), "warm-up");
  stream.synchronize("warm-up");
  cuda::Event start;
  cuda::Event stop;
  std::vector<double> samples_us;
  const auto began = std::chrono::steady_clock::now();
  while (static_cast<int>(samples_us.size()) < options.max_samples) {
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
  return summarize(samples_us);
}

void check_kv_covers_l2(double kv_bytes, long long l2_bytes, const std::string& option) {
  const double wanted = kL2Factor * static_cast<double>(l2_bytes);
  if (kv_bytes < wanted) {
    throw InputError(option + " gives a KV cache of " + std::to_string(kv_bytes / 1048576.0) +
                     " MiB, less than 4x this GPU's L2 (" + std::to_string(wanted / 1048576.0) +
                     " MiB): the L2 would serve repeated reads and flatter the timings; pass a "
                     "KV cache of at least 4x L2 (the default 1 GiB is)");
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
