// SPDX-License-Identifier: BSD-3-Clause
// The blocks a slice touches inside one chunk, and the part of the slice each holds: a box of the chunk's block
// grid, numbered 0..nblocks-1, with each block's copy region. The numbering runs C order except that the last
// dimension spanning several blocks (`outer`) varies slowest: neighbours along it write the same output cache
// lines (their rows meet mid-line), and consecutive numbers run at once on different workers, so numbering them
// far apart keeps the workers off each other's lines. Shared by the array's slice reads and
// the in-memory view (array_view.cpp); as a chunk_block_request it copies each decoded block's part out.
#pragma once
#include <stdint.h>

#include "tessera/chunk.hpp"
#include "tessera/layout.hpp"
#include "tessera/slice_plan.hpp"

namespace tessera::detail {

struct block_planes;  // chunk_internal.hpp

struct touched_blocks {
  const array_layout* l = nullptr;
  int64_t itemsize = 0;
  bytes_mut out;
  const int64_t* out_shape = nullptr;
  // Inside one chunk coordinates and block counts are below 2^31 (chunkshape is an int32): 32-bit.
  int32_t start[kMaxDims] = {};   // the region: start in chunk coordinates
  int32_t stop[kMaxDims] = {};    //   its end
  int64_t dst[kMaxDims] = {};     //   where its start goes in the output
  uint32_t first[kMaxDims] = {};  // the touched blocks: first block coordinates and count per dimension
  uint32_t span[kMaxDims] = {};
  int64_t nblocks = 0;
  int outer = -1;                // the dimension whose block coordinate varies slowest (-1: C order)
};

// Sets up t for chunk c's region, copied to out (of shape out_shape) at dst0 (ndim 0: its one item); false when
// the region is empty.
[[nodiscard]] bool touched_blocks_init(touched_blocks& t, const array_layout& l, int64_t itemsize, const slice_chunk& c,
                                       bytes_mut out, const int64_t* out_shape, const int64_t* dst0) noexcept;
// Touched block number r (< nblocks): its index in the chunk, and the part of it to copy.
int64_t touched_block(const touched_blocks& t, int64_t r, int64_t* src_start, int64_t* dst, int64_t* shape) noexcept;
// The callbacks of that request (context: the touched_blocks), for requests that wrap them.
size_t touched_block_number(void* context, size_t i) noexcept;
void touched_block_range(void* context, size_t i, size_t* begin, size_t* end) noexcept;
[[nodiscard]] status touched_block_consume(void* context, size_t i, bytes_view decoded, uint32_t worker) noexcept;
// Speed paths (touched_blocks_planes.cpp): whether block r's part is at most a quarter of the block (its rows
// are then better unshuffled alone than the block whole), and that part unshuffled from the block's byte planes
// (chunk_block_planes_on: block_bytes is the block's size) straight to t.out.
[[nodiscard]] bool touched_block_few(const touched_blocks& t, size_t r) noexcept;
[[nodiscard]] status touched_block_unshuffle(touched_blocks& t, size_t r, size_t block_bytes,
                                             const block_planes& planes) noexcept;
// block_planes::stored for block r of t (context: a touched_block_planes_hint): fetches the lines of a stored
// plane that block r's rows read, while the block's other streams decode.
struct touched_block_planes_hint {
  const touched_blocks* t = nullptr;
  size_t i = 0;
};
void touched_block_prefetch(void* context, size_t typesize, size_t b, const uint8_t* plane) noexcept;
// The request that decodes every touched block and copies its part to t.out (each block only as far as its
// part's last byte). t must outlive the request.
[[nodiscard]] chunk_block_request touched_blocks_request(touched_blocks& t) noexcept;

}  // namespace tessera::detail
