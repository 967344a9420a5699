#include "core/l2_flush.hpp"

#include <string>

#include "core/error.hpp"

namespace tuner {

std::size_t l2_flush_bytes(long long l2_bytes) {
  if (l2_bytes <= 0) {
    throw InputError("the device reports an L2 of " + std::to_string(l2_bytes) +
                     " bytes: there is no L2 to flush; use --l2 sets");
  }
  // A whole number of 4-byte words, as cuMemsetD32Async writes.
  return (static_cast<std::size_t>(l2_bytes) * 2 + 3) / 4 * 4;
}

L2Flush::L2Flush(long long l2_bytes) : buffer_(l2_flush_bytes(l2_bytes), "L2 flush buffer") {}

void L2Flush::enqueue(CUstream stream) const {
  // What matters is that every line of the buffer is written; a new pattern each time keeps the
  // writes from ever being repeats of what the lines already hold.
  buffer_.fill_u32(++pattern_, stream);
}

}  // namespace tuner
