// SPDX-License-Identifier: BSD-3-Clause
// Test helpers for slice reads of arrays in memory: an array made from items that are a function of their index,
// and a read checked byte for byte against those items (host tests: std::vector).
#pragma once
#include <cstring>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/thread_pool.hpp"

#include "array/array_internal.hpp"  // array_read_into (internal: src/ is on the test's include path)
#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

namespace read_test {

using namespace tessera;

struct made {
  std::vector<uint8_t> items;  // the array's items, C order
  growable_buffer frame;
  const_buffer in;             // the frame, as open_made reads it in place
};

// An array of `p` whose items are a function of their index where the last coordinate is below cut_last, zeros
// elsewhere: chunks wholly past cut_last stay zero chunks of the index. Smooth items compress; noisy ones do not
// (their chunks are stored as they are: memcpyed); with noisy_low only each item's first byte is noise (as in
// floats): that byte plane's stream is stored as it is inside a compressed block.
inline void make_array(test::context& t, made& m, array_params p, int64_t cut_last, bool noisy = false,
                       bool noisy_low = false) {
  const int64_t n = array_test::prod(p.ndim, p.shape);
  const int64_t is = p.itemsize;
  const int last = p.ndim - 1;
  m.items.assign(static_cast<size_t>(n * is), 0);
  for (int64_t k = 0; k < n; ++k) {
    if (k % p.shape[last] >= cut_last) continue;
    for (int64_t b = 0; b < is; ++b)
      m.items[static_cast<size_t>(k * is + b)] =
          noisy || (noisy_low && b == 0) ? static_cast<uint8_t>(((k * is + b) * 2654435761u) >> 13)
                                         : static_cast<uint8_t>((k / 16 + b * 7 + (k >> 11)) & 0xff);
  }
  growable_buffer_init(m.frame, test::system_allocator());
  array w;
  REQUIRE_OK(array_create(w, array_target_contiguous(growable_buffer_storage(m.frame), false), test::system_allocator(),
                          p, array_fill_zeros()));
  int64_t from[kMaxDims] = {}, to[kMaxDims] = {};
  for (int i = 0; i < p.ndim; ++i) to[i] = p.shape[i];
  to[last] = cut_last;
  std::vector<uint8_t> box(static_cast<size_t>(array_test::prod(p.ndim, to) * is));
  array_test::box_copy(p.ndim, is, m.items.data(), p.shape, from, box.data(), to, from, to);
  REQUIRE_OK(array_slice_write(w, from, to, bytes_view(box.data(), box.size())));
  CHECK_OK(array_close(w));
  m.in = const_buffer{m.frame.bytes().data(), m.frame.bytes().size()};
}

// Opens m's frame in place: serially, or on the pool's executor when one is given; with hide_view, through a
// storage without a view that allows concurrent reads, read as a file is (chunks copied out, not in place).
inline status open_made(made& m, array& a, thread_pool* pool, const allocator& alloc = test::system_allocator(),
                        bool hide_view = false) {
  array_open_options opt;
  if (pool != nullptr) opt.exec = thread_pool_executor(*pool);
  storage st = const_buffer_storage(m.in);
  if (hide_view) {
    st.view = nullptr;
    st.concurrent_reads = true;  // reads of a const buffer
  }
  return array_open(a, st, alloc, opt);
}

// Reads [start, stop) from a into an output of out_shape at out_start (prefilled with 0xEE) and
// checks every byte: the slice's items where the slice goes, the fill elsewhere.
inline void check_read(test::context& t, array& a, const made& m, const array_params& p, const int64_t* start, const int64_t* stop,
                const int64_t* out_shape, const int64_t* out_start) {
  const int64_t is = p.itemsize;
  int64_t ext[kMaxDims] = {};
  for (int i = 0; i < p.ndim; ++i) ext[i] = stop[i] - start[i];
  const size_t bytes = static_cast<size_t>(array_test::prod(p.ndim, out_shape) * is);
  std::vector<uint8_t> got(bytes, 0xEE), want(bytes, 0xEE);
  array_test::box_copy(p.ndim, is, m.items.data(), p.shape, start, want.data(), out_shape, out_start, ext);
  REQUIRE_OK(detail::array_read_into(a, start, stop, bytes_mut(got.data(), got.size()), out_shape, out_start));
  CHECK(got == want);
}

inline array_params params_of(int ndim, const int64_t* shape, const int32_t* chunks, const int32_t* blocks, int32_t itemsize) {
  array_params p;
  p.ndim = ndim;
  for (int i = 0; i < ndim; ++i) {
    p.shape[i] = shape[i];
    p.chunkshape[i] = chunks[i];
    p.blockshape[i] = blocks[i];
  }
  p.itemsize = itemsize;
  p.compressor = codec::lz4;
  return p;
}

}  // namespace read_test
