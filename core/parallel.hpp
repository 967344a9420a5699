#pragma once
// Runs body(i) for i in [0, count) on `threads` worker threads (0: all cores). Exceptions from
// bodies are caught per item by the caller's body; one escaping is rethrown after all workers stop.
#include <cstddef>
#include <functional>

namespace tuner {

void parallel_for(std::size_t count, unsigned threads,
                  const std::function<void(std::size_t)>& body);

}  // namespace tuner
