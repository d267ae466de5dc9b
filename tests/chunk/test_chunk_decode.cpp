// SPDX-License-Identifier: BSD-3-Clause
// Decoding hand-built chunks (special values, memcpyed, stream encodings, split and not, filters) and chunks
// the reference made; whole chunks and single blocks, serially and over a scrambling executor.
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "tessera/chunk.hpp"

#include "../support/check.hpp"
#include "block_request.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "chunk_builder.hpp"
#include "reference_chunks.hpp"

using namespace tessera;
using namespace chunk_test;

namespace {

constexpr size_t kMax = 24 * 1024;
uint8_t g_src[kMax];
uint8_t g_chunk[kMax * 2 + 4096];
uint8_t g_out[kMax + 64];
uint8_t g_blk[kMax + 64];
uint8_t g_work[kMax * 3];

// Runs tasks in reverse order over 3 worker indices: shows blocks do not depend on their order or worker.
void scramble_run(void*, size_t ntasks, executor_task task, void* task_context) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(task_context, i, static_cast<uint32_t>(i % 3));
}
executor scramble_executor() {
  executor e;
  e.run = scramble_run;
  e.workers = 3;
  return e;
}

// chunk_decode_blocks: every block once in reverse order, then every other block, each consumed block compared
// with expected (the consumer runs on the decoder's executor: the scrambling one in some tests).
struct blocks_check {
  const chunk_header* h = nullptr;
  bytes_view chunk;
  const uint8_t* expected = nullptr;
  size_t first = 0;  // requested: blocks first, first + step, ... (step 1: all, reversed)
  size_t step = 1;
  bool reverse = false;
  size_t count = 0;
  uint32_t seen[512] = {};
  bool wrong = false;
  bool ranged = false;  // consume compares only a range of each block, which the decoder may decode alone
  // Block nblock's range: a few items near its start, its middle or its end, or the whole block.
  static void range_of(const blocks_check& b, size_t nblock, size_t size, size_t* begin, size_t* end) noexcept {
    const size_t ts = b.h->typesize;
    switch (nblock % 4) {
      case 0: *begin = 0; *end = size < 3 * ts ? size : 3 * ts; break;
      case 1: *begin = size / 2; *end = size / 2 + (size - size / 2 < ts + 1 ? size - size / 2 : ts + 1); break;
      case 2: *begin = size > 5 ? size - 5 : 0; *end = size; break;
      default: *begin = 0; *end = size; break;
    }
  }
  static void range(void* c, size_t i, size_t* begin, size_t* end) noexcept {
    auto& b = *static_cast<blocks_check*>(c);
    const size_t nblock = block(c, i);
    auto e = chunk_block_extent_get(*b.h, b.chunk, nblock);
    range_of(b, nblock, e.ok() ? e->size : 0, begin, end);
  }
  static size_t block(void* c, size_t i) noexcept {
    auto& b = *static_cast<blocks_check*>(c);
    const size_t k = b.reverse ? b.count - 1 - i : i;
    return b.first + k * b.step;
  }
  static status consume(void* c, size_t i, bytes_view decoded, uint32_t worker) noexcept {
    auto& b = *static_cast<blocks_check*>(c);
    const size_t nblock = block(c, i);
    auto e = chunk_block_extent_get(*b.h, b.chunk, nblock);
    size_t lo = 0, hi = e.ok() ? e->size : 0;
    if (b.ranged) range_of(b, nblock, hi, &lo, &hi);
    if (!e.ok() || decoded.size() != e->size ||
        std::memcmp(decoded.data() + lo, b.expected + e->offset + lo, hi - lo) != 0 || worker >= 3)
      b.wrong = true;
    if (nblock < 512) ++b.seen[nblock];
    return ok_status();
  }
};

void check_decodes_blocks(test::context& t, chunk_decoder& d, bytes_view chunk, const uint8_t* expected) {
  auto h = chunk_header_read(chunk);
  REQUIRE_OK(h);
  for (size_t step : {size_t{1}, size_t{2}, size_t{3}}) {
    blocks_check b;
    b.ranged = step == 3;
    b.h = &*h;
    b.chunk = chunk;
    b.expected = expected;
    b.step = step;
    b.first = step == 2 && h->nblocks > 1 ? 1 : 0;
    b.reverse = step == 1;
    b.count = h->nblocks > b.first ? (h->nblocks - b.first + step - 1) / step : 0;
    chunk_block_request r;
    r.count = b.count;
    r.block = blocks_check::block;
    r.consume = blocks_check::consume;
    r.context = &b;
    if (b.ranged) r.range = blocks_check::range;
    REQUIRE_OK(chunk_decode_blocks(d, chunk, r));
    CHECK(!b.wrong);
    for (size_t k = 0; k < h->nblocks && k < 512; ++k)
      CHECK_EQ(b.seen[k], (k >= b.first && (k - b.first) % step == 0) ? 1u : 0u);
  }
}

