// SPDX-License-Identifier: BSD-3-Clause
// Writing slices: only the touched chunks are decoded (unless wholly covered) and re-encoded.
#include <stdint.h>
#include <string.h>

#include "array_internal.hpp"
#include "base/allocated.hpp"
#include "chunk/chunk_internal.hpp"
#include "frame/frame_internal.hpp"
#include "tessera/cxx.hpp"
#include "tessera/nd_copy.hpp"
#include "tessera/slice_plan.hpp"

namespace tessera {

using detail::array_access;

namespace {

// One write's state: the slice plan, its chunk and block iterators and the chunk being rewritten (about 1.3 KiB
// on the Cortex-M4). From the array's allocator, not the stack of a firmware task: the loop below keeps only a pointer
// to it, and each step has its own frame, so the chunks' reads and encodes run under a small one.
struct write_job {
  slice_plan plan;
  slice_chunk_iterator chunks{plan};  // set again once the plan is made
  // The current chunk's block iterator, built in place for each chunk (chunk_fill; trivially destructible).
  alignas(slice_block_iterator) unsigned char blocks[sizeof(slice_block_iterator)];
  bytes_view src;
  const int64_t* from_shape = nullptr;  // the C-order source buffer's shape
  const int64_t* src_start = nullptr;   // where the slice lies in it (null: at its origin)
  owned_array<uint8_t> chunk, out;
#if TESSERA_SPEED_PATHS
  // A chunk the slice touches in a few blocks: only those blocks are decoded and encoded again, the others'
  // streams are copied (chunk_encode_spliced); the same bytes as decoding and encoding the whole chunk.
  size_t nblocks = 0;
  owned_array<uint8_t> changed, stored;
  bytes_view old;
  bool splice = false;
#endif
};

__attribute__((noinline)) status write_bounds_check(array& a, const int64_t* start, const int64_t* stop) noexcept {
  const array_layout& l = array_access::layout(a);
  for (int d = 0; d < l.ndim; ++d)
    if (start[d] < 0 || stop[d] < start[d] || stop[d] > l.shape[d])
      return detail::array_error_values(a, errc::out_of_range,
                                        TESSERA_MSG("array_slice_write: dimension {}: start {}, stop {}: not 0 <= start <= stop <= {}"),
                                        d, start[d], stop[d], l.shape[d]);
  return ok_status();
}

// The plan, the source's check and the chunk buffers (none when the slice is empty).
__attribute__((noinline)) status write_job_init(write_job& j, array& a, const int64_t* start, const int64_t* stop,
                                                bytes_view src, const int64_t* src_shape,
                                                const int64_t* src_start) noexcept {
  const int64_t itemsize = array_access::itemsize(a);
  const int64_t chunk_nbytes = array_access::sizes(a).chunk_nbytes;
  TESSERA_TRY(slice_plan_init(j.plan, array_access::layout(a), start, stop));
  if (j.plan.nitems == 0) return ok_status();
  if (src_shape == nullptr && static_cast<int64_t>(src.size()) / itemsize < j.plan.nitems)
    return detail::array_error_values(a, errc::buffer_too_small,
                                      TESSERA_MSG("array_slice_write: src has {} bytes, the slice needs {} items of {}"),
                                      static_cast<int64_t>(src.size()), j.plan.nitems, itemsize);
  j.src = src;
  j.from_shape = src_shape != nullptr ? src_shape : j.plan.shape;
  j.src_start = src_start;
  j.chunks = slice_chunk_iterator(j.plan);
  TESSERA_TRY(j.chunk.allocate(array_access::alloc(a), static_cast<size_t>(chunk_nbytes)));
  TESSERA_TRY(j.out.allocate(array_access::alloc(a), chunk_encode_bound(static_cast<size_t>(chunk_nbytes))));
#if TESSERA_SPEED_PATHS
  j.nblocks = static_cast<size_t>(chunk_nbytes / array_access::sizes(a).block_nbytes);
  TESSERA_TRY(j.changed.allocate(array_access::alloc(a), (j.nblocks + 7) / 8));
#endif
  return ok_status();
}

// The current chunk's old items (zeros when the slice covers it).
__attribute__((noinline)) status chunk_load(write_job& j, array& a) noexcept {
  const slice_chunk& c = j.chunks.chunk();
  const int64_t chunk_nbytes = array_access::sizes(a).chunk_nbytes;
#if TESSERA_SPEED_PATHS
  j.splice = false;
#endif
  if (c.covers_chunk) {
    // The whole chunk is replaced: start from zeros so its padding is zero (as the reference does).
    memset(j.chunk.data(), 0, j.chunk.size());
    return ok_status();
  }
#if TESSERA_SPEED_PATHS
  const int64_t itemsize = array_access::itemsize(a);
  const int64_t block_nbytes = array_access::sizes(a).block_nbytes;
  auto raw = frame_chunk_read(array_access::frm(a), c.nchunk, j.stored);
  if (!raw.ok()) return raw.err();
  j.old = *raw;
  auto h = chunk_header_read(j.old);
  if (!h.ok()) return h.err();
  j.splice = h->special == chunk_special::none && !h->memcpyed && !h->dict && !h->lazy && !h->vlblocks &&
             h->nbytes == chunk_nbytes && h->blocksize == block_nbytes && h->nblocks == j.nblocks;
  if (j.splice) {
    // With several workers the whole chunk's blocks are decoded and encoded in parallel: splicing (one block at
    // a time) pays when it touches at most a worker's share of them.
    size_t touched_count = 0;
    slice_block_iterator count(j.plan, c);
    while (count.next()) ++touched_count;
    const uint32_t workers = array_access::exec(a).workers > 1 ? array_access::exec(a).workers : 1;
    j.splice = touched_count * workers <= j.nblocks;
  }
  if (j.splice) {
    memset(j.changed.data(), 0, j.changed.size());
    slice_block_iterator touched(j.plan, c);
    while (touched.next()) {
      const slice_block& b = touched.block();
      const size_t k = static_cast<size_t>(b.nblock);
      j.changed[k / 8] = static_cast<uint8_t>(j.changed[k / 8] | 1u << (k % 8));
      if (b.covers_block) continue;
      auto r = chunk_decode_block(array_access::decoder(a), j.old, k,
                                  bytes_mut(j.chunk.data() + b.offset * itemsize, static_cast<size_t>(block_nbytes)));
      if (!r.ok()) return r.err();
    }
    return ok_status();
  }
  auto r = chunk_decode(array_access::decoder(a), j.old, bytes_mut(j.chunk.data(), j.chunk.size()));
#else
  auto r = detail::frame_chunk_decode_table(array_access::frm(a), array_access::decoder(a), c.nchunk,
                                            bytes_mut(j.chunk.data(), j.chunk.size()));
#endif
  if (!r.ok()) return r.err();
  if (static_cast<int64_t>(*r) != chunk_nbytes)
    return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's size disagrees with the geometry"));
  return ok_status();
}

// The slice's items copied over the current chunk's.
__attribute__((noinline)) status chunk_fill(write_job& j, array& a) noexcept {
  const array_layout& l = array_access::layout(a);
  const int64_t itemsize = array_access::itemsize(a);
  const int64_t block_nbytes = array_access::sizes(a).block_nbytes;
  int64_t from[kMaxDims] = {};
  // Built in place: a temporary would put the iterator (about 500 bytes at 8 dimensions) on this frame.
  slice_block_iterator& blocks = *new (cxx::place, j.blocks) slice_block_iterator(j.plan, j.chunks.chunk());
  while (blocks.next()) {
    const slice_block& b = blocks.block();
    bytes_mut dst(j.chunk.data() + b.offset * itemsize, static_cast<size_t>(block_nbytes));
    for (int d = 0; d < l.ndim; ++d) from[d] = b.slice_start[d] + (j.src_start != nullptr ? j.src_start[d] : 0);
    TESSERA_TRY(nd_copy_region(l.ndim, itemsize, j.src, j.from_shape, from, dst, l.blockshape, b.region_start,
                               b.region_shape));
  }
  return ok_status();
}

// The current chunk encoded and stored in place of the old one.
__attribute__((noinline)) status chunk_store(write_job& j, array& a) noexcept {
  const int64_t nchunk = j.chunks.chunk().nchunk;
  frame& f = array_access::frm(a);
#if TESSERA_SPEED_PATHS
  if (j.splice) {
    auto n = detail::chunk_encode_spliced(array_access::encoder(a), array_access::encode(a), j.old, j.changed.data(),
                                          bytes_view(j.chunk.data(), j.chunk.size()), bytes_mut(j.out.data(), j.out.size()));
    if (!n.ok()) return n.err();
    if (*n > 0) return detail::frame_chunk_update_table(f, nchunk, bytes_view(j.out.data(), *n));
    // Not spliceable: the blocks not decoded yet, then the whole chunk encoded.
    const size_t block_nbytes = static_cast<size_t>(array_access::sizes(a).block_nbytes);
    for (size_t k = 0; k < j.nblocks; ++k) {
      if ((j.changed[k / 8] >> (k % 8) & 1) != 0) continue;
      auto r = chunk_decode_block(array_access::decoder(a), j.old, k,
                                  bytes_mut(j.chunk.data() + k * block_nbytes, block_nbytes));
      if (!r.ok()) return r.err();
    }
  }
#endif
  auto enc = detail::array_chunk_encode(a, bytes_view(j.chunk.data(), j.chunk.size()), bytes_mut(j.out.data(), j.out.size()));
  if (!enc.ok()) return enc.err();
  return detail::frame_chunk_update_table(f, nchunk, *enc);
}

// src is a C-order buffer of src_shape whose box at src_start holds the slice (null, null: the slice itself).
status slice_write_nocommit(array& a, const int64_t* start, const int64_t* stop, bytes_view src,
                            const int64_t* src_shape, const int64_t* src_start) noexcept {
  TESSERA_TRY(detail::array_check_writable(a));
  TESSERA_TRY(write_bounds_check(a, start, stop));
  detail::allocated<write_job> j;
  TESSERA_TRY(j.make(array_access::alloc(a)));
  TESSERA_TRY(write_job_init(*j, a, start, stop, src, src_shape, src_start));
  if (j->plan.nitems == 0) return ok_status();
  // The chunk table in memory from this small frame: the steps read and change chunks without the index.
  TESSERA_TRY(detail::frame_table_load(array_access::frm(a)));
  while (j->chunks.next()) {
    TESSERA_TRY(chunk_load(*j, a));
    TESSERA_TRY(chunk_fill(*j, a));
    TESSERA_TRY(chunk_store(*j, a));
  }
  return ok_status();
}

}  // namespace

namespace detail {
status array_slice_write_nocommit(array& a, const int64_t* start, const int64_t* stop, bytes_view src,
                                  const int64_t* src_shape, const int64_t* src_start) noexcept {
  return slice_write_nocommit(a, start, stop, src, src_shape, src_start);
}
}  // namespace detail

status array_slice_write(array& a, const int64_t* start, const int64_t* stop, bytes_view src) noexcept {
  TESSERA_TRY(slice_write_nocommit(a, start, stop, src, nullptr, nullptr));
  return detail::array_finish(a);
}

status array_element_write(array& a, const int64_t* coords, bytes_view item) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  const array_layout& l = array_access::layout(a);
  if (static_cast<int64_t>(item.size()) != array_access::itemsize(a))
    return detail::array_error_values(a, errc::invalid_argument, TESSERA_MSG("array_element_write: the item has {} bytes, not the itemsize {}"),
                                      static_cast<int64_t>(item.size()), array_access::itemsize(a));
  int64_t stop[kMaxDims] = {};
  for (int i = 0; i < l.ndim; ++i) {
    if (coords[i] < 0 || coords[i] >= l.shape[i])
      return detail::array_error_values(a, errc::out_of_range,
                                        TESSERA_MSG("array_element_write: dimension {}: coordinate {} not in [0, {})"), i,
                                        coords[i], l.shape[i]);
    stop[i] = coords[i] + 1;
  }
  return array_slice_write(a, coords, stop, item);
}

}  // namespace tessera
