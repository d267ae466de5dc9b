// SPDX-License-Identifier: BSD-3-Clause
// The memory port's storages on their own: reads past the end, buffers at their maximum size, allocators that
// refuse, directories that are full, names that are too long, and the C face's argument checks. The array tests
// use these storages on their good paths; here every refusal is a value, and nothing leaks.
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/tessera_memory.h"

#include <cstring>

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

bytes_view text(const char* s) { return bytes_view(reinterpret_cast<const uint8_t*>(s), std::strlen(s)); }

}  // namespace

TESSERA_TEST(memory_port, const_buffer_reads_in_range_and_refuses_past_the_end) {
  const uint8_t bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const_buffer b{bytes, sizeof bytes};
  const storage s = const_buffer_storage(b);
  uint8_t out[4] = {};
  CHECK_OK(storage_read(s, 4, bytes_mut(out, 4)));
  CHECK_EQ(out[0], 5);
  CHECK_EQ(storage_read(s, 5, bytes_mut(out, 4)).code, errc::truncated);  // crosses the end
  CHECK_EQ(s.read(s.context, 9, bytes_mut(out, 1)).code, errc::truncated);  // starts past it
  CHECK_OK(s.read(s.context, 8, bytes_mut(out, 0)));                          // empty, at the end
  const result<uint64_t> size = storage_size(s);
  REQUIRE(size.ok());
  CHECK_EQ(*size, 8u);
  CHECK_EQ(storage_view(s).size(), 8u);
  CHECK(storage_write(s, 0, bytes_view(out, 1)).code == errc::unsupported);  // read-only
}

TESSERA_TEST(memory_port, growable_buffer_keeps_to_its_maximum_size) {
  test::counting_allocator counter;
  growable_buffer b;
  growable_buffer_init(b, counter.get(), 100);
  const storage s = growable_buffer_storage(b);
  CHECK_OK(storage_write(s, 0, text("hello")));
  CHECK_OK(storage_write(s, 10, text("gap")));  // a write past the end fills the gap with zeros
  REQUIRE_EQ(b.size(), 13u);
  CHECK_EQ(b.bytes()[7], 0);
  CHECK_EQ(storage_write(s, 98, text("abc")).code, errc::no_space);  // would end at 101
  const bytes_view abc = text("abc");  // past the address space (storage_write itself refuses it sooner)
  CHECK_EQ(s.write(s.context, UINT64_MAX - 1, abc).code, errc::no_space);
  CHECK_EQ(storage_truncate(s, 101).code, errc::no_space);
  CHECK_OK(storage_truncate(s, 100));  // grows to exactly the maximum, zero-filled
  CHECK_EQ(b.size(), 100u);
  CHECK_EQ(b.bytes()[99], 0);
  CHECK_OK(storage_truncate(s, 3));
  uint8_t out[3] = {};
  CHECK_OK(storage_read(s, 0, bytes_mut(out, 3)));
  CHECK(std::memcmp(out, "hel", 3) == 0);
  CHECK_EQ(storage_read(s, 1, bytes_mut(out, 3)).code, errc::truncated);
  CHECK_EQ(growable_buffer_reserve(b, 101).code, errc::no_space);
  growable_buffer_release(b);
  CHECK(!counter.leaked());
}

TESSERA_TEST(memory_port, growable_buffer_hands_its_bytes_over) {
  test::counting_allocator counter;
  growable_buffer b;
  growable_buffer_init(b, counter.get());
  const storage s = growable_buffer_storage(b);
  CHECK_OK(storage_write(s, 0, text("frame bytes")));
  const uint8_t* at = b.bytes().data();
  growable_bytes taken = growable_buffer_take(b);
  CHECK(taken.data == at && taken.size == 11 && taken.capacity >= 11);
  CHECK(std::memcmp(taken.data, "frame bytes", 11) == 0);
  CHECK_EQ(b.size(), 0u);  // the buffer is empty, and can grow again
  CHECK_OK(storage_write(s, 0, text("again")));
  CHECK_EQ(b.size(), 5u);
  growable_buffer_release(b);
  CHECK(counter.leaked());  // the taken bytes are the caller's until freed
  growable_bytes_free(taken);
  CHECK(taken.data == nullptr && taken.size == 0);
  growable_bytes_free(taken);  // freeing empty bytes is a no-op
  CHECK(!counter.leaked());
  CHECK_EQ(counter.mismatched_frees, 0u);
}

