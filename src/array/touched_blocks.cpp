// SPDX-License-Identifier: BSD-3-Clause
#include "touched_blocks.hpp"

#include "tessera/nd_copy.hpp"

namespace tessera::detail {

bool touched_blocks_init(touched_blocks& t, const array_layout& l, int64_t itemsize, const slice_chunk& c,
                         bytes_mut out, const int64_t* out_shape, const int64_t* dst0) noexcept {
  t.l = &l;
  t.itemsize = itemsize;
  t.out = out;
  t.out_shape = out_shape;
  t.nblocks = 1;
  t.outer = -1;
  for (int d = 0; d < l.ndim; ++d) {
    t.start[d] = static_cast<int32_t>(c.region_start[d]);
    t.stop[d] = static_cast<int32_t>(c.region_start[d] + c.region_shape[d]);
    t.dst[d] = dst0[d];
    if (c.region_shape[d] == 0) return false;
    const uint32_t bs = static_cast<uint32_t>(l.blockshape[d]);
    const uint32_t first = static_cast<uint32_t>(t.start[d]) / bs;
    t.first[d] = first;
    t.span[d] = static_cast<uint32_t>(t.stop[d] - 1) / bs - first + 1;
    t.nblocks *= t.span[d];
    if (t.span[d] > 1) t.outer = d;
  }
  return true;
}

// Block counts, block coordinates and block strides inside one chunk are below 2^31 (a stored chunk holds at
// most kMaxChunkBytes items, as layout_sizes_compute checks for every array): 32-bit arithmetic, which a 32-bit
// target does without library calls and every target divides faster.
int64_t touched_block(const touched_blocks& t, int64_t index, int64_t* src_start, int64_t* dst, int64_t* shape) noexcept {
  const array_layout& l = *t.l;
  uint32_t r = static_cast<uint32_t>(index);
  uint32_t nblock = 0;
  uint32_t outer_bc = 0;
  if (t.outer >= 0) {
    const uint32_t inner = static_cast<uint32_t>(t.nblocks) / t.span[t.outer];
    outer_bc = r / inner;
    r %= inner;
  }
  for (int d = l.ndim - 1; d >= 0; --d) {
    uint32_t bc = t.first[d];
    if (d == t.outer) {
      bc += outer_bc;
    } else {
      bc += r % t.span[d];
      r /= t.span[d];
    }
    nblock += bc * static_cast<uint32_t>(l.block_strides[d]);
    const int32_t bs = static_cast<int32_t>(l.blockshape[d]);
    // b0 + bs is at most the padded chunk's extent, below 2^31 (layout_sizes_compute's chunk limit).
    const int32_t b0 = static_cast<int32_t>(bc) * bs;
    const int32_t lo = b0 > t.start[d] ? b0 : t.start[d];
    const int32_t hi = b0 + bs < t.stop[d] ? b0 + bs : t.stop[d];
    src_start[d] = lo - b0;
    dst[d] = t.dst[d] + (lo - t.start[d]);
    shape[d] = hi - lo;
  }
  return nblock;
}

size_t touched_block_number(void* context, size_t i) noexcept {
  const auto& t = *static_cast<const touched_blocks*>(context);
  int64_t src_start[kMaxDims], dst[kMaxDims], shape[kMaxDims];
  return static_cast<size_t>(touched_block(t, static_cast<int64_t>(i), src_start, dst, shape));
}

// The bytes of the block its part spans: from its first item to one past its last.
void touched_block_range(void* context, size_t i, size_t* begin, size_t* end) noexcept {
  const auto& t = *static_cast<const touched_blocks*>(context);
  int64_t src_start[kMaxDims], dst[kMaxDims], shape[kMaxDims];
  (void)touched_block(t, static_cast<int64_t>(i), src_start, dst, shape);
  // Offsets inside one block, whose bytes are below 2^31: size_t.
  size_t first = 0, last = 0;
  for (int d = 0; d < t.l->ndim; ++d) {
    const size_t stride = static_cast<size_t>(t.l->block_item_strides[d]);
    first += static_cast<size_t>(src_start[d]) * stride;
    last += static_cast<size_t>(src_start[d] + shape[d] - 1) * stride;
  }
  *begin = first * static_cast<size_t>(t.itemsize);
  *end = (last + 1) * static_cast<size_t>(t.itemsize);
}

status touched_block_consume(void* context, size_t i, bytes_view decoded, uint32_t) noexcept {
  auto& t = *static_cast<touched_blocks*>(context);
  const array_layout& l = *t.l;
  if (static_cast<int64_t>(decoded.size()) != l.block_nitems * t.itemsize)
    return make_error(errc::corrupt, TESSERA_MSG("array: a block's size disagrees with its chunk's header"));
  int64_t src_start[kMaxDims], dst[kMaxDims], shape[kMaxDims];
  (void)touched_block(t, static_cast<int64_t>(i), src_start, dst, shape);
  return nd_copy_region(l.ndim, t.itemsize, decoded, l.blockshape, src_start, t.out, t.out_shape, dst, shape);
}

chunk_block_request touched_blocks_request(touched_blocks& t) noexcept {
  chunk_block_request r;
  r.count = static_cast<size_t>(t.nblocks);
  r.block = touched_block_number;
  r.consume = touched_block_consume;
  r.range = touched_block_range;
  r.context = &t;
  return r;
}

}  // namespace tessera::detail
