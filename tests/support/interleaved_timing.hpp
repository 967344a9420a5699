#pragma once
// Several ways of launching the same work, timed side by side: each variant once per round with
// the full protocol (time_graph), over several rounds, the order rotated each round, so that a
// drift of the GPU's clocks during the run moves every variant alike instead of the one timed
// last. For diagnostics that must tell a few per cent apart in one process.
#include <algorithm>
#include <string>
#include <vector>

#include "core/measure.hpp"

namespace tuner::test {

struct TimedVariant {
  std::string name;
  Enqueue enqueue;
  int launches_per_graph = 32;
};

struct VariantTiming {
  double median_us = 0.0;  // the median of the rounds' medians
  double min_us = 0.0;     // the rounds' fastest and slowest medians
  double max_us = 0.0;
};

inline std::vector<VariantTiming> time_interleaved(const std::vector<TimedVariant>& variants,
                                                   cuda::Stream& stream, int rounds) {
  const std::size_t n = variants.size();
  std::vector<std::vector<double>> medians(n);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t v = (k + static_cast<std::size_t>(round)) % n;
      MeasureOptions options;
      options.launches_per_graph = variants[v].launches_per_graph;
      medians[v].push_back(time_graph(variants[v].enqueue, stream, options).median_us);
    }
  }
  std::vector<VariantTiming> timings(n);
  for (std::size_t v = 0; v < n; ++v) {
    std::vector<double>& m = medians[v];
    std::sort(m.begin(), m.end());
    timings[v] = {m[m.size() / 2], m.front(), m.back()};
  }
  return timings;
}

}  // namespace tuner::test
