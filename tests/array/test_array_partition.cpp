// SPDX-License-Identifier: BSD-3-Clause
// array_partition_compute at its edges: given shapes that cannot partition (negative, 0 for a non-empty
// dimension), empty dimensions with shapes given or not, blocks too large for a chunk, and the cache hints that
// bound the automatic chunk (an L3 above the L2, a chunk smaller than its block, a block smaller than an item).
#include <cstdint>

#include "tessera/array_partition.hpp"
#include "tessera/chunk.hpp"

#include "../support/check.hpp"

using namespace tessera;

namespace {

int64_t items_of(const int32_t* s, int ndim) {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= s[d];
  return n;
}

}  // namespace

TESSERA_TEST(array_partition, given_shapes_that_cannot_partition_are_refused) {
  const int64_t shape[2] = {6, 8};
  const array_partition_hints h;
  int32_t chunks[2] = {-1, 4}, blocks[2] = {3, 2};
  CHECK_ERR(array_partition_compute(2, shape, 2, chunks, true, blocks, true, h), errc::invalid_argument);
  chunks[0] = 3;
  blocks[0] = -1;
  CHECK_ERR(array_partition_compute(2, shape, 2, chunks, true, blocks, true, h), errc::invalid_argument);
  blocks[0] = 0;  // 0 for a dimension of 6 items
  CHECK_ERR(array_partition_compute(2, shape, 2, chunks, true, blocks, true, h), errc::invalid_argument);
  // Blocks given larger than the largest block a chunk may hold (2^32 bytes against about 2^29).
  const int64_t wide[2] = {int64_t{1} << 20, int64_t{1} << 20};
  int32_t big[2] = {1 << 16, 1 << 16}, auto_chunks[2] = {};
  CHECK_ERR(array_partition_compute(2, wide, 1, auto_chunks, false, big, true, h), errc::overflow);
  const int64_t wide3[3] = {int64_t{1} << 20, int64_t{1} << 20, 4};
  int32_t big3[3] = {1 << 16, 1 << 16, 2}, auto3[3] = {};  // past the largest block before the last axis
  CHECK_ERR(array_partition_compute(3, wide3, 1, auto3, false, big3, true, h), errc::overflow);
}

TESSERA_TEST(array_partition, empty_dimensions_take_0_where_given_and_1_where_chosen) {
  const int64_t shape[2] = {0, 8};
  const array_partition_hints h;
  // Chunks given with a 0 for the empty dimension: the blocks are chosen inside them.
  int32_t chunks[2] = {0, 4}, blocks[2] = {};
  REQUIRE_OK(array_partition_compute(2, shape, 2, chunks, true, blocks, false, h));
  CHECK(chunks[0] == 0 && chunks[1] == 4);
  CHECK(blocks[0] == 1 && blocks[1] >= 1 && blocks[1] <= 4);
  // Both given, 0 for the empty dimension: taken as they are.
  int32_t c2[2] = {0, 4}, b2[2] = {0, 2};
  REQUIRE_OK(array_partition_compute(2, shape, 2, c2, true, b2, true, h));
  CHECK(c2[0] == 0 && c2[1] == 4 && b2[0] == 0 && b2[1] == 2);
  // Blocks given, chunks chosen: every chunk extent at least 1 and holding whole blocks of the non-empty axis.
  int32_t c3[2] = {}, b3[2] = {1, 2};
  REQUIRE_OK(array_partition_compute(2, shape, 2, c3, false, b3, true, h));
  CHECK(c3[0] == 1 && c3[1] >= 2 && c3[1] <= 8 && c3[1] % 2 == 0);
}

TESSERA_TEST(array_partition, cache_hints_bound_the_automatic_chunk) {
  const int64_t shape[2] = {4096, 4096};
  // An L3 smaller than a block, no floor: the chunk cannot be smaller than its block, so it is one block.
  array_partition_hints tiny_l3;
  tiny_l3.l3_bytes = 1024;
  tiny_l3.min_chunk_bytes = 0;
  int32_t chunks[2] = {}, blocks[2] = {};
  REQUIRE_OK(array_partition_compute(2, shape, 4, chunks, false, blocks, false, tiny_l3));
  CHECK_EQ(items_of(chunks, 2), items_of(blocks, 2));
  CHECK_EQ(items_of(blocks, 2) * 4, tiny_l3.block_bytes);
  // An L3 above the L2: the chunk is a quarter of the L3 (no floor above it).
  array_partition_hints l3;
  l3.l2_bytes = 256 * 1024;
  l3.l3_bytes = 8 * 1024 * 1024;
  l3.min_chunk_bytes = 0;
  REQUIRE_OK(array_partition_compute(2, shape, 4, chunks, false, blocks, false, l3));
  CHECK_EQ(items_of(chunks, 2) * 4, l3.l3_bytes / 4);
  // An L2 whose quarter exceeds the chunk the blocks give (32 blocks of 1 KiB): the chunk grows to it.
  array_partition_hints l2;
  l2.block_bytes = 1024;
  l2.l2_bytes = 1024 * 1024;
  l2.min_chunk_bytes = 0;
  REQUIRE_OK(array_partition_compute(2, shape, 4, chunks, false, blocks, false, l2));
  CHECK_EQ(items_of(chunks, 2) * 4, l2.l2_bytes / 4);
  // An L3 not above the L2: the chunk the blocks give (32 blocks) is quartered, then raised to a quarter of the
  // L2; an L2 whose quarter is below the chunk the blocks give leaves it.
  array_partition_hints l3_below;
  l3_below.l2_bytes = 2 * 1024 * 1024;
  l3_below.l3_bytes = 1024 * 1024;
  l3_below.min_chunk_bytes = 0;
  REQUIRE_OK(array_partition_compute(2, shape, 4, chunks, false, blocks, false, l3_below));
  CHECK_EQ(items_of(chunks, 2) * 4, l3_below.l2_bytes / 4);
  array_partition_hints small_l2;
  small_l2.block_bytes = 1024;
  small_l2.l2_bytes = 64 * 1024;
  small_l2.min_chunk_bytes = 0;
  REQUIRE_OK(array_partition_compute(2, shape, 4, chunks, false, blocks, false, small_l2));
  CHECK_EQ(items_of(chunks, 2) * 4, 32 * small_l2.block_bytes);
  // A block target below one item: blocks of one item.
  array_partition_hints one_item;
  one_item.block_bytes = 1;
  one_item.min_chunk_bytes = 0;
  const int64_t small[2] = {3, 5};
  REQUIRE_OK(array_partition_compute(2, small, 8, chunks, false, blocks, false, one_item));
  CHECK(blocks[0] == 1 && blocks[1] == 1);
  CHECK(chunks[0] >= 1 && chunks[0] <= 3 && chunks[1] >= 1 && chunks[1] <= 5);
}

TESSERA_TEST(array_partition, nearest_divisor_edges) {
  CHECK_EQ(array_partition_nearest_divisor(0, 5, false), 1);   // no extent: 1
  CHECK_EQ(array_partition_nearest_divisor(-4, 5, true), 1);
  CHECK_EQ(array_partition_nearest_divisor(12, 20, true), 12);  // strict, above the extent: from the extent down
  CHECK_EQ(array_partition_nearest_divisor(12, 5, true), 4);    // strict: the largest divisor at most b
  CHECK_EQ(array_partition_nearest_divisor(12, 5, false), 6);   // not strict: the nearest (|6-5| before |4-5|)
}
