// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Planning a hyper-rectangular slice [start, stop) of a B2ND array: the chunks it touches, the blocks it
/// touches in each, and the copy region of each block. Nothing allocates; iterators hold only a few fixed arrays.
///
/// Typical read of a slice into a C-order buffer of shape plan.shape:
/// \code
///   slice_plan plan;  TESSERA_TRY(slice_plan_init(plan, layout, start, stop));
///   slice_chunk_iterator chunks(plan);
///   while (chunks.next()) {
///     const slice_chunk& c = chunks.chunk();       // decode chunk c.nchunk (or only its touched blocks)
///     slice_block_iterator blocks(plan, c);
///     while (blocks.next()) {
///       const slice_block& b = blocks.block();     // the block: item b.offset of the decoded chunk
///       TESSERA_TRY(nd_copy_region(ndim, itemsize, block_bytes, layout.blockshape, b.region_start,
///                                  out_bytes, plan.shape, b.slice_start, b.region_shape));
///     }
///   }
/// \endcode
/// All coordinates are in items. For ndim 0 the plan is one chunk with one block and one item.
#pragma once

#include <stdint.h>

#include "tessera/config.hpp"
#include "tessera/error.hpp"
#include "tessera/layout.hpp"

namespace tessera {

/// A slice [start, stop) checked against a layout, and the range of chunks it touches.
struct slice_plan {
  const array_layout* layout = nullptr;  ///< not owned: must outlive the plan and its iterators
  int64_t start[kMaxDims] = {};          ///< the slice's first item per dimension
  int64_t stop[kMaxDims] = {};           ///< one past its last item per dimension
  int64_t shape[kMaxDims] = {};          ///< stop - start: the shape of a C-order buffer holding the slice
  int64_t nitems = 0;                    ///< items in the slice (1 for ndim 0)
  int64_t first_chunk[kMaxDims] = {};    ///< chunk coordinates of the first touched chunk
  int64_t chunk_span[kMaxDims] = {};     ///< touched chunks per dimension (0 everywhere for an empty slice)
  int64_t nchunks = 0;                   ///< chunks touched
};

/// Errors: out_of_range (not 0 <= start <= stop <= shape; the message names which bound). Pointers may be null
/// when ndim is 0. An empty slice (start == stop in some dimension) is valid and touches no chunk.
[[nodiscard]] status slice_plan_init(slice_plan& plan, const array_layout& layout, const int64_t* start,
                                     const int64_t* stop) noexcept;

/// A chunk touched by a slice, with the part of the slice inside it.
struct slice_chunk {
  int64_t nchunk = 0;                    ///< index of the chunk in the array
  int64_t coords[kMaxDims] = {};         ///< its coordinates in the chunk grid
  int64_t chunk_start[kMaxDims] = {};    ///< its first item, array coordinates
  int64_t chunk_extent[kMaxDims] = {};   ///< its actual extent (chunkshape cut at the array's edge)
  int64_t region_start[kMaxDims] = {};   ///< the part of the slice inside it: start, relative to chunk_start
  int64_t region_shape[kMaxDims] = {};   ///<   its extent
  int64_t slice_start[kMaxDims] = {};    ///<   and where it goes in the slice buffer
  bool covers_chunk = false;             ///< the region is the whole chunk_extent (a write replaces the chunk)
};

/// Visits the touched chunks in increasing chunk index (C order over the chunk grid).
class slice_chunk_iterator {
 public:
  /// Before the first chunk: call next() first. The plan must outlive the iterator.
  explicit slice_chunk_iterator(const slice_plan& plan) noexcept;
  /// Moves to the next chunk; false when there is none left (then chunk() is stale).
  [[nodiscard]] bool next() noexcept;
  /// The current chunk (after a next() that returned true).
  [[nodiscard]] const slice_chunk& chunk() const noexcept { return current_; }

 private:
  const slice_plan* plan_;
  int64_t remaining_;
  bool started_ = false;
  slice_chunk current_;
};

/// A block touched by a slice inside one chunk, with the copy region.
struct slice_block {
  int64_t nblock = 0;                    ///< index of the block in the chunk's block grid
  int64_t coords[kMaxDims] = {};         ///< its coordinates in the block grid
  int64_t offset = 0;                    ///< item offset of the block in the stored chunk (nblock * block_nitems)
  int64_t region_start[kMaxDims] = {};   ///< the copy region: start inside the block (a C-order blockshape grid)
  int64_t region_shape[kMaxDims] = {};   ///<   its extent
  int64_t chunk_start[kMaxDims] = {};    ///<   its start relative to the chunk's first item
  int64_t slice_start[kMaxDims] = {};    ///<   and where it goes in the slice buffer
  bool covers_block = false;             ///< the region is the whole block (no padding, nothing outside the slice)
};

/// Visits the blocks of `chunk` that the slice touches, in increasing block index. Both arguments must outlive it.
class slice_block_iterator {
 public:
  /// Before the first block: call next() first.
  slice_block_iterator(const slice_plan& plan, const slice_chunk& chunk) noexcept;
  /// Moves to the next block; false when there is none left (then block() is stale).
  [[nodiscard]] bool next() noexcept;
  /// The current block (after a next() that returned true).
  [[nodiscard]] const slice_block& block() const noexcept { return current_; }

 private:
  const slice_plan* plan_;
  const slice_chunk* chunk_;
  int64_t first_[kMaxDims] = {};   ///< touched block coordinates: first and count per dimension
  int64_t span_[kMaxDims] = {};
  int64_t remaining_;
  bool started_ = false;
  slice_block current_;
};

}  // namespace tessera
