// SPDX-License-Identifier: BSD-3-Clause
// Memory bounds of reads (measured with the counting allocator): an element read takes at most one block of
// scratch plus a constant, a slice read at most one decoded chunk plus a constant, whatever the array's size;
// and chunks are decoded only where a slice touches them (a storage that counts the bytes read).
#include <cstdint>
#include <cstring>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/forwarding_storage.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

namespace {

// 256 x 256 float32 (256 KiB), chunks 64 x 256 (64 KiB, 4 chunks), blocks 8 x 32 (1 KiB, 64 per chunk).
constexpr int64_t kRows = 256;
constexpr int64_t kCols = 256;
constexpr int64_t kBlockBytes = 8 * 32 * 4;
constexpr int64_t kChunkBytes = 64 * 256 * 4;
// Codec state and bookkeeping that do not grow with blocks or chunks.
constexpr size_t kConstant = 8 * 1024;

array_params params_for(codec c) {
  array_params p;
  p.ndim = 2;
  p.shape[0] = kRows;
  p.shape[1] = kCols;
  p.chunkshape[0] = 64;
  p.chunkshape[1] = 256;
  p.blockshape[0] = 8;
  p.blockshape[1] = 32;
  p.dtype = str("<f4");
  p.compressor = c;
  return p;
}

// A storage over another that counts the bytes read and has only read and size (no view: every read goes
// through it).
struct counting_storage : test::forwarding_storage<counting_storage> {
  uint64_t bytes_read = 0;
  static status rd(void* c, uint64_t off, bytes_mut dst) noexcept {
    self(c).bytes_read += dst.size();
    return read_forward(c, off, dst);
  }
  storage get() noexcept {
    storage s;
    s.read = rd;
    s.size = size_forward;
    s.context = this;
    return s;
  }
};

}  // namespace

TESSERA_TEST(array_memory, element_needs_one_block_and_slice_one_chunk) {
  const codec codecs[] = {codec::blosclz, codec::lz4};
  for (codec c : codecs) {
    if (!codec_available(c)) continue;
    test::counting_allocator counting;
    const allocator alloc = counting.get();
    {
      buf data;
      REQUIRE(data.make(static_cast<size_t>(kRows * kCols * 4)));
      test::rng r(7);
      for (size_t i = 0; i < data.n; i += 4) {
        const uint32_t v = static_cast<uint32_t>(i / 4 + (r.next() & 15));
        std::memcpy(data.data() + i, &v, 4);
      }
      growable_buffer g;
      growable_buffer_init(g, alloc);
      const storage st = growable_buffer_storage(g);
      array a;
      REQUIRE_OK(array_create(a, array_target_contiguous(st, false), alloc, params_for(c),
                              array_fill_buffer(data.view())));
      REQUIRE_OK(array_close(a));
      REQUIRE_OK(array_open(a, st, alloc));
      uint8_t item[4];
      const int64_t warm[2] = {0, 0};
      REQUIRE_OK(array_element_read(a, warm, bytes_mut(item, 4)));  // codec contexts created on first use

      // Elements: one block of scratch.
      counting.reset_high_water();
      size_t base = counting.live_bytes;
      for (int k = 0; k < 50; ++k) {
        const int64_t at[2] = {r.range(0, kRows - 1), r.range(0, kCols - 1)};
        REQUIRE_OK(array_element_read(a, at, bytes_mut(item, 4)));
        CHECK(std::memcmp(item, data.data() + (at[0] * kCols + at[1]) * 4, 4) == 0);
      }
      CHECK_LE(counting.high_water_bytes - base, static_cast<size_t>(kBlockBytes) + kConstant);

      // A small slice (a few blocks): still one block.
      buf out;
      REQUIRE(out.make(static_cast<size_t>(kRows * kCols * 4)));
      counting.reset_high_water();
      base = counting.live_bytes;
      const int64_t s0[2] = {70, 10};
      const int64_t s1[2] = {75, 50};
      REQUIRE_OK(array_slice_read(a, s0, s1, bytes_mut(out.data(), 5 * 40 * 4)));
      for (int64_t i = 0; i < 5; ++i)
        CHECK(std::memcmp(out.data() + i * 40 * 4, data.data() + ((70 + i) * kCols + 10) * 4, 40 * 4) == 0);
      CHECK_LE(counting.high_water_bytes - base, static_cast<size_t>(kBlockBytes) + kConstant);

      // The whole array (4 chunks, decoded whole): one chunk.
      counting.reset_high_water();
      base = counting.live_bytes;
      REQUIRE_OK(array_read(a, out.mut()));
      CHECK(std::memcmp(out.data(), data.data(), data.n) == 0);
      CHECK_LE(counting.high_water_bytes - base, static_cast<size_t>(kChunkBytes + kBlockBytes) + kConstant);
      // A slice across chunks, not aligned: one chunk.
      counting.reset_high_water();
      base = counting.live_bytes;
      const int64_t t0[2] = {3, 1};
      const int64_t t1[2] = {250, 255};
      REQUIRE_OK(array_slice_read(a, t0, t1, bytes_mut(out.data(), 247 * 254 * 4)));
      for (int64_t i = 0; i < 247; ++i)
        CHECK(std::memcmp(out.data() + i * 254 * 4, data.data() + ((3 + i) * kCols + 1) * 4, 254 * 4) == 0);
      CHECK_LE(counting.high_water_bytes - base, static_cast<size_t>(kChunkBytes + kBlockBytes) + kConstant);
      REQUIRE_OK(array_close(a));
    }
    CHECK(!counting.leaked());
  }
}

