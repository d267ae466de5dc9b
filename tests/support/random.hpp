// SPDX-License-Identifier: BSD-3-Clause
// A small deterministic generator (splitmix64) so every target draws the same cases from the same seed.
#pragma once

#include <cstdint>

namespace tessera::test {

class rng {
 public:
  explicit rng(uint64_t seed) noexcept : state_(seed) {}
  uint64_t next() noexcept {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (inclusive); hi >= lo.
  int64_t range(int64_t lo, int64_t hi) noexcept {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(unsigned percent) noexcept { return next() % 100 < percent; }

 private:
  uint64_t state_;
};

}  // namespace tessera::test
