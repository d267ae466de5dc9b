// SPDX-License-Identifier: BSD-3-Clause
// Arrays of 9, 12 and 16 dimensions (c-blosc2's B2ND_MAX_DIM is 16): written from a C-order model, reopened,
// read whole, by slices that cross chunk and block boundaries, by elements; written by a slice, resized; the
// "b2nd" metalayer is the byte sequence the B2ND spec and the reference give. Builds with a smaller
// TESSERA_MAX_DIMS (firmware) refuse such arrays with an error instead.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "tessera/array.hpp"
#include "tessera/b2nd_meta.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/version.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

namespace {

constexpr int kCaseDims[] = {9, 12, 16};
constexpr int kMostDims = 16;

// A geometry of small extents: 3 or 2 in the first 12 dimensions (1 past them, so that 16-D stays small); the
// chunks split every dimension of the first 12 (3 -> 2 + 1, 2 -> 1 + 1), the blocks split every other chunk.
struct geometry {
  int ndim = 0;
  int64_t shape[kMostDims] = {};
  int32_t chunks[kMostDims] = {};
  int32_t blocks[kMostDims] = {};
};

geometry geometry_make(int ndim) {
  geometry g;
  g.ndim = ndim;
  for (int d = 0; d < ndim; ++d) {
    g.shape[d] = d >= 12 ? 1 : d % 4 == 0 ? 3 : 2;
    g.chunks[d] = static_cast<int32_t>(g.shape[d] > 1 ? g.shape[d] - 1 : 1);
    g.blocks[d] = d % 2 == 0 && g.chunks[d] > 1 ? 1 : g.chunks[d];
  }
  return g;
}

// The array's parameters (a build of fewer dimensions than g's gets only the ndim: its arrays are shorter).
array_params params_of(const geometry& g) {
  array_params p;
  p.ndim = g.ndim;
  for (int d = 0; d < g.ndim && d < kMaxDims; ++d) {
    p.shape[d] = g.shape[d];
    p.chunkshape[d] = g.chunks[d];
    p.blockshape[d] = g.blocks[d];
  }
  p.dtype = str("<u2");
  p.compressor = codec_available(codec::lz4) ? codec::lz4 : codec::blosclz;  // builds without LZ4 exist
  return p;
}

// The "b2nd" metalayer as README_B2ND_METALAYER.rst lays it out: fixarray 7, version 0, ndim, then three
// lists each introduced by the byte 0x90 + ndim (a fixarray up to 15 dimensions; for 16 the reference writes
// 0xa0, which Tessera writes too), int64 (d3) shape, int32 (d2) chunk and block shapes, dtype format 0 and the
// dtype as str32 (db).
size_t expected_meta(const geometry& g, const char* dtype, uint8_t* out) {
  size_t n = 0;
  out[n++] = 0x97;
  out[n++] = 0x00;
  out[n++] = static_cast<uint8_t>(g.ndim);
  out[n++] = static_cast<uint8_t>(0x90 + g.ndim);
  for (int d = 0; d < g.ndim; ++d) {
    out[n++] = 0xd3;
    for (int b = 7; b >= 0; --b) out[n++] = static_cast<uint8_t>(static_cast<uint64_t>(g.shape[d]) >> (8 * b));
  }
  for (const int32_t* list : {g.chunks, g.blocks}) {
    out[n++] = static_cast<uint8_t>(0x90 + g.ndim);
    for (int d = 0; d < g.ndim; ++d) {
      out[n++] = 0xd2;
      for (int b = 3; b >= 0; --b) out[n++] = static_cast<uint8_t>(static_cast<uint32_t>(list[d]) >> (8 * b));
    }
  }
  out[n++] = 0x00;
  const size_t len = std::strlen(dtype);
  out[n++] = 0xdb;
  for (int b = 3; b >= 0; --b) out[n++] = static_cast<uint8_t>(len >> (8 * b));
  std::memcpy(out + n, dtype, len);
  return n + len;
}

// Checks the slice [start, stop) of a against the model (C order over shape).
void check_slice(test::context& t, array& a, const geometry& g, const uint8_t* model, const int64_t* shape,
                 const int64_t* start, const int64_t* stop) {
  int64_t ext[kMaxDims] = {};
  for (int d = 0; d < g.ndim; ++d) ext[d] = stop[d] - start[d];
  const int64_t n = prod(g.ndim, ext);
  buf got, want;
  REQUIRE(got.make(static_cast<size_t>(n) * 2) && want.make(static_cast<size_t>(n) * 2));
  const int64_t zero[kMaxDims] = {};
  box_copy(g.ndim, 2, model, shape, start, want.data(), ext, zero, ext);
  REQUIRE_OK(array_slice_read(a, start, stop, got.mut()));
  CHECK(std::memcmp(got.data(), want.data(), got.n) == 0);
}

}  // namespace

