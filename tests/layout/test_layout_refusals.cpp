// SPDX-License-Identifier: BSD-3-Clause
// What the layout functions refuse, argument by argument: each pointer null in turn, negative shapes and
// counts, chunk indices out of range (negative too), and a slice without its bounds. Each with its code.
#include <cstdint>

#include "tessera/config.hpp"
#include "tessera/layout.hpp"
#include "tessera/nd_copy.hpp"
#include "tessera/slice_plan.hpp"

#include "../support/check.hpp"

using namespace tessera;

TESSERA_TEST(layout_refusals, nd_copy_region_refuses_each_missing_pointer_and_negative_shape) {
  static uint8_t src[64];
  static uint8_t dst[64];
  const int64_t shape[2] = {4, 4};
  const int64_t zero[2] = {0, 0};
  const int64_t copy[2] = {2, 2};
  const int64_t* args[5] = {shape, zero, shape, zero, copy};
  for (int k = 0; k < 5; ++k) {  // src_shape, src_start, dst_shape, dst_start, copy_shape: each null in turn
    const int64_t* a[5] = {args[0], args[1], args[2], args[3], args[4]};
    a[k] = nullptr;
    CHECK_ERR(nd_copy_region(2, 4, bytes_view(src, 64), a[0], a[1], bytes_mut(dst, 64), a[2], a[3], a[4]),
              errc::invalid_argument);
  }
  const int64_t negative[2] = {4, -1};
  CHECK_ERR(nd_copy_region(2, 4, bytes_view(src, 64), shape, zero, bytes_mut(dst, 64), negative, zero, copy),
            errc::invalid_argument);
  CHECK_ERR(nd_copy_region(2, 4, bytes_view(src, 64), shape, zero, bytes_mut(dst, 64), shape, zero, negative),
            errc::invalid_argument);
  // The region must fit the destination too.
  const int64_t late[2] = {3, 0};
  CHECK_ERR(nd_copy_region(2, 4, bytes_view(src, 64), shape, zero, bytes_mut(dst, 64), shape, late, copy),
            errc::out_of_range);
  const int64_t past[2] = {5, 0};
  CHECK_ERR(nd_copy_region(2, 4, bytes_view(src, 64), shape, zero, bytes_mut(dst, 64), shape, past, copy),
            errc::out_of_range);
}

TESSERA_TEST(layout_refusals, nd_copy_refuses_a_missing_start_or_stop_and_ndim_out_of_range) {
  static uint8_t src[64];
  static uint8_t dst[64];
  const int64_t shape[2] = {4, 4};
  const int64_t zero[2] = {0, 0};
  const int64_t stop[2] = {2, 2};
  CHECK_ERR(nd_copy(2, 4, bytes_view(src, 64), shape, nullptr, stop, bytes_mut(dst, 64), shape, zero),
            errc::invalid_argument);
  CHECK_ERR(nd_copy(2, 4, bytes_view(src, 64), shape, zero, nullptr, bytes_mut(dst, 64), shape, zero),
            errc::invalid_argument);
  CHECK_ERR(nd_copy(-1, 4, bytes_view(src, 64), shape, zero, stop, bytes_mut(dst, 64), shape, zero),
            errc::invalid_argument);
  CHECK_ERR(nd_copy(kMaxDims + 1, 4, bytes_view(src, 64), shape, zero, stop, bytes_mut(dst, 64), shape, zero),
            errc::invalid_argument);
  CHECK_OK(nd_copy(2, 4, bytes_view(src, 64), shape, zero, stop, bytes_mut(dst, 64), shape, zero));
}