// A firmware's reader (issue 12): opening allocates no decoder scratch, and an element or a small slice of a
// shuffled array takes one block of it, since their few elements are gathered inside the block they are decoded
// into. Measured from before the open: the open's own state plus one block (8 KiB blocks: four, as the decoder
// once kept from the open on, would not fit).
TESSERA_TEST(array_memory, open_and_a_few_elements_take_one_block) {
  const codec codecs[] = {codec::blosclz, codec::lz4};
  constexpr int64_t kBlock = 32 * 64 * 4;
  for (codec c : codecs) {
    if (!codec_available(c)) continue;
    test::counting_allocator counting;
    const allocator alloc = counting.get();
    {
      buf data;
      REQUIRE(data.make(static_cast<size_t>(128 * kCols * 4)));
      for (size_t i = 0; i < data.n; i += 4) {
        const float v = static_cast<float>(i / 4) * 0.25f;
        std::memcpy(data.data() + i, &v, 4);
      }
      growable_buffer g;
      growable_buffer_init(g, alloc);
      const storage st = growable_buffer_storage(g);
      array_params p = params_for(c);
      p.shape[0] = 128;
      p.blockshape[0] = 32;
      p.blockshape[1] = 64;
      array a;
      REQUIRE_OK(array_create(a, array_target_contiguous(st, false), alloc, p, array_fill_buffer(data.view())));
      REQUIRE_OK(array_close(a));
      counting.reset_high_water();
      const size_t base = counting.live_bytes;
      REQUIRE_OK(array_open(a, st, alloc));
      const size_t open = counting.high_water_bytes - base;
      CHECK_LE(open, static_cast<size_t>(kConstant));
      const int64_t at[][2] = {{0, 0}, {37, 201}, {127, 255}, {64, 63}, {95, 128}};
      for (const auto& e : at) {
        uint8_t item[4];
        REQUIRE_OK(array_element_read(a, e, bytes_mut(item, 4)));
        CHECK(std::memcmp(item, data.data() + (e[0] * kCols + e[1]) * 4, 4) == 0);
      }
      const int64_t s0[2] = {70, 10};
      const int64_t s1[2] = {72, 20};
      uint8_t out[2 * 10 * 4];
      REQUIRE_OK(array_slice_read(a, s0, s1, bytes_mut(out, sizeof out)));
      for (int64_t i = 0; i < 2; ++i)
        CHECK(std::memcmp(out + i * 40, data.data() + ((70 + i) * kCols + 10) * 4, 40) == 0);
      // One block, a constant, and the array's read state (a read's plan, chunk and touched blocks, kept in the
      // array from its first read instead of the caller's stack: about 150 bytes per dimension).
      constexpr size_t kReadState = 160 * kMaxDims + 256;
      CHECK_LE(counting.high_water_bytes - base, open + static_cast<size_t>(kBlock) + 1024 + kReadState);
      REQUIRE_OK(array_close(a));
    }
    CHECK(!counting.leaked());
  }
}

TESSERA_TEST(array_memory, a_slice_reads_only_what_it_touches) {
  // Compressed with clevel 0 (memcpyed blocks), so bytes read map directly to blocks.
  test::counting_allocator counting;
  const allocator alloc = counting.get();
  {
    buf data;
    REQUIRE(data.make(static_cast<size_t>(kRows * kCols * 4)));
    test::rng r(11);
    fill_random(r, data.data(), data.n, false);
    growable_buffer g;
    growable_buffer_init(g, alloc);
    const storage st = growable_buffer_storage(g);
    array_params p = params_for(codec::blosclz);
    array a;
    REQUIRE_OK(array_create(a, array_target_contiguous(st, false), alloc, p, array_fill_buffer(data.view())));
    REQUIRE_OK(array_close(a));
    counting_storage cs;
    cs.inner = st;
    const storage lazy = cs.get();
    REQUIRE_OK(array_open(a, lazy, alloc));
    const uint64_t after_open = cs.bytes_read;
    // One element: about one block (1 KiB) plus headers and block starts, never a chunk (64 KiB).
    const int64_t at[2] = {100, 100};
    uint8_t item[4];
    REQUIRE_OK(array_element_read(a, at, bytes_mut(item, 4)));
    CHECK(std::memcmp(item, data.data() + (100 * kCols + 100) * 4, 4) == 0);
    CHECK_LE(cs.bytes_read - after_open, static_cast<uint64_t>(4 * kBlockBytes));
    // A 2 x 2 block slice inside one chunk: four blocks' worth.
    const uint64_t before = cs.bytes_read;
    const int64_t s0[2] = {8, 32};
    const int64_t s1[2] = {24, 96};
    buf out;
    REQUIRE(out.make(16 * 64 * 4));
    REQUIRE_OK(array_slice_read(a, s0, s1, out.mut()));
    for (int64_t i = 0; i < 16; ++i)
      CHECK(std::memcmp(out.data() + i * 64 * 4, data.data() + ((8 + i) * kCols + 32) * 4, 64 * 4) == 0);
    CHECK_LE(cs.bytes_read - before, static_cast<uint64_t>(8 * kBlockBytes));
    REQUIRE_OK(array_close(a));
  }
  CHECK(!counting.leaked());
}
