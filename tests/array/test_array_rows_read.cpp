// SPDX-License-Identifier: BSD-3-Clause
// Large slice reads, written in the output's address order (src/array/rows_read.cpp: a row of chunks at a time,
// each layer of blocks decoded side by side, then every output row written whole; streaming stores past 16 MiB
// on x86-64). Host builds take that path for slices of 1 MiB and more that span several blocks along their
// last dimension, of arrays in memory (chunks read in place) and in storage without a view (as a file: each
// task reads the streams of the blocks it decodes). Each read must give the items themselves, serially and on a
// two-worker pool, in place and as a file (and without concurrent reads), with odd item sizes, edges, padding,
// groups cut at 16 chunks, layers cut into segments, memcpyed chunks, chunks that cannot take the path (zeros
// from the index, delta) in a row, and an output larger than the slice (array_read_into); a corrupt block is an
// error, a refused allocation too, and nothing leaks. Reduced (long_tests.hpp): of the six reads of each geometry,
// the whole array and a box into a larger output.
#include <algorithm>
#include <cstring>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/thread_pool.hpp"

#include "array/array_internal.hpp"  // array_read_into (internal: src/ is on this test's include path)
#include "frame/frame_internal.hpp"  // chunk_blocks_read
#include "../support/check.hpp"
#include "../support/long_tests.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"
#include "read_testing.hpp"

using namespace tessera;
using namespace read_test;

TESSERA_TEST(array_rows_read, large_slices_equal_the_items_serial_and_parallel) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  test::rng r(2026);
  struct geometry {
    int ndim;
    int64_t shape[4];
    int32_t chunks[4];
    int32_t blocks[4];
    int32_t itemsize;
    uint8_t filter;
    codec compressor;
    bool noisy;
  };
  const geometry cases[] = {
      // Edges and padding in every dimension; shuffle of 4-byte items; LZ4.
      {3, {61, 90, 130}, {20, 30, 50}, {7, 9, 12}, 4, static_cast<uint8_t>(filter_id::shuffle), codec::lz4, false},
      // 3-byte items (a shuffle without a SIMD kernel), BloscLZ.
      {2, {850, 850}, {128, 300}, {32, 40}, 3, static_cast<uint8_t>(filter_id::shuffle), codec::blosclz, false},
      // 40 chunks along the last dimension: groups of 16, then 16, then 8.
      {2, {600, 2000}, {60, 50}, {20, 25}, 2, static_cast<uint8_t>(filter_id::bitshuffle), codec::lz4, false},
      // Layers larger than the 1 MiB staging: cut into segments; 8-byte items, Zstd, no filter.
      {3, {8, 64, 2048}, {8, 64, 1024}, {8, 64, 128}, 8, 0, codec::zstd, false},
      // Four dimensions, 1-byte items.
      {4, {9, 11, 160, 200}, {4, 5, 60, 70}, {2, 3, 20, 16}, 1, static_cast<uint8_t>(filter_id::shuffle), codec::lz4, false},
      // Noise: memcpyed chunks, their blocks read in place.
      {3, {50, 80, 160}, {25, 40, 50}, {5, 10, 10}, 4, static_cast<uint8_t>(filter_id::shuffle), codec::lz4, true},
  };
  for (const geometry& g : cases) {
    array_params p = params_of(g.ndim, g.shape, g.chunks, g.blocks, g.itemsize);
    p.filters[kChunkMaxFilters - 1] = g.filter;
    p.compressor = g.compressor;
    made m;
    make_array(t, m, p, p.shape[p.ndim - 1], g.noisy);
    array serial, parallel, file_serial, file_parallel, file_no_concurrent;
    REQUIRE_OK(open_made(m, serial, nullptr));
    REQUIRE_OK(open_made(m, parallel, &pool));
    REQUIRE_OK(open_made(m, file_serial, nullptr, test::system_allocator(), true));
    REQUIRE_OK(open_made(m, file_parallel, &pool, test::system_allocator(), true));
    {  // no view and no concurrent reads: the workers may not read it (the chunks are read chunk by chunk)
      storage st = const_buffer_storage(m.in);
      st.view = nullptr;
      array_open_options opt;
      opt.exec = thread_pool_executor(pool);
      REQUIRE_OK(array_open(file_no_concurrent, st, test::system_allocator(), opt));
    }
    for (int q = 0; q < 6; ++q) {
      if (test::long_tests_reduced() && q != 0 && q != 4) continue;
      int64_t start[kMaxDims] = {}, stop[kMaxDims] = {}, out_shape[kMaxDims] = {}, out_start[kMaxDims] = {};
      for (int i = 0; i < p.ndim; ++i) {
        // The whole array first, then boxes over most of it (still past 1 MiB), cut anywhere.
        start[i] = q == 0 ? 0 : r.range(0, p.shape[i] / 8);
        stop[i] = q == 0 ? p.shape[i] : r.range(p.shape[i] - p.shape[i] / 8, p.shape[i]);
        out_shape[i] = stop[i] - start[i];
        if (q >= 4) {  // into a larger output, at an offset
          out_start[i] = r.range(0, 3);
          out_shape[i] += out_start[i] + r.range(0, 3);
        }
      }
      check_read(t, serial, m, p, start, stop, out_shape, out_start);
      check_read(t, parallel, m, p, start, stop, out_shape, out_start);
      check_read(t, file_serial, m, p, start, stop, out_shape, out_start);
      check_read(t, file_parallel, m, p, start, stop, out_shape, out_start);
      check_read(t, file_no_concurrent, m, p, start, stop, out_shape, out_start);
    }
    CHECK_OK(array_close(serial));
    CHECK_OK(array_close(parallel));
    CHECK_OK(array_close(file_serial));
    CHECK_OK(array_close(file_parallel));
    CHECK_OK(array_close(file_no_concurrent));
  }
}

