#pragma once
// Replaces the global operator new of the test binary that includes this header (include it from
// exactly one file per binary) and counts heap allocations, so that a test can show that a lookup
// makes none.
#include <stdlib.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace tuner::test {
inline std::atomic<long> allocations{0};
}  // namespace tuner::test

void* operator new(std::size_t size) {
  tuner::test::allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// GCC pairs inlined `new` expressions with these and warns that free() does not match new; here
// new is malloc, so free is the match.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
