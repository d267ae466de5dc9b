// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/slice_plan.hpp"

#include <cstdint>
#include <cstring>

#include "tessera/layout.hpp"
#include "tessera/nd_copy.hpp"
#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "layout_testing.hpp"

using namespace tessera;
using namespace tessera::test::layout;

namespace {

constexpr int64_t kMaxStore = 6000;
constexpr uint32_t kPadding = 0xDEADBEEFu;

// Scratch for one case, allocated once.
struct scratch {
  owned_array<uint32_t> store;     // the simulated chunked store: nchunks * extchunk_nitems items
  owned_array<uint32_t> store2;    // the store written through the plan
  owned_array<uint32_t> expected;  // the store the model expects after the write
  owned_array<uint32_t> slice;     // the slice read through the plan
  owned_array<uint32_t> slice2;    // the slice read through whole C-order chunks
  owned_array<uint32_t> values;    // the slice written through the plan
  owned_array<uint8_t> chunk_hit;  // per chunk: touched by the slice (model)
  owned_array<uint8_t> block_hit;  // per (chunk, block): touched by the slice (model)
};

status scratch_init(scratch& s) {
  const allocator a = tessera::test::system_allocator();
  TESSERA_TRY(s.store.allocate(a, kMaxStore));
  TESSERA_TRY(s.store2.allocate(a, kMaxStore));
  TESSERA_TRY(s.expected.allocate(a, kMaxStore));
  TESSERA_TRY(s.slice.allocate(a, kMaxStore));
  TESSERA_TRY(s.slice2.allocate(a, kMaxStore));
  TESSERA_TRY(s.values.allocate(a, kMaxStore));
  TESSERA_TRY(s.chunk_hit.allocate(a, kMaxStore));
  TESSERA_TRY(s.block_hit.allocate(a, kMaxStore));
  return ok_status();
}

bytes_view view_of(const uint32_t* p, int64_t n) {
  return bytes_view(reinterpret_cast<const uint8_t*>(p), static_cast<size_t>(n) * 4);
}
bytes_mut mut_of(uint32_t* p, int64_t n) {
  return bytes_mut(reinterpret_cast<uint8_t*>(p), static_cast<size_t>(n) * 4);
}

// A random slice biased towards the interesting ones: empty, one item, the whole array, touching edges.
void random_slice(tessera::test::rng& r, const model& m, int64_t* start, int64_t* stop) {
  const int kind = static_cast<int>(r.range(0, 9));
  for (int i = 0; i < m.ndim; ++i) {
    const int64_t s = m.shape[i];
    int64_t a = 0, b = 0;
    if (s > 0) {  // non-empty along this dimension
      a = r.range(0, s - 1);
      b = r.range(a + 1, s);
    }
    switch (kind) {
      case 0: a = 0; b = s; break;                           // the whole array
      case 1: b = s > 0 ? a + 1 : 0; break;                  // one item
      case 2: b = s; break;                                  // touching the far edge
      case 3: a = 0; break;                                  // touching the near edge
      default: break;
    }
    start[i] = a;
    stop[i] = b;
  }
  if (kind == 4 && m.ndim > 0) {  // empty along one dimension, anywhere in it
    const int d = static_cast<int>(r.range(0, m.ndim - 1));
    start[d] = stop[d] = r.range(0, m.shape[d]);
  }
}

void check_slice(tessera::test::context& t, const geometry& g, const array_layout& l, const int64_t* start,
                 const int64_t* stop, scratch& s) {
  const model m = model_of(g);
  slice_plan plan;
  REQUIRE_OK(slice_plan_init(plan, l, start, stop));
  int64_t sshape[kMaxDims];
  for (int i = 0; i < g.ndim; ++i) {
    sshape[i] = stop[i] - start[i];
    CHECK_EQ(plan.shape[i], sshape[i]);
  }
  const int64_t snitems = product(g.ndim, sshape);
  CHECK_EQ(plan.nitems, snitems);
  const int64_t slots = m.nchunks * m.chunk_items;

  // The model: the store filled from a C-order array of distinct values (index + 1), padding marked; the
  // chunks and blocks each slice item falls in; the store after writing the slice (values 0x80000000 + index).
  for (int64_t i = 0; i < slots; ++i) s.store[i] = kPadding;
  int64_t x[kMaxDims], y[kMaxDims];
  for (int64_t n = 0; n < m.nitems; ++n) {
    c_coords(g.ndim, m.shape, n, x);
    const location loc = model_locate(m, x);
    s.store[loc.nchunk * m.chunk_items + loc.offset] = static_cast<uint32_t>(n + 1);
  }
  std::memcpy(s.expected.data(), s.store.data(), static_cast<size_t>(slots) * 4);
  std::memset(s.chunk_hit.data(), 0, static_cast<size_t>(m.nchunks));
  std::memset(s.block_hit.data(), 0, static_cast<size_t>(m.nchunks * m.blocks_per_chunk));
  int64_t nchunks_hit = 0, nblocks_hit = 0;
  for (int64_t n = 0; n < snitems; ++n) {
    c_coords(g.ndim, sshape, n, y);
    for (int i = 0; i < g.ndim; ++i) x[i] = start[i] + y[i];
    const location loc = model_locate(m, x);
    nchunks_hit += s.chunk_hit[loc.nchunk] == 0;
    s.chunk_hit[loc.nchunk] = 1;
    uint8_t& bh = s.block_hit[loc.nchunk * m.blocks_per_chunk + loc.nblock];
    nblocks_hit += bh == 0;
    bh = 1;
    s.expected[loc.nchunk * m.chunk_items + loc.offset] = 0x80000000u + static_cast<uint32_t>(n);
  }
  CHECK_EQ(plan.nchunks, nchunks_hit);

  // Follow the plan: read the slice out of the store, and write a slice of new values into a copy.
  for (int64_t n = 0; n < snitems; ++n) {
    s.slice[n] = 0;
    s.values[n] = 0x80000000u + static_cast<uint32_t>(n);  // what the model wrote
  }
  std::memcpy(s.store2.data(), s.store.data(), static_cast<size_t>(slots) * 4);
  const bool c_order = layout_chunk_is_c_order(l);

  int64_t chunks_seen = 0, blocks_seen = 0, last_chunk = -1, items_seen = 0;
  slice_chunk_iterator chunks(plan);
  while (chunks.next()) {
    const slice_chunk& c = chunks.chunk();
    ++chunks_seen;
    REQUIRE(c.nchunk > last_chunk);  // increasing: C order over the grid
    last_chunk = c.nchunk;
    REQUIRE(c.nchunk < m.nchunks);
    CHECK_EQ(s.chunk_hit[c.nchunk], 1);
    int64_t cstart[kMaxDims], cextent[kMaxDims], ccoords[kMaxDims];
    REQUIRE_OK(layout_chunk_extent(l, c.nchunk, cstart, cextent));
    c_coords(g.ndim, m.chunk_grid, c.nchunk, ccoords);
    bool covers = true;
    for (int i = 0; i < g.ndim; ++i) {
      CHECK_EQ(c.coords[i], ccoords[i]);
      CHECK_EQ(c.chunk_start[i], cstart[i]);
      CHECK_EQ(c.chunk_extent[i], cextent[i]);
      // The region is the slice intersected with the chunk.
      const int64_t lo = start[i] > cstart[i] ? start[i] : cstart[i];
      const int64_t hi = stop[i] < cstart[i] + cextent[i] ? stop[i] : cstart[i] + cextent[i];
      CHECK_EQ(c.region_start[i], lo - cstart[i]);
      CHECK_EQ(c.region_shape[i], hi - lo);
      CHECK_EQ(c.slice_start[i], lo - start[i]);
      covers &= lo == cstart[i] && hi == cstart[i] + cextent[i];
    }
    CHECK_EQ(c.covers_chunk, covers);
    uint32_t* chunk_data = s.store.data() + c.nchunk * m.chunk_items;
    uint32_t* chunk_data2 = s.store2.data() + c.nchunk * m.chunk_items;

    int64_t region_items = 0, last_block = -1;
    slice_block_iterator blocks(plan, c);
    while (blocks.next()) {
      const slice_block& b = blocks.block();
      ++blocks_seen;
      REQUIRE(b.nblock > last_block);
      last_block = b.nblock;
      REQUIRE(b.nblock < m.blocks_per_chunk);
      CHECK_EQ(s.block_hit[c.nchunk * m.blocks_per_chunk + b.nblock], 1);
      CHECK_EQ(b.offset, b.nblock * m.block_items);
      int64_t bcoords[kMaxDims];
      c_coords(g.ndim, m.block_grid, b.nblock, bcoords);
      bool whole = true;
      for (int i = 0; i < g.ndim; ++i) {
        CHECK_EQ(b.coords[i], bcoords[i]);
        CHECK_EQ(b.chunk_start[i], bcoords[i] * m.block[i] + b.region_start[i]);
        CHECK_EQ(b.slice_start[i], c.slice_start[i] + b.chunk_start[i] - c.region_start[i]);
        whole &= b.region_shape[i] == m.block[i];
      }
      CHECK_EQ(b.covers_block, whole);
      region_items += product(g.ndim, b.region_shape);
      // Read: block -> slice buffer. Write: slice values -> block of the second store.
      REQUIRE_OK(nd_copy_region(g.ndim, 4, view_of(chunk_data + b.offset, m.block_items), l.blockshape,
                                b.region_start, mut_of(s.slice.data(), snitems), plan.shape, b.slice_start,
                                b.region_shape));
      REQUIRE_OK(nd_copy_region(g.ndim, 4, view_of(s.values.data(), snitems), plan.shape, b.slice_start,
                                mut_of(chunk_data2 + b.offset, m.block_items), l.blockshape, b.region_start,
                                b.region_shape));
    }
    // The blocks tile the chunk's region exactly (with the per-block checks, no overlap and no gap).
    CHECK_EQ(region_items, product(g.ndim, c.region_shape));
    items_seen += region_items;
  }
  CHECK_EQ(chunks_seen, nchunks_hit);
  CHECK_EQ(blocks_seen, nblocks_hit);
  CHECK_EQ(items_seen, snitems);

  // The slice read through the plan is the model's slice; the store written through it is the model's store.
  bool read_ok = true;
  for (int64_t n = 0; n < snitems && read_ok; ++n) {
    c_coords(g.ndim, sshape, n, y);
    for (int i = 0; i < g.ndim; ++i) x[i] = start[i] + y[i];
    read_ok = s.slice[n] == static_cast<uint32_t>(c_index(g.ndim, m.shape, x) + 1);
  }
  CHECK(read_ok);
  CHECK(std::memcmp(s.store2.data(), s.expected.data(), static_cast<size_t>(slots) * 4) == 0);

  // Whole-chunk copies when stored chunks are in C order over chunkshape: the chunk regions alone suffice.
  if (c_order && snitems > 0) {
    for (int64_t i = 0; i < snitems; ++i) s.slice2[i] = 0;
    slice_chunk_iterator again(plan);
    while (again.next()) {
      const slice_chunk& c = again.chunk();
      REQUIRE_OK(nd_copy_region(g.ndim, 4, view_of(s.store.data() + c.nchunk * m.chunk_items, m.chunk_items),
                                l.chunkshape, c.region_start, mut_of(s.slice2.data(), snitems), plan.shape,
                                c.slice_start, c.region_shape));
    }
    CHECK(std::memcmp(s.slice.data(), s.slice2.data(), static_cast<size_t>(snitems) * 4) == 0);
  }
}

}  // namespace

