// SPDX-License-Identifier: BSD-3-Clause
// Large slice reads written in the output's address order (host builds only).
//
// A block's rows are short (blockshape's last extent) and lie far apart in a C-order output: copied out block
// by block, every row is a scattered write of a few cache lines, and a 256 MB read spends as long in that copy
// as in LZ4. Here a group of chunks along the last dimension is read one "layer" at a time: the touched blocks
// that share their block coordinates in the other dimensions, across every chunk of the group, are decoded into
// the worker's staging (memcpyed chunks' blocks are read in place), then each output row the layer covers is
// written whole, left to right (detail::run_writer: streaming stores when the read is large). A layer is one
// task; tasks run on the decoder's workers, each with its own staging, made on the caller's thread.
// A frame whose chunks are not in place (a file) is read by the tasks themselves: each reads the streams of the
// blocks it decodes, a chunk's consecutive blocks with one read (frame_blocks_reader_init, chunk_blocks_read),
// so the reads spread over the workers and the streams are still in cache when decoded; a memcpyed chunk's
// blocks are read straight into the staging. With several workers the storage must allow concurrent reads.
#pragma once

#include <stdint.h>

#include "chunk/chunk_internal.hpp"
#include "frame/frame_internal.hpp"
#include "tessera/slice_plan.hpp"

namespace tessera {
class array;
namespace detail {

#if TESSERA_SPEED_PATHS
// The most chunks read as one group (consecutive along the last dimension).
constexpr int kRowsGroupChunks = 16;

// Staging for the workers, kept across the groups of one read.
struct rows_staging {
  owned_array<uint8_t> bytes;     // the workers' decoded blocks
  size_t per_worker = 0;          // bytes per worker
  // A frame without views of its chunks (a file): the group's chunk headers and block starts, and the workers'
  // buffers for the blocks' streams they read.
  owned_array<uint8_t> prefixes;
  owned_array<uint8_t> reads;
  size_t read_per_worker = 0;
};

// Whether a read of `plan` into an output of out_bytes takes this path (the slice is 1 MiB or more and spans
// several blocks along its last dimension).
[[nodiscard]] bool rows_read_possible(array& a, const slice_plan& plan, int64_t out_bytes) noexcept;

// Chunk nchunk of a frame whose chunks are not in place, set up for its tasks to read its blocks
// (frame_blocks_reader_init into prefix, through *entry for a sparse frame): false, to read it another way, when
// it is not read so, its blocks are not the array's, or `parallel` workers would read a storage that does not
// allow it; its header's nbytes must be the array's (else corrupt). A compressed chunk has the decoder prepared.
[[nodiscard]] result<bool> stored_chunk_reader_init(array& a, int64_t nchunk, bool parallel, uint8_t* prefix,
                                                    chunk_blocks_reader* reader, sparse_entry* entry) noexcept;

// Reads the group `chunks[0, n)` (consecutive along the last dimension, the same elsewhere) into out (shape
// out_shape; dst0[k] is where chunk k's region starts). Returns false, having written nothing, when a chunk of
// the group is not one this path reads (a special value, delta, other blocks than the array's): the caller
// reads those chunks its own way.
[[nodiscard]] result<bool> rows_read_group(array& a, const slice_chunk* chunks, const int64_t (*dst0)[kMaxDims], int n,
                                           bytes_mut out, const int64_t* out_shape, int64_t slice_bytes,
                                           rows_staging& staging) noexcept;
#endif

}  // namespace detail
}  // namespace tessera
