// SPDX-License-Identifier: BSD-3-Clause
// Changing an array's shape in place: resize, insert, append, delete. The chunk grid is edited with chunk
// deletes and zero-chunk inserts (special index entries); the b2nd metalayer is rewritten after the chunks.
#include <stdint.h>
#include <string.h>

#include "array_internal.hpp"
#include "base/allocated.hpp"
#include "frame/frame_internal.hpp"
#include "tessera/nd_copy.hpp"

namespace tessera {

using detail::array_access;

namespace {

// How new chunk coordinates relate to old ones. Every map keeps the order of the chunks it keeps, so deleting
// the dropped chunks (from the last) and then inserting the new ones (from the first) lands every chunk at
// its new index.
enum class map_kind : uint8_t { resize, insert, remove };
struct grid_map {
  map_kind kind = map_kind::resize;
  int axis = 0;
  int64_t p = 0;  // insert/remove: first chunk coordinate along axis
  int64_t k = 0;  //   and how many
};

bool new_to_old(const grid_map& m, const array_layout& old_l, const int64_t* nc, int64_t* oc) noexcept {
  for (int d = 0; d < old_l.ndim; ++d) oc[d] = nc[d];
  switch (m.kind) {  // GCOVR_EXCL_BR_LINE: every kind has its case
    case map_kind::resize:
      for (int d = 0; d < old_l.ndim; ++d) {
        if (nc[d] >= old_l.chunk_grid[d]) return false;
      }
      return true;
    case map_kind::insert:
      if (nc[m.axis] >= m.p && nc[m.axis] < m.p + m.k) return false;
      if (nc[m.axis] >= m.p + m.k) oc[m.axis] -= m.k;
      return true;
    case map_kind::remove:
      if (nc[m.axis] >= m.p) oc[m.axis] += m.k;
      return true;
  }
  return false;  // GCOVR_EXCL_LINE: every kind returns above
}

bool old_kept(const grid_map& m, const array_layout& new_l, const int64_t* oc) noexcept {
  switch (m.kind) {  // GCOVR_EXCL_BR_LINE: every kind has its case
    case map_kind::resize:
      for (int d = 0; d < new_l.ndim; ++d) {
        if (oc[d] >= new_l.chunk_grid[d]) return false;
      }
      return true;
    case map_kind::insert: return true;
    case map_kind::remove: return !(oc[m.axis] >= m.p && oc[m.axis] < m.p + m.k);
  }
  return false;  // GCOVR_EXCL_LINE: every kind returns above
}

// Edits the chunk grid, then installs the new layout and publishes it. The chunk table is in memory
// (frame_table_load).
__attribute__((noinline)) status grid_edit(array& a, const array_layout& new_l, const grid_map& m) noexcept {
  frame& f = array_access::frm(a);
  const array_layout& old_l = array_access::layout(a);  // replaced only at the end (no 1 KiB copy on the stack)
  int64_t coords[kMaxDims] = {};
  int64_t oc[kMaxDims] = {};
  for (int64_t i = old_l.nchunks - 1; i >= 0; --i) {
    TESSERA_TRY(layout_chunk_coords(old_l, i, coords));  // GCOVR_EXCL_BR_LINE: i is a chunk of the grid
    if (!old_kept(m, new_l, coords)) TESSERA_TRY(detail::frame_chunk_delete_table(f, i));
  }
  auto sizes = layout_sizes_compute(new_l, array_access::itemsize(a));
  if (!sizes.ok()) return sizes.err();
  uint8_t zero_chunk[kChunkHeaderExtendedSize];
  if (new_l.nchunks > 0) {
    auto n = chunk_encode_special(array_access::encode(a), chunk_special::zeros,
                                  static_cast<size_t>(sizes->chunk_nbytes), bytes_view{},
                                  bytes_mut(zero_chunk, sizeof zero_chunk));
    if (!n.ok()) return n.err();
  }
  for (int64_t i = 0; i < new_l.nchunks; ++i) {
    TESSERA_TRY(layout_chunk_coords(new_l, i, coords));  // GCOVR_EXCL_BR_LINE: i is a chunk of the grid
    if (!new_to_old(m, old_l, coords, oc))
      TESSERA_TRY(detail::frame_chunk_insert_table(f, i, bytes_view(zero_chunk, sizeof zero_chunk)));
  }
  array_access::layout(a) = new_l;
  array_access::sizes(a) = *sizes;
  return detail::array_meta_publish(a);
}

// The items of a decoded chunk beyond old_ext (per dimension, from the chunk's start) zeroed: tmp holds a block.
__attribute__((noinline)) status chunk_padding_zero(array& a, uint8_t* chunk, const int64_t* old_ext,
                                                    bytes_mut tmp) noexcept {
  const array_layout& l = array_access::layout(a);
  const int64_t itemsize = array_access::itemsize(a);
  const int64_t block_nbytes = array_access::sizes(a).block_nbytes;
  int64_t bc[kMaxDims] = {};
  int64_t keep[kMaxDims] = {};
  const int64_t zero[kMaxDims] = {};
  for (int64_t b = 0; b < l.blocks_per_chunk; ++b) {
    TESSERA_TRY(layout_block_coords(l, b, bc));  // GCOVR_EXCL_BR_LINE: b is a block of the chunk
    bool whole = true;
    for (int d = 0; d < l.ndim; ++d) {
      int64_t k = old_ext[d] - bc[d] * l.blockshape[d];
      if (k < 0) k = 0;
      if (k > l.blockshape[d]) k = l.blockshape[d];
      keep[d] = k;
      whole &= k == l.blockshape[d];
    }
    if (whole) continue;
    bytes_mut blk(chunk + b * block_nbytes, static_cast<size_t>(block_nbytes));
    memset(tmp.data(), 0, tmp.size());
    TESSERA_TRY(nd_copy_region(l.ndim, itemsize, blk, l.blockshape, zero, tmp, l.blockshape, zero, keep));
    memcpy(blk.data(), tmp.data(), tmp.size());
  }
  return ok_status();
}

// zero_exposed's state, from the array's allocator (its coordinates grow with the dimensions): a chunk's
// coordinates and old extent, and the buffers chunks are rewritten in (allocated at the first stored chunk).
struct exposed_state {
  int64_t nc[kMaxDims] = {};
  int64_t old_ext[kMaxDims] = {};
  owned_array<uint8_t> chunk, out, tmp;
};

// Chunk n (kept, grown) read, its old padding zeroed and stored again; special chunks are left as they are.
__attribute__((noinline)) status exposed_chunk_rewrite(array& a, int64_t n, const int64_t* old_ext,
                                                       exposed_state& bufs) noexcept {
  frame& f = array_access::frm(a);
  auto ref = detail::frame_chunk_locate_table(f, n);
  if (!ref.ok()) return ref.err();
  if (ref->special == chunk_special::zeros || ref->special == chunk_special::uninit) return ok_status();
  if (bufs.chunk.data() == nullptr) {
    const size_t cn = static_cast<size_t>(array_access::sizes(a).chunk_nbytes);
    TESSERA_TRY(bufs.chunk.allocate(array_access::alloc(a), cn));
    TESSERA_TRY(bufs.out.allocate(array_access::alloc(a), chunk_encode_bound(cn)));
    TESSERA_TRY(bufs.tmp.allocate(array_access::alloc(a), static_cast<size_t>(array_access::sizes(a).block_nbytes)));
  }
  auto r = detail::frame_chunk_decode_table(f, array_access::decoder(a), n, bytes_mut(bufs.chunk.data(), bufs.chunk.size()));
  if (!r.ok()) return r.err();
  if (*r != bufs.chunk.size()) return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's size disagrees with the geometry"));
  TESSERA_TRY(chunk_padding_zero(a, bufs.chunk.data(), old_ext, bytes_mut(bufs.tmp.data(), bufs.tmp.size())));
  auto enc = detail::array_chunk_encode(a, bytes_view(bufs.chunk.data(), bufs.chunk.size()),
                                        bytes_mut(bufs.out.data(), bufs.out.size()));
  if (!enc.ok()) return enc.err();
  return detail::frame_chunk_update_table(f, n, *enc);
}

// After growing: kept chunks whose extent grew get the items beyond their old extent (old padding) zeroed. The
// chunk table is in memory (frame_table_load).
__attribute__((noinline)) status zero_exposed(array& a, const array_layout& old_l) noexcept {
  const array_layout& l = array_access::layout(a);
  detail::allocated<exposed_state> bufs;
  TESSERA_TRY(bufs.make(array_access::alloc(a)));
  int64_t* nc = bufs->nc;
  int64_t* old_ext = bufs->old_ext;
  for (int64_t n = 0; n < l.nchunks; ++n) {
    TESSERA_TRY(layout_chunk_coords(l, n, nc));  // GCOVR_EXCL_BR_LINE: n is a chunk of the grid
    bool kept = true;
    bool grew = false;
    for (int d = 0; d < l.ndim; ++d) {
      if (nc[d] >= old_l.chunk_grid[d]) kept = false;
      if (!kept) break;
      const int64_t first = nc[d] * l.chunkshape[d];
      int64_t oe = old_l.shape[d] - first;
      if (oe > l.chunkshape[d]) oe = l.chunkshape[d];
      int64_t ne = l.shape[d] - first;
      if (ne > l.chunkshape[d]) ne = l.chunkshape[d];
      old_ext[d] = oe;
      if (ne > oe) grew = true;
    }
    if (!kept || !grew) continue;
    TESSERA_TRY(exposed_chunk_rewrite(a, n, old_ext, *bufs));
  }
  return ok_status();
}

status resize_nocommit(array& a, const int64_t* new_shape) noexcept {
  TESSERA_TRY(detail::array_check_writable(a));
  const array_layout& old_l = array_access::layout(a);
  int32_t cs[kMaxDims] = {};
  int32_t bs[kMaxDims] = {};
  bool same = true;
  for (int d = 0; d < old_l.ndim; ++d) {
    if (new_shape[d] < 0)
      return detail::array_error_values(a, errc::invalid_argument, TESSERA_MSG("array_resize: dimension {}: extent {} is negative"),
                                        d, new_shape[d]);
    cs[d] = static_cast<int32_t>(old_l.chunkshape[d]);
    bs[d] = static_cast<int32_t>(old_l.blockshape[d]);
    same &= new_shape[d] == old_l.shape[d];
  }
  if (same) return ok_status();
  TESSERA_TRY(detail::frame_table_load(array_access::frm(a)));
  // The old and new layouts (about 1 KiB each on the Cortex-M4): from the array's allocator, not the stack.
  struct layouts {
    array_layout old_l, new_l;
  };
  detail::allocated<layouts> ls;
  TESSERA_TRY(ls.make(array_access::alloc(a)));
  ls->old_l = old_l;
  TESSERA_TRY(layout_init(ls->new_l, old_l.ndim, new_shape, cs, bs));
  TESSERA_TRY(grid_edit(a, ls->new_l, grid_map{}));
  return zero_exposed(a, ls->old_l);
}

status check_axis(array& a, int axis) noexcept {
  if (axis < 0 || axis >= array_access::layout(a).ndim)
    return detail::array_error_values(a, errc::invalid_argument, TESSERA_MSG("array: axis {} not in [0, {})"), axis,
                                      array_access::layout(a).ndim);
  return ok_status();
}

}  // namespace

status array_resize(array& a, const int64_t* new_shape) noexcept {
  TESSERA_TRY(resize_nocommit(a, new_shape));
  return detail::array_finish(a);
}

namespace {

// Inserts or removes whole chunk slabs along `axis` inside the array (the reference's rule: position and count
// on chunk boundaries), moving the stored chunks to the grid of new_shape.
status chunks_shift(array& a, const array_layout& old_l, const int64_t* new_shape, int axis, int64_t pos,
                    int64_t count, map_kind kind) noexcept {
  const int64_t c = old_l.chunkshape[axis];
  if (pos % c != 0 || count % c != 0)
    return detail::array_error_values(
        a, errc::invalid_argument,
        kind == map_kind::insert
            ? TESSERA_MSG("array_insert: position {}, count {}: inside the array not multiples of the chunk extent {}")
            : TESSERA_MSG("array_delete: position {}, count {}: inside the array not multiples of the chunk extent {}"),
        pos, count, c);
  int32_t cs[kMaxDims] = {};
  int32_t bs[kMaxDims] = {};
  for (int d = 0; d < old_l.ndim; ++d) {
    cs[d] = static_cast<int32_t>(old_l.chunkshape[d]);
    bs[d] = static_cast<int32_t>(old_l.blockshape[d]);
  }
  TESSERA_TRY(detail::frame_table_load(array_access::frm(a)));
  detail::allocated<array_layout> new_l;  // about 1 KiB on the Cortex-M4: from the array's allocator
  TESSERA_TRY(new_l.make(array_access::alloc(a)));
  TESSERA_TRY(layout_init(*new_l, old_l.ndim, new_shape, cs, bs));
  grid_map m;
  m.kind = kind;
  m.axis = axis;
  m.p = pos / c;
  m.k = count / c;
  return grid_edit(a, *new_l, m);
}

}  // namespace

status array_resize_at(array& a, const int64_t* new_shape, const int64_t* start) noexcept {
  if (start == nullptr) return array_resize(a, new_shape);
  TESSERA_TRY(detail::array_check_writable(a));
  const array_layout old_l = array_access::layout(a);
  // Everything is checked before anything changes: an error leaves the array as it was.
  bool at_end[kMaxDims] = {};
  for (int d = 0; d < old_l.ndim; ++d) {
    const int64_t old_e = old_l.shape[d];
    if (new_shape[d] < 0) return make_error(errc::invalid_argument, TESSERA_MSG("array_resize_at: negative extent"));
    if (start[d] < 0 || start[d] > old_e)
      return make_error(errc::out_of_range, TESSERA_MSG("array_resize_at: start outside 0..shape"));
    if (new_shape[d] < old_e && start[d] > new_shape[d])
      return make_error(errc::out_of_range, TESSERA_MSG("array_resize_at: the items removed at start run past the end"));
    const int64_t change = new_shape[d] > old_e ? new_shape[d] - old_e : old_e - new_shape[d];
    at_end[d] = new_shape[d] > old_e ? start[d] == old_e : start[d] == new_shape[d];
    if (change != 0 && !at_end[d] && (start[d] % old_l.chunkshape[d] != 0 || change % old_l.chunkshape[d] != 0))
      return make_error(errc::invalid_argument,
                        TESSERA_MSG("array_resize_at: away from the end, start and the change in extent must be multiples of the chunk extent"));
  }
  // Shrink first, then grow (the reference's order), one dimension at a time: the chunk grid's edits along
  // different axes are independent.
  int64_t shape[kMaxDims] = {};
  for (int d = 0; d < old_l.ndim; ++d) shape[d] = old_l.shape[d];
  for (int pass = 0; pass < 2; ++pass) {
    const bool grow = pass == 1;
    for (int d = 0; d < old_l.ndim; ++d) {
      if (grow ? new_shape[d] <= old_l.shape[d] : new_shape[d] >= old_l.shape[d]) continue;
      const array_layout cur = array_access::layout(a);
      const int64_t count = grow ? new_shape[d] - old_l.shape[d] : old_l.shape[d] - new_shape[d];
      shape[d] = new_shape[d];
      if (at_end[d]) {
        TESSERA_TRY(resize_nocommit(a, shape));
      } else {
        TESSERA_TRY(chunks_shift(a, cur, shape, d, start[d], count, grow ? map_kind::insert : map_kind::remove));
      }
    }
  }
  return detail::array_finish(a);
}

namespace {

// The chunk grid grown by count items at pos along axis (zeros); the items are written after.
__attribute__((noinline)) status insert_grid(array& a, int axis, int64_t pos, int64_t count) noexcept {
  const array_layout& old_l = array_access::layout(a);  // not used once the grid changes
  int64_t new_shape[kMaxDims] = {};
  for (int d = 0; d < old_l.ndim; ++d) new_shape[d] = old_l.shape[d];
  new_shape[axis] += count;
  if (pos == old_l.shape[axis]) return resize_nocommit(a, new_shape);
  return chunks_shift(a, old_l, new_shape, axis, pos, count, map_kind::insert);
}

// The inserted items written into the grown array.
__attribute__((noinline)) status insert_items_write(array& a, int axis, int64_t pos, int64_t count,
                                                    bytes_view src) noexcept {
  const array_layout& l = array_access::layout(a);
  int64_t start[kMaxDims] = {};
  int64_t stop[kMaxDims] = {};
  for (int d = 0; d < l.ndim; ++d) stop[d] = l.shape[d];
  start[axis] = pos;
  stop[axis] = pos + count;
  return detail::array_slice_write_nocommit(a, start, stop, src);
}

}  // namespace

// Its steps are functions of their own: the shapes they need are not on the stack under the others' reads.
status array_insert(array& a, int axis, int64_t pos, int64_t count, bytes_view src) noexcept {
  TESSERA_TRY(detail::array_check_writable(a));
  TESSERA_TRY(check_axis(a, axis));
  const array_layout& old_l = array_access::layout(a);
  if (pos < 0 || pos > old_l.shape[axis])
    return detail::array_error_values(a, errc::out_of_range, TESSERA_MSG("array_insert: axis {}: position {} not in [0, {}]"), axis,
                                      pos, old_l.shape[axis]);
  if (count < 0 || count > INT64_MAX - old_l.shape[axis]) return make_error(errc::invalid_argument, TESSERA_MSG("array_insert: bad count"));
  if (count == 0) return ok_status();
  // The source must hold the inserted items before anything changes.
  int64_t need = array_access::itemsize(a);
  for (int d = 0; d < old_l.ndim; ++d) {
    const int64_t e = d == axis ? count : old_l.shape[d];
    if (e != 0 && need > INT64_MAX / e) return make_error(errc::overflow, TESSERA_MSG("array_insert: source size"));
    need *= e;
  }
  if (static_cast<int64_t>(src.size()) < need)
    return detail::array_error_values(a, errc::buffer_too_small, TESSERA_MSG("array_insert: src has {} bytes, the items need {}"),
                                      static_cast<int64_t>(src.size()), need);
  TESSERA_TRY(insert_grid(a, axis, pos, count));
  TESSERA_TRY(insert_items_write(a, axis, pos, count, src));
  return detail::array_finish(a);
}

status array_append(array& a, int axis, int64_t count, bytes_view src) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  TESSERA_TRY(check_axis(a, axis));
  return array_insert(a, axis, array_access::layout(a).shape[axis], count, src);
}

status array_delete(array& a, int axis, int64_t pos, int64_t count) noexcept {
  TESSERA_TRY(detail::array_check_writable(a));
  TESSERA_TRY(check_axis(a, axis));
  const array_layout old_l = array_access::layout(a);
  if (pos < 0 || count < 0 || pos > old_l.shape[axis] || count > old_l.shape[axis] - pos)
    return detail::array_error_values(a, errc::out_of_range, TESSERA_MSG("array_delete: axis {}: {} items from {} not inside [0, {})"),
                                      axis, count, pos, old_l.shape[axis]);
  if (count == 0) return ok_status();
  int64_t new_shape[kMaxDims] = {};
  for (int d = 0; d < old_l.ndim; ++d) new_shape[d] = old_l.shape[d];
  new_shape[axis] -= count;
  if (pos + count == old_l.shape[axis]) {
    TESSERA_TRY(resize_nocommit(a, new_shape));
  } else {
    TESSERA_TRY(chunks_shift(a, old_l, new_shape, axis, pos, count, map_kind::remove));
  }
  return detail::array_finish(a);
}

}  // namespace tessera
