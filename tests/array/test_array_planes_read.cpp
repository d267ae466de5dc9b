// SPDX-License-Identifier: BSD-3-Clause
// Slices that want a few rows of each block they touch (planes across the blocks, thin boxes, single items) of an
// array in memory, read in place or as from a file (each block's streams read by the task that decodes it; a
// one-chunk slice from a copy of the touched blocks' streams): on host builds a block whose only filter is a
// plain shuffle is decoded as its byte planes and only the wanted rows are unshuffled, straight to the output
// (src/array/touched_blocks_planes.cpp). Every read must give the items themselves, serially and on a
// two-worker pool, in place and from storage without a view, for every item size (elements of 2, 4 and 8 bytes
// have vector paths, the others not), split and unsplit streams, byte planes stored as they are (read in the
// chunk), other filters and memcpyed chunks; items that are not whole elements of the shuffle go byte by byte.
// Reduced (long_tests.hpp): 14 of the 28 random geometries (every item size and ndim twice), the fixed ones all.
#include <cstring>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/layout.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/thread_pool.hpp"

#include "array/touched_blocks.hpp"
#include "chunk/chunk_internal.hpp"
#include "../support/check.hpp"
#include "../support/long_tests.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"
#include "read_testing.hpp"

using namespace tessera;
using namespace read_test;

TESSERA_TEST(array_planes_read, thin_slices_equal_the_items_serial_and_parallel) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  test::rng r(4242);
  const int32_t itemsizes[] = {1, 2, 3, 4, 5, 8, 16};
  for (int round = 0; round < 34; ++round) {
    if (test::long_tests_reduced() && round >= 14 && round < 28) continue;
    int ndim = 1 + round % 4;
    int64_t shape[kMaxDims] = {};
    int32_t chunks[kMaxDims] = {}, blocks[kMaxDims] = {};
    int32_t itemsize = itemsizes[round % 7];
    if (round < 28) {  // random geometries
      for (int i = 0; i < ndim; ++i) {
        chunks[i] = static_cast<int32_t>(r.range(4, ndim >= 3 ? 12 : 40));
        blocks[i] = static_cast<int32_t>(r.range(2, chunks[i]));
        shape[i] = r.range(chunks[i], ndim >= 3 ? 30 : 150);
      }
    } else {  // rows of 16 elements and more, for the vector paths: 37 and 16 items, of 2, 4 and 8 bytes
      ndim = round % 2 ? 2 : 3;
      itemsize = int32_t{2} << (round - 28) / 2;
      for (int i = 0; i < ndim; ++i) {
        chunks[i] = i + 1 == ndim ? (round % 4 < 2 ? 80 : 32) : 12;
        blocks[i] = i + 1 == ndim ? (round % 4 < 2 ? 37 : 16) : 4;
        shape[i] = chunks[i] * 2 + 3;
      }
    }
    array_params p = params_of(ndim, shape, chunks, blocks, itemsize);
    switch (round < 28 ? round / 7 : 0) {
      case 0: break;                               // LZ4, shuffle, split streams
      case 1: p.split = split_mode::never; break;  // one stream: the planes back to back
      case 2:                                      // clevel 0: memcpyed chunks
        p.compressor = codec::blosclz;
        p.clevel = round % 2 ? 0 : 5;
        break;
      default:
        p.compressor = codec::zstd;
        p.filters[kChunkMaxFilters - 1] = static_cast<uint8_t>(round % 2 ? filter_id::bitshuffle : filter_id::shuffle);
        if (round % 3 == 0) p.filters[kChunkMaxFilters - 2] = static_cast<uint8_t>(filter_id::delta);
        break;
    }
    made m;
    make_array(t, m, p, p.shape[ndim - 1], false, round % 3 == 1);  // some with a byte plane stored as it is
    array serial, parallel, stored, stored_parallel;
    REQUIRE_OK(open_made(m, serial, nullptr));
    REQUIRE_OK(open_made(m, parallel, &pool));
    REQUIRE_OK(open_made(m, stored, nullptr, test::system_allocator(), true));
    REQUIRE_OK(open_made(m, stored_parallel, &pool, test::system_allocator(), true));
    for (int q = 0; q < 3 * ndim + 3; ++q) {
      int64_t start[kMaxDims] = {}, stop[kMaxDims] = {}, out_shape[kMaxDims] = {}, out_start[kMaxDims] = {};
      for (int i = 0; i < ndim; ++i) {
        if (q < ndim) {  // a plane across dimension q, the others whole
          start[i] = i == q ? r.range(0, p.shape[i] - 1) : 0;
          stop[i] = i == q ? start[i] + 1 : p.shape[i];
        } else if (q < 3 * ndim) {  // a thin box: one or two items across one dimension, anywhere in the others
          start[i] = r.range(0, p.shape[i] - 1);
          stop[i] = i == q % ndim ? start[i] + r.range(1, 2) : r.range(start[i] + 1, p.shape[i]);
          if (stop[i] > p.shape[i]) stop[i] = p.shape[i];
        } else {  // one item
          start[i] = r.range(0, p.shape[i] - 1);
          stop[i] = start[i] + 1;
        }
        out_shape[i] = stop[i] - start[i];
        if (q % 2) {  // into a larger output, at an offset
          out_start[i] = r.range(0, 2);
          out_shape[i] += out_start[i] + r.range(0, 2);
        }
      }
      check_read(t, serial, m, p, start, stop, out_shape, out_start);
      check_read(t, parallel, m, p, start, stop, out_shape, out_start);
      check_read(t, stored, m, p, start, stop, out_shape, out_start);
      check_read(t, stored_parallel, m, p, start, stop, out_shape, out_start);
    }
    CHECK_OK(array_close(serial));
    CHECK_OK(array_close(parallel));
    CHECK_OK(array_close(stored));
    CHECK_OK(array_close(stored_parallel));
  }
}

