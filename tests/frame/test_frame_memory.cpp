// SPDX-License-Identifier: BSD-3-Clause
// The memory port's storages, and frames in one caller buffer: written with no heap at all (a fixed buffer and
// an arena), read in place (views into the buffer, no copies), at an offset inside a larger buffer.
#include <cstring>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr int32_t kChunk = 2048;
constexpr int32_t kBlock = 512;

struct bufs {
  uint8_t frame_bytes[64 * 1024];
  // 16 KiB for the frame, and room for the encoder of its index (frame_encoder_options: about 115 KiB).
  alignas(64) uint8_t arena_bytes[16 * 1024 + 160 * 1024];
  uint8_t src[kChunk];
  uint8_t chunk[2 * kChunk + 64];
  uint8_t work[3 * kBlock];
  uint8_t out[kChunk];
  uint8_t expect[kChunk];
};
bufs g;

span<const char> nm(const char* s) { return span<const char>(s, std::strlen(s)); }

}  // namespace

TESSERA_TEST(memory_port, fixed_buffer) {
  uint8_t raw[16];
  fixed_buffer b;
  fixed_buffer_init(b, raw, sizeof raw);
  const storage s = fixed_buffer_storage(b);
  const uint8_t data[6] = {1, 2, 3, 4, 5, 6};
  REQUIRE_OK(storage_write(s, 2, bytes_view(data, 6)));
  auto size = storage_size(s);
  REQUIRE_OK(size);
  CHECK_EQ(*size, 8u);
  CHECK_EQ(raw[0], 0);  // the gap reads as zeros
  CHECK_EQ(raw[7], 6);
  uint8_t back[4];
  REQUIRE_OK(storage_read(s, 3, bytes_mut(back, 4)));
  CHECK_EQ(back[0], 2);
  CHECK_ERR(storage_read(s, 6, bytes_mut(back, 4)), errc::truncated);
  CHECK_ERR(storage_write(s, 12, bytes_view(data, 6)), errc::no_space);
  CHECK_EQ(b.size, 8u);  // a refused write changes nothing
  REQUIRE_OK(storage_write(s, 10, bytes_view(data, 6)));
  CHECK_EQ(b.size, 16u);
  const bytes_view v = storage_view(s);
  CHECK(v.data() == raw);
  CHECK_EQ(v.size(), 16u);
  REQUIRE_OK(storage_truncate(s, 4));
  CHECK_EQ(b.size, 4u);
  CHECK_ERR(storage_truncate(s, 17), errc::no_space);
}

TESSERA_TEST(memory_port, growable_buffer) {
  tessera::test::counting_allocator ca;
  {
    growable_buffer b;
    growable_buffer_init(b, ca.get(), 1000);
    const storage s = growable_buffer_storage(b);
    tessera::test::rng r(5);
    uint8_t model[1000] = {};
    size_t size = 0;
    for (int i = 0; i < 500; ++i) {
      uint8_t data[64];
      const size_t n = static_cast<size_t>(r.range(1, 64));
      const size_t at = static_cast<size_t>(r.range(0, 1000));
      for (size_t k = 0; k < n; ++k) data[k] = static_cast<uint8_t>(r.next());
      status e = storage_write(s, at, bytes_view(data, n));
      if (at + n > 1000) {
        CHECK_ERR(e, errc::no_space);
        continue;
      }
      REQUIRE_OK(e);
      std::memcpy(model + at, data, n);
      if (at + n > size) size = at + n;
      if (r.chance(10)) {
        const size_t cut = static_cast<size_t>(r.range(0, static_cast<int64_t>(size)));
        REQUIRE_OK(storage_truncate(s, cut));
        std::memset(model + cut, 0, size - cut);
        size = cut;
      }
      REQUIRE_EQ(b.size(), size);
      CHECK(size == 0 || std::memcmp(storage_view(s).data(), model, size) == 0);
    }
    CHECK_LE(ca.high_water_bytes, 2 * 1000u);  // old and new block while growing
    // An allocator that refuses: the buffer is full.
    growable_buffer none;
    growable_buffer_init(none, allocator_refusing());
    CHECK_ERR(storage_write(growable_buffer_storage(none), 0, bytes_view(model, 1)), errc::no_space);
  }
  CHECK(!ca.leaked());
}