// Decodes the chunk whole (with guard bytes) and block by block; compares with expected.
void check_decodes(test::context& t, chunk_decoder& d, bytes_view chunk, const uint8_t* expected, size_t nbytes) {
  std::memset(g_out, 0xa5, sizeof g_out);
  auto r = chunk_decode(d, chunk, bytes_mut(g_out + 32, nbytes));
  REQUIRE_OK(r);
  CHECK_EQ(*r, nbytes);
  CHECK(std::memcmp(g_out + 32, expected, nbytes) == 0);
  for (size_t i = 0; i < 32; ++i) CHECK_EQ(g_out[i], 0xa5);
  CHECK_EQ(g_out[32 + nbytes], 0xa5);
  auto h = chunk_header_read(chunk);
  REQUIRE_OK(h);
  for (size_t b = 0; b < h->nblocks; ++b) {
    auto e = chunk_block_extent_get(*h, chunk, b);
    REQUIRE_OK(e);
    REQUIRE(e->offset + e->size <= nbytes);
    std::memset(g_blk, 0x5a, e->size + 16);
    auto rb = chunk_decode_block(d, chunk, b, bytes_mut(g_blk, e->size));
    REQUIRE_OK(rb);
    CHECK_EQ(*rb, e->size);
    CHECK(std::memcmp(g_blk, expected + e->offset, e->size) == 0);
    CHECK_EQ(g_blk[e->size], 0x5a);
  }
  check_decodes_blocks(t, d, chunk, expected);
}

void fill_data(test::rng& r, uint8_t* p, size_t n, int kind) {
  for (size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0: p[i] = static_cast<uint8_t>(r.next()); break;
      case 1: p[i] = static_cast<uint8_t>(i / 7); break;
      case 2: p[i] = (i / 300) % 3 == 0 ? 0 : static_cast<uint8_t>((i / 300) % 5 * 40); break;
      default: p[i] = r.chance(10) ? static_cast<uint8_t>(r.next()) : 0; break;
    }
  }
}

}  // namespace

TESSERA_TEST(chunk_decode, special_values) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  // zeros, NaN (typesize 4 and 8), a repeated 3-byte value with blocks that split it, uninitialized.
  struct kase {
    uint8_t special;
    uint8_t typesize;
    int32_t nbytes;
    int32_t blocksize;
    uint8_t value_size;
  };
  const kase cases[] = {{1, 4, 4000, 1000, 0}, {1, 3, 1001, 256, 0}, {2, 4, 4096, 1000, 0}, {2, 8, 8000, 1024, 0},
                        {3, 3, 3000, 1000, 3}, {3, 8, 800, 64, 8},    {4, 2, 2000, 512, 0},  {3, 1, 10, 4, 1}};
  // Zeros, NaNs and uninitialized also with the memcpyed flag set over other bytes: the special value wins (as
  // in the reference), whole or by blocks.
  for (int memcpyed = 0; memcpyed < 2; ++memcpyed)
  for (const kase& k : cases) {
    if (memcpyed != 0 && k.value_size != 0) continue;
    header_spec h;
    h.typesize = k.typesize;
    h.nbytes = k.nbytes;
    h.blocksize = k.blocksize;
    h.cbytes = 32 + (memcpyed != 0 ? k.nbytes : k.value_size);
    h.blosc2_flags = static_cast<uint8_t>(k.special << 4);
    if (memcpyed != 0) h.flags |= kChunkFlagMemcpyed;
    header_write(g_chunk, h);
    if (memcpyed != 0) std::memset(g_chunk + 32, 0xee, static_cast<size_t>(k.nbytes));
    const uint8_t value[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    std::memcpy(g_chunk + 32, value, k.value_size);
    static uint8_t expected[8192];
    for (int32_t i = 0; i < k.nbytes; ++i) {
      uint8_t v = 0;
      if (k.special == 2 && k.typesize == 4) v = (i % 4 == 2) ? 0xc0 : (i % 4 == 3 ? 0x7f : 0);
      if (k.special == 2 && k.typesize == 8) v = (i % 8 == 6) ? 0xf8 : (i % 8 == 7 ? 0x7f : 0);
      if (k.special == 3) v = value[i % k.value_size];
      expected[i] = v;
    }
    check_decodes(t, d, bytes_view(g_chunk, h.cbytes), expected, static_cast<size_t>(k.nbytes));
  }
  // NaN needs typesize 4 or 8.
  header_spec h;
  h.typesize = 2;
  h.nbytes = 100;
  h.blocksize = 100;
  h.cbytes = 32;
  h.blosc2_flags = 2 << 4;
  header_write(g_chunk, h);
  CHECK_ERR(chunk_decode(d, bytes_view(g_chunk, 32), bytes_mut(g_out, 100)), errc::malformed);
}