TESSERA_TEST(array_rows_read, rows_with_zero_and_delta_chunks_read_chunk_by_chunk) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  // Rows of 20 chunks along the last dimension: a group of 16 that takes the path, then a group of 4 with zero
  // chunks (past 1650) that does not; with delta, no chunk takes it.
  const int64_t shape[3] = {8, 60, 2000};
  const int32_t chunks[3] = {4, 30, 100}, blocks[3] = {2, 15, 25};
  for (int delta = 0; delta < 2; ++delta) {
    array_params p = params_of(3, shape, chunks, blocks, 4);
    if (delta) p.filters[kChunkMaxFilters - 2] = static_cast<uint8_t>(filter_id::delta);
    made m;
    make_array(t, m, p, 1650);
    for (int mode = 0; mode < 4; ++mode) {  // 1 and 2 threads, in place and as a file
      array a;
      REQUIRE_OK(open_made(m, a, mode % 2 ? &pool : nullptr, test::system_allocator(), mode >= 2));
      const int64_t start[3] = {0, 0, 0};
      check_read(t, a, m, p, start, shape, shape, start);
      const int64_t start2[3] = {1, 1, 7}, stop2[3] = {8, 59, 1990};
      const int64_t ext[3] = {7, 58, 1983};
      const int64_t zero[3] = {};
      check_read(t, a, m, p, start2, stop2, ext, zero);
      CHECK_OK(array_close(a));
    }
  }
}