TESSERA_TEST(array_many_dims, write_read_slices_elements_resize) {
  for (const int ndim : kCaseDims) {
    const geometry g = geometry_make(ndim);
    array_params p = params_of(g);
    growable_buffer gb;
    growable_buffer_init(gb, test::system_allocator());
    const storage st = growable_buffer_storage(gb);
    array a;
    if (ndim > kMaxDims) {  // a firmware build of fewer dimensions refuses the array, never overruns
      CHECK_ERR(array_create(a, array_target_contiguous(st), test::system_allocator(), p, array_fill_zeros()),
                errc::invalid_argument);
      continue;
    }
    const int64_t n = prod(ndim, g.shape);
    buf model;
    REQUIRE(model.make(static_cast<size_t>(n) * 2));
    test::rng r(static_cast<uint64_t>(ndim));
    for (int64_t i = 0; i < n; ++i) {  // distinct, mildly compressible items
      const uint16_t v = static_cast<uint16_t>(i * 7 + (r.next() & 3));
      std::memcpy(model.data() + i * 2, &v, 2);
    }
    REQUIRE_OK(array_create(a, array_target_contiguous(st), test::system_allocator(), p,
                            array_fill_buffer(model.view())));
    REQUIRE_OK(array_close(a));
    REQUIRE_OK(array_open(a, st, test::system_allocator(), array_open_options{}));
    const array_layout& l = array_layout_get(a);
    REQUIRE_EQ(l.ndim, ndim);
    int64_t nchunks = 1;
    for (int d = 0; d < ndim; ++d) {
      CHECK_EQ(l.shape[d], g.shape[d]);
      nchunks *= (g.shape[d] + g.chunks[d] - 1) / g.chunks[d];
    }
    CHECK_EQ(l.nchunks, nchunks);

    // The metalayer, byte for byte.
    uint8_t want_meta[4 + kMostDims * 19 + 16];
    const size_t want_len = expected_meta(g, "<u2", want_meta);
    const result<bytes_view> meta = array_meta_find(a, str("b2nd"));
    REQUIRE(meta.ok());
    REQUIRE_EQ(meta->size(), want_len);
    CHECK(std::memcmp(meta->data(), want_meta, want_len) == 0);
    CHECK_EQ(meta->data()[3], ndim == 16 ? 0xa0 : 0x90 + ndim);

    // Whole, then slices that cross the chunk boundary of every split dimension, then random slices.
    buf all;
    REQUIRE(all.make(model.n));
    REQUIRE_OK(array_read(a, all.mut()));
    CHECK(std::memcmp(all.data(), model.data(), model.n) == 0);
    int64_t start[kMaxDims] = {};
    int64_t stop[kMaxDims] = {};
    for (int d = 0; d < ndim; ++d) {
      start[d] = g.chunks[d] < g.shape[d] ? g.chunks[d] - 1 : 0;
      stop[d] = g.shape[d];
    }
    check_slice(t, a, g, model.data(), g.shape, start, stop);
    for (int k = 0; k < 20; ++k) {
      for (int d = 0; d < ndim; ++d) {
        start[d] = r.range(0, g.shape[d] - 1);
        stop[d] = r.range(start[d] + 1, g.shape[d]);
      }
      check_slice(t, a, g, model.data(), g.shape, start, stop);
    }
    // Elements, the last one included.
    for (int k = 0; k < 20; ++k) {
      int64_t at[kMaxDims] = {};
      int64_t lin = 0;
      for (int d = 0; d < ndim; ++d) {
        at[d] = k == 0 ? g.shape[d] - 1 : r.range(0, g.shape[d] - 1);
        lin = lin * g.shape[d] + at[d];
      }
      uint8_t item[2] = {};
      REQUIRE_OK(array_element_read(a, at, bytes_mut(item, 2)));
      CHECK(std::memcmp(item, model.data() + lin * 2, 2) == 0);
    }
    CHECK_OK(array_close(a));

    // A slice written across every split dimension's boundary, into the array and the model.
    array_open_options writable;
    writable.frame.writable = true;
    REQUIRE_OK(array_open(a, st, test::system_allocator(), writable));
    for (int d = 0; d < ndim; ++d) {
      start[d] = g.chunks[d] < g.shape[d] ? g.chunks[d] - 1 : 0;
      stop[d] = g.shape[d];
    }
    int64_t ext[kMaxDims] = {};
    for (int d = 0; d < ndim; ++d) ext[d] = stop[d] - start[d];
    buf src;
    REQUIRE(src.make(static_cast<size_t>(prod(ndim, ext)) * 2));
    fill_random(r, src.data(), src.n, false);
    REQUIRE_OK(array_slice_write(a, start, stop, src.view()));
    const int64_t zero[kMaxDims] = {};
    box_copy(ndim, 2, src.data(), ext, zero, model.data(), g.shape, start, ext);
    REQUIRE_OK(array_read(a, all.mut()));
    CHECK(std::memcmp(all.data(), model.data(), model.n) == 0);

    // Resize: one more along the first dimension, one less along the last split one; new items are zero.
    int64_t new_shape[kMaxDims] = {};
    for (int d = 0; d < ndim; ++d) new_shape[d] = g.shape[d];
    const int last_split = (ndim < 12 ? ndim : 12) - 1;
    new_shape[0] += 1;
    new_shape[last_split] -= 1;
    REQUIRE_OK(array_resize(a, new_shape));
    buf resized;
    REQUIRE(resized.make(static_cast<size_t>(prod(ndim, new_shape)) * 2));  // zeros
    int64_t keep[kMaxDims] = {};
    for (int d = 0; d < ndim; ++d) keep[d] = g.shape[d] < new_shape[d] ? g.shape[d] : new_shape[d];
    box_copy(ndim, 2, model.data(), g.shape, zero, resized.data(), new_shape, zero, keep);
    CHECK_OK(array_close(a));
    REQUIRE_OK(array_open(a, st, test::system_allocator(), array_open_options{}));
    CHECK_EQ(array_layout_get(a).shape[0], new_shape[0]);
    CHECK_EQ(array_layout_get(a).shape[last_split], new_shape[last_split]);
    buf after;
    REQUIRE(after.make(resized.n));
    REQUIRE_OK(array_read(a, after.mut()));
    CHECK(std::memcmp(after.data(), resized.data(), resized.n) == 0);
    for (int d = 0; d < ndim; ++d) {
      start[d] = 0;
      stop[d] = new_shape[d];
    }
    start[0] = g.shape[0] - 1;  // the old last row and the new one, across a chunk boundary
    geometry gr = g;
    for (int d = 0; d < ndim; ++d) gr.shape[d] = new_shape[d];
    check_slice(t, a, gr, resized.data(), new_shape, start, stop);
    CHECK_OK(array_close(a));
  }
}

TESSERA_TEST(array_many_dims, one_past_the_build_limit_is_refused) {
  array_params p;
  p.ndim = kMaxDims + 1;
  for (int d = 0; d < kMaxDims; ++d) {
    p.shape[d] = 2;
    p.chunkshape[d] = 1;
    p.blockshape[d] = 1;
  }
  growable_buffer gb;
  growable_buffer_init(gb, test::system_allocator());
  array a;
  CHECK_ERR(array_create(a, array_target_contiguous(growable_buffer_storage(gb)), test::system_allocator(), p,
                         array_fill_zeros()),
            errc::invalid_argument);
  // The library and the caller agree on the build's limit (a program built with other headers would not).
  CHECK_EQ(version_max_dims(), kMaxDims);
  CHECK(version_layout_matches());
  char want[16];
  std::snprintf(want, sizeof want, "%d.%d.%d", kVersionMajor, kVersionMinor, kVersionPatch);
  CHECK(std::strcmp(version_string(), want) == 0);
}