TESSERA_TEST(memory_port, directory) {
  tessera::test::counting_allocator ca;
  {
    memory_directory d;
    REQUIRE_OK(memory_directory_init(d, ca.get(), 2));
    const storage_directory i = memory_directory_interface(d);
    storage s;
    CHECK_ERR(storage_directory_open(i, "x", storage_open::read, &s), errc::io);
    REQUIRE_OK(storage_directory_open(i, "x", storage_open::replace, &s));
    const uint8_t data[3] = {1, 2, 3};
    REQUIRE_OK(storage_write(s, 0, bytes_view(data, 3)));
    REQUIRE_OK(storage_directory_close(i, &s));
    REQUIRE_OK(storage_directory_open(i, "x", storage_open::read, &s));
    CHECK(s.write == nullptr);
    REQUIRE_OK(storage_directory_close(i, &s));
    REQUIRE_OK(storage_directory_open(i, "y", storage_open::replace, &s));
    REQUIRE_OK(storage_directory_close(i, &s));
    CHECK_ERR(storage_directory_open(i, "z", storage_open::replace, &s), errc::no_space);
    REQUIRE_OK(storage_directory_rename(i, "x", "y"));
    CHECK_EQ(memory_directory_count(d), 1u);
    CHECK_EQ(memory_directory_find(d, "y").size(), 3u);
    CHECK(memory_directory_find(d, "x").empty());
    REQUIRE_OK(storage_directory_remove(i, "y"));
    CHECK_ERR(storage_directory_remove(i, "y"), errc::io);
    CHECK_EQ(memory_directory_count(d), 0u);
  }
  CHECK(!ca.leaked());
}