TESSERA_TEST(array_planes_read, items_that_are_not_whole_elements_go_byte_by_byte) {
  // A block of 4 x 6 items of 4 bytes shuffled as elements of 3 (a chunk may claim any typesize), 2, 4 and 8
  // bytes: every part of it unshuffled from the planes must equal the same part of the plain block, placed at
  // (1, 1) of a 5 x 7 output and nothing else written.
  const int64_t shape[2] = {4, 6};
  const int32_t grid[2] = {4, 6};
  array_layout l;
  REQUIRE_OK(layout_init(l, 2, shape, grid, grid));
  uint8_t block[96], planes[96];
  for (int k = 0; k < 96; ++k) block[k] = static_cast<uint8_t>(k * 37 + 11);
  const int64_t out_shape[2] = {5, 7};
  for (size_t typesize : {size_t{3}, size_t{2}, size_t{4}, size_t{8}}) {
    const size_t ne = 96 / typesize;
    for (size_t e = 0; e < ne; ++e)
      for (size_t b = 0; b < typesize; ++b) planes[b * ne + e] = block[e * typesize + b];
    detail::block_planes bp;
    bp.typesize = typesize;
    for (size_t b = 0; b < typesize; ++b) bp.plane[b] = planes + b * ne;
    for (int32_t r0 = 0; r0 < 4; ++r0)
      for (int32_t c0 = 0; c0 < 6; ++c0) {
        uint8_t out[5 * 7 * 4];
        std::memset(out, 0xEE, sizeof out);
        detail::touched_blocks tb;
        tb.l = &l;
        tb.itemsize = 4;
        tb.out = bytes_mut(out, sizeof out);
        tb.out_shape = out_shape;
        tb.start[0] = r0;
        tb.stop[0] = 4;
        tb.start[1] = c0;
        tb.stop[1] = 6;
        tb.dst[0] = 1;
        tb.dst[1] = 1;
        tb.span[0] = tb.span[1] = 1;
        tb.nblocks = 1;
        REQUIRE_OK(detail::touched_block_unshuffle(tb, 0, 96, bp));
        for (int64_t y = 0; y < 5; ++y)
          for (int64_t x = 0; x < 7; ++x) {
            const bool inside = y >= 1 && x >= 1 && y - 1 < 4 - r0 && x - 1 < 6 - c0;
            for (int64_t b = 0; b < 4; ++b) {
              const uint8_t want = inside ? block[((y - 1 + r0) * 6 + (x - 1 + c0)) * 4 + b] : uint8_t{0xEE};
              CHECK(out[(y * 7 + x) * 4 + b] == want);
            }
          }
      }
    // Planes of another size than the block's, or a typesize that does not divide them: errors.
    detail::touched_blocks tb;
    tb.l = &l;
    tb.itemsize = 4;
    tb.nblocks = 1;
    CHECK(detail::touched_block_unshuffle(tb, 0, 92, bp).code == errc::corrupt);
    bp.typesize = 5;
    CHECK(detail::touched_block_unshuffle(tb, 0, 96, bp).code == errc::corrupt);
    bp.typesize = 0;
    CHECK(detail::touched_block_unshuffle(tb, 0, 96, bp).code == errc::corrupt);
  }
}