TESSERA_TEST(array_rows_read, streaming_past_16_mib_equals_the_items) {
  // 18 MiB of 4-byte items: serially the read streams its whole lines on x86-64 (on the pool, and elsewhere, the
  // same order with plain stores).
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  const int64_t shape[3] = {48, 320, 310};
  const int32_t chunks[3] = {16, 100, 100}, blocks[3] = {8, 25, 25};
  array_params p = params_of(3, shape, chunks, blocks, 4);
  made m;
  make_array(t, m, p, p.shape[p.ndim - 1]);
  for (int mode = 0; mode < 4; ++mode) {  // 1 and 2 threads, in place and as a file
    array a;
    REQUIRE_OK(open_made(m, a, mode % 2 ? &pool : nullptr, test::system_allocator(), mode >= 2));
    const int64_t zero[3] = {};
    check_read(t, a, m, p, zero, shape, shape, zero);
    // Rows that start and end mid-line: an output one item wider on each side, at an odd offset.
    const int64_t start[3] = {1, 2, 3}, stop[3] = {47, 319, 309};
    const int64_t out_shape[3] = {47, 318, 309}, out_start[3] = {1, 1, 1};
    check_read(t, a, m, p, start, stop, out_shape, out_start);
    CHECK_OK(array_close(a));
  }
}

TESSERA_TEST(array_rows_read, corrupt_blocks_are_errors_and_refused_allocations_leak_nothing) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  const int64_t shape[2] = {512, 1024};
  const int32_t chunks[2] = {128, 256}, blocks[2] = {32, 64};
  array_params p = params_of(2, shape, chunks, blocks, 4);
  made m;
  make_array(t, m, p, p.shape[p.ndim - 1]);
  const int64_t zero[2] = {};
  std::vector<uint8_t> out(static_cast<size_t>(512 * 1024 * 4));
  // Every allocation of an open and a whole read refused in turn, serially and on the pool, in place and as a
  // file.
  for (int mode = 0; mode < 4; ++mode) {
    bool completed = false;
    for (size_t n = 1; !completed && n < 200; ++n) {
      test::counting_allocator ca;
      ca.fail_at = n;
      {
        array a;
        status s = open_made(m, a, mode % 2 ? &pool : nullptr, ca.get(), mode >= 2);
        if (s.ok()) {
          s = array_read(a, bytes_mut(out.data(), out.size()));
          if (s.ok()) {
            completed = true;
            CHECK(std::memcmp(out.data(), m.items.data(), out.size()) == 0);
          }
          CHECK_OK(array_close(a));
        }
        if (!s.ok()) CHECK(s.code == errc::out_of_memory);
      }
      CHECK(!ca.leaked());
    }
    CHECK(completed);
  }
  // Bytes flipped through the chunks' data: each read fails cleanly or (a flip the codec cannot see, in literals)
  // succeeds; never a crash (the sanitizers watch) and never a hang.
  test::rng r(77);
  const std::vector<uint8_t> good(m.frame.bytes().data(), m.frame.bytes().data() + m.frame.bytes().size());
  int errors = 0;
  for (int k = 0; k < 24; ++k) {
    std::vector<uint8_t> bad = good;
    const size_t at = static_cast<size_t>(r.range(200, static_cast<int64_t>(bad.size()) - 2000));
    for (int b = 0; b < 8; ++b) bad[at + static_cast<size_t>(b) * 97] ^= static_cast<uint8_t>(1 + r.range(0, 254));
    const_buffer in{bad.data(), bad.size()};
    array a;
    array_open_options opt;
    if (k % 2) opt.exec = thread_pool_executor(pool);
    storage st = const_buffer_storage(in);
    if (k % 4 >= 2) {  // as a file: no view, the workers read
      st.view = nullptr;
      st.concurrent_reads = true;
    }
    if (!array_open(a, st, test::system_allocator(), opt).ok()) continue;
    if (!detail::array_read_into(a, zero, shape, bytes_mut(out.data(), out.size()), shape, zero).ok()) ++errors;
    CHECK_OK(array_close(a));
  }
  CHECK(errors > 0);
}

