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
  slice_plan plan;
  const int64_t lo[2] = {0, 0};
  CHECK_ERR(slice_plan_init(plan, l, nullptr, lo), errc::invalid_argument);
  CHECK_ERR(slice_plan_init(plan, l, lo, nullptr), errc::invalid_argument);
}