TESSERA_TEST(chunk_decode, memcpyed_chunks) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  test::rng r(7);
  for (int extended = 0; extended < 2; ++extended) {
    const size_t n = 1000;
    fill_data(r, g_src, n, 0);
    header_spec h;
    h.extended = extended != 0;
    h.version = extended ? 5 : 2;
    h.flags = static_cast<uint8_t>((extended ? 0x05 : 0x01) | 0x02);  // shuffle flag ignored: memcpyed
    h.typesize = 4;
    h.nbytes = static_cast<int32_t>(n);
    h.blocksize = 300;
    const size_t hs = extended ? 32 : 16;
    h.cbytes = static_cast<int32_t>(n + hs);
    header_write(g_chunk, h);
    std::memcpy(g_chunk + hs, g_src, n);
    check_decodes(t, d, bytes_view(g_chunk, n + hs), g_src, n);
    // cbytes must be nbytes plus the header.
    put_i32(g_chunk + 12, static_cast<int32_t>(n + hs + 1));
    CHECK_ERR(chunk_decode(d, bytes_view(g_chunk, n + hs + 1), bytes_mut(g_out, n)), errc::malformed);
  }
}

TESSERA_TEST(chunk_decode, hand_built_streams_and_filters) {
  test::counting_allocator counter;
  {
    chunk_decoder serial;
    REQUIRE_OK(chunk_decoder_init(serial, counter.get()));
    chunk_decoder parallel;
    chunk_decoder_options opt;
    opt.exec = scramble_executor();
    opt.max_blocksize = 1024;  // smaller than some blocks below: scratch grows on demand
    REQUIRE_OK(chunk_decoder_init(parallel, counter.get(), opt));
    test::rng r(42);
    const uint8_t typesizes[] = {1, 2, 3, 4, 7, 8, 16};
    for (int iter = 0; iter < 400; ++iter) {
      build_spec s;
      s.typesize = typesizes[r.range(0, 6)];
      s.blocksize = static_cast<int32_t>(s.typesize * r.range(8, 600));
      s.split = r.chance(50);
      s.extended = r.chance(70);
      s.raw_streams_only = r.chance(20);
      const int fk = static_cast<int>(r.range(0, 5));
      if (s.extended) {
        if (fk == 1) s.filters[5] = 1;
        if (fk == 2) { s.filters[4] = 3; s.filters[5] = 1; }
        if (fk == 3) { s.filters[4] = 1; s.filters[5] = 35; }
        if (fk == 4) { s.filters[0] = 3; s.filters[2] = 36; s.metas[2] = 0; }
        if (fk == 5) { s.filters[1] = 35; s.metas[1] = 2; s.filters[3] = 4; s.metas[3] = 10; }
      } else {
        s.blosc1_shuffle = fk == 1 || fk == 2;
        s.blosc1_delta = fk == 2 || fk == 4;
      }
      const size_t nbytes = static_cast<size_t>(r.range(0, 20000));
      fill_data(r, g_src, nbytes, static_cast<int>(r.range(0, 3)));
      const size_t csize = chunk_build(s, g_src, nbytes, g_chunk, sizeof g_chunk, g_work);
      REQUIRE(csize > 0);
      check_decodes(t, serial, bytes_view(g_chunk, csize), g_src, nbytes);
      check_decodes(t, parallel, bytes_view(g_chunk, csize), g_src, nbytes);
    }
  }
  CHECK(!counter.leaked());
  CHECK_EQ(counter.mismatched_frees, 0u);
}

TESSERA_TEST(chunk_decode, delta_later_block_alone) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  build_spec s;
  s.typesize = 4;
  s.blocksize = 400;
  s.split = true;
  s.filters[4] = 3;
  s.filters[5] = 1;
  for (size_t i = 0; i < 2000; ++i) g_src[i] = static_cast<uint8_t>(i * 13 / 7);
  const size_t csize = chunk_build(s, g_src, 2000, g_chunk, sizeof g_chunk, g_work);
  REQUIRE(csize > 0);
  for (size_t b : {size_t{3}, size_t{1}, size_t{4}, size_t{0}}) {
    auto rb = chunk_decode_block(d, bytes_view(g_chunk, csize), b, bytes_mut(g_blk, 400));
    REQUIRE_OK(rb);
    CHECK(std::memcmp(g_blk, g_src + 400 * b, 400) == 0);
  }
  CHECK_ERR(chunk_decode_block(d, bytes_view(g_chunk, csize), 5, bytes_mut(g_blk, 400)), errc::out_of_range);
  CHECK_ERR(chunk_decode_block(d, bytes_view(g_chunk, csize), 1, bytes_mut(g_blk, 399)), errc::buffer_too_small);
}

namespace {
// A request over a fixed list; consume fails from call `fail_at` on (counted over all calls).
struct listed_blocks {
  const size_t* list = nullptr;
  size_t calls = 0;
  size_t fail_at = SIZE_MAX;
  static size_t block(void* c, size_t i) noexcept { return static_cast<listed_blocks*>(c)->list[i]; }
  static status consume(void* c, size_t, bytes_view, uint32_t) noexcept {
    auto& b = *static_cast<listed_blocks*>(c);
    if (b.calls++ >= b.fail_at) return make_error(errc::no_space, "test: the consumer is full");
    return ok_status();
  }
};
}  // namespace

