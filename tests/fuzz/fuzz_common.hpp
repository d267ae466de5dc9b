// SPDX-License-Identifier: BSD-3-Clause
// Shared by the fuzzers (tests/fuzz/fuzz_*.cpp): invariant checks that trap, output buffers with guard zones, a
// memory budget in front of the counting allocator, and parameters drawn from the input's hash.
// Hosted code (libFuzzer or the replay driver): it may use the C library; the core under test may not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"

#include "../support/test_allocators.hpp"

// A violated invariant: say which one (the replay driver's log shows it), then trap so libFuzzer reports the
// input as a crash and keeps it.
#define FUZZ_CHECK(cond)                                                                              \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      std::fprintf(stderr, "fuzz invariant violated: %s (%s:%d)\n", #cond, __FILE__, __LINE__);      \
      std::fflush(stderr);                                                                            \
      __builtin_trap();                                                                               \
    }                                                                                                 \
  } while (0)

namespace tessera::fuzz {

// Outputs larger than this are not decoded (a 40-byte chunk may claim 2 GiB of zeros); the fuzzer checks only
// that a shorter output is refused. Keeps every run fast and within libFuzzer's RSS limit.
inline constexpr size_t kMaxOutput = size_t{1} << 20;
// What the allocator lets the core hold at once (decoder scratch is 3 blocks per worker).
inline constexpr size_t kMemoryBudget = size_t{64} << 20;

// FNV-1a 64 of the input, then splitmix64 steps: parameters (slack, worker counts, failing allocation) that
// depend on the input deterministically, so a reported input replays identically.
class params {
 public:
  params(const uint8_t* data, size_t size) noexcept {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
    state_ = h;
  }
  uint64_t next() noexcept {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t range(size_t lo, size_t hi) noexcept { return lo + static_cast<size_t>(next() % (hi - lo + 1)); }

 private:
  uint64_t state_;
};

// The platform heap behind a budget: refuses a request that would take the live total past `budget`, as a small
// device would, instead of letting a hostile header exhaust the fuzzer's memory.
struct budget_allocator {
  size_t budget = kMemoryBudget;
  size_t live = 0;
  allocator upstream = test::system_allocator();

  [[nodiscard]] allocator get() noexcept { return allocator{allocate, deallocate, this}; }

 private:
  static void* allocate(void* context, size_t size, size_t alignment) noexcept {
    auto& b = *static_cast<budget_allocator*>(context);
    if (size > b.budget - b.live) return nullptr;
    void* p = allocator_allocate(b.upstream, size, alignment);
    if (p != nullptr) b.live += size;
    return p;
  }
  static void deallocate(void* context, void* block, size_t size, size_t alignment) noexcept {
    auto& b = *static_cast<budget_allocator*>(context);
    b.live -= size;
    allocator_deallocate(b.upstream, block, size, alignment);
  }
};

// A counting allocator over a budget: the fuzzers check leaks and mismatched frees after every run.
struct checked_allocator {
  budget_allocator budget;
  test::counting_allocator counter;

  checked_allocator() noexcept { counter.upstream = budget.get(); }
  checked_allocator(const checked_allocator&) = delete;
  checked_allocator& operator=(const checked_allocator&) = delete;
  [[nodiscard]] allocator get() noexcept { return counter.get(); }
  // Everything given back, with the sizes it was taken with.
  [[nodiscard]] bool clean() const noexcept {
    return !counter.leaked() && counter.mismatched_frees == 0 && budget.live == 0;
  }
};

// A heap buffer of `size` bytes with guard zones on both sides (and, past `size`, nothing: ASan sees overruns of
// the whole allocation; the guards catch writes that land inside it, e.g. through a miscomputed offset).
class guarded_buffer {
 public:
  static constexpr size_t kGuard = 64;
  static constexpr uint8_t kGuardByte = 0xa5;

  explicit guarded_buffer(size_t size, uint8_t fill = 0xcc) noexcept : size_(size) {
    raw_ = static_cast<uint8_t*>(std::malloc(size + 2 * kGuard));
    if (raw_ == nullptr) std::abort();
    std::memset(raw_, kGuardByte, kGuard);
    std::memset(raw_ + kGuard, fill, size);
    std::memset(raw_ + kGuard + size, kGuardByte, kGuard);
  }
  guarded_buffer(const guarded_buffer&) = delete;
  guarded_buffer& operator=(const guarded_buffer&) = delete;
  ~guarded_buffer() { std::free(raw_); }

  [[nodiscard]] uint8_t* data() const noexcept { return raw_ + kGuard; }
  [[nodiscard]] size_t size() const noexcept { return size_; }
  [[nodiscard]] bool guards_intact() const noexcept {
    for (size_t i = 0; i < kGuard; ++i) {
      if (raw_[i] != kGuardByte || raw_[kGuard + size_ + i] != kGuardByte) return false;
    }
    return true;
  }
  // Whether bytes [from, size) still hold `fill` (the decoder promised not to touch them).
  [[nodiscard]] bool untouched_from(size_t from, uint8_t fill = 0xcc) const noexcept {
    for (size_t i = from; i < size_; ++i) {
      if (raw_[kGuard + i] != fill) return false;
    }
    return true;
  }

 private:
  uint8_t* raw_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tessera::fuzz
