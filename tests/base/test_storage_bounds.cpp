// SPDX-License-Identifier: BSD-3-Clause
// The base layer at its bounds: storage ranges that overflow 64 bits, a fixed buffer without memory or asked
// past its end, reallocation to nothing or keeping nothing, an arena whose alignment alone overflows it, the
// refusing allocator, and message formatting into tiny or zero-sized buffers.
#include <cstdint>
#include <cstring>

#include "tessera/allocator.hpp"
#include "tessera/fixed_buffer.hpp"
#include "tessera/storage.hpp"

#include "../../src/base/message_format.hpp"  // internal header: the core keeps src/ private
#include "../support/check.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

TESSERA_TEST(storage_bounds, ranges_past_64_bits_are_refused_before_the_callback) {
  static uint8_t mem[16];
  fixed_buffer b;
  fixed_buffer_init(b, mem, sizeof mem, 8);
  const storage s = fixed_buffer_storage(b);
  uint8_t tmp[4] = {1, 2, 3, 4};
  CHECK_ERR(storage_read(s, UINT64_MAX - 1, bytes_mut(tmp, 4)), errc::out_of_range);
  CHECK_ERR(storage_write(s, UINT64_MAX - 1, bytes_view(tmp, 4)), errc::out_of_range);
  // Nothing to transfer: nothing is asked of the storage, wherever the offset.
  CHECK_OK(storage_write(s, UINT64_MAX, bytes_view()));
  CHECK_OK(storage_read(s, UINT64_MAX, bytes_mut()));
  auto size = storage_size(s);
  REQUIRE_OK(size);
  CHECK_EQ(*size, 8u);
}

TESSERA_TEST(storage_bounds, a_fixed_buffer_refuses_past_its_size_and_capacity) {
  // Without memory there is no capacity, whatever was claimed.
  fixed_buffer none;
  fixed_buffer_init(none, nullptr, 100, 50);
  CHECK_EQ(none.capacity, 0u);
  CHECK_EQ(none.size, 0u);
  static uint8_t mem[16];
  fixed_buffer b;
  fixed_buffer_init(b, mem, sizeof mem, 64);  // a size past the capacity is cut to it
  CHECK_EQ(b.size, 16u);
  b.size = 8;
  const storage s = fixed_buffer_storage(b);
  uint8_t tmp[4] = {9, 9, 9, 9};
  CHECK_ERR(storage_read(s, 9, bytes_mut(tmp, 1)), errc::truncated);   // starts past the size
  CHECK_ERR(storage_read(s, 6, bytes_mut(tmp, 4)), errc::truncated);   // ends past it
  CHECK_ERR(storage_write(s, 17, bytes_view(tmp, 1)), errc::no_space);  // starts past the capacity
  CHECK_ERR(storage_write(s, 14, bytes_view(tmp, 4)), errc::no_space);  // ends past it
  CHECK_EQ(b.size, 8u);
  // The callbacks themselves take empty transfers (the C API calls them straight, maybe with null pointers).
  CHECK_OK(s.read(s.context, 8, bytes_mut()));
  CHECK_OK(s.write(s.context, 8, bytes_view()));
  CHECK_EQ(b.size, 8u);
  CHECK_ERR(s.write(s.context, 17, bytes_view()), errc::no_space);
}

TESSERA_TEST(allocator_bounds, reallocation_to_nothing_and_keeping_nothing) {
  test::counting_allocator counter;
  const allocator a = counter.get();
  void* p = allocator_allocate(a, 32, 8);
  REQUIRE(p != nullptr);
  CHECK(allocator_reallocate(a, p, 32, 0, 8, 32) == nullptr);  // a size of zero is no block: p stays
  CHECK_EQ(counter.live_bytes, 32u);
  void* q = allocator_reallocate(a, p, 32, 64, 8, 0);  // nothing to keep: a new block, nothing copied
  REQUIRE(q != nullptr);
  CHECK_EQ(counter.live_bytes, 64u);
  allocator_deallocate(a, q, 64, 8);
  CHECK(!counter.leaked());
  // The refusing allocator gives nothing and takes back nothing.
  const allocator r = allocator_refusing();
  CHECK(allocator_allocate(r, 1, 1) == nullptr);
  static uint8_t byte;
  allocator_deallocate(r, &byte, 1, 1);
}

TESSERA_TEST(allocator_bounds, an_arena_at_its_edges) {
  arena none;
  arena_init(none, nullptr, 4096);
  CHECK_EQ(none.capacity, 0u);
  CHECK(allocator_allocate(arena_allocator(none), 1, 1) == nullptr);
  alignas(64) static uint8_t space[40];
  arena a;
  arena_init(a, space, sizeof space);
  const allocator aa = arena_allocator(a);
  void* x = allocator_allocate(aa, 36, 1);
  REQUIRE(x != nullptr);
  CHECK(allocator_allocate(aa, 1, 64) == nullptr);  // aligned, the next block would start past the end
  // The newest block shrinks in place; the high-water mark keeps the most used.
  CHECK(allocator_reallocate(aa, x, 36, 20, 1, 20) == x);
  CHECK_EQ(a.used, 20u);
  CHECK_EQ(a.high_water, 36u);
}

TESSERA_TEST(message_format, tiny_buffers_and_patterns_without_values) {
  char buf[8];
  const int64_t v[2] = {-1234567, 42};
  std::memset(buf, 'x', sizeof buf);
  CHECK(detail::message_format(buf, 0, "{}", v, 2) == buf);  // no room even for the terminator: untouched
  CHECK_EQ(buf[0], 'x');
  CHECK(std::strcmp(detail::message_format(buf, sizeof buf, "a{}b", v, 2), "a-12345") == 0);  // cut to 7 bytes and the terminator
  CHECK(std::strcmp(detail::message_format(buf, sizeof buf, "{}{}{}", v, 2), "-123456") == 0);
  CHECK(std::strcmp(detail::message_format(buf, sizeof buf, "{}:{", v + 1, 1), "42:{") == 0);
  CHECK(std::strcmp(detail::message_format(buf, sizeof buf, "{}", v, 0), "{}") == 0);  // no value: as written
}