TESSERA_TEST(chunk_decode, requested_blocks_errors) {
  chunk_decoder d;
  chunk_decoder_options o;
  o.exec = scramble_executor();
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), o));
  build_spec s;
  s.typesize = 4;
  s.blocksize = 400;
  s.split = true;
  s.filters[4] = 3;  // delta: later blocks need block 0, decoded once before the others
  s.filters[5] = 1;
  for (size_t i = 0; i < 2000; ++i) g_src[i] = static_cast<uint8_t>(i * 13 / 7);
  const size_t csize = chunk_build(s, g_src, 2000, g_chunk, sizeof g_chunk, g_work);
  REQUIRE(csize > 0);
  const bytes_view c(g_chunk, csize);
  const size_t list[] = {4, 2, 5, 1};
  listed_blocks b;
  b.list = list;
  chunk_block_request r;
  r.count = 2;
  r.block = listed_blocks::block;
  r.consume = listed_blocks::consume;
  r.context = &b;
  REQUIRE_OK(chunk_decode_blocks(d, c, r));
  CHECK_EQ(b.calls, 2u);
  r.count = 3;  // block 5 is past the chunk's 5 blocks
  b.calls = 0;
  CHECK_ERR(chunk_decode_blocks(d, c, r), errc::out_of_range);
  // A failing consumer's error is returned; the blocks after it are not decoded (serial order here: reversed).
  r.count = 2;
  b.calls = 0;
  b.fail_at = 0;
  CHECK_ERR(chunk_decode_blocks(d, c, r), errc::no_space);
  CHECK_EQ(b.calls, 1u);
  r.consume = nullptr;
  CHECK_ERR(chunk_decode_blocks(d, c, r), errc::invalid_argument);
  r.count = 0;  // nothing asked: nothing called
  CHECK_OK(chunk_decode_blocks(d, c, r));
  CHECK_ERR(chunk_decode_blocks(d, bytes_view(g_chunk, csize - 1), r), errc::truncated);
}

TESSERA_TEST(chunk_decode, errors_are_reported) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  build_spec s;
  s.typesize = 4;
  s.blocksize = 256;
  s.raw_streams_only = true;
  for (size_t i = 0; i < 1000; ++i) g_src[i] = static_cast<uint8_t>(i);
  const size_t csize = chunk_build(s, g_src, 1000, g_chunk, sizeof g_chunk, g_work);
  REQUIRE(csize > 0);
  const bytes_view c(g_chunk, csize);
  CHECK_ERR(chunk_decode(d, c, bytes_mut(g_out, 999)), errc::buffer_too_small);
  CHECK_ERR(chunk_decode(d, bytes_view(g_chunk, csize - 1), bytes_mut(g_out, 1000)), errc::truncated);
  static uint8_t m[4096];
  // A lazy chunk: the blocks live elsewhere.
  std::memcpy(m, g_chunk, csize);
  m[31] |= 0x08;
  CHECK_ERR(chunk_decode(d, bytes_view(m, csize), bytes_mut(g_out, 1000)), errc::unsupported);
  // Instrumented chunks hold statistics.
  std::memcpy(m, g_chunk, csize);
  m[31] |= 0x80;
  CHECK_ERR(chunk_decode(d, bytes_view(m, csize), bytes_mut(g_out, 1000)), errc::unsupported);
  // A filter this library lacks (ndmean, 33).
  std::memcpy(m, g_chunk, csize);
  m[16] = 33;
  CHECK_ERR(chunk_decode(d, bytes_view(m, csize), bytes_mut(g_out, 1000)), errc::unsupported);
  // A stream whose csize is not the block size goes to the codec: a user-defined codec is unavailable.
  std::memcpy(m, g_chunk, csize);
  put_i32(m + 32 + 16, 255);  // first stream of block 0 claims 255 compressed bytes
  m[2] = static_cast<uint8_t>((m[2] & 0x1f) | (6 << 5));
  CHECK_ERR(chunk_decode(d, bytes_view(m, csize), bytes_mut(g_out, 1000)), errc::codec_unavailable);
  // Zstd: garbage is corrupt with the library, unavailable without it.
  m[2] = static_cast<uint8_t>((m[2] & 0x1f) | (4 << 5));
  CHECK_ERR(chunk_decode(d, bytes_view(m, csize), bytes_mut(g_out, 1000)),
            codec_available(codec::zstd) ? errc::corrupt : errc::codec_unavailable);
  m[2] = static_cast<uint8_t>((m[2] & 0x1f) | (3 << 5));
  CHECK_ERR(chunk_decode(d, bytes_view(m, csize), bytes_mut(g_out, 1000)),
            codec_available(codec::zlib) ? errc::corrupt : errc::codec_unavailable);
  m[2] = static_cast<uint8_t>((m[2] & 0x1f) | (1 << 5));
  CHECK_ERR(chunk_decode(d, bytes_view(m, csize), bytes_mut(g_out, 1000)),
            codec_available(codec::lz4) ? errc::corrupt : errc::codec_unavailable);
  // Split blocks must hold whole elements.
  build_spec odd;
  odd.typesize = 2;
  odd.blocksize = 258;
  odd.split = false;
  odd.raw_streams_only = true;
  const size_t osize = chunk_build(odd, g_src, 1000, m, sizeof m, g_work);
  REQUIRE(osize > 0);
  m[2] = static_cast<uint8_t>(m[2] & ~0x10);  // now claims split streams...
  m[3] = 4;                                   // ...of 4-byte elements: 258 is not a multiple
  CHECK_ERR(chunk_decode(d, bytes_view(m, osize), bytes_mut(g_out, 1000)), errc::malformed);
  // A run token without the run bit.
  header_spec h;
  h.typesize = 1;
  h.nbytes = 100;
  h.blocksize = 100;
  h.flags = 0x15;
  h.cbytes = 32 + 4 + 5;
  header_write(m, h);
  put_i32(m + 32, 36);
  put_i32(m + 36, -7);
  m[40] = 0x02;
  CHECK_ERR(chunk_decode(d, bytes_view(m, 41), bytes_mut(g_out, 100)), errc::unsupported);
  m[40] = 0x01;
  REQUIRE_OK(chunk_decode(d, bytes_view(m, 41), bytes_mut(g_out, 100)));
  for (int i = 0; i < 100; ++i) CHECK_EQ(g_out[i], 7);
  put_i32(m + 36, -256);
  CHECK_ERR(chunk_decode(d, bytes_view(m, 41), bytes_mut(g_out, 100)), errc::corrupt);
}