TESSERA_TEST(slice_plan, random_slices_match_the_model) {
  scratch s;
  REQUIRE_OK(scratch_init(s));
  tessera::test::rng r(0x511ce);
  const int failures_before = t.failures;
  for (int n = 0; n < 1500 && t.failures == failures_before; ++n) {
    const geometry g = random_geometry(r, kMaxStore);
    array_layout l;
    REQUIRE_OK(layout_init(l, g.ndim, g.shape, g.chunkshape, g.blockshape));
    const model m = model_of(g);
    for (int k = 0; k < 4; ++k) {
      int64_t start[kMaxDims], stop[kMaxDims];
      random_slice(r, m, start, stop);
      check_slice(t, g, l, start, stop, s);
    }
  }
}

TESSERA_TEST(slice_plan, scalar_plan_is_one_chunk_one_block) {
  array_layout l;
  REQUIRE_OK(layout_init(l, 0, nullptr, nullptr, nullptr));
  slice_plan plan;
  REQUIRE_OK(slice_plan_init(plan, l, nullptr, nullptr));
  CHECK_EQ(plan.nitems, 1);
  CHECK_EQ(plan.nchunks, 1);
  slice_chunk_iterator chunks(plan);
  REQUIRE(chunks.next());
  CHECK_EQ(chunks.chunk().nchunk, 0);
  CHECK(chunks.chunk().covers_chunk);
  slice_block_iterator blocks(plan, chunks.chunk());
  REQUIRE(blocks.next());
  CHECK_EQ(blocks.block().nblock, 0);
  CHECK_EQ(blocks.block().offset, 0);
  CHECK(!blocks.next());
  CHECK(!chunks.next());
}

