// Large slice reads of an array in memory, written in the output's address order (src/array/rows_read.cpp: a
// row of chunks at a time, each layer of blocks decoded side by side, then every output row written whole;
// streaming stores past 16 MiB on x86-64). Host builds take that path for slices of 1 MiB and more that span
// several blocks along their last dimension. Each read must give the items themselves, serially and on a
// two-worker pool, with odd item sizes, edges, padding, groups cut at 16 chunks, layers cut into segments,
// chunks that cannot take the path (zeros from the index, delta) in a row, and an output larger than the slice
// (array_read_into); a corrupt block is an error, a refused allocation too, and nothing leaks.
#include <cstring>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/thread_pool.hpp"

#include "array/array_internal.hpp"  // array_read_into (internal: src/ is on this test's include path)
#include "../support/check.hpp"
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
    array serial, parallel;
    REQUIRE_OK(open_made(m, serial, nullptr));
    REQUIRE_OK(open_made(m, parallel, &pool));
    for (int q = 0; q < 6; ++q) {
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
    }
    CHECK_OK(array_close(serial));
    CHECK_OK(array_close(parallel));
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
    for (int threads = 1; threads <= 2; ++threads) {
      array a;
      REQUIRE_OK(open_made(m, a, threads == 2 ? &pool : nullptr));
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
  for (int threads = 1; threads <= 2; ++threads) {
    array a;
    REQUIRE_OK(open_made(m, a, threads == 2 ? &pool : nullptr));
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
  // Every allocation of an open and a whole read refused in turn, serially and on the pool.
  for (int threads = 1; threads <= 2; ++threads) {
    bool completed = false;
    for (size_t n = 1; !completed && n < 200; ++n) {
      test::counting_allocator ca;
      ca.fail_at = n;
      {
        array a;
        status s = open_made(m, a, threads == 2 ? &pool : nullptr, ca.get());
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
    if (!array_open(a, const_buffer_storage(in), test::system_allocator(), opt).ok()) continue;
    if (!detail::array_read_into(a, zero, shape, bytes_mut(out.data(), out.size()), shape, zero).ok()) ++errors;
    CHECK_OK(array_close(a));
  }
  CHECK(errors > 0);
}