TESSERA_TEST(array_rows_read, blocks_read_alone_decode_as_in_their_chunk_whatever_the_start_order) {
  // One chunk of 8 blocks (LZ4, shuffled 4-byte items): consecutive blocks read as a chunk of their own decode to
  // what the whole chunk's blocks decode to, with the streams stored in block order and with blocks 2 and 3
  // stored the other way round (their starts then descend: the blocks are read apart, each where it is).
  const int64_t shape[2] = {64, 64};
  const int32_t chunks[2] = {64, 64}, blocks[2] = {8, 64};
  const array_params p = params_of(2, shape, chunks, blocks, 4);
  made m;
  make_array(t, m, p, p.shape[1]);
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), chunk_decoder_options()));
  std::vector<uint8_t> want[8];
  frame f;
  REQUIRE_OK(frame_open(f, const_buffer_storage(m.in), test::system_allocator(), frame_open_options()));
  for (size_t b = 0; b < 8; ++b) {
    want[b].resize(2048);
    auto n = frame_block_decode(f, d, 0, b, bytes_mut(want[b].data(), want[b].size()));
    REQUIRE(n.ok() && *n == 2048);
  }
  uint8_t prefix[detail::frame_blocks_prefix_size(8)];
  detail::chunk_blocks_reader r;
  auto fits = detail::frame_blocks_reader_init(f, 0, 8, prefix, &r);
  REQUIRE(fits.ok() && *fits);
  REQUIRE(!r.memcpyed && r.ascending && r.nblocks == 8);
  // The same frame with blocks 2 and 3's streams swapped, and their starts.
  std::vector<uint8_t> swapped(m.frame.bytes().data(), m.frame.bytes().data() + m.frame.bytes().size());
  uint8_t* starts = swapped.data() + r.src.pos + r.header_size;
  using detail::le_load32;
  using detail::le_store32;
  const uint32_t s2 = le_load32(starts + 8), s3 = le_load32(starts + 12), s4 = le_load32(starts + 16);
  std::vector<uint8_t> streams(swapped.begin() + static_cast<ptrdiff_t>(r.src.pos + s2),
                               swapped.begin() + static_cast<ptrdiff_t>(r.src.pos + s4));
  uint8_t* at = swapped.data() + r.src.pos + s2;
  std::memcpy(at, streams.data() + (s3 - s2), s4 - s3);  // block 3 first
  std::memcpy(at + (s4 - s3), streams.data(), s3 - s2);
  le_store32(starts + 12, s2);
  le_store32(starts + 8, s2 + (s4 - s3));
  const_buffer in{swapped.data(), swapped.size()};
  frame g;
  REQUIRE_OK(frame_open(g, const_buffer_storage(in), test::system_allocator(), frame_open_options()));
  uint8_t prefix2[sizeof prefix];
  detail::chunk_blocks_reader r2;
  auto fits2 = detail::frame_blocks_reader_init(g, 0, 8, prefix2, &r2);
  REQUIRE(fits2.ok() && *fits2);
  CHECK(!r2.ascending);
  for (const detail::chunk_blocks_reader* reader : {&r, &r2}) {
    for (size_t first = 0; first < 8; ++first)
      for (size_t count = 1; first + count <= 8; ++count) {
        auto size = detail::chunk_blocks_size(*reader, first, count);
        REQUIRE(size.ok());
        std::vector<uint8_t> buffer(*size);
        auto chunk = detail::chunk_blocks_read(*reader, first, count, bytes_mut(buffer.data(), buffer.size()));
        REQUIRE(chunk.ok());
        CHECK(chunk->size() == *size);
        for (size_t b = first; b < first + count; ++b) {
          std::vector<uint8_t> got(2048, 0xEE);
          auto n = chunk_decode_block(d, *chunk, b, bytes_mut(got.data(), got.size()));
          REQUIRE(n.ok());
          CHECK(got == want[b]);
        }
        // A buffer one byte short, and blocks past the chunk's: errors.
        if (*size > 0) {
          CHECK(detail::chunk_blocks_read(*reader, first, count, bytes_mut(buffer.data(), *size - 1)).err().code ==
                errc::buffer_too_small);
        }
      }
    CHECK(detail::chunk_blocks_size(*reader, 7, 2).err().code == errc::out_of_range);
    CHECK(detail::chunk_blocks_size(*reader, 8, 1).err().code == errc::out_of_range);
  }
  // Damaged: block 2's start one byte early, inside block 3's streams (stored just before it). In place block 3
  // still decodes as it did (its streams are whole in the chunk; c-blosc2 reads it so too). A copy of block 3's
  // stored extent (up to the next start) lacks its last byte: every copy that holds block 3 is refused, from
  // chunk_blocks_read and from frame_blocks_decode without a view (before, with block 4 copied after it, block 3
  // decoded silently from block 4's first byte).
  std::vector<uint8_t> damaged(swapped);
  uint8_t* const dstarts = damaged.data() + r.src.pos + r.header_size;
  le_store32(dstarts + 8, le_load32(dstarts + 8) - 1);
  const_buffer din{damaged.data(), damaged.size()};
  frame dh;
  REQUIRE_OK(frame_open(dh, const_buffer_storage(din), test::system_allocator(), frame_open_options()));
  {
    std::vector<uint8_t> got(2048);
    auto n = frame_block_decode(dh, d, 0, 3, bytes_mut(got.data(), got.size()));
    REQUIRE(n.ok());
    CHECK(got == want[3]);
  }
  uint8_t prefix3[sizeof prefix];
  detail::chunk_blocks_reader r3;
  auto fits3 = detail::frame_blocks_reader_init(dh, 0, 8, prefix3, &r3);
  REQUIRE(fits3.ok() && *fits3);
  int refused = 0;
  for (size_t first = 0; first <= 3; ++first)
    for (size_t count = 4 - first; first + count <= 8; ++count) {
      auto size = detail::chunk_blocks_size(r3, first, count);
      REQUIRE(size.ok());
      std::vector<uint8_t> buffer(*size);
      auto chunk = detail::chunk_blocks_read(r3, first, count, bytes_mut(buffer.data(), buffer.size()));
      CHECK(!chunk.ok() && chunk.err().code == errc::corrupt);
      refused += !chunk.ok();
    }
  CHECK(refused == 20);  // 5 ranges from each of blocks 0 - 3 that hold block 3
  {
    storage st = const_buffer_storage(din);
    st.view = nullptr;
    frame nv;
    REQUIRE_OK(frame_open(nv, st, test::system_allocator(), frame_open_options()));
    struct blocks_34 {
      static size_t block(void*, size_t i) noexcept { return 3 + i; }
      static status consume(void*, size_t, bytes_view, uint32_t) noexcept { return ok_status(); }
    };
    chunk_block_request q;
    q.count = 2;
    q.block = blocks_34::block;
    q.consume = blocks_34::consume;
    CHECK_ERR(frame_blocks_decode(nv, d, 0, q), errc::corrupt);
    CHECK_OK(frame_close(nv));
  }
  CHECK_OK(frame_close(dh));
  CHECK_OK(frame_close(g));
  CHECK_OK(frame_close(f));
  chunk_decoder_release(d);
}