TESSERA_TEST(memory_port, growable_buffer_falls_back_to_the_exact_size_then_refuses) {
  test::counting_allocator counter;
  growable_buffer b;
  growable_buffer_init(b, counter.get());
  const storage s = growable_buffer_storage(b);
  uint8_t data[200] = {};
  CHECK_OK(storage_write(s, 0, bytes_view(data, 100)));  // capacity 100
  // The geometric step (200) is refused, the exact size (150) granted.
  counter.fail_at = counter.requests + 1;
  CHECK_OK(storage_write(s, 100, bytes_view(data, 50)));
  CHECK_EQ(b.size(), 150u);
  // Both refused: no_space, and the content is intact.
  counter.fail_at = counter.requests + 1;
  counter.fail_after = true;
  CHECK_EQ(storage_write(s, 150, bytes_view(data, 200)).code, errc::no_space);
  CHECK_EQ(b.size(), 150u);
  counter.fail_after = false;
  counter.fail_at = SIZE_MAX;
  growable_buffer_release(b);
  CHECK(!counter.leaked());
}

TESSERA_TEST(memory_port, growable_buffer_lends_room_past_its_end_and_takes_it_back_without_a_copy) {
  test::counting_allocator counter;
  growable_buffer b;
  growable_buffer_init(b, counter.get(), 1000);
  const storage s = growable_buffer_storage(b);
  CHECK_OK(storage_write(s, 0, text("head")));  // 64 bytes of room
  // Only at or past the end, within the maximum size, and never empty.
  CHECK(storage_lend(s, 3, 8).empty());
  CHECK(storage_lend(s, 4, 997).empty());
  CHECK(storage_lend(s, 4, 0).empty());
  CHECK(storage_lend(s, UINT64_MAX - 2, 8).empty());  // past UINT64_MAX: refused before the call
  CHECK(s.lend(s.context, UINT64_MAX - 4, 8).empty());  // past the address space
  // A lend grows the room, not the content: the size and what reads return stay.
  bytes_mut room = storage_lend(s, 4, 100);
  REQUIRE_EQ(room.size(), 100u);
  CHECK_EQ(b.size(), 4u);
  uint8_t out[8] = {};
  CHECK_EQ(storage_read(s, 4, bytes_mut(out, 1)).code, errc::truncated);
  // Bytes built there and written at that offset are taken in place (the same memory), and are the content.
  std::memcpy(room.data(), "in place", 8);
  const size_t grants = counter.requests;
  CHECK_OK(storage_write(s, 4, bytes_view(room.data(), 8)));
  CHECK_EQ(counter.requests, grants);  // no growth: the lend made the room
  CHECK_EQ(b.size(), 12u);
  CHECK(b.bytes().data() + 4 == room.data());
  CHECK(std::memcmp(b.bytes().data(), "headin place", 12) == 0);
  // Lent past the end: the gap reads as zeros once the bytes are written.
  room = storage_lend(s, 20, 4);
  REQUIRE_EQ(room.size(), 4u);
  std::memcpy(room.data(), "tail", 4);
  CHECK_OK(storage_write(s, 20, bytes_view(room.data(), 4)));
  CHECK_EQ(b.size(), 24u);
  CHECK(std::memcmp(b.bytes().data() + 12, "\0\0\0\0\0\0\0\0tail", 12) == 0);
  // Bytes of the lent memory written elsewhere are copied as any others.
  room = storage_lend(s, 24, 8);
  REQUIRE_EQ(room.size(), 8u);
  std::memcpy(room.data(), "moved", 5);
  CHECK_OK(storage_write(s, 30, bytes_view(room.data(), 5)));
  CHECK_EQ(b.size(), 35u);
  CHECK(std::memcmp(b.bytes().data() + 24, "\0\0\0\0\0\0moved", 11) == 0);
  // An allocator that refuses the room: nothing lent, the content intact.
  counter.fail_at = counter.requests + 1;
  counter.fail_after = true;
  CHECK(storage_lend(s, 35, 500).empty());
  CHECK_EQ(b.size(), 35u);
  counter.fail_after = false;
  counter.fail_at = SIZE_MAX;
  // Storages without the callback lend nothing.
  const uint8_t bytes[4] = {1, 2, 3, 4};
  const_buffer cb{bytes, sizeof bytes};
  CHECK(storage_lend(const_buffer_storage(cb), 4, 4).empty());
  growable_buffer_release(b);
  CHECK(!counter.leaked());
}

