// SPDX-License-Identifier: BSD-3-Clause
// Allocators for tests: a counting one (live bytes, high-water mark, leaks) that can also refuse the Nth
// allocation, so a test can fail every allocation in turn (mpack's and zstd's way) and check nothing leaks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/allocator.hpp"

namespace tessera::test {

// The platform's heap (malloc family); only tests and ports use it, never the core.
[[nodiscard]] allocator system_allocator() noexcept;

struct counting_allocator {
  allocator upstream = system_allocator();
  size_t live_bytes = 0;
  size_t high_water_bytes = 0;
  size_t live_blocks = 0;
  size_t allocations = 0;     // successful ones
  size_t requests = 0;        // every call, refused ones included
  size_t fail_at = SIZE_MAX;  // the request with this 1-based number is refused (SIZE_MAX: never)
  bool fail_after = false;    // when true, every request from fail_at on is refused
  size_t mismatched_frees = 0;  // frees whose size did not match what was allocated

  [[nodiscard]] allocator get() noexcept;
  [[nodiscard]] bool leaked() const noexcept { return live_blocks != 0 || live_bytes != 0; }
  // Forget the counts (not the policy) to measure one phase of a test.
  void reset_high_water() noexcept { high_water_bytes = live_bytes; }
};

}  // namespace tessera::test
