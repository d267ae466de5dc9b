// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// The geometry of a B2ND array: how its items are split into chunks and blocks, and where each item is stored.
///
/// The format (c-blosc2's b2nd): the array of `shape` is padded up to `extshape` (shape rounded up to a multiple
/// of chunkshape) and cut into chunks numbered in C order over the chunk grid (extshape / chunkshape). A chunk
/// is padded up to `extchunkshape` (chunkshape rounded up to a multiple of blockshape) and stored as its blocks
/// in C order over the block grid (extchunkshape / blockshape), each block holding prod(blockshape) items in C
/// order. Items outside the array or outside the chunk are padding, stored like any other item.
///
/// Slices over this geometry are planned in tessera/slice_plan.hpp; strided copies are in tessera/nd_copy.hpp.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/config.hpp"
#include "tessera/error.hpp"

namespace tessera {

/// The largest stored chunk, in bytes, a Blosc2 frame can hold (BLOSC2_MAX_BUFFERSIZE: INT32_MAX less the
/// 32-byte extended header).
inline constexpr int64_t kMaxChunkBytes = INT32_MAX - 32;

/// Every field is derived once by layout_init and read-only afterwards. Dimensions from ndim on are unused
/// (shapes 1, strides 0). Chunk and block shapes come in as int32 (as the metalayer stores them) and are kept as
/// int64 so that any shape here can be handed to nd_copy directly.
struct array_layout {
  int ndim = 0;                            ///< 0..kMaxDims; 0 is a scalar: one item, one chunk, one block
  int64_t shape[kMaxDims] = {};            ///< items per dimension
  int64_t chunkshape[kMaxDims] = {};       ///< items per chunk per dimension, padding excluded
  int64_t blockshape[kMaxDims] = {};       ///< items per block per dimension
  int64_t extshape[kMaxDims] = {};         ///< shape rounded up to a multiple of chunkshape
  int64_t extchunkshape[kMaxDims] = {};    ///< chunkshape rounded up to a multiple of blockshape
  int64_t chunk_grid[kMaxDims] = {};       ///< chunks per dimension: extshape / chunkshape
  int64_t block_grid[kMaxDims] = {};       ///< blocks per chunk per dimension: extchunkshape / blockshape

  int64_t nitems = 1;             ///< items in the array: prod(shape)
  int64_t nchunks = 1;            ///< chunks in the array: prod(chunk_grid); 0 when a dimension has extent 0
  int64_t chunk_nitems = 1;       ///< prod(chunkshape), fits int32 (the reference's chunknitems)
  int64_t extchunk_nitems = 1;    ///< items in a stored chunk, padding included: prod(extchunkshape)
  int64_t block_nitems = 1;       ///< items in a block: prod(blockshape), fits int32
  int64_t blocks_per_chunk = 1;   ///< prod(block_grid)

  /// C-order strides, in elements of the grid they index.
  int64_t item_strides[kMaxDims] = {};        ///< items in the array (over shape)
  int64_t chunk_strides[kMaxDims] = {};       ///< chunks in the chunk grid
  int64_t block_strides[kMaxDims] = {};       ///< blocks in a chunk's block grid
  int64_t block_item_strides[kMaxDims] = {};  ///< items in a block (over blockshape)
};

/// Validates the geometry and fills `out`. Pointers may be null when ndim is 0.
/// Errors: invalid_argument (negative values; blockshape 0 with chunkshape non-zero; chunkshape 0 in a dimension
/// of non-zero extent), unsupported (ndim outside 0..kMaxDims), overflow (a product or rounded-up extent does not
/// fit int64, or prod(chunkshape) / prod(blockshape) do not fit int32 as the format requires). A dimension of
/// extent 0 gives an array with no chunks.
[[nodiscard]] status layout_init(array_layout& out, int ndim, const int64_t* shape, const int32_t* chunkshape,
                                 const int32_t* blockshape) noexcept;

/// Byte sizes for an item size; checks the products and the frame's chunk-size limit (kMaxChunkBytes).
struct layout_sizes {
  int64_t array_nbytes = 0;   ///< nitems * itemsize
  int64_t chunk_nbytes = 0;   ///< extchunk_nitems * itemsize: a decoded stored chunk
  int64_t block_nbytes = 0;   ///< block_nitems * itemsize
};
/// Errors: invalid_argument (itemsize < 1), overflow (a product overflows int64, or a chunk exceeds
/// kMaxChunkBytes).
[[nodiscard]] result<layout_sizes> layout_sizes_compute(const array_layout& layout, int64_t itemsize) noexcept;

/// Chunk index <-> chunk coordinates in the chunk grid. Errors: out_of_range.
[[nodiscard]] result<int64_t> layout_chunk_index(const array_layout& layout, const int64_t* chunk_coords) noexcept;
/// The chunk-grid coordinates of chunk `nchunk` into chunk_coords (ndim values). Errors: out_of_range.
[[nodiscard]] status layout_chunk_coords(const array_layout& layout, int64_t nchunk, int64_t* chunk_coords) noexcept;

/// Block index (inside a chunk) <-> block coordinates in the block grid. Errors: out_of_range.
[[nodiscard]] result<int64_t> layout_block_index(const array_layout& layout, const int64_t* block_coords) noexcept;
/// The block-grid coordinates of block `nblock` into block_coords (ndim values). Errors: out_of_range.
[[nodiscard]] status layout_block_coords(const array_layout& layout, int64_t nblock, int64_t* block_coords) noexcept;

/// The first item of a chunk (array coordinates) and its actual extent: chunkshape, cut at the array's edge.
/// Errors: out_of_range.
[[nodiscard]] status layout_chunk_extent(const array_layout& layout, int64_t nchunk, int64_t* chunk_start,
                                         int64_t* chunk_extent) noexcept;

/// Where an item is stored.
struct item_location {
  int64_t nchunk = 0;   ///< the chunk holding it
  int64_t nblock = 0;   ///< its block inside that chunk
  int64_t offset = 0;   ///< its item offset inside the stored chunk (nblock * block_nitems + offset in the block)
};

/// Where the item at array coordinates `coords` lives. Errors: out_of_range (coords outside the array).
[[nodiscard]] result<item_location> layout_locate(const array_layout& layout, const int64_t* coords) noexcept;

/// The reverse: the array coordinates of the item at `offset` of stored chunk `nchunk`.
/// Errors: out_of_range (nchunk or offset outside the stored chunk, or the slot is padding).
[[nodiscard]] status layout_item_coords(const array_layout& layout, int64_t nchunk, int64_t offset,
                                        int64_t* coords) noexcept;

/// True when a stored chunk's items are in C order over chunkshape (no padding inside the chunk and blocks that
/// are whole trailing slabs: blockshape = (1, ..., 1, b, chunkshape...) with b dividing chunkshape). Then a
/// whole interior chunk can be moved to or from a C-order buffer without reordering (the reference's fast path).
[[nodiscard]] bool layout_chunk_is_c_order(const array_layout& layout) noexcept;

}  // namespace tessera
