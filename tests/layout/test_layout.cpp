// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/layout.hpp"

#include <cstdint>
#include <cstring>

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "layout_testing.hpp"

using namespace tessera;
using namespace tessera::test::layout;

namespace {

status layout_of(array_layout& l, const geometry& g) {
  return layout_init(l, g.ndim, g.shape, g.chunkshape, g.blockshape);
}

// Every element's (chunk, block, offset) against the model; offsets round-trip; chunk and block indexes
// round-trip; edge extents; the C-order predicate.
void check_geometry(tessera::test::context& t, const geometry& g, uint8_t* seen, size_t seen_size) {
  array_layout l;
  REQUIRE_OK(layout_of(l, g));
  const model m = model_of(g);
  REQUIRE_EQ(l.ndim, g.ndim);
  CHECK_EQ(l.nitems, m.nitems);
  CHECK_EQ(l.nchunks, m.nchunks);
  CHECK_EQ(l.extchunk_nitems, m.chunk_items);
  CHECK_EQ(l.block_nitems, m.block_items);
  CHECK_EQ(l.blocks_per_chunk, m.blocks_per_chunk);
  for (int i = 0; i < g.ndim; ++i) {
    CHECK_EQ(l.extchunkshape[i], m.extchunk[i]);
    CHECK_EQ(l.chunk_grid[i], m.chunk_grid[i]);
    CHECK_EQ(l.block_grid[i], m.block_grid[i]);
    CHECK_EQ(l.extshape[i], m.chunk_grid[i] * m.chunk[i]);
  }

  // Every item lands in a distinct slot of the stored chunks, where the model says.
  const int64_t slots = m.nchunks * m.chunk_items;
  REQUIRE(static_cast<uint64_t>(slots) <= seen_size);
  std::memset(seen, 0, static_cast<size_t>(slots));
  int64_t x[kMaxDims] = {};
  int64_t back[kMaxDims] = {};
  for (int64_t n = 0; n < m.nitems; ++n) {
    c_coords(g.ndim, m.shape, n, x);
    const location want = model_locate(m, x);
    result<item_location> got = layout_locate(l, x);
    REQUIRE_OK(got);
    CHECK_EQ(got->nchunk, want.nchunk);
    CHECK_EQ(got->nblock, want.nblock);
    REQUIRE_EQ(got->offset, want.offset);
    const int64_t slot = want.nchunk * m.chunk_items + want.offset;
    REQUIRE(slot >= 0 && slot < slots);
    CHECK_EQ(seen[slot], 0);
    seen[slot] = 1;
    REQUIRE_OK(layout_item_coords(l, want.nchunk, want.offset, back));
    for (int i = 0; i < g.ndim; ++i) CHECK_EQ(back[i], x[i]);
  }
  // The slots no item maps to are exactly the padding ones.
  for (int64_t slot = 0; slot < slots; ++slot) {
    const status s = layout_item_coords(l, slot / m.chunk_items, slot % m.chunk_items, back);
    if (seen[slot]) CHECK_OK(s);
    else CHECK_ERR(s, errc::out_of_range);
  }

  // Chunk index <-> coordinates, and each chunk's start and unpadded extent.
  int64_t cc[kMaxDims], start[kMaxDims], extent[kMaxDims];
  for (int64_t c = 0; c < m.nchunks; ++c) {
    REQUIRE_OK(layout_chunk_coords(l, c, cc));
    int64_t want_cc[kMaxDims];
    c_coords(g.ndim, m.chunk_grid, c, want_cc);
    for (int i = 0; i < g.ndim; ++i) CHECK_EQ(cc[i], want_cc[i]);
    result<int64_t> idx = layout_chunk_index(l, cc);
    REQUIRE_OK(idx);
    CHECK_EQ(*idx, c);
    REQUIRE_OK(layout_chunk_extent(l, c, start, extent));
    for (int i = 0; i < g.ndim; ++i) {
      CHECK_EQ(start[i], want_cc[i] * m.chunk[i]);
      int64_t e = m.chunk[i];
      if (start[i] + e > m.shape[i]) e = m.shape[i] - start[i];
      CHECK_EQ(extent[i], e);
      CHECK(extent[i] >= 1);
    }
  }
  CHECK_ERR(layout_chunk_coords(l, m.nchunks, cc), errc::out_of_range);
  CHECK_ERR(layout_chunk_coords(l, -1, cc), errc::out_of_range);
  CHECK_ERR(layout_chunk_extent(l, m.nchunks, start, extent), errc::out_of_range);

  if (m.nchunks > 0) {
    int64_t bc[kMaxDims];
    for (int64_t b = 0; b < m.blocks_per_chunk; ++b) {
      REQUIRE_OK(layout_block_coords(l, b, bc));
      int64_t want_bc[kMaxDims];
      c_coords(g.ndim, m.block_grid, b, want_bc);
      for (int i = 0; i < g.ndim; ++i) CHECK_EQ(bc[i], want_bc[i]);
      result<int64_t> idx = layout_block_index(l, bc);
      REQUIRE_OK(idx);
      CHECK_EQ(*idx, b);
    }
    CHECK_ERR(layout_block_coords(l, m.blocks_per_chunk, bc), errc::out_of_range);
    if (g.ndim > 0) {
      for (int i = 0; i < g.ndim; ++i) bc[i] = 0;
      bc[g.ndim - 1] = m.block_grid[g.ndim - 1];
      CHECK_ERR(layout_block_index(l, bc), errc::out_of_range);
      for (int i = 0; i < g.ndim; ++i) cc[i] = 0;
      cc[0] = m.chunk_grid[0];
      CHECK_ERR(layout_chunk_index(l, cc), errc::out_of_range);
    }

    // The C-order predicate: every slot of a chunk holds the item at its C-order position over chunkshape.
    bool c_order = m.chunk_items == product(g.ndim, m.chunk);
    int64_t y[kMaxDims];
    for (int64_t n = 0; c_order && n < product(g.ndim, m.chunk); ++n) {
      c_coords(g.ndim, m.chunk, n, y);  // as coordinates inside chunk 0 (the model does not check bounds)
      c_order = model_locate(m, y).offset == n;
    }
    CHECK_EQ(layout_chunk_is_c_order(l), c_order);
  }

  // Outside the array.
  if (g.ndim > 0 && m.nitems > 0) {
    for (int i = 0; i < g.ndim; ++i) x[i] = 0;
    x[g.ndim - 1] = m.shape[g.ndim - 1];
    CHECK_ERR(layout_locate(l, x), errc::out_of_range);
    x[g.ndim - 1] = -1;
    CHECK_ERR(layout_locate(l, x), errc::out_of_range);
    CHECK_ERR(layout_item_coords(l, 0, m.chunk_items, back), errc::out_of_range);
    CHECK_ERR(layout_item_coords(l, 0, -1, back), errc::out_of_range);
  }
}

}  // namespace

