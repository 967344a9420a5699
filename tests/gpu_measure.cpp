// The measurement protocol on a GPU (core/measure.cpp, core/l2_flush.cpp): per-launch quantiles
// from event nodes inside the timing graph see what replay means hide, and an L2 flush before each
// replay is not timed. Skipped without a GPU (gpu_main.cpp; TUNER_REQUIRE_GPU=1 makes that a
// failure).
#include <doctest/doctest.h>

#include <string>

#include "core/cuda_driver.hpp"
#include "core/l2_flush.hpp"
#include "core/measure.hpp"

namespace cuda = tuner::cuda;
using tuner::Enqueue;
using tuner::MeasureOptions;
using tuner::Timing;

namespace {

MeasureOptions quick(int launches) {
  MeasureOptions options;
  options.launches_per_graph = launches;
  options.min_samples = 10;
  options.max_samples = 50;
  options.time_cap_ms = 200.0;
  return options;
}

}  // namespace

TEST_CASE("per-launch quantiles see launch-to-launch differences that replay means hide") {
  const cuda::Context context(0);
  cuda::Stream stream;
  const cuda::DeviceBuffer big(256u << 20, "big memset");
  const cuda::DeviceBuffer small(64u << 10, "small memset");
  // Even launches write 256 MiB (~100 us), odd ones 64 KiB (a few us): every replay of 32 has the
  // same mean, but single launches are bimodal.
  const Enqueue enqueue = [&](int launch, CUstream on) {
    (launch % 2 == 0 ? big : small).fill_u32(static_cast<unsigned>(launch), on);
  };
  const Timing timing = tuner::time_graph(enqueue, stream, quick(32));
  INFO("median " << timing.median_us << " us, replay p10/p90 " << timing.p10_us << "/"
                 << timing.p90_us << ", launch p10/p90 " << timing.launch_p10_us << "/"
                 << timing.launch_p90_us);
  REQUIRE(timing.launch_p10_us > 0.0);
  CHECK(timing.launch_p10_us <= timing.median_us);
  CHECK(timing.median_us <= timing.launch_p90_us);
  CHECK(timing.p90_us / timing.p10_us < 1.5);                // replay means: one mode
  CHECK(timing.launch_p90_us / timing.launch_p10_us > 5.0);  // single launches: two
  // Without replays of the instrumented graph, no quantiles.
  MeasureOptions bare = quick(32);
  bare.launch_spread_replays = 0;
  CHECK(tuner::time_graph(enqueue, stream, bare).launch_p10_us == 0.0);
}

TEST_CASE("an L2 flush before every replay is enqueued outside the timed events") {
  const cuda::Context context(0);
  const cuda::DeviceInfo info = cuda::device_info(0);
  cuda::Stream stream;
  const tuner::L2Flush flush(info.l2_cache_bytes);
  const cuda::DeviceBuffer small(1u << 20, "small memset");
  const Enqueue enqueue = [&](int, CUstream on) { small.fill_u32(7u, on); };
  const Timing plain = tuner::time_graph(enqueue, stream, quick(1));
  // The flush alone, timed the same way: a 1-launch graph of it.
  const Timing flush_alone =
      tuner::time_graph([&](int, CUstream on) { flush.enqueue(on); }, stream, quick(1));
  MeasureOptions flushed = quick(1);
  flushed.before_replay = [&](CUstream on) { flush.enqueue(on); };
  const Timing with_flush = tuner::time_graph(enqueue, stream, flushed);
  INFO("1 MiB memset " << plain.median_us << " us, after a flush " << with_flush.median_us
                       << " us; the flush of " << flush.bytes() << " bytes "
                       << flush_alone.median_us << " us");
  CHECK(flush_alone.median_us > 4.0 * plain.median_us);  // the flush would show if it were timed
  CHECK(with_flush.median_us < plain.median_us + 0.5 * flush_alone.median_us);
}
