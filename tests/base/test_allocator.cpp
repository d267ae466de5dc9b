// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/span.hpp"

#include <cstring>

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

TESSERA_TEST(allocator, counting_reports_high_water_and_leaks) {
  test::counting_allocator counter;
  allocator a = counter.get();
  void* p = allocator_allocate(a, 100, 8);
  void* q = allocator_allocate(a, 50, 16);
  REQUIRE(p != nullptr && q != nullptr);
  CHECK_EQ(reinterpret_cast<uintptr_t>(q) % 16, 0u);
  CHECK_EQ(counter.high_water_bytes, 150u);
  allocator_deallocate(a, p, 100, 8);
  CHECK_EQ(counter.live_bytes, 50u);
  CHECK(counter.leaked());
  allocator_deallocate(a, q, 50, 16);
  CHECK(!counter.leaked());
  CHECK_EQ(counter.high_water_bytes, 150u);
  CHECK_EQ(counter.mismatched_frees, 0u);
}

TESSERA_TEST(allocator, failing_refuses_the_nth_request) {
  test::counting_allocator counter;
  counter.fail_at = 2;
  allocator a = counter.get();
  void* p = allocator_allocate(a, 8, 8);
  void* q = allocator_allocate(a, 8, 8);
  void* r = allocator_allocate(a, 8, 8);
  CHECK(p != nullptr);
  CHECK(q == nullptr);
  CHECK(r != nullptr);
  allocator_deallocate(a, p, 8, 8);
  allocator_deallocate(a, r, 8, 8);
  CHECK(!counter.leaked());
  CHECK_EQ(counter.requests, 3u);
  CHECK_EQ(counter.allocations, 2u);
}

TESSERA_TEST(allocator, owned_array_frees_and_reports_refusal) {
  test::counting_allocator counter;
  {
    owned_array<uint32_t> arr;
    REQUIRE_OK(arr.allocate(counter.get(), 10));
    CHECK_EQ(counter.live_bytes, 40u);
    arr[9] = 7;
    owned_array<uint32_t> moved(static_cast<owned_array<uint32_t>&&>(arr));
    CHECK(arr.data() == nullptr);
    CHECK_EQ(moved[9], 7u);
  }
  CHECK(!counter.leaked());
  owned_array<uint64_t> refused;
  CHECK_ERR(refused.allocate(allocator_refusing(), 4), errc::out_of_memory);
  CHECK_ERR(refused.allocate(counter.get(), SIZE_MAX / 4), errc::overflow);
  CHECK_OK(refused.allocate(allocator_refusing(), 0));
}

TESSERA_TEST(allocator, arena_serves_aligned_blocks_and_refuses_past_capacity) {
  alignas(64) static uint8_t storage[256];
  arena ar;
  arena_init(ar, storage, sizeof storage);
  allocator a = arena_allocator(ar);
  void* p = allocator_allocate(a, 10, 1);
  void* q = allocator_allocate(a, 16, 32);
  REQUIRE(p != nullptr && q != nullptr);
  CHECK_EQ(reinterpret_cast<uintptr_t>(q) % 32, 0u);
  CHECK(allocator_allocate(a, 1000, 1) == nullptr);
  allocator_deallocate(a, q, 16, 32);  // the newest block comes back
  CHECK_EQ(ar.used, 32u);
  CHECK_EQ(ar.high_water, 48u);
  arena_reset(ar);
  CHECK_EQ(ar.used, 0u);
}

TESSERA_TEST(error, codes_have_stable_names) {
  CHECK_EQ(static_cast<int>(errc::truncated), 4);
  CHECK(errc_name(errc::truncated)[0] == 't');
  CHECK(errc_name(static_cast<errc>(999))[0] == 'u');
  result<int> good(5);
  result<int> bad(make_error(errc::malformed, "bad"));
  CHECK(good.ok());
  CHECK_EQ(good.value(), 5);
  CHECK(!bad.ok());
  CHECK_EQ(bad.err().code, errc::malformed);
}