TESSERA_TEST(layout, random_geometries_match_the_definition) {
  constexpr int64_t kMaxStore = 6000;
  owned_array<uint8_t> seen;
  REQUIRE_OK(seen.allocate(tessera::test::system_allocator(), kMaxStore));
  tessera::test::rng r(0x1a70u);
  int failures_before = t.failures;
  for (int n = 0; n < 1500 && t.failures == failures_before; ++n) {
    check_geometry(t, random_geometry(r, kMaxStore), seen.data(), seen.size());
  }
}

TESSERA_TEST(layout, scalar_is_one_item_one_chunk_one_block) {
  array_layout l;
  REQUIRE_OK(layout_init(l, 0, nullptr, nullptr, nullptr));
  CHECK_EQ(l.nitems, 1);
  CHECK_EQ(l.nchunks, 1);
  CHECK_EQ(l.extchunk_nitems, 1);
  CHECK_EQ(l.block_nitems, 1);
  CHECK_EQ(l.blocks_per_chunk, 1);
  result<item_location> loc = layout_locate(l, nullptr);
  REQUIRE_OK(loc);
  CHECK_EQ(loc->nchunk, 0);
  CHECK_EQ(loc->offset, 0);
  CHECK_OK(layout_item_coords(l, 0, 0, nullptr));
  CHECK_ERR(layout_item_coords(l, 1, 0, nullptr), errc::out_of_range);
  CHECK_ERR(layout_item_coords(l, 0, 1, nullptr), errc::out_of_range);
  CHECK(layout_chunk_is_c_order(l));
  result<layout_sizes> sz = layout_sizes_compute(l, 8);
  REQUIRE_OK(sz);
  CHECK_EQ(sz->array_nbytes, 8);
  CHECK_EQ(sz->chunk_nbytes, 8);
}