TESSERA_TEST(layout_refusals, layout_calls_refuse_missing_shapes_and_chunks_out_of_range) {
  const int64_t shape[2] = {10, 7};
  const int32_t chunks[2] = {4, 4};
  const int32_t blocks[2] = {2, 2};
  array_layout l;
  CHECK_ERR(layout_init(l, 2, nullptr, chunks, blocks), errc::invalid_argument);
  CHECK_ERR(layout_init(l, 2, shape, nullptr, blocks), errc::invalid_argument);
  CHECK_ERR(layout_init(l, 2, shape, chunks, nullptr), errc::invalid_argument);
  REQUIRE_OK(layout_init(l, 2, shape, chunks, blocks));
  REQUIRE_EQ(l.nchunks, 6);
  int64_t coords[2];
  int64_t start[2];
  int64_t extent[2];
  CHECK_ERR(layout_chunk_coords(l, -1, coords), errc::out_of_range);
  CHECK_ERR(layout_chunk_coords(l, 6, coords), errc::out_of_range);
  CHECK_ERR(layout_chunk_extent(l, -1, start, extent), errc::out_of_range);
  CHECK_ERR(layout_chunk_extent(l, 6, start, extent), errc::out_of_range);
  REQUIRE_OK(layout_chunk_extent(l, 5, start, extent));  // the corner chunk is cut at the array's edge
  CHECK_EQ(start[0], 8);
  CHECK_EQ(start[1], 4);
  CHECK_EQ(extent[0], 2);
  CHECK_EQ(extent[1], 3);
  // Grid coordinates below and past each grid, and items of chunks that are not the array's.
  const int64_t below[2] = {0, -1};
  const int64_t past[2] = {3, 0};
  CHECK_ERR(layout_chunk_index(l, below), errc::out_of_range);
  CHECK_ERR(layout_chunk_index(l, past), errc::out_of_range);
  CHECK_ERR(layout_block_index(l, below), errc::out_of_range);
  const int64_t block_past[2] = {2, 0};
  CHECK_ERR(layout_block_index(l, block_past), errc::out_of_range);
  CHECK_ERR(layout_item_coords(l, -1, 0, coords), errc::out_of_range);
  CHECK_ERR(layout_item_coords(l, 6, 0, coords), errc::out_of_range);
  CHECK_ERR(layout_item_coords(l, 0, -1, coords), errc::out_of_range);
  CHECK_ERR(layout_item_coords(l, 0, 16, coords), errc::out_of_range);
  CHECK_ERR(layout_item_coords(l, 5, 15, coords), errc::out_of_range);  // the corner chunk's padding
  REQUIRE_OK(layout_item_coords(l, 5, 0, coords));
  CHECK_EQ(coords[0], 8);
  CHECK_EQ(coords[1], 4);
  slice_plan plan;
  const int64_t lo[2] = {0, 0};
  CHECK_ERR(slice_plan_init(plan, l, nullptr, lo), errc::invalid_argument);
  CHECK_ERR(slice_plan_init(plan, l, lo, nullptr), errc::invalid_argument);
}

TESSERA_TEST(layout_refusals, sizes_past_int64_are_overflow) {
  array_layout l;
  // The shape fits, rounded up to its chunks it does not.
  const int64_t near_max[1] = {INT64_MAX - 1};
  const int32_t four[1] = {4};
  CHECK_ERR(layout_init(l, 1, near_max, four, four), errc::overflow);
  // Each extent fits, their product does not (items, then stored items per chunk at the same time).
  const int64_t wide[3] = {int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 2};
  const int32_t chunk3[3] = {1, 1, 4};
  CHECK_ERR(layout_init(l, 3, wide, chunk3, chunk3), errc::overflow);
  // The items fit (3 * 2^61), the stored items (4 * 2^61, the first extent rounded up to its chunk) do not.
  const int64_t rounded[2] = {3, int64_t{1} << 61};
  const int32_t chunk_r[2] = {4, 1};
  CHECK_ERR(layout_init(l, 2, rounded, chunk_r, chunk_r), errc::overflow);
  // Two items in a chunk of 2^30: at 2 bytes an item the chunk passes the Blosc2 chunk limit, at 2^40 bytes its
  // size overflows while the array's (2^41) does not.
  const int64_t two[1] = {2};
  const int32_t chunk1[1] = {int32_t{1} << 30};
  const int32_t block1[1] = {int32_t{1} << 20};
  REQUIRE_OK(layout_init(l, 1, two, chunk1, block1));
  REQUIRE_OK(layout_sizes_compute(l, 1));
  CHECK_ERR(layout_sizes_compute(l, 2), errc::overflow);
  CHECK_ERR(layout_sizes_compute(l, int64_t{1} << 40), errc::overflow);
}