TESSERA_TEST(chunk_decode, reference_made_chunks) {
  test::counting_allocator counter;
  {
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, counter.get()));
    allocator a = counter.get();
    for (const auto& rc : reference_chunks::kChunks) {
      const bytes_view c(rc.data, rc.size);
      auto* out = static_cast<uint8_t*>(allocator_allocate(a, rc.nbytes + 16, 16));
      REQUIRE(out != nullptr);
      std::memset(out, 0xa5, rc.nbytes + 16);
      auto r = chunk_decode(d, c, bytes_mut(out, rc.nbytes));
      const bool have = codec_available(static_cast<codec>(rc.codec));
      if (!have) {
        CHECK_ERR(r, errc::codec_unavailable);
      } else {
        CHECK_OK(r);
        CHECK(fnv1a(out, rc.nbytes) == rc.fnv1a);
        for (size_t i = 0; i < 16; ++i) CHECK_EQ(out[rc.nbytes + i], 0xa5);
        auto h = chunk_header_read(c);
        REQUIRE_OK(h);
        auto* blk = static_cast<uint8_t*>(allocator_allocate(a, static_cast<size_t>(h->blocksize), 16));
        REQUIRE(blk != nullptr);
        for (size_t b = 0; b < h->nblocks; ++b) {
          auto e = chunk_block_extent_get(*h, c, b);
          REQUIRE_OK(e);
          REQUIRE_OK(chunk_decode_block(d, c, b, bytes_mut(blk, e->size)));
          CHECK(std::memcmp(blk, out + e->offset, e->size) == 0);
        }
        check_decodes_blocks(t, d, c, out);
        allocator_deallocate(a, blk, static_cast<size_t>(h->blocksize), 16);
      }
      allocator_deallocate(a, out, rc.nbytes + 16, 16);
    }
  }
  CHECK(!counter.leaked());
}

TESSERA_TEST(chunk_decode, allocation_failures_never_leak) {
  // The first reference chunk of each codec, decoded while the Nth allocation fails, for every N.
  for (const auto& rc : reference_chunks::kChunks) {
    if (!codec_available(static_cast<codec>(rc.codec))) continue;
    static uint8_t out[300000];
    if (rc.nbytes > sizeof out) continue;
    bool succeeded = false;
    for (size_t fail = 1; fail < 40 && !succeeded; ++fail) {
      test::counting_allocator counter;
      counter.fail_at = fail;
      {
        chunk_decoder d;
        status s = chunk_decoder_init(d, counter.get());
        if (s.ok()) {
          auto r = chunk_decode(d, bytes_view(rc.data, rc.size), bytes_mut(out, rc.nbytes));
          if (r.ok()) {
            succeeded = true;
            CHECK(fnv1a(out, rc.nbytes) == rc.fnv1a);
          } else {
            CHECK_ERR(r, errc::out_of_memory);
          }
        } else {
          CHECK_ERR(s, errc::out_of_memory);
        }
      }
      CHECK(!counter.leaked());
    }
    CHECK(succeeded);
  }
}