namespace {

// A b2nd-like frame written into one caller buffer with an arena: no heap at all. The index encoder is the
// frame's own (from the arena) or one the caller shares with the frame.
void write_into_fixed_buffer(tessera::test::context& t, bool shared_encoder) {
  fixed_buffer fb;
  fixed_buffer_init(fb, g.frame_bytes, sizeof g.frame_bytes);
  const storage st = fixed_buffer_storage(fb);
  arena ar;
  arena_init(ar, g.arena_bytes, sizeof g.arena_bytes);
  const allocator a = arena_allocator(ar);
  const uint8_t meta[5] = {0x93, 1, 2, 3, 4};
  frame_metalayer_init ml{nm("b2nd"), bytes_view(meta, sizeof meta)};
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  p.chunksize = kChunk;
  p.metalayers = &ml;
  p.nmetalayers = 1;
  p.expected_nchunks = 32;
  frame_open_options o;
  o.durable = false;  // in memory: the reference's compact layout
  chunk_encoder enc;
  const size_t enc_bytes = chunk_encoder_estimate(frame_encoder_options());
  CHECK_LE(enc_bytes, sizeof g.arena_bytes - 16 * 1024);
  if (shared_encoder) {
    REQUIRE_OK(chunk_encoder_init(enc, a, frame_encoder_options()));
    o.encoder = &enc;
  }
  frame f;
  REQUIRE_OK(frame_create(f, st, a, p, o));
  int appended = 0;
  status s;
  for (int i = 0; i < 64; ++i) {
    const size_t len = chunk_make(700 + static_cast<uint64_t>(i), kChunk, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
    REQUIRE(len > 0);
    s = frame_chunk_append(f, bytes_view(g.chunk, len));
    if (!s.ok()) break;
    s = frame_commit(f);
    if (!s.ok()) break;
    ++appended;
  }
  // The buffer fills up: a clear no_space, and what was committed is intact.
  CHECK_ERR(s, errc::no_space);
  CHECK(appended > 10);
  REQUIRE_OK(frame_close(f));
  chunk_encoder_release(enc);
  const size_t used = ar.high_water;
  CHECK_LE(used, 16 * 1024 + enc_bytes);

  // Read it back in place from a const view of the bytes: chunks are views into the buffer.
  const_buffer cb{g.frame_bytes, fb.size};
  const storage ro = const_buffer_storage(cb);
  arena_reset(ar);
  REQUIRE_OK(frame_open(f, ro, a));
  const frame_info* info = frame_info_get(f);
  REQUIRE(info != nullptr);
  CHECK_EQ(info->nchunks, appended);
  CHECK_EQ(info->frame_len, fb.size);
  auto m = frame_meta_find(f, nm("b2nd"));
  REQUIRE_OK(m);
  CHECK(m->size() == sizeof meta && std::memcmp(m->data(), meta, sizeof meta) == 0);
  chunk_decoder d;
  chunk_decoder_options dopt;
  dopt.max_blocksize = kBlock;
  dopt.fixed_scratch = true;
  REQUIRE_OK(chunk_decoder_init(d, a, dopt));
  for (int i = 0; i < appended; ++i) {
    owned_array<uint8_t> none;
    auto bytes = frame_chunk_read(f, i, none);
    REQUIRE_OK(bytes);
    CHECK(bytes->data() >= g.frame_bytes && bytes->data() < g.frame_bytes + fb.size);
    CHECK(none.data() == nullptr);
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    REQUIRE_OK(n);
    content_fill(700 + static_cast<uint64_t>(i), g.expect, kChunk);
    CHECK(std::memcmp(g.out, g.expect, kChunk) == 0);
  }
  // The frame's bytes are where the reference puts them: the chunks back to back after the header.
  auto first = frame_chunk_locate(f, 0);
  REQUIRE_OK(first);
  CHECK_EQ(first->offset, 0);
  auto second = frame_chunk_locate(f, 1);
  REQUIRE_OK(second);
  CHECK_EQ(second->offset, first->cbytes);
  CHECK_ERR(frame_chunk_append(f, bytes_view(g.chunk, 32)), errc::read_only);  // read-only
  CHECK_OK(frame_close(f));
}

}  // namespace

TESSERA_TEST(frame_memory, write_into_fixed_buffer_without_heap) { write_into_fixed_buffer(t, false); }
TESSERA_TEST(frame_memory, write_into_fixed_buffer_with_a_shared_encoder) { write_into_fixed_buffer(t, true); }

// Lazy block reads: only the header, bstarts and the block's streams cross the storage.
TESSERA_TEST(frame_memory, block_reads_are_lazy) {
  tessera::test::counting_allocator ca;
  growable_buffer buf;
  growable_buffer_init(buf, ca.get());
  {
    frame f;
    frame_create_params p;
    p.typesize = 4;
    p.blocksize = kBlock;
    REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), ca.get(), p));
    const size_t len = chunk_make(42, kChunk, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);  // seed 42: split
    REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, len)));
    REQUIRE_OK(frame_commit(f));
  }
  wrapped_storage w;
  w.inner = growable_buffer_storage(buf);
  frame f;
  REQUIRE_OK(frame_open(f, w.get(), ca.get()));
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, ca.get()));
  auto ref = frame_chunk_locate(f, 0);
  REQUIRE_OK(ref);
  content_fill(42, g.expect, kChunk);
  for (size_t b = 0; b < 4; ++b) {
    w.bytes_read = 0;
    auto n = frame_block_decode(f, d, 0, b, bytes_mut(g.out, sizeof g.out));
    REQUIRE_OK(n);
    CHECK_EQ(*n, static_cast<size_t>(kBlock));
    CHECK(std::memcmp(g.out, g.expect + b * kBlock, kBlock) == 0);
    CHECK_LT(w.bytes_read, static_cast<uint64_t>(ref->cbytes) / 2);
  }
  CHECK_ERR(frame_block_decode(f, d, 0, 4, bytes_mut(g.out, sizeof g.out)), errc::out_of_range);
  CHECK_ERR(frame_block_decode(f, d, 1, 0, bytes_mut(g.out, sizeof g.out)), errc::out_of_range);
  CHECK_OK(frame_close(f));
  chunk_decoder_release(d);
  growable_buffer_release(buf);
  CHECK(!ca.leaked());
}

