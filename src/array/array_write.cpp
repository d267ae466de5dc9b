// Writing slices: only the touched chunks are decoded (unless wholly covered) and re-encoded.
#include <stdint.h>
#include <string.h>

#include "array_internal.hpp"
#include "base/allocated.hpp"
#include "chunk/chunk_internal.hpp"
#include "tessera/nd_copy.hpp"
#include "tessera/slice_plan.hpp"

namespace tessera {

using detail::array_access;

namespace {

// A write's slice plan and its chunk iterator (about 750 bytes on the Cortex-M4): from the array's allocator, not
// the stack of a firmware task, under which the chunks' reads decode the index and the blocks.
struct write_plan {
  slice_plan plan;
  slice_chunk_iterator chunks{plan};  // set again once the plan is made
};

// src is a C-order buffer of src_shape whose box at src_start holds the slice (null, null: the slice itself).
status slice_write_nocommit(array& a, const int64_t* start, const int64_t* stop, bytes_view src,
                            const int64_t* src_shape, const int64_t* src_start) noexcept {
  TESSERA_TRY(detail::array_check_writable(a));
  const array_layout& l = array_access::layout(a);
  const int64_t itemsize = array_access::itemsize(a);
  const int64_t chunk_nbytes = array_access::sizes(a).chunk_nbytes;
  const int64_t block_nbytes = array_access::sizes(a).block_nbytes;
  for (int d = 0; d < l.ndim; ++d)
    if (start[d] < 0 || stop[d] < start[d] || stop[d] > l.shape[d])
      return detail::array_error_values(a, errc::out_of_range,
                                        TESSERA_MSG("array_slice_write: dimension {}: start {}, stop {}: not 0 <= start <= stop <= {}"),
                                        d, start[d], stop[d], l.shape[d]);
  detail::allocated<write_plan> w;
  TESSERA_TRY(w.make(array_access::alloc(a)));
  const slice_plan& plan = w->plan;
  TESSERA_TRY(slice_plan_init(w->plan, l, start, stop));
  if (plan.nitems == 0) return ok_status();
  if (src_shape == nullptr && static_cast<int64_t>(src.size()) / itemsize < plan.nitems)
    return detail::array_error_values(a, errc::buffer_too_small,
                                      TESSERA_MSG("array_slice_write: src has {} bytes, the slice needs {} items of {}"),
                                      static_cast<int64_t>(src.size()), plan.nitems, itemsize);
  const int64_t* from_shape = src_shape != nullptr ? src_shape : plan.shape;
  int64_t from[kMaxDims] = {};
  frame& f = array_access::frm(a);
  owned_array<uint8_t> chunk, out;
  TESSERA_TRY(chunk.allocate(array_access::alloc(a), static_cast<size_t>(chunk_nbytes)));
  TESSERA_TRY(out.allocate(array_access::alloc(a), chunk_encode_bound(static_cast<size_t>(chunk_nbytes))));
#if TESSERA_SPEED_PATHS
  // A chunk the slice touches in a few blocks: only those blocks are decoded and encoded again, the others'
  // streams are copied (chunk_encode_spliced); the same bytes as decoding and encoding the whole chunk.
  const size_t nblocks = static_cast<size_t>(chunk_nbytes / block_nbytes);
  owned_array<uint8_t> changed, stored;
  TESSERA_TRY(changed.allocate(array_access::alloc(a), (nblocks + 7) / 8));
#endif
  slice_chunk_iterator& chunks = w->chunks;
  chunks = slice_chunk_iterator(plan);
  while (chunks.next()) {
    const slice_chunk& c = chunks.chunk();
#if TESSERA_SPEED_PATHS
    bytes_view old;
    bool splice = false;
#endif
    if (c.covers_chunk) {
      // The whole chunk is replaced: start from zeros so its padding is zero (as the reference does).
      memset(chunk.data(), 0, chunk.size());
    } else {
#if TESSERA_SPEED_PATHS
      auto raw = frame_chunk_read(f, c.nchunk, stored);
      if (!raw.ok()) return raw.err();
      old = *raw;
      auto h = chunk_header_read(old);
      if (!h.ok()) return h.err();
      splice = h->special == chunk_special::none && !h->memcpyed && !h->dict && !h->lazy && !h->vlblocks &&
               h->nbytes == chunk_nbytes && h->blocksize == block_nbytes && h->nblocks == nblocks;
      if (splice) {
        // With several workers the whole chunk's blocks are decoded and encoded in parallel: splicing (one
        // block at a time) pays when it touches at most a worker's share of them.
        size_t touched_count = 0;
        slice_block_iterator count(plan, c);
        while (count.next()) ++touched_count;
        const uint32_t workers = array_access::exec(a).workers > 1 ? array_access::exec(a).workers : 1;
        splice = touched_count * workers <= nblocks;
      }
      if (splice) {
        memset(changed.data(), 0, changed.size());
        slice_block_iterator touched(plan, c);
        while (touched.next()) {
          const slice_block& b = touched.block();
          const size_t j = static_cast<size_t>(b.nblock);
          changed[j / 8] = static_cast<uint8_t>(changed[j / 8] | 1u << (j % 8));
          if (b.covers_block) continue;
          auto r = chunk_decode_block(array_access::decoder(a), old, j,
                                      bytes_mut(chunk.data() + b.offset * itemsize, static_cast<size_t>(block_nbytes)));
          if (!r.ok()) return r.err();
        }
      } else {
        auto r = chunk_decode(array_access::decoder(a), old, bytes_mut(chunk.data(), chunk.size()));
        if (!r.ok()) return r.err();
        if (static_cast<int64_t>(*r) != chunk_nbytes)
          return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's size disagrees with the geometry"));
      }
#else
      auto r = frame_chunk_decode(f, array_access::decoder(a), c.nchunk, bytes_mut(chunk.data(), chunk.size()));
      if (!r.ok()) return r.err();
      if (static_cast<int64_t>(*r) != chunk_nbytes)
        return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's size disagrees with the geometry"));
#endif
    }
    slice_block_iterator blocks(plan, c);
    while (blocks.next()) {
      const slice_block& b = blocks.block();
      bytes_mut dst(chunk.data() + b.offset * itemsize, static_cast<size_t>(block_nbytes));
      for (int d = 0; d < l.ndim; ++d) from[d] = b.slice_start[d] + (src_start != nullptr ? src_start[d] : 0);
      TESSERA_TRY(nd_copy_region(l.ndim, itemsize, src, from_shape, from, dst, l.blockshape, b.region_start,
                                 b.region_shape));
    }
#if TESSERA_SPEED_PATHS
    if (splice) {
      auto n = detail::chunk_encode_spliced(array_access::encoder(a), array_access::encode(a), old, changed.data(),
                                            bytes_view(chunk.data(), chunk.size()), bytes_mut(out.data(), out.size()));
      if (!n.ok()) return n.err();
      if (*n > 0) {
        TESSERA_TRY(frame_chunk_update(f, c.nchunk, bytes_view(out.data(), *n)));
        continue;
      }
      // Not spliceable: the blocks not decoded yet, then the whole chunk encoded.
      for (size_t j = 0; j < nblocks; ++j) {
        if ((changed[j / 8] >> (j % 8) & 1) != 0) continue;
        auto r = chunk_decode_block(array_access::decoder(a), old, j,
                                    bytes_mut(chunk.data() + j * static_cast<size_t>(block_nbytes),
                                              static_cast<size_t>(block_nbytes)));
        if (!r.ok()) return r.err();
      }
    }
#endif
    auto enc = detail::array_chunk_encode(a, bytes_view(chunk.data(), chunk.size()), bytes_mut(out.data(), out.size()));
    if (!enc.ok()) return enc.err();
    TESSERA_TRY(frame_chunk_update(f, c.nchunk, *enc));
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