TESSERA_TEST(chunk_decode, arena_from_estimate) {
  chunk_decoder_options opt;
  opt.max_blocksize = 8192;
  opt.fixed_scratch = true;
  const size_t need = chunk_decoder_estimate(opt);
  static uint8_t buffer[1 << 20];
  REQUIRE(need <= sizeof buffer);
  arena ar;
  arena_init(ar, buffer, need);
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, arena_allocator(ar), opt));
  build_spec s;
  s.typesize = 8;
  s.blocksize = 8192;
  s.split = true;
  s.filters[4] = 3;
  s.filters[5] = 1;
  for (size_t i = 0; i < 20000; ++i) g_src[i] = static_cast<uint8_t>(i % 251);
  const size_t csize = chunk_build(s, g_src, 20000, g_chunk, sizeof g_chunk, g_work);
  REQUIRE(csize > 0);
  check_decodes(t, d, bytes_view(g_chunk, csize), g_src, 20000);
  // Blocks larger than a fixed scratch are refused, not grown.
  s.blocksize = 16384;
  const size_t big = chunk_build(s, g_src, 20000, g_chunk, sizeof g_chunk, g_work);
  REQUIRE(big > 0);
  CHECK_ERR(chunk_decode(d, bytes_view(g_chunk, big), bytes_mut(g_out, 20000)), errc::buffer_too_small);
}

namespace {

struct prefix_probe {
  static size_t block(void*, size_t) noexcept { return 0; }
  static status consume(void*, size_t, bytes_view, uint32_t) noexcept { return ok_status(); }
  static void range(void*, size_t, size_t* begin, size_t* end) noexcept {
    *begin = 0;
    *end = 64;  // a few items at the front: LZ4 stops early
  }
};

}  // namespace

// A partial LZ4 decode reads only the front of a stream; a stream whose tail is cut must still fail, as the
// whole decode does, not hand out its front as if all were well.
TESSERA_TEST(chunk_decode, partial_lz4_decode_checks_the_streams_tail) {
  if (!codec_available(codec::lz4)) return;
  const size_t n = 16 * 1024;
  for (size_t i = 0; i < n; ++i) g_src[i] = static_cast<uint8_t>((i / 7) * 13 + (i % 5));
  chunk_encode_params p;
  p.typesize = 1;
  p.compressor = codec::lz4;
  p.clevel = 5;
  p.blocksize = static_cast<int32_t>(n);
  p.split = split_mode::never;
  p.filters[kChunkMaxFilters - 1] = 0;
  test::counting_allocator ca;
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, ca.get()));
  auto cs = chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(cs);
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, ca.get()));
  chunk_block_request r;
  r.count = 1;
  r.block = prefix_probe::block;
  r.consume = prefix_probe::consume;
  r.range = prefix_probe::range;
  CHECK_OK(chunk_decode_blocks(d, bytes_view(g_chunk, *cs), r));
  // One block, one stream: its csize sits after the header and the block start. Cut the stream's last byte.
  const size_t at = kChunkHeaderExtendedSize + 4;
  const uint32_t le = static_cast<uint32_t>(g_chunk[at]) | static_cast<uint32_t>(g_chunk[at + 1]) << 8 |
                      static_cast<uint32_t>(g_chunk[at + 2]) << 16 | static_cast<uint32_t>(g_chunk[at + 3]) << 24;
  REQUIRE(le > 100 && le + at + 4 == *cs);  // compressed, and the only stream
  const uint32_t cut = le - 1;
  for (int k = 0; k < 4; ++k) g_chunk[at + k] = static_cast<uint8_t>(cut >> (8 * k));
  CHECK_ERR(chunk_decode(d, bytes_view(g_chunk, *cs), bytes_mut(g_out, sizeof g_out)), errc::corrupt);
  CHECK_ERR(chunk_decode_blocks(d, bytes_view(g_chunk, *cs), r), errc::corrupt);
}

// ---- Scratch: what the chunk's pipeline needs, made when first needed -------------------------------------------