// A frame inside a larger storage, after other bytes: written, committed, reopened there.
TESSERA_TEST(frame_memory, frame_at_an_offset) {
  tessera::test::counting_allocator ca;
  growable_buffer buf;
  growable_buffer_init(buf, ca.get());
  const storage st = growable_buffer_storage(buf);
  uint8_t prefix[100];
  for (uint8_t& b : prefix) b = 0xee;
  REQUIRE_OK(storage_write(st, 0, bytes_view(prefix, sizeof prefix)));
  frame_open_options o;
  o.base_offset = sizeof prefix;
  o.writable = true;
  {
    frame f;
    frame_create_params p;
    p.typesize = 4;
    p.blocksize = kBlock;
    REQUIRE_OK(frame_create(f, st, ca.get(), p, o));
    for (int i = 0; i < 3; ++i) {
      const size_t len = chunk_make(50 + static_cast<uint64_t>(i), kChunk, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
      REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, len)));
      REQUIRE_OK(frame_commit(f));
    }
  }
  CHECK(std::memcmp(buf.bytes().data(), prefix, sizeof prefix) == 0);
  frame f;
  REQUIRE_OK(frame_open(f, st, ca.get(), o));
  CHECK_EQ(frame_info_get(f)->nchunks, 3);
  CHECK_EQ(buf.size(), sizeof prefix + frame_info_get(f)->frame_len);
  CHECK_ERR(frame_open(f, st, ca.get()), errc::malformed);  // not a frame at offset 0
  CHECK(frame_info_get(f) == nullptr);
  growable_buffer_release(buf);
  CHECK(!ca.leaked());
}

// A chunk read from a writable frame on a growable buffer outlives the frame's later appends, which move the
// buffer: it is a copy, not a view that would dangle (ASan saw the view read freed memory).
TESSERA_TEST(frame_memory, chunk_read_from_a_writable_frame_survives_appends) {
  tessera::test::counting_allocator ca;
  {
    growable_buffer gb;
    growable_buffer_init(gb, ca.get());
    const storage st = growable_buffer_storage(gb);
    frame_create_params p;
    p.typesize = 4;
    p.blocksize = kBlock;
    p.chunksize = kChunk;
    frame_open_options o;
    o.durable = false;
    frame f;
    REQUIRE_OK(frame_create(f, st, ca.get(), p, o));
    const size_t len0 = chunk_make(900, kChunk, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
    REQUIRE(len0 > 0);
    static uint8_t first[sizeof g.chunk];
    std::memcpy(first, g.chunk, len0);
    REQUIRE_OK(frame_chunk_append(f, bytes_view(first, len0)));
    REQUIRE_OK(frame_commit(f));
    owned_array<uint8_t> buf;
    auto bytes = frame_chunk_read(f, 0, buf);
    REQUIRE_OK(bytes);
    CHECK(bytes->data() == buf.data());  // copied, not a view into the growable buffer
    const uint8_t* before = storage_view(st).data();
    for (int i = 1; i < 40; ++i) {
      const size_t len = chunk_make(900 + static_cast<uint64_t>(i), kChunk, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
      REQUIRE(len > 0);
      REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, len)));
    }
    REQUIRE_OK(frame_commit(f));
    CHECK(storage_view(st).data() != before);  // the buffer moved while it grew
    REQUIRE(bytes->size() == len0);
    CHECK(std::memcmp(bytes->data(), first, len0) == 0);
    REQUIRE_OK(frame_close(f));
  }
  CHECK(!ca.leaked());
}