TESSERA_TEST(layout, a_known_geometry) {
  // 10 x 7 array, 4 x 5 chunks, 3 x 2 blocks: extchunkshape 6 x 6, chunk grid 3 x 2, block grid 2 x 3.
  const int64_t shape[] = {10, 7};
  const int32_t chunk[] = {4, 5};
  const int32_t block[] = {3, 2};
  array_layout l;
  REQUIRE_OK(layout_init(l, 2, shape, chunk, block));
  CHECK_EQ(l.extshape[0], 12);
  CHECK_EQ(l.extshape[1], 10);
  CHECK_EQ(l.extchunkshape[0], 6);
  CHECK_EQ(l.extchunkshape[1], 6);
  CHECK_EQ(l.nchunks, 6);
  CHECK_EQ(l.extchunk_nitems, 36);
  CHECK_EQ(l.chunk_nitems, 20);
  CHECK_EQ(l.blocks_per_chunk, 6);
  // Item (9, 6): chunk (2, 1) = 5; inside the chunk (1, 1): block (0, 0), in-block (1, 1) = 3.
  const int64_t x[] = {9, 6};
  result<item_location> loc = layout_locate(l, x);
  REQUIRE_OK(loc);
  CHECK_EQ(loc->nchunk, 5);
  CHECK_EQ(loc->nblock, 0);
  CHECK_EQ(loc->offset, 3);
  // Item (7, 3): chunk (1, 0) = 2; inside (3, 3): block (1, 1) = 4, in-block (0, 1) = 1 -> 4 * 6 + 1.
  const int64_t y[] = {7, 3};
  result<item_location> loc2 = layout_locate(l, y);
  REQUIRE_OK(loc2);
  CHECK_EQ(loc2->nchunk, 2);
  CHECK_EQ(loc2->nblock, 4);
  CHECK_EQ(loc2->offset, 25);
  int64_t start[2], extent[2];
  REQUIRE_OK(layout_chunk_extent(l, 5, start, extent));
  CHECK_EQ(start[0], 8);
  CHECK_EQ(start[1], 5);
  CHECK_EQ(extent[0], 2);
  CHECK_EQ(extent[1], 2);
  CHECK(!layout_chunk_is_c_order(l));
  result<layout_sizes> sz = layout_sizes_compute(l, 4);
  REQUIRE_OK(sz);
  CHECK_EQ(sz->array_nbytes, 280);
  CHECK_EQ(sz->chunk_nbytes, 144);
  CHECK_EQ(sz->block_nbytes, 24);
}

TESSERA_TEST(layout, c_order_chunks) {
  array_layout l;
  const int64_t shape[] = {8, 8, 8};
  const int32_t chunk[] = {4, 4, 4};
  const int32_t slab[] = {1, 2, 4};
  REQUIRE_OK(layout_init(l, 3, shape, chunk, slab));
  CHECK(layout_chunk_is_c_order(l));
  const int32_t whole[] = {4, 4, 4};
  REQUIRE_OK(layout_init(l, 3, shape, chunk, whole));
  CHECK(layout_chunk_is_c_order(l));
  const int32_t bad[] = {2, 2, 4};
  REQUIRE_OK(layout_init(l, 3, shape, chunk, bad));
  CHECK(!layout_chunk_is_c_order(l));
  const int32_t padded[] = {1, 3, 4};
  REQUIRE_OK(layout_init(l, 3, shape, chunk, padded));
  CHECK(!layout_chunk_is_c_order(l));
}

TESSERA_TEST(layout, empty_dimensions_have_no_chunks) {
  array_layout l;
  const int64_t shape[] = {5, 0, 3};
  const int32_t chunk[] = {2, 4, 3};
  const int32_t block[] = {1, 2, 3};
  REQUIRE_OK(layout_init(l, 3, shape, chunk, block));
  CHECK_EQ(l.nitems, 0);
  CHECK_EQ(l.nchunks, 0);
  CHECK_EQ(l.extchunk_nitems, 2 * 4 * 3);
  int64_t cc[3];
  CHECK_ERR(layout_chunk_coords(l, 0, cc), errc::out_of_range);
  const int64_t zero[] = {0, 0, 0};
  CHECK_ERR(layout_locate(l, zero), errc::out_of_range);
  CHECK_ERR(layout_item_coords(l, 0, 0, cc), errc::out_of_range);
  // The reference's placeholder: chunkshape 0 and blockshape 0 in an empty dimension.
  const int32_t zchunk[] = {2, 0, 3};
  const int32_t zblock[] = {1, 0, 3};
  REQUIRE_OK(layout_init(l, 3, shape, zchunk, zblock));
  CHECK_EQ(l.nchunks, 0);
  CHECK_EQ(l.nitems, 0);
  CHECK_EQ(l.extchunk_nitems, 0);
  CHECK_ERR(layout_chunk_index(l, zero), errc::out_of_range);
}

