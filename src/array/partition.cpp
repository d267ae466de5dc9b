// SPDX-License-Identifier: BSD-3-Clause
// Automatic chunk and block shapes (tessera/array_partition.hpp has the rule and where it comes from).
#include <stdint.h>

#include "array_internal.hpp"
#include "chunk/chunk_internal.hpp"
#include "tessera/array_partition.hpp"
#include "tessera/chunk.hpp"
#include "tessera/codecs.hpp"
#include "tessera/layout.hpp"
#include "tessera/tessera.h"

namespace tessera {

namespace {

int64_t abs64(int64_t v) noexcept { return v < 0 ? -v : v; }

// partition(budget, maxshape, minpart) as python-blosc2's compute_partition; dims with no minpart use 1.
void partition(int ndim, int64_t budget, const int64_t* maxshape, const int64_t* minpart, int64_t* out) noexcept {
  for (int i = 0; i < ndim; ++i) out[i] = 1;
  int64_t max_items = budget;
  for (int i = ndim - 1; i >= 0; --i) {
    if (max_items <= 1) break;
    const int64_t size = maxshape[i];
    const int64_t minsize = minpart != nullptr ? minpart[i] : 1;
    int64_t rsize = size > minsize ? size : minsize;
    if (rsize <= max_items) {
      // The whole extent fits (a minpart above the extent snaps back to the extent: its nearest divisor).
      rsize = size;
    } else {
      rsize = max_items > minsize ? max_items : minsize;
      const int64_t snapped = size % rsize == 0 ? rsize : array_partition_nearest_divisor(size, rsize, true);
      if (rsize / 2 < snapped && snapped < rsize * 2) rsize = snapped;
    }
    out[i] = rsize;
    max_items /= rsize;
  }
}

}  // namespace

int64_t array_partition_nearest_divisor(int64_t a, int64_t b, bool strict) noexcept {
  if (a <= 0) return 1;
  if (a > 100000 || strict) {
    // Downwards from b; values above a never divide it.
    for (int64_t i = b < a ? b : a; i > 0; --i) {
      if (a % i == 0) return i;
    }
    return 1;
  }
  int64_t closest = 1;
  int64_t min_diff = a;
  bool found = false;
  for (int64_t i = 1; i * i <= a; ++i) {
    if (a % i != 0) continue;
    int64_t diff = abs64(i - b);
    if (diff < min_diff) {
      min_diff = diff;
      closest = i;
      found = true;
    }
    diff = abs64(a / i - b);
    if (diff < min_diff) {
      min_diff = diff;
      closest = a / i;
      found = true;
    }
  }
  return found ? closest : 1;
}

status array_partition_compute(int ndim, const int64_t* shape, int64_t itemsize, int32_t* chunkshape,
                               bool chunks_given, int32_t* blockshape, bool blocks_given,
                               const array_partition_hints& hints) noexcept {
  if (ndim < 0 || ndim > kMaxDims) return make_error(errc::invalid_argument, TESSERA_MSG("array_partition: ndim out of range"));
  if (itemsize < 1) return make_error(errc::invalid_argument, TESSERA_MSG("array_partition: itemsize < 1"));
  bool has_zero = false;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) return make_error(errc::invalid_argument, TESSERA_MSG("array_partition: negative extent"));
    if (shape[i] == 0) has_zero = true;
    if (chunks_given && (chunkshape[i] < 0 || (chunkshape[i] == 0 && shape[i] != 0)))
      return make_error(errc::invalid_argument, TESSERA_MSG("array_partition: a chunk extent is 0 for a non-empty dimension"));
    if (blocks_given && (blockshape[i] < 0 || (blockshape[i] == 0 && shape[i] != 0)))
      return make_error(errc::invalid_argument, TESSERA_MSG("array_partition: a block extent is 0 for a non-empty dimension"));
    if (chunks_given && blocks_given && blockshape[i] > chunkshape[i])
      return make_error(errc::invalid_argument, TESSERA_MSG("array_partition: a block is larger than its chunk"));
  }
  if (chunks_given && blocks_given) return ok_status();
  if (has_zero && !chunks_given && !blocks_given) {
    for (int i = 0; i < ndim; ++i) {
      if (shape[i] > INT32_MAX) return make_error(errc::overflow, TESSERA_MSG("array_partition: extent does not fit int32"));
      chunkshape[i] = blockshape[i] = static_cast<int32_t>(shape[i]);
    }
    return ok_status();
  }

  int64_t maxshape[kMaxDims] = {};
  for (int i = 0; i < ndim; ++i) {
    maxshape[i] = chunks_given ? chunkshape[i] : shape[i];
    if (maxshape[i] < 1) maxshape[i] = 1;  // partitions are over non-empty extents
  }
  int64_t blocks[kMaxDims] = {};
  int64_t block_bytes;
  if (blocks_given) {
    block_bytes = itemsize;
    for (int i = 0; i < ndim; ++i) {
      blocks[i] = blockshape[i] < 1 ? 1 : blockshape[i];
      if (block_bytes > kChunkMaxBlocksize) break;
      block_bytes *= blocks[i];
    }
  } else {
    block_bytes = hints.block_bytes;
    if (block_bytes < hints.min_block_bytes) block_bytes = hints.min_block_bytes;
    if (block_bytes < itemsize) block_bytes = itemsize;
    if (block_bytes > kChunkMaxBlocksize)
      return make_error(errc::overflow, TESSERA_MSG("array_partition: the block exceeds the maximum block size"));
    partition(ndim, block_bytes / itemsize, maxshape, nullptr, blocks);
    for (int i = 0; i < ndim; ++i) blockshape[i] = static_cast<int32_t>(blocks[i]);  // <= maxshape, an int32
    block_bytes = itemsize;
    for (int i = 0; i < ndim; ++i) block_bytes *= blocks[i];
  }
  if (block_bytes > kChunkMaxBlocksize)
    return make_error(errc::overflow, TESSERA_MSG("array_partition: the block exceeds the maximum block size"));
  if (chunks_given) return ok_status();

  // get_chunksize(blocksize) with reduc_factor 4.
  const int64_t l3_maximum = int64_t{1} << 26;
  int64_t chunk_bytes = block_bytes;
  if (block_bytes * 32 < l3_maximum) chunk_bytes = block_bytes * 32;
  if (hints.l3_bytes > 0 && hints.l3_bytes > hints.l2_bytes) chunk_bytes = hints.l3_bytes;
  if (hints.l3_bytes > 0) chunk_bytes /= 4;
  if (hints.l2_bytes > chunk_bytes) {
    const int64_t floor = hints.l2_bytes / 4;
    if (floor > chunk_bytes) chunk_bytes = floor;
  }
  if (chunk_bytes < hints.min_chunk_bytes) chunk_bytes = hints.min_chunk_bytes;
  if (chunk_bytes > kMaxChunkBytes) chunk_bytes = kMaxChunkBytes;
  if (chunk_bytes < block_bytes) chunk_bytes = block_bytes;
  chunk_bytes = chunk_bytes / block_bytes * block_bytes;

  int64_t shape1[kMaxDims] = {};
  for (int i = 0; i < ndim; ++i) shape1[i] = shape[i] < 1 ? 1 : shape[i];
  int64_t chunks[kMaxDims] = {};
  partition(ndim, chunk_bytes / itemsize, shape1, blocks, chunks);
  for (int i = 0; i < ndim; ++i) {
    int64_t c = chunks[i] % blocks[i] == 0 ? chunks[i] : (chunks[i] / blocks[i] + 1) * blocks[i];
    if (c > shape1[i]) c = shape1[i];
    if (c > INT32_MAX) return make_error(errc::overflow, TESSERA_MSG("array_partition: a chunk extent does not fit int32"));
    chunkshape[i] = static_cast<int32_t>(c);
    // Blocks given larger than the shape: keep every block inside its chunk.
    if (blocks_given && blockshape[i] > chunkshape[i]) blockshape[i] = chunkshape[i];
  }
  return ok_status();
}

// The anchors: calling either links this file (array_frame_setup_make's automatic shapes) and blocksize_auto.cpp
// (chunk_encode's automatic block size) into a bare-metal image.
void partition_link_auto() noexcept { detail::blocksize_link_auto(); }

namespace detail {

status array_partition_auto(int ndim, const int64_t* shape, int64_t itemsize, int32_t* chunkshape, bool chunks_given,
                            int32_t* blockshape, bool blocks_given, const array_partition_hints& hints) noexcept {
  return array_partition_compute(ndim, shape, itemsize, chunkshape, chunks_given, blockshape, blocks_given, hints);
}

}  // namespace detail

}  // namespace tessera

extern "C" void tessera_partition_link_auto(void) { tessera::partition_link_auto(); }