TESSERA_TEST(array_planes_read, stored_planes_are_announced_to_the_caller) {
  // Float32 near 1000 whose two low bytes are noise (stored as they are) and two high ones nearly constant
  // (compressed). A block decoded as its planes calls block_planes::stored for each stored plane, with the plane
  // where it is in the chunk (the thin-slice read fetches its rows then), and for no other.
  const size_t n = 4096 * 4;
  std::vector<uint8_t> src(n);
  test::rng r(15);
  for (size_t i = 0; i < n / 4; ++i) {
    const uint32_t bits = 0x447a0000u | static_cast<uint32_t>(r.next() & 0xffff);
    std::memcpy(src.data() + 4 * i, &bits, 4);
  }
  chunk_encode_params p;
  p.typesize = 4;
  p.compressor = codec::lz4;
  p.blocksize = 4096;
  test::counting_allocator ca;
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, ca.get()));
  std::vector<uint8_t> chunk(chunk_encode_bound(n));
  auto cs = chunk_encode(e, p, bytes_view(src.data(), n), bytes_mut(chunk.data(), chunk.size()));
  REQUIRE_OK(cs);
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, ca.get()));
  auto h = chunk_header_read(bytes_view(chunk.data(), *cs));
  REQUIRE_OK(h);
  REQUIRE_OK(detail::chunk_decoder_prepare(d, *h));
  struct record {
    size_t calls = 0;
    const uint8_t* plane[4] = {};
    size_t typesize = 0;
    static void stored(void* c, size_t typesize, size_t b, const uint8_t* plane) noexcept {
      auto& r = *static_cast<record*>(c);
      ++r.calls;
      r.typesize = typesize;
      if (b < 4) r.plane[b] = plane;
    }
  };
  size_t stored_planes = 0;
  for (size_t nblock = 0; nblock < 4; ++nblock) {
    record rec;
    detail::block_planes planes;
    planes.stored = record::stored;
    planes.context = &rec;
    bytes_view decoded;
    REQUIRE_OK(detail::chunk_block_planes_on(d, 0, bytes_view(chunk.data(), *cs), nblock, 0, 64, &decoded, &planes));
    REQUIRE_EQ(planes.typesize, size_t{4});
    size_t in_chunk = 0;
    for (size_t b = 0; b < 4; ++b) {
      const bool inside = planes.plane[b] >= chunk.data() && planes.plane[b] < chunk.data() + *cs;
      CHECK_EQ(rec.plane[b] != nullptr, inside);  // announced exactly when stored in the chunk
      if (inside) CHECK(rec.plane[b] == planes.plane[b]);
      in_chunk += inside;
      for (size_t k = 0; k < 16; ++k) CHECK(planes.plane[b][k] == src[(nblock * 1024 + k) * 4 + b]);
    }
    CHECK_EQ(rec.calls, in_chunk);
    if (in_chunk > 0) CHECK_EQ(rec.typesize, size_t{4});
    stored_planes += in_chunk;
  }
  CHECK_LT(size_t{0}, stored_planes);  // the data does have planes stored as they are
}