TESSERA_TEST(memory_port, growable_buffer_moves) {
  test::counting_allocator counter;
  growable_buffer a;
  growable_buffer_init(a, counter.get());
  CHECK_OK(storage_write(growable_buffer_storage(a), 0, text("first")));
  growable_buffer b(static_cast<growable_buffer&&>(a));
  CHECK_EQ(a.size(), 0u);
  CHECK_EQ(b.size(), 5u);
  growable_buffer c;
  growable_buffer_init(c, counter.get());
  CHECK_OK(storage_write(growable_buffer_storage(c), 0, text("second")));
  c = static_cast<growable_buffer&&>(b);  // frees c's own bytes, takes b's
  CHECK_EQ(c.size(), 5u);
  CHECK(std::memcmp(c.bytes().data(), "first", 5) == 0);
  growable_buffer& same = c;
  c = static_cast<growable_buffer&&>(same);  // a self-move keeps the content
  CHECK_EQ(c.size(), 5u);
  growable_buffer_release(c);
  CHECK(!counter.leaked());
}

TESSERA_TEST(memory_port, directory_entries_names_and_limits) {
  test::counting_allocator counter;
  memory_directory d;
  CHECK_EQ(memory_directory_init(d, counter.get(), 0).code, errc::invalid_argument);
  counter.fail_at = counter.requests + 1;
  CHECK_EQ(memory_directory_init(d, counter.get(), 2).code, errc::out_of_memory);
  counter.fail_at = SIZE_MAX;
  REQUIRE_OK(memory_directory_init(d, counter.get(), 2, 16));
  const storage_directory dir = memory_directory_interface(d);
  storage s;
  CHECK_EQ(storage_directory_open(dir, "missing", storage_open::read, &s).code, errc::io);
  CHECK_EQ(storage_directory_open(dir, "", storage_open::replace, &s).code, errc::invalid_argument);
  char long_name[kStorageNameMax + 2];
  std::memset(long_name, 'n', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = 0;
  CHECK_EQ(storage_directory_open(dir, long_name, storage_open::replace, &s).code, errc::invalid_argument);
  CHECK_EQ(dir.open(dir.context, nullptr, storage_open::replace, &s).code, errc::invalid_argument);

  REQUIRE_OK(storage_directory_open(dir, "a", storage_open::replace, &s));
  CHECK_OK(storage_write(s, 0, text("alpha")));
  CHECK_EQ(storage_write(s, 10, text("past the entry limit")).code, errc::no_space);
  CHECK_OK(storage_directory_close(dir, &s));
  REQUIRE_OK(storage_directory_open(dir, "b", storage_open::replace, &s));
  CHECK_OK(storage_directory_close(dir, &s));
  CHECK_EQ(storage_directory_open(dir, "c", storage_open::replace, &s).code, errc::no_space);  // both slots used
  CHECK_EQ(memory_directory_count(d), 2u);

  // Read-only opens have no write; replace empties an entry.
  REQUIRE_OK(storage_directory_open(dir, "a", storage_open::read, &s));
  CHECK(s.write == nullptr && s.truncate == nullptr && s.lend == nullptr);
  CHECK(storage_lend(s, 5, 8).empty());
  CHECK_EQ(storage_view(s).size(), 5u);
  CHECK_OK(storage_directory_close(dir, &s));
  REQUIRE_OK(storage_directory_open(dir, "a", storage_open::replace, &s));
  CHECK_EQ(storage_view(s).size(), 0u);
  CHECK_OK(storage_write(s, 0, text("again")));
  CHECK_OK(storage_directory_close(dir, &s));

  // Rename: onto itself, onto another entry (which it replaces), from a missing one, to a bad name.
  CHECK_OK(dir.rename(dir.context, "a", "a"));
  CHECK_OK(dir.rename(dir.context, "a", "b"));
  CHECK_EQ(memory_directory_count(d), 1u);
  CHECK_EQ(memory_directory_find(d, "b").size(), 5u);
  CHECK_EQ(memory_directory_find(d, "a").size(), 0u);
  CHECK_EQ(memory_directory_find(d, nullptr).size(), 0u);
  CHECK_EQ(dir.rename(dir.context, "a", "c").code, errc::io);
  CHECK_EQ(dir.rename(dir.context, "b", nullptr).code, errc::invalid_argument);
  CHECK_EQ(dir.rename(dir.context, "b", long_name).code, errc::invalid_argument);
  CHECK_OK(dir.rename(dir.context, "b", "c"));
  CHECK_EQ(dir.remove(dir.context, "b").code, errc::io);
  CHECK_OK(dir.remove(dir.context, "c"));
  CHECK_EQ(memory_directory_count(d), 0u);
  CHECK(memory_directory_name(d, 0) == nullptr);
  CHECK(memory_directory_name(d, 2) == nullptr);  // past the slots
  CHECK_EQ(memory_directory_slots(d), 2u);
  memory_directory_release(d);
  CHECK(!counter.leaked());
}

namespace {

struct c_alloc_state {
  test::counting_allocator counter;
};
void* c_allocate(void* c, size_t size, size_t alignment) {
  const allocator a = static_cast<c_alloc_state*>(c)->counter.get();
  return allocator_allocate(a, size, alignment);
}
void c_deallocate(void* c, void* p, size_t size, size_t alignment) {
  const allocator a = static_cast<c_alloc_state*>(c)->counter.get();
  allocator_deallocate(a, p, size, alignment);
}

}  // namespace

TESSERA_TEST(memory_port, c_directory_checks_its_arguments_and_refusals) {
  c_alloc_state state;
  const tessera_allocator alloc{c_allocate, c_deallocate, &state};
  const tessera_allocator no_free{c_allocate, nullptr, &state};
  tessera_memory_directory* d = nullptr;
  CHECK_EQ(tessera_memory_directory_create(nullptr, &alloc, 4, SIZE_MAX).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_directory_create(&d, nullptr, 4, SIZE_MAX).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_directory_create(&d, &no_free, 4, SIZE_MAX).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_directory_create(&d, &alloc, 0, SIZE_MAX).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(d == nullptr);
  state.counter.fail_at = state.counter.requests + 1;  // the handle
  CHECK_EQ(tessera_memory_directory_create(&d, &alloc, 4, SIZE_MAX).code, TESSERA_ERR_OUT_OF_MEMORY);
  state.counter.fail_at = state.counter.requests + 2;  // the entry table
  CHECK_EQ(tessera_memory_directory_create(&d, &alloc, 4, SIZE_MAX).code, TESSERA_ERR_OUT_OF_MEMORY);
  state.counter.fail_at = SIZE_MAX;
  CHECK(!state.counter.leaked());

  REQUIRE_EQ(tessera_memory_directory_create(&d, &alloc, 4, SIZE_MAX).code, TESSERA_OK);
  uint32_t count = 1;
  size_t size = 1;
  CHECK_EQ(tessera_memory_directory_count(nullptr, &count).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_directory_count(d, nullptr).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_directory_count(d, &count).code, TESSERA_OK);
  CHECK_EQ(count, 0u);
  CHECK_EQ(tessera_memory_directory_entry_size(nullptr, "x", &size).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_directory_entry_size(d, nullptr, &size).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_directory_entry_size(d, "x", nullptr).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_directory_entry_size(d, "x", &size).code, TESSERA_ERR_IO);

  const tessera_storage_directory dir = tessera_memory_directory_interface(d);
  const tessera_storage* s = nullptr;
  REQUIRE_EQ(dir.open(dir.context, "x", TESSERA_STORAGE_OPEN_REPLACE, &s).code, TESSERA_OK);
  const uint8_t bytes[3] = {7, 8, 9};
  CHECK_EQ(s->write(s->context, 0, bytes, sizeof bytes).code, TESSERA_OK);
  CHECK_EQ(dir.close(dir.context, s).code, TESSERA_OK);
  CHECK_EQ(tessera_memory_directory_entry_size(d, "x", &size).code, TESSERA_OK);
  CHECK_EQ(size, 3u);
  CHECK_EQ(tessera_memory_directory_count(d, &count).code, TESSERA_OK);
  CHECK_EQ(count, 1u);
  CHECK_EQ(tessera_memory_directory_destroy(d).code, TESSERA_OK);
  CHECK_EQ(tessera_memory_directory_destroy(nullptr).code, TESSERA_OK);
  CHECK(!state.counter.leaked());
}

// The C buffer's argument checks and refusals, each with its code: a null out, allocator or callback, the handle
// refused; null buffers, data, sizes and outs; what it holds handed over and freed; the storage of no buffer and
// the directory interface of no directory have no callbacks.
TESSERA_TEST(memory_port, c_buffer_checks_its_arguments_and_refusals) {
  c_alloc_state state;
  const tessera_allocator alloc{c_allocate, c_deallocate, &state};
  const tessera_allocator no_allocate{nullptr, c_deallocate, &state};
  const tessera_allocator no_free{c_allocate, nullptr, &state};
  tessera_memory_buffer* b = nullptr;
  CHECK_EQ(tessera_memory_buffer_create(nullptr, &alloc, 0).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_buffer_create(&b, nullptr, 0).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_buffer_create(&b, &no_allocate, 0).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_buffer_create(&b, &no_free, 0).code, TESSERA_ERR_INVALID_ARGUMENT);
  state.counter.fail_at = state.counter.requests + 1;  // the handle
  CHECK_EQ(tessera_memory_buffer_create(&b, &alloc, 0).code, TESSERA_ERR_OUT_OF_MEMORY);
  state.counter.fail_at = SIZE_MAX;
  CHECK(b == nullptr);
  const tessera_storage none = tessera_memory_buffer_storage(nullptr);
  CHECK(none.read == nullptr && none.write == nullptr);
  tessera_memory_buffer_destroy(nullptr);
  tessera_memory_bytes_free(nullptr);
  const tessera_storage_directory no_dir = tessera_memory_directory_interface(nullptr);  // crashed: null deref
  CHECK(no_dir.open == nullptr && no_dir.close == nullptr && no_dir.list == nullptr && no_dir.context == nullptr);

  REQUIRE_EQ(tessera_memory_buffer_create(&b, &alloc, 5).code, TESSERA_OK);
  const tessera_storage st = tessera_memory_buffer_storage(b);
  const uint8_t bytes[5] = {1, 2, 3, 4, 5};
  CHECK_EQ(st.write(st.context, 0, bytes, sizeof bytes).code, TESSERA_OK);
  CHECK_EQ(st.write(st.context, 5, bytes, 1).code, TESSERA_ERR_NO_SPACE);  // past max_size
  const uint8_t* data = nullptr;
  size_t size = 0;
  CHECK_EQ(tessera_memory_buffer_bytes(nullptr, &data, &size).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_buffer_bytes(b, nullptr, &size).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_buffer_bytes(b, &data, nullptr).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_buffer_bytes(b, &data, &size).code, TESSERA_OK);
  CHECK(size == sizeof bytes && std::memcmp(data, bytes, size) == 0);
  tessera_memory_bytes taken;
  CHECK_EQ(tessera_memory_buffer_take(nullptr, &taken).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_buffer_take(b, nullptr).code, TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_EQ(tessera_memory_buffer_take(b, &taken).code, TESSERA_OK);
  CHECK(taken.size == sizeof bytes && std::memcmp(taken.data, bytes, taken.size) == 0);
  tessera_memory_bytes_free(&taken);
  CHECK(taken.data == nullptr && taken.size == 0);
  tessera_memory_buffer_destroy(b);
  CHECK(!state.counter.leaked());
}
