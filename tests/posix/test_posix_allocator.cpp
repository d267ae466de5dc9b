// SPDX-License-Identifier: BSD-3-Clause
// The malloc-family allocator: every power-of-two alignment honored, bad requests refused, and usable by the
// core's owned_array.
#include <cstdint>
#include <cstring>
#include <vector>

#include "tessera/allocator.hpp"
#include "tessera/port/posix_allocator.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"

// Under AddressSanitizer and ThreadSanitizer a huge request must return nullptr (as malloc does), not abort the test.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
extern "C" const char* __tsan_default_options() { return "allocator_may_return_null=1"; }

using namespace tessera;

TESSERA_TEST(posix_allocator, honors_every_power_of_two_alignment) {
  const allocator a = posix_allocator();
  REQUIRE(a.allocate != nullptr);
  REQUIRE(a.deallocate != nullptr);
  test::rng r(7);
  struct block {
    void* p;
    size_t size;
    size_t align;
  };
  std::vector<block> live;
  for (int round = 0; round < 2000; ++round) {
    const size_t align = size_t{1} << r.range(0, 16);  // 1 .. 64 KiB
    const size_t size = static_cast<size_t>(r.range(1, r.chance(10) ? 300000 : 200));
    void* p = allocator_allocate(a, size, align);
    REQUIRE(p != nullptr);
    CHECK_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u);
    std::memset(p, static_cast<int>(round & 0xff), size);  // writable over its whole size (ASan checks bounds)
    live.push_back({p, size, align});
    if (live.size() > 50 || r.chance(30)) {
      const size_t k = static_cast<size_t>(r.range(0, static_cast<int64_t>(live.size()) - 1));
      allocator_deallocate(a, live[k].p, live[k].size, live[k].align);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  for (const block& b : live) allocator_deallocate(a, b.p, b.size, b.align);
}

TESSERA_TEST(posix_allocator, refuses_bad_requests) {
  const allocator a = posix_allocator();
  CHECK(a.allocate(a.context, 0, 8) == nullptr);
  CHECK(a.allocate(a.context, 16, 0) == nullptr);
  CHECK(a.allocate(a.context, 16, 3) == nullptr);
  CHECK(a.allocate(a.context, 16, 48) == nullptr);
  CHECK(a.allocate(a.context, SIZE_MAX - 4095, 8) == nullptr);  // more than any address space holds
  CHECK(a.allocate(a.context, SIZE_MAX - 4095, 4096) == nullptr);
}

TESSERA_TEST(posix_allocator, serves_owned_array) {
  struct alignas(128) wide {
    uint8_t bytes[128];
  };
  owned_array<wide> arr;
  REQUIRE_OK(arr.allocate(posix_allocator(), 33));
  CHECK_EQ(reinterpret_cast<uintptr_t>(arr.data()) % 128, 0u);
  std::memset(arr.data(), 1, sizeof(wide) * 33);
  owned_array<uint8_t> huge;
  CHECK_ERR(huge.allocate(posix_allocator(), SIZE_MAX - 4095), errc::out_of_memory);
}

// Large blocks (mappings of their own on Linux) keep their bytes when they grow and shrink, across the size
// where malloc takes over and within it, and are released by size.
TESSERA_TEST(posix_allocator, reallocate_keeps_bytes_across_sizes) {
  const allocator a = posix_allocator();
  REQUIRE(a.reallocate != nullptr);
  const size_t sizes[] = {1000, size_t{3} << 20, size_t{5} << 20, (size_t{9} << 20) + 123, size_t{64} << 20,
                          (size_t{4} << 20) - 1, size_t{4} << 20, 100, size_t{16} << 20};
  size_t size = 16;
  auto* p = static_cast<uint8_t*>(allocator_allocate(a, size, 16));
  REQUIRE(p != nullptr);
  for (size_t i = 0; i < size; ++i) p[i] = static_cast<uint8_t>(i * 7);
  for (size_t next : sizes) {
    auto* q = static_cast<uint8_t*>(allocator_reallocate(a, p, size, next, 16, size));
    REQUIRE(q != nullptr);
    CHECK_EQ(reinterpret_cast<uintptr_t>(q) % 16, 0u);
    const size_t kept = size < next ? size : next;
    bool same = true;
    for (size_t i = 0; i < kept; ++i) same &= q[i] == static_cast<uint8_t>(i * 7);
    CHECK(same);
    for (size_t i = kept; i < next; ++i) q[i] = static_cast<uint8_t>(i * 7);
    p = q;
    size = next;
  }
  allocator_deallocate(a, p, size, 16);
  void* big = allocator_allocate(a, size_t{8} << 20, 4096);
  REQUIRE(big != nullptr);
  CHECK_EQ(reinterpret_cast<uintptr_t>(big) % 4096, 0u);
  std::memset(big, 1, size_t{8} << 20);
  allocator_deallocate(a, big, size_t{8} << 20, 4096);
}
