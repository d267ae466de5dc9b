// SPDX-License-Identifier: BSD-3-Clause
// Slices over several chunks of a read-only array in memory, read through a two-worker pool: the touched blocks
// of several chunks go to the workers as one run (blocks read in place). They must give the serial bytes and the
// items themselves, with chunks that cannot take that path (zero chunks from the index, delta-filtered chunks)
// mixed in, edges and padding included.
#include <cstring>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/thread_pool.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;

TESSERA_TEST(array_batch_read, parallel_slices_over_chunks_equal_serial_and_items) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  test::rng r(1515);
  for (int round = 0; round < 12; ++round) {
    array_params p;
    p.ndim = 1 + static_cast<int>(r.range(0, 2));
    int64_t n = 1;
    for (int i = 0; i < p.ndim; ++i) {
      p.chunkshape[i] = static_cast<int32_t>(r.range(2, p.ndim == 3 ? 14 : 40));
      p.shape[i] = r.range(p.chunkshape[i], p.ndim == 3 ? 50 : 300);
      p.blockshape[i] = static_cast<int32_t>(r.range(1, p.chunkshape[i]));
      n *= p.shape[i];
    }
    p.itemsize = 4;
    p.compressor = codec::lz4;
    if (round % 4 == 3) p.filters[4] = static_cast<uint8_t>(filter_id::delta);  // chunks that decode block 0 too
    // Zeros everywhere, then items written over the first part of dimension 0: the chunks past it stay zero
    // chunks of the index.
    std::vector<uint32_t> items(static_cast<size_t>(n), 0);
    int64_t cut[kMaxDims] = {};
    int64_t from[kMaxDims] = {};
    int64_t m0 = 1;
    for (int i = 0; i < p.ndim; ++i) {
      cut[i] = i == 0 ? r.range(1, p.shape[0]) : p.shape[i];
      m0 *= cut[i];
    }
    std::vector<uint32_t> part(static_cast<size_t>(m0));
    for (int64_t k = 0; k < m0; ++k) part[static_cast<size_t>(k)] = static_cast<uint32_t>((k + 1) * 2654435761u);
    std::memcpy(items.data(), part.data(), part.size() * 4);  // C order: the first cut[0] rows of dimension 0
    growable_buffer gb;
    growable_buffer_init(gb, test::system_allocator());
    {
      array w;
      REQUIRE_OK(array_create(w, array_target_contiguous(growable_buffer_storage(gb), false), test::system_allocator(), p,
                              array_fill_zeros()));
      REQUIRE_OK(array_slice_write(w, from, cut, bytes_view(reinterpret_cast<const uint8_t*>(part.data()), part.size() * 4)));
      CHECK_OK(array_close(w));
    }
    const_buffer in{gb.bytes().data(), gb.bytes().size()};
    array serial, parallel;
    REQUIRE_OK(array_open(serial, const_buffer_storage(in), test::system_allocator()));
    array_open_options opt;
    opt.exec = thread_pool_executor(pool);
    REQUIRE_OK(array_open(parallel, const_buffer_storage(in), test::system_allocator(), opt));
    for (int q = 0; q < 25; ++q) {
      int64_t start[3] = {}, stop[3] = {};
      int64_t m = 1;
      for (int i = 0; i < p.ndim; ++i) {
        const bool whole = q == 0 || r.chance(30);
        start[i] = whole ? 0 : r.range(0, p.shape[i] - 1);
        stop[i] = whole ? p.shape[i] : r.range(start[i] + 1, p.shape[i]);
        if (q % 3 == 1 && i == p.ndim - 1) stop[i] = start[i] + 1;  // one item wide in the last dimension
        if (q % 6 == 2 && i == p.ndim - 2) stop[i] = start[i] + 1;  // a plane across another axis
        m *= stop[i] - start[i];
      }
      std::vector<uint32_t> x(static_cast<size_t>(m), 1), y(static_cast<size_t>(m), 2);
      REQUIRE_OK(array_slice_read(serial, start, stop, bytes_mut(reinterpret_cast<uint8_t*>(x.data()), x.size() * 4)));
      REQUIRE_OK(array_slice_read(parallel, start, stop, bytes_mut(reinterpret_cast<uint8_t*>(y.data()), y.size() * 4)));
      CHECK(x == y);
      // And against the items themselves (array_testing.hpp's plain loop).
      std::vector<uint32_t> want(static_cast<size_t>(m), 3);
      int64_t ext[3] = {}, zero[3] = {};
      for (int i = 0; i < p.ndim; ++i) ext[i] = stop[i] - start[i];
      array_test::box_copy(p.ndim, 4, reinterpret_cast<const uint8_t*>(items.data()), p.shape, start,
                           reinterpret_cast<uint8_t*>(want.data()), ext, zero, ext);
      CHECK(y == want);
    }
    CHECK_OK(array_close(serial));
    CHECK_OK(array_close(parallel));
  }
}