TESSERA_TEST(slice_plan, empty_slices_visit_nothing) {
  array_layout l;
  const int64_t shape[] = {6, 0, 4};
  const int32_t chunk[] = {2, 3, 2};
  const int32_t block[] = {1, 2, 2};
  REQUIRE_OK(layout_init(l, 3, shape, chunk, block));
  const int64_t start[] = {0, 0, 0};
  const int64_t stop[] = {6, 0, 4};
  slice_plan plan;
  REQUIRE_OK(slice_plan_init(plan, l, start, stop));
  CHECK_EQ(plan.nitems, 0);
  CHECK_EQ(plan.nchunks, 0);
  slice_chunk_iterator chunks(plan);
  CHECK(!chunks.next());
  CHECK(!chunks.next());

  const int64_t shape2[] = {6, 5};
  REQUIRE_OK(layout_init(l, 2, shape2, chunk, block));
  const int64_t a[] = {3, 2};
  const int64_t b[] = {3, 5};
  REQUIRE_OK(slice_plan_init(plan, l, a, b));
  CHECK_EQ(plan.nchunks, 0);
  slice_chunk_iterator none(plan);
  CHECK(!none.next());
}

TESSERA_TEST(slice_plan, a_known_plan) {
  // 10 x 7 array, 4 x 5 chunks, 3 x 2 blocks; the slice [3, 9) x [4, 6) touches chunks (0,0) (0,1) (1,0)
  // (1,1) (2,0) (2,1) = 0..5.
  array_layout l;
  const int64_t shape[] = {10, 7};
  const int32_t chunk[] = {4, 5};
  const int32_t block[] = {3, 2};
  REQUIRE_OK(layout_init(l, 2, shape, chunk, block));
  const int64_t start[] = {3, 4};
  const int64_t stop[] = {9, 6};
  slice_plan plan;
  REQUIRE_OK(slice_plan_init(plan, l, start, stop));
  CHECK_EQ(plan.nchunks, 6);
  CHECK_EQ(plan.nitems, 12);
  slice_chunk_iterator chunks(plan);
  REQUIRE(chunks.next());
  CHECK_EQ(chunks.chunk().nchunk, 0);
  // In chunk 0 the region is rows 3..4, column 4: block (1, 2) = 5, at (0, 0) of the block.
  CHECK_EQ(chunks.chunk().region_start[0], 3);
  CHECK_EQ(chunks.chunk().region_start[1], 4);
  CHECK_EQ(chunks.chunk().region_shape[0], 1);
  CHECK_EQ(chunks.chunk().region_shape[1], 1);
  slice_block_iterator blocks(plan, chunks.chunk());
  REQUIRE(blocks.next());
  CHECK_EQ(blocks.block().nblock, 5);
  CHECK_EQ(blocks.block().offset, 30);
  CHECK_EQ(blocks.block().region_start[0], 0);
  CHECK_EQ(blocks.block().region_start[1], 0);
  CHECK(!blocks.next());
  REQUIRE(chunks.next());
  CHECK_EQ(chunks.chunk().nchunk, 1);
  CHECK_EQ(chunks.chunk().slice_start[0], 0);
  CHECK_EQ(chunks.chunk().slice_start[1], 1);
  int count = 2;
  while (chunks.next()) ++count;
  CHECK_EQ(count, 6);
}