TESSERA_TEST(error, messages_follow_the_build_setting) {
  // The library wraps its messages in TESSERA_MSG: compiled out (TESSERA_ERROR_MESSAGES 0), an error's message is
  // its code's name; a null message always is.
  const error e = make_error(errc::corrupt, TESSERA_MSG("frame: the chunk offset is past the file"));
  CHECK_EQ(e.code, errc::corrupt);
#if TESSERA_ERROR_MESSAGES
  CHECK(std::strcmp(e.message, "frame: the chunk offset is past the file") == 0);
#else
  CHECK(std::strcmp(e.message, "corrupt") == 0);
#endif
  CHECK(std::strcmp(make_error(errc::no_space, nullptr).message, "no_space") == 0);
  CHECK(std::strcmp(error{}.message, "") == 0);
  constexpr error kIo{errc::io, nullptr};  // the fallback is constexpr: the name's address in the core's table
  CHECK(std::strcmp(kIo.message, "io") == 0);
  // A code read from stored data (the C API, a result) may lie outside the enum: still a string.
  CHECK(std::strcmp(error(static_cast<errc>(77), nullptr).message, "unknown") == 0);
}

TESSERA_TEST(allocator, reallocate_keeps_the_bytes_with_or_without_the_callback) {
  // Without a reallocate callback: allocate, copy `keep` bytes, free.
  test::counting_allocator counter;
  const allocator a = counter.get();
  auto* p = static_cast<uint8_t*>(allocator_allocate(a, 64, 16));
  REQUIRE(p != nullptr);
  for (int i = 0; i < 64; ++i) p[i] = static_cast<uint8_t>(i);
  auto* q = static_cast<uint8_t*>(allocator_reallocate(a, p, 64, 4096, 16, 40));
  REQUIRE(q != nullptr);
  int wrong = 0;
  for (int i = 0; i < 40; ++i) wrong += q[i] != i ? 1 : 0;
  CHECK_EQ(wrong, 0);
  CHECK_EQ(counter.live_bytes, 4096u);
  counter.fail_at = counter.requests + 1;  // refused: the block stays as it was
  CHECK(allocator_reallocate(a, q, 4096, 8192, 16, 4096) == nullptr);
  CHECK_EQ(q[39], 39);
  auto* r = static_cast<uint8_t*>(allocator_reallocate(a, q, 4096, 128, 16, 0));  // nothing kept: nothing copied
  REQUIRE(r != nullptr);
  CHECK_EQ(counter.live_bytes, 128u);
  allocator_deallocate(a, r, 128, 16);
  CHECK(!counter.leaked());

  // An arena grows its newest block in place and refuses to move an older one (the caller copies instead).
  alignas(16) static uint8_t space[1024];
  arena ar;
  arena_init(ar, space, sizeof space);
  const allocator aa = arena_allocator(ar);
  auto* x = static_cast<uint8_t*>(allocator_allocate(aa, 100, 16));
  REQUIRE(x != nullptr);
  x[99] = 7;
  CHECK(allocator_reallocate(aa, x, 100, 300, 16, 100) == x);
  CHECK_EQ(ar.used, 300u);
  auto* y = static_cast<uint8_t*>(allocator_allocate(aa, 16, 16));
  REQUIRE(y != nullptr);
  auto* z = static_cast<uint8_t*>(allocator_reallocate(aa, x, 300, 400, 16, 300));  // x is no longer the newest
  REQUIRE(z != nullptr);
  CHECK(z != x);
  CHECK_EQ(z[99], 7);
  CHECK(allocator_reallocate(aa, z, 400, 4096, 16, 400) == nullptr);  // past the arena
}

TESSERA_TEST(span, a_string_literal_is_viewed_without_its_terminator) {
  const span<const char> dtype = "<f4";
  CHECK_EQ(dtype.size(), 3u);
  CHECK(dtype[0] == '<' && dtype[2] == '4');
  const char name[5] = {'b', '2', 'n', 'd', 'x'};  // not a string: viewed whole
  CHECK_EQ(span<const char>(name).size(), 5u);
  const uint8_t bytes[3] = {1, 2, 0};  // other element types: always whole
  CHECK_EQ(bytes_view(bytes).size(), 3u);
  constexpr span<const char> empty = "";
  static_assert(empty.size() == 0, "an empty literal is an empty view");
}

TESSERA_TEST(error, a_result_from_an_ok_error_is_a_failure) {
  const result<int> r = error{};
  CHECK(!r.ok());
  CHECK(!r.err().ok());
  CHECK(r.err().code == errc::invalid_argument);
  const result<int> e = make_error(errc::truncated, "x");
  CHECK(e.err().code == errc::truncated);
}