namespace {

// Items that compress under a shuffle: a slow count in the low bytes, a little noise, zeros above.
void shuffled_source_fill(size_t n, uint8_t ts) {
  for (size_t i = 0; i < n; ++i) {
    const size_t k = i / ts, b = i % ts;
    g_src[i] = static_cast<uint8_t>(b == 0 ? k * 3 + (k * 2654435761u >> 28) : b == 1 ? k >> 6 : 0);
  }
}

result<size_t> encode_with(const allocator& a, codec c, uint8_t ts, split_mode split, uint8_t filter, size_t n,
                           size_t bs) {
  chunk_encode_params p;
  p.typesize = ts;
  p.compressor = c;
  p.blocksize = static_cast<int32_t>(bs);
  p.split = split;
  p.filters[kChunkMaxFilters - 1] = filter;
  chunk_encoder e;
  TESSERA_TRY(chunk_encoder_init(e, a));
  return chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
}

// One block asked for with a byte range; consume compares the range with the source.
struct range_probe {
  size_t nblock = 0, begin = 0, end = 0;
  const uint8_t* expect = nullptr;  // the block's source bytes
  bool same = false;
  static size_t block(void* c, size_t) noexcept { return static_cast<range_probe*>(c)->nblock; }
  static void range(void* c, size_t, size_t* begin, size_t* end) noexcept {
    *begin = static_cast<range_probe*>(c)->begin;
    *end = static_cast<range_probe*>(c)->end;
  }
  static status consume(void* c, size_t, bytes_view decoded, uint32_t) noexcept {
    auto& p = *static_cast<range_probe*>(c);
    p.same = p.end <= decoded.size() && std::memcmp(decoded.data() + p.begin, p.expect + p.begin, p.end - p.begin) == 0;
    return ok_status();
  }
};

// A request for the probe's one block, its range checked by consume.
chunk_block_request probe_request(range_probe& probe) { return chunk_test::block_request_of(probe, 1); }

}  // namespace

TESSERA_TEST(chunk_decode, scratch_is_made_when_first_needed) {
  test::counting_allocator ca;
  chunk_decoder_options opt;
  opt.max_blocksize = 64 * 1024;
  {
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, ca.get(), opt));
    CHECK_LE(ca.live_bytes, size_t{4096});  // the worker, no block
  }
  opt.fixed_scratch = true;  // made whole at init: nothing is allocated later
  {
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, ca.get(), opt));
    CHECK(ca.live_bytes >= 4 * opt.max_blocksize);
  }
  CHECK(!ca.leaked());
}

// A whole chunk decoded into the caller's buffer takes only its filters' temporaries: none without a filter (or
// stored verbatim), one block for a shuffle, two for a bit shuffle (its own scratch).
TESSERA_TEST(chunk_decode, whole_chunks_take_the_scratch_their_filters_need) {
  const size_t bs = 4096, n = 3 * bs + 1000;
  shuffled_source_fill(n, 4);
  struct pipeline {
    uint8_t filter;
    int clevel;
    size_t blocks;
  };
  const pipeline pipelines[] = {{0, 5, 0}, {1, 0, 0}, {1, 5, 1}, {2, 5, 2}};
  for (const pipeline& pl : pipelines) {
    test::counting_allocator ca;
    chunk_encode_params p;
    p.typesize = 4;
    p.clevel = pl.clevel;
    p.blocksize = static_cast<int32_t>(bs);
    p.filters[kChunkMaxFilters - 1] = pl.filter;
    chunk_encoder e;
    REQUIRE_OK(chunk_encoder_init(e, ca.get()));
    auto cs = chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
    REQUIRE_OK(cs);
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, ca.get()));
    ca.reset_high_water();
    const size_t base = ca.live_bytes;
    auto r = chunk_decode(d, bytes_view(g_chunk, *cs), bytes_mut(g_out, n));
    REQUIRE_OK(r);
    CHECK(*r == n && std::memcmp(g_out, g_src, n) == 0);
    CHECK_EQ(ca.high_water_bytes - base, pl.blocks * bs);
  }
}

// A few elements of a shuffled block, as a firmware reads one element or a small slice: gathered inside the one
// block they are decoded into, so that block is all the scratch there is, wherever they lie in the block, for
// each codec, typesize and split; with split streams (each byte plane decoded beside the elements) up to a
// quarter of the block at either end too. More elements take the fast path's second block.
TESSERA_TEST(chunk_decode, few_shuffled_elements_need_one_block_of_scratch) {
  const codec codecs[] = {codec::blosclz, codec::lz4};
  const size_t bs = 4096, n = 3 * bs + 1024;  // three full blocks and a short one
  for (codec c : codecs) {
    if (!codec_available(c)) continue;
    for (uint8_t ts : {uint8_t{2}, uint8_t{4}, uint8_t{8}}) {
      shuffled_source_fill(n, ts);
      for (split_mode split : {split_mode::always, split_mode::never}) {
        test::counting_allocator ca;
        auto cs = encode_with(ca.get(), c, ts, split, 1, n, bs);
        REQUIRE_OK(cs);
        auto h = chunk_header_read(bytes_view(g_chunk, *cs));
        REQUIRE_OK(h);
        REQUIRE(!h->memcpyed && h->special == chunk_special::none);
        for (size_t nblock = 0; nblock < 4; ++nblock) {
          const size_t size = nblock == 3 ? 1024 : bs;
          const size_t ne = size / ts;
          // (first element, count): single ones, short runs, a quarter at either end, half, all.
          const size_t picks[][2] = {{0, 1},          {1, 1},        {ne / 3, 1},         {ne / 2 - 1, 1},
                                     {ne / 2, 1},     {ne - 1, 1},   {ne / 2 - 5, 10},    {ne - 32, 32},
                                     {0, ne / 4},     {ne * 3 / 4, ne / 4}, {ne / 4, ne / 2}, {0, ne}};
          for (const auto& pick : picks) {
            range_probe probe;
            probe.nblock = nblock;
            probe.begin = pick[0] * ts;
            probe.end = (pick[0] + pick[1]) * ts;
            probe.expect = g_src + nblock * bs;
            const chunk_block_request r = probe_request(probe);
            chunk_decoder d;  // a fresh one: scratch grows and stays
            REQUIRE_OK(chunk_decoder_init(d, ca.get()));
            ca.reset_high_water();
            const size_t base = ca.live_bytes;
            REQUIRE_OK(chunk_decode_blocks(d, bytes_view(g_chunk, *cs), r));
            CHECK(probe.same);
            const bool few = pick[1] * 4 <= ne;
            const bool one = few && (pick[1] * ts <= 256 || (h->split && nblock < 3));
            if (!probe.same || ca.high_water_bytes - base > (one ? size : 2 * size))
              std::printf("  codec %d typesize %u split %d block %zu elements [%zu, +%zu): %zu bytes of scratch\n",
                          static_cast<int>(c), ts, h->split, nblock, pick[0], pick[1], ca.high_water_bytes - base);
            CHECK_LE(ca.high_water_bytes - base, one ? size : 2 * size);
          }
        }
      }
    }
  }
}