TESSERA_TEST(slice_plan, out_of_range_slices_are_errors) {
  array_layout l;
  const int64_t shape[] = {10, 7};
  const int32_t chunk[] = {4, 5};
  const int32_t block[] = {3, 2};
  REQUIRE_OK(layout_init(l, 2, shape, chunk, block));
  slice_plan plan;
  const int64_t zero[] = {0, 0};
  const int64_t full[] = {10, 7};
  CHECK_OK(slice_plan_init(plan, l, zero, full));
  CHECK_EQ(plan.nchunks, 6);
  const int64_t past[] = {10, 8};
  CHECK_ERR(slice_plan_init(plan, l, zero, past), errc::out_of_range);
  const int64_t neg[] = {0, -1};
  CHECK_ERR(slice_plan_init(plan, l, neg, full), errc::out_of_range);
  const int64_t late[] = {5, 0};
  const int64_t early[] = {4, 7};
  CHECK_ERR(slice_plan_init(plan, l, late, early), errc::out_of_range);
  const int64_t all_past[] = {11, 7};
  CHECK_ERR(slice_plan_init(plan, l, all_past, all_past), errc::out_of_range);
  CHECK_ERR(slice_plan_init(plan, l, nullptr, full), errc::invalid_argument);
  // A failed plan visits nothing.
  CHECK_EQ(plan.nchunks, 0);
  slice_chunk_iterator chunks(plan);
  CHECK(!chunks.next());
}