namespace {

// A sparse frame's directory whose entries have no view, as files in a directory: chunks are copied out.
struct viewless_directory {
  storage_directory inner;
  static status open(void* c, const char* name, storage_open mode, storage* out) noexcept {
    const status s = storage_directory_open(static_cast<viewless_directory*>(c)->inner, name, mode, out);
    if (s.ok()) {
      out->view = nullptr;
      out->concurrent_reads = true;  // reads of memory
    }
    return s;
  }
  static status close(void* c, storage* s) noexcept {
    const storage_directory& d = static_cast<viewless_directory*>(c)->inner;
    return d.close(d.context, s);
  }
  storage_directory interface() noexcept {
    storage_directory d = inner;
    d.open = open;
    d.close = close;
    d.context = this;
    return d;
  }
};

}  // namespace

TESSERA_TEST(array_planes_read, slices_of_a_sparse_frame_read_from_its_entries) {
  // A 3-d array of 4-byte items (1.3 MB) in a sparse frame (a chunk per entry), read through entries without a
  // view, as files in a directory: every plane, thin box and one-chunk slice, and the whole array (the
  // row-order path), equal the items, with one thread and with two.
  const int64_t shape[3] = {40, 80, 100};
  const int32_t chunks[3] = {20, 40, 50}, blocks[3] = {5, 8, 10};
  const array_params p = params_of(3, shape, chunks, blocks, 4);
  std::vector<uint8_t> items(static_cast<size_t>(40 * 80 * 100 * 4));
  for (size_t k = 0; k < items.size(); ++k) items[k] = static_cast<uint8_t>((k / 64 + (k % 4) * 7) & 0xff);
  memory_directory dir;
  REQUIRE_OK(memory_directory_init(dir, test::system_allocator(), 64));
  {
    array w;
    REQUIRE_OK(array_create(w, array_target_sparse(memory_directory_interface(dir)), test::system_allocator(), p,
                            array_fill_zeros()));
    const int64_t from[3] = {0, 0, 0};
    REQUIRE_OK(array_slice_write(w, from, shape, bytes_view(items.data(), items.size())));
    CHECK_OK(array_close(w));
  }
  made m;  // check_read's items
  m.items = items;
  viewless_directory files{memory_directory_interface(dir)};
  const storage_directory sdir = files.interface();
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  test::rng r(77);
  for (int threads = 1; threads <= 2; ++threads) {
    array a;
    array_open_options opt;
    if (threads == 2) opt.exec = thread_pool_executor(pool);
    REQUIRE_OK(array_open_sparse(a, sdir, test::system_allocator(), opt));
    const int64_t zero[3] = {};
    check_read(t, a, m, p, zero, shape, shape, zero);
    for (int q = 0; q < 15; ++q) {
      int64_t start[3] = {}, stop[3] = {}, out_start[3] = {};
      for (int i = 0; i < 3; ++i) {
        const bool thin = i == q % 3;
        if (q >= 12) {  // inside one chunk
          start[i] = r.range(0, chunks[i] - 2);
          stop[i] = thin ? start[i] + 1 : r.range(start[i] + 1, chunks[i]);
          continue;
        }
        start[i] = thin ? r.range(0, shape[i] - 1) : (q < 3 ? 0 : r.range(0, shape[i] / 2));
        stop[i] = thin ? start[i] + 1 : (q < 3 ? shape[i] : r.range(start[i] + 1, shape[i]));
      }
      int64_t out_shape[3] = {stop[0] - start[0], stop[1] - start[1], stop[2] - start[2]};
      check_read(t, a, m, p, start, stop, out_shape, out_start);
    }
    CHECK_OK(array_close(a));
  }
  memory_directory_release(dir);
}