// Writers that place blocks as their threads finish them (c-blosc2 with several threads) store a chunk's block
// starts out of order. Each block's streams then end at the next larger start, found in a sorted copy of the
// starts (an insertion sort for nearly sorted ones, a heap sort past its budget): a chunk of 256 blocks whose
// streams are stored nearly in order and in random order reads as the original does, block by block through
// readers and through the array API from a file (2 workers, serial, no concurrent reads) and in place.
TESSERA_TEST(array_rows_read, blocks_stored_out_of_order_read_as_in_order) {
  const int64_t shape[2] = {256, 256};
  const int32_t chunks[2] = {256, 256}, blocks[2] = {16, 16};
  const array_params p = params_of(2, shape, chunks, blocks, 4);
  made m;
  make_array(t, m, p, p.shape[1]);
  constexpr size_t kBlocks = 256, kBlockBytes = 16 * 16 * 4;
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), chunk_decoder_options()));
  frame f;
  REQUIRE_OK(frame_open(f, const_buffer_storage(m.in), test::system_allocator(), frame_open_options()));
  std::vector<uint8_t> want(kBlocks * kBlockBytes);
  for (size_t b = 0; b < kBlocks; ++b) {
    auto n = frame_block_decode(f, d, 0, b, bytes_mut(want.data() + b * kBlockBytes, kBlockBytes));
    REQUIRE(n.ok() && *n == kBlockBytes);
  }
  std::vector<uint8_t> prefix(detail::frame_blocks_prefix_size(kBlocks));
  detail::chunk_blocks_reader r;
  auto fits = detail::frame_blocks_reader_init(f, 0, kBlocks, prefix.data(), &r);
  REQUIRE(fits.ok() && *fits);
  REQUIRE(!r.memcpyed && r.ascending && r.nblocks == kBlocks);
  using detail::le_load32;
  using detail::le_store32;
  const uint8_t* chunk = m.in.data + r.src.pos;
  auto start_of = [&](size_t j) -> size_t { return j < kBlocks ? le_load32(chunk + r.header_size + 4 * j) : r.cbytes; };

  // Nearly in order (a few swaps and a run moved: 224 inversions, within the insertion sort's budget), then a
  // random order (the heap sort).
  std::vector<size_t> nearly(kBlocks), shuffled(kBlocks);
  for (size_t j = 0; j < kBlocks; ++j) nearly[j] = shuffled[j] = j;
  std::swap(nearly[10], nearly[11]);
  std::swap(nearly[50], nearly[52]);
  std::rotate(nearly.begin() + 100, nearly.begin() + 111, nearly.begin() + 131);
  test::rng rng(7);
  for (size_t j = kBlocks - 1; j > 0; --j)
    std::swap(shuffled[j], shuffled[static_cast<size_t>(rng.range(0, static_cast<int64_t>(j)))]);
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  for (const std::vector<size_t>* order : {&nearly, &shuffled}) {
    // The frame with chunk 0's streams stored in `order` (the same bytes in all, so the chunk keeps its size).
    std::vector<uint8_t> bytes(m.in.data, m.in.data + m.in.size);
    uint8_t* c = bytes.data() + r.src.pos;
    size_t at = static_cast<size_t>(r.data_start);
    for (size_t j : *order) {
      const size_t s = start_of(j), n = start_of(j + 1) - s;
      std::memcpy(c + at, chunk + s, n);
      le_store32(c + r.header_size + 4 * j, static_cast<uint32_t>(at));
      at += n;
    }
    REQUIRE(at == r.cbytes);
    made o;
    o.items = m.items;
    o.in = const_buffer{bytes.data(), bytes.size()};
    frame g;
    REQUIRE_OK(frame_open(g, const_buffer_storage(o.in), test::system_allocator(), frame_open_options()));
    std::vector<uint8_t> prefix2(prefix.size());
    detail::chunk_blocks_reader r2;
    auto fits2 = detail::frame_blocks_reader_init(g, 0, kBlocks, prefix2.data(), &r2);
    REQUIRE(fits2.ok() && *fits2);
    CHECK(!r2.ascending);
    int wrong = 0;
    for (size_t first = 0; first < kBlocks; first += 5)
      for (size_t count : {size_t{1}, size_t{3}, size_t{17}}) {
        if (first + count > kBlocks) continue;
        // Exactly the blocks' own streams: an end past the next larger start would read other blocks' bytes too.
        size_t exact = static_cast<size_t>(r2.data_start);
        for (size_t b = first; b < first + count; ++b) exact += start_of(b + 1) - start_of(b);
        auto size = detail::chunk_blocks_size(r2, first, count);
        REQUIRE_OK(size);
        wrong += *size != exact;
        std::vector<uint8_t> buffer(*size);
        auto part = detail::chunk_blocks_read(r2, first, count, bytes_mut(buffer.data(), buffer.size()));
        REQUIRE_OK(part);
        for (size_t b = first; b < first + count; ++b) {
          std::vector<uint8_t> got(kBlockBytes, 0xEE);
          auto n = chunk_decode_block(d, *part, b, bytes_mut(got.data(), got.size()));
          wrong += !n.ok() || std::memcmp(got.data(), want.data() + b * kBlockBytes, kBlockBytes) != 0;
        }
      }
    CHECK_EQ(wrong, 0);
    CHECK_OK(frame_close(g));
    // Through the array API: a file read by 2 workers and serially, one without concurrent reads, and in place.
    array file_parallel, file_serial, file_no_concurrent, in_place;
    REQUIRE_OK(open_made(o, file_parallel, &pool, test::system_allocator(), true));
    REQUIRE_OK(open_made(o, file_serial, nullptr, test::system_allocator(), true));
    {
      storage st = const_buffer_storage(o.in);
      st.view = nullptr;
      array_open_options opt;
      opt.exec = thread_pool_executor(pool);
      REQUIRE_OK(array_open(file_no_concurrent, st, test::system_allocator(), opt));
    }
    REQUIRE_OK(open_made(o, in_place, &pool));
    // The whole array, a column and a row of blocks, one block, a box across many.
    const int64_t boxes[][4] = {
        {0, 0, 256, 256}, {0, 37, 256, 38}, {100, 0, 116, 256}, {32, 48, 48, 64}, {5, 9, 250, 201}};
    for (const auto& box : boxes) {
      const int64_t start[2] = {box[0], box[1]}, stop[2] = {box[2], box[3]};
      const int64_t out_shape[2] = {box[2] - box[0], box[3] - box[1]}, out_start[2] = {0, 0};
      for (array* a : {&file_parallel, &file_serial, &file_no_concurrent, &in_place})
        check_read(t, *a, o, p, start, stop, out_shape, out_start);
    }
    for (array* a : {&file_parallel, &file_serial, &file_no_concurrent, &in_place}) CHECK_OK(array_close(*a));
  }
  CHECK_OK(frame_close(f));
  chunk_decoder_release(d);
}