// Most of a shuffled LZ4 block, as a plane across the blocks wants it (its last row sits near the block's end):
// the in-house decoder stops each stream after what is wanted, and the rest of the stream is still checked, so
// a cut stream fails as a whole decode does. Ranges from a quarter to all of the block, split or not.
TESSERA_TEST(chunk_decode, most_of_a_shuffled_lz4_block_decodes_right_and_checks_the_tail) {
  if (!codec_available(codec::lz4)) return;
  const size_t ts = 4, bs = 16 * 1024, ne = bs / ts;
  // Every byte plane periodic (LZ4 compresses it with matches, none is stored as it is or a run).
  for (size_t k = 0; k < ne; ++k)
    for (size_t b = 0; b < ts; ++b) g_src[k * ts + b] = static_cast<uint8_t>((k % (37 + b)) * (b + 3) + (k >> 9));
  for (split_mode split : {split_mode::always, split_mode::never}) {
    test::counting_allocator ca;
    auto cs = encode_with(ca.get(), codec::lz4, ts, split, 1, bs, bs);
    REQUIRE_OK(cs);
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, ca.get()));
    range_probe probe;
    probe.expect = g_src;
    const chunk_block_request r = probe_request(probe);
    // (first element, end element): the front, most of the block, the middle, all but the last element.
    const size_t ranges[][2] = {{0, ne / 4},     {0, ne * 3 / 4 + 1}, {0, ne * 9 / 10}, {0, ne - 25},
                                {ne / 3, ne - 25}, {ne / 2, ne * 15 / 16}, {0, ne - 1}, {0, ne}};
    for (const auto& range : ranges) {
      probe.begin = range[0] * ts;
      probe.end = range[1] * ts;
      probe.same = false;
      CHECK_OK(chunk_decode_blocks(d, bytes_view(g_chunk, *cs), r));
      CHECK(probe.same);
    }
    // Cut the block's last stream by one byte (it ends the chunk).
    size_t pos = kChunkHeaderExtendedSize + 4, at = 0;
    const size_t nstreams = split == split_mode::always ? ts : 1;
    for (size_t s = 0; s < nstreams; ++s) {
      const uint32_t le = static_cast<uint32_t>(g_chunk[pos]) | static_cast<uint32_t>(g_chunk[pos + 1]) << 8 |
                          static_cast<uint32_t>(g_chunk[pos + 2]) << 16 | static_cast<uint32_t>(g_chunk[pos + 3]) << 24;
      REQUIRE(le > 100 && le < bs / nstreams);  // compressed, neither a run nor stored
      at = pos;
      pos += 4 + le;
    }
    REQUIRE(pos == *cs);
    const uint32_t cut = (static_cast<uint32_t>(g_chunk[at]) | static_cast<uint32_t>(g_chunk[at + 1]) << 8) - 1;
    REQUIRE(g_chunk[at + 2] == 0 && g_chunk[at + 3] == 0);
    g_chunk[at] = static_cast<uint8_t>(cut);
    g_chunk[at + 1] = static_cast<uint8_t>(cut >> 8);
    for (const auto& range : ranges) {
      probe.begin = range[0] * ts;
      probe.end = range[1] * ts;
      CHECK_ERR(chunk_decode_blocks(d, bytes_view(g_chunk, *cs), r), errc::corrupt);
    }
    CHECK_ERR(chunk_decode(d, bytes_view(g_chunk, *cs), bytes_mut(g_out, bs)), errc::corrupt);
  }
}