TESSERA_TEST(array_planes_read, refused_allocations_and_damage_in_file_reads_are_clean_errors) {
  // A plane and a thin box over several chunks of storage without a view (the batch reads its blocks in its
  // tasks: chunk prefixes and read buffers allocated on the caller's thread), one and two threads: every
  // allocation refused in turn is out_of_memory, nothing leaks, and the read that completes is right.
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  const int64_t shape[3] = {40, 48, 56};
  const int32_t chunks[3] = {20, 24, 28}, blocks[3] = {5, 8, 7};
  const array_params p = params_of(3, shape, chunks, blocks, 4);
  made m;
  make_array(t, m, p, p.shape[2]);
  const int64_t starts[2][3] = {{0, 17, 0}, {3, 0, 30}}, stops[2][3] = {{40, 18, 56}, {37, 48, 31}};
  for (int q = 0; q < 4; ++q) {
    const int64_t* start = starts[q % 2];
    const int64_t* stop = stops[q % 2];
    int64_t ext[3] = {}, zero[3] = {};
    for (int i = 0; i < 3; ++i) ext[i] = stop[i] - start[i];
    bool completed = false;
    for (size_t n = 1; !completed && n < 200; ++n) {
      test::counting_allocator ca;
      ca.fail_at = n;
      {
        array a;
        status s = open_made(m, a, q >= 2 ? &pool : nullptr, ca.get(), true);
        if (s.ok()) {
          std::vector<uint8_t> got(static_cast<size_t>(ext[0] * ext[1] * ext[2] * 4));
          s = detail::array_read_into(a, start, stop, bytes_mut(got.data(), got.size()), ext, zero);
          if (s.ok()) {
            completed = true;
            std::vector<uint8_t> want(got.size());
            array_test::box_copy(3, 4, m.items.data(), p.shape, start, want.data(), ext, zero, ext);
            CHECK(got == want);
          }
          CHECK_OK(array_close(a));
        }
        if (!s.ok()) CHECK(s.code == errc::out_of_memory);
      }
      CHECK(!ca.leaked());
    }
    CHECK(completed);
  }
  // Bytes flipped through the chunks: every thin read of the damaged file, in place and as a file, serially and
  // on the pool, fails cleanly or (a flip the codec cannot see) succeeds; never a crash (the sanitizers watch).
  test::rng r(99);
  const std::vector<uint8_t> good(m.frame.bytes().data(), m.frame.bytes().data() + m.frame.bytes().size());
  int errors = 0;
  for (int k = 0; k < 32; ++k) {
    std::vector<uint8_t> bad = good;
    const size_t at = static_cast<size_t>(r.range(300, static_cast<int64_t>(bad.size()) - 3000));
    for (int b = 0; b < 6; ++b) bad[at + static_cast<size_t>(b) * 131] ^= static_cast<uint8_t>(1 + r.range(0, 254));
    const_buffer in{bad.data(), bad.size()};
    storage st = const_buffer_storage(in);
    if (k % 4 >= 2) {
      st.view = nullptr;
      st.concurrent_reads = true;
    }
    array_open_options opt;
    if (k % 2) opt.exec = thread_pool_executor(pool);
    array a;
    if (!array_open(a, st, test::system_allocator(), opt).ok()) continue;
    for (int q = 0; q < 2; ++q) {
      int64_t ext[3] = {}, zero[3] = {};
      for (int i = 0; i < 3; ++i) ext[i] = stops[q][i] - starts[q][i];
      std::vector<uint8_t> got(static_cast<size_t>(ext[0] * ext[1] * ext[2] * 4));
      const status s = detail::array_read_into(a, starts[q], stops[q], bytes_mut(got.data(), got.size()), ext, zero);
      if (!s.ok()) {
        ++errors;
        CHECK(s.code != errc::out_of_memory);
      }
    }
    CHECK_OK(array_close(a));
  }
  CHECK(errors > 0);
}
