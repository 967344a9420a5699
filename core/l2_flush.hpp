#pragma once
// The other way to keep the L2 from serving repeats (`tuner bench --l2 flush`): a memset of a
// buffer twice the L2's size between timing replays, enqueued before the start event so that it is
// never timed. It leaves the L2 full of dirty lines that the next replay's reads must evict, which
// is the disturbance `--l2 sets` (more input sets per replay) avoids; BENCHMARKS.md compares both.
#include <cstddef>

#include "core/cuda_driver.hpp"

namespace tuner {

// Bytes to overwrite so that nothing a replay read is still in an L2 of `l2_bytes`: twice its size
// (the L2 is split into partitions with hashed set selection, so one L2-sized write can leave some
// earlier lines resident). Throws InputError when `l2_bytes` is not positive.
std::size_t l2_flush_bytes(long long l2_bytes);

class L2Flush {
 public:
  explicit L2Flush(long long l2_bytes);
  // Enqueues the flush on `stream` (graph-capturable memset, no host synchronisation).
  void enqueue(CUstream stream) const;
  std::size_t bytes() const { return buffer_.size(); }

 private:
  cuda::DeviceBuffer buffer_;
  mutable unsigned int pattern_ = 0;  // changes every flush: no write is a repeat of the last
};

}  // namespace tuner
