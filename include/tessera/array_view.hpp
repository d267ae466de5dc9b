// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A decode-only reader for a B2ND array whose contiguous frame is already in memory: memory-mapped flash, a
/// `const uint8_t[]` linked into a firmware image, a buffer received whole. Nothing of the frame is copied: the
/// header, the index and every chunk are read where they are, one block at a time. It is the smallest way to read
/// an array (issue 12's `flash_reader`): no storage, frame state, index cache, executor or writer code is linked,
/// and the RAM is the decoder's scratch for one block (allocated when a read first needs it) plus the caller's
/// `array_view` object. For files, sparse frames, threads or writing, use tessera/array.hpp.
/// \code
///   tessera::array_view v;
///   TESSERA_TRY(tessera::array_view_open(v, tessera::bytes_view(flash_frame, flash_frame_len), alloc));
///   TESSERA_TRY(tessera::array_view_element_read(v, coords, tessera::bytes_mut(item, v.itemsize)));
/// \endcode
/// The frame must stay in place, unchanged, while the view is open. Every size it holds is checked as a claim
/// before it is used, as array_open does; reads decode only the blocks they touch.
#pragma once
#include <stdint.h>

#include "tessera/chunk.hpp"
#include "tessera/error.hpp"
#include "tessera/frame.hpp"
#include "tessera/layout.hpp"
#include "tessera/span.hpp"

namespace tessera {

/// Limits and plugins of array_view_open.
struct array_view_options {
  /// No single allocation may exceed this (a block's decoder scratch, checked at open from the b2nd shapes).
  uint64_t max_alloc = kDefaultMaxAlloc;
  /// User codecs and filters the chunks may need.
  const chunk_plugins* plugins = nullptr;
};

/// The caller's object; read its fields, change none. Not copyable (it holds the decoder).
struct array_view {
  array_layout layout;             ///< shape, chunk and block geometry
  int64_t itemsize = 0;            ///< bytes per item (the frame's typesize)
  span<const char> dtype;          ///< the NumPy dtype string, viewing the frame's metalayer (or the default)
  bytes_view chunks;               ///< the frame's chunks section
  bytes_view index;                ///< the index chunk (little-endian int64 offsets into `chunks`)
  int64_t chunk_nbytes = 0;        ///< a decoded chunk, padding included
  int32_t index_blocksize = 0;     ///< bytes per block of the index chunk
  int32_t blocksize = 0;           ///< the frame's blocksize (for special chunks)
  chunk_decoder decoder;           ///< decodes the blocks (its scratch is the view's RAM)
  bool open = false;               ///< true between a successful array_view_open and array_view_close
  /// A read's slice plan, chunk and touched blocks, kept here rather than on the caller's stack (a firmware
  /// task's stack is small); not to be read.
  alignas(8) unsigned char read_state[112 * kMaxDims + 128];
};

/// Opens the contiguous frame in `frame` (exactly its bytes, or more: the frame's own length is used). Errors:
/// truncated, malformed, corrupt, unsupported (a sparse frame, a frame without a b2nd metalayer is malformed),
/// resource_limit (the block shape needs more than max_alloc), out_of_memory. On error v is closed.
[[nodiscard]] status array_view_open(array_view& v, bytes_view frame, const allocator& alloc,
                                     const array_view_options& options = array_view_options{}) noexcept;
/// Reads the slice [start, stop) into out (C order, at least prod(stop - start) * itemsize bytes). Pointers may
/// be null when ndim is 0. Errors: out_of_range, buffer_too_small, the chunk decoder's errors, unsupported (a
/// chunk whose blocks are not the array's blocks: only array_open reads those, as they need a whole chunk; or a
/// chunk of variable-length blocks, which no b2nd array has: the view links no code for them).
[[nodiscard]] status array_view_slice_read(array_view& v, const int64_t* start, const int64_t* stop,
                                           bytes_mut out) noexcept;
/// Reads one item (a one-item slice: its block is decoded only as far as the item).
[[nodiscard]] status array_view_element_read(array_view& v, const int64_t* coords, bytes_mut item) noexcept;
/// Frees the decoder's scratch. Also safe on a view that is not open.
void array_view_close(array_view& v) noexcept;

/// The most a view of an array whose blocks (and index blocks) hold at most `block_nbytes` bytes allocates,
/// array_view_open and every read included, with this build's codecs (their decoder contexts counted): an arena
/// of this size never refuses a view. For sizing a firmware's arena before the data arrives.
[[nodiscard]] size_t array_view_estimate(size_t block_nbytes) noexcept;
/// The same for an open view: its array's blocks and its index blocks, whichever is larger.
[[nodiscard]] size_t array_view_estimate(const array_view& v) noexcept;

}  // namespace tessera