TESSERA_TEST(layout, invalid_geometries_are_errors) {
  array_layout l;
  const int64_t shape[] = {10, 10};
  const int32_t ok_chunk[] = {4, 4};
  const int32_t ok_block[] = {2, 2};
  CHECK_ERR(layout_init(l, -1, shape, ok_chunk, ok_block), errc::unsupported);
  CHECK_ERR(layout_init(l, kMaxDims + 1, shape, ok_chunk, ok_block), errc::unsupported);
  CHECK_ERR(layout_init(l, 2, nullptr, ok_chunk, ok_block), errc::invalid_argument);
  const int64_t neg_shape[] = {10, -1};
  CHECK_ERR(layout_init(l, 2, neg_shape, ok_chunk, ok_block), errc::invalid_argument);
  const int32_t neg_chunk[] = {4, -4};
  CHECK_ERR(layout_init(l, 2, shape, neg_chunk, ok_block), errc::invalid_argument);
  const int32_t neg_block[] = {-2, 2};
  CHECK_ERR(layout_init(l, 2, shape, ok_chunk, neg_block), errc::invalid_argument);
  const int32_t zero_block[] = {2, 0};
  CHECK_ERR(layout_init(l, 2, shape, ok_chunk, zero_block), errc::invalid_argument);
  const int32_t zero_chunk[] = {0, 4};
  const int32_t zero_chunk_block[] = {0, 2};
  CHECK_ERR(layout_init(l, 2, shape, zero_chunk, zero_chunk_block), errc::invalid_argument);
  // A failed init leaves no half-built layout behind.
  CHECK_EQ(l.ndim, 0);
  CHECK_EQ(l.nchunks, 1);

  // Overflows, each caught before any arithmetic wraps.
  const int64_t huge1[] = {INT64_MAX};
  const int32_t c2[] = {2};
  const int32_t b1[] = {1};
  CHECK_ERR(layout_init(l, 1, huge1, c2, b1), errc::overflow);  // rounding up to the chunk
  const int64_t big2[] = {int64_t{1} << 40, int64_t{1} << 40};
  const int32_t c11[] = {1 << 20, 1 << 20};
  const int32_t b11[] = {1, 1};
  CHECK_ERR(layout_init(l, 2, big2, c11, b11), errc::overflow);  // items; also prod(chunkshape) > int32
  const int32_t c_small[] = {1, 1};
  CHECK_ERR(layout_init(l, 2, big2, c_small, b11), errc::overflow);  // item count
  const int64_t s2[] = {1 << 17, 1 << 17};
  const int32_t c17[] = {1 << 16, 1 << 16};
  CHECK_ERR(layout_init(l, 2, s2, c17, b11), errc::overflow);  // prod(chunkshape) > int32
  const int32_t b17[] = {1 << 16, 1 << 16};
  CHECK_ERR(layout_init(l, 2, s2, c17, b17), errc::overflow);  // prod(blockshape) > int32 too
  const int64_t hidden[] = {0, int64_t{1} << 40, int64_t{1} << 40};
  const int32_t c3[] = {1, 1, 1};
  const int32_t b3[] = {1, 1, 1};
  CHECK_ERR(layout_init(l, 3, hidden, c3, b3), errc::overflow);  // the product is 0, a stride is not
  const int32_t cmax[] = {INT32_MAX};
  const int32_t bmax[] = {INT32_MAX - 1};
  const int64_t s1[] = {5};
  REQUIRE_OK(layout_init(l, 1, s1, cmax, bmax));  // extchunkshape 2 * (2^31 - 2) fits int64
  CHECK_EQ(l.extchunkshape[0], 2 * (int64_t{INT32_MAX} - 1));
  CHECK_ERR(layout_sizes_compute(l, 1), errc::overflow);  // but not a Blosc2 chunk
}

TESSERA_TEST(layout, byte_sizes_are_checked) {
  array_layout l;
  const int64_t shape[] = {100, 100};
  const int32_t chunk[] = {30, 30};
  const int32_t block[] = {7, 7};
  REQUIRE_OK(layout_init(l, 2, shape, chunk, block));
  CHECK_ERR(layout_sizes_compute(l, 0), errc::invalid_argument);
  CHECK_ERR(layout_sizes_compute(l, -3), errc::invalid_argument);
  CHECK_ERR(layout_sizes_compute(l, INT64_MAX / 2), errc::overflow);
  // extchunk 35 x 35 = 1225 items: the largest item size that fits the Blosc2 limit, and one more.
  const int64_t limit = kMaxChunkBytes / 1225;
  result<layout_sizes> s = layout_sizes_compute(l, limit);
  REQUIRE_OK(s);
  CHECK_EQ(s->chunk_nbytes, limit * 1225);
  CHECK_EQ(s->block_nbytes, limit * 49);
  CHECK_ERR(layout_sizes_compute(l, limit + 1), errc::overflow);
}