TESSERA_TEST(array_rows_read, files_with_chunks_of_many_blocks_read_them_one_chunk_at_a_time) {
  // 20000 blocks a chunk: their starts (80 KB a chunk) are past what a reader of 16 chunks keeps per chunk, so
  // reads from a file go chunk by chunk (frame_blocks_decode); the items must come out the same, in place and as
  // a file, with one thread and two.
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  const int64_t shape[2] = {8, 40000};
  const int32_t chunks[2] = {4, 20000}, blocks[2] = {1, 4};
  array_params p = params_of(2, shape, chunks, blocks, 4);
  made m;
  make_array(t, m, p, p.shape[1]);
  for (int mode = 0; mode < 4; ++mode) {
    array a;
    REQUIRE_OK(open_made(m, a, mode % 2 ? &pool : nullptr, test::system_allocator(), mode >= 2));
    const int64_t zero[2] = {};
    check_read(t, a, m, p, zero, shape, shape, zero);
    const int64_t start[2] = {0, 777}, stop[2] = {8, 778}, ext[2] = {8, 1};
    check_read(t, a, m, p, start, stop, ext, zero);
    const int64_t start2[2] = {5, 0}, stop2[2] = {6, 40000}, ext2[2] = {1, 40000};
    check_read(t, a, m, p, start2, stop2, ext2, zero);
    CHECK_OK(array_close(a));
  }
  // What a plane of a file allocates: the starts of one chunk at a time (80 KB), not 16 chunks' (1.3 MB).
  test::counting_allocator ca;
  array a;
  REQUIRE_OK(open_made(m, a, nullptr, ca.get(), true));
  std::vector<uint8_t> out(8 * 4);
  const int64_t start[2] = {0, 30001}, stop[2] = {8, 30002};
  REQUIRE_OK(array_slice_read(a, start, stop, bytes_mut(out.data(), out.size())));  // scratch made
  ca.reset_high_water();
  const size_t before = ca.live_bytes;
  REQUIRE_OK(array_slice_read(a, start, stop, bytes_mut(out.data(), out.size())));
  CHECK(ca.high_water_bytes - before < 512 * 1024);
  CHECK_OK(array_close(a));
}
