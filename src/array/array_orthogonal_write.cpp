// SPDX-License-Identifier: BSD-3-Clause
// Writing an orthogonal selection (c-blosc2's b2nd_set_orthogonal_selection): the selection's indices are
// sorted per dimension and grouped by chunk, so each touched chunk is decoded once, gets all its items, and is
// encoded and written once.
#include <stdint.h>
#include <string.h>

#include "array_internal.hpp"
#include "orthogonal_sort.hpp"

namespace tessera {

using detail::array_access;

namespace {

// Where item `value` of dimension d lands inside a decoded chunk (stored block by block), in items: the
// dimension's share of the item's offset, which adds up over the dimensions.
int64_t chunk_item_offset(const array_layout& l, int d, int64_t value) noexcept {
  const int64_t in_chunk = value % l.chunkshape[d];
  return (in_chunk / l.blockshape[d]) * l.block_strides[d] * l.block_nitems +
         (in_chunk % l.blockshape[d]) * l.block_item_strides[d];
}

// Checks the selection against the array and src; *total receives the number of indices over all dimensions
// and *nitems the number of items selected.
status selection_check(const array& a, const int64_t* const* indices, const int64_t* counts, bytes_view src,
                       int64_t* total, int64_t* nitems) noexcept {
  const array_layout& l = array_access::layout(a);
  const int64_t itemsize = array_access::itemsize(a);
  int64_t n = 1;
  int64_t t = 0;
  for (int d = 0; d < l.ndim; ++d) {
    if (counts[d] < 0) return make_error(errc::invalid_argument, TESSERA_MSG("array_orthogonal_write: negative count"));
    if (counts[d] > 0 && indices[d] == nullptr)
      return make_error(errc::invalid_argument, TESSERA_MSG("array_orthogonal_write: null indices for a count above 0"));
    // The sorted copy takes 24 bytes per index (16 + its group start): its size must fit size_t (32-bit targets).
    if (static_cast<uint64_t>(counts[d]) > SIZE_MAX / 24 - static_cast<uint64_t>(t))
      return make_error(errc::overflow, TESSERA_MSG("array_orthogonal_write: too many indices"));
    t += counts[d];
    if (counts[d] != 0 && n > (INT64_MAX / itemsize) / counts[d])
      return make_error(errc::overflow, TESSERA_MSG("array_orthogonal_write: selection too large"));
    n *= counts[d];
  }
  for (int d = 0; d < l.ndim; ++d) {
    for (int64_t k = 0; k < counts[d]; ++k) {
      if (indices[d][k] < 0 || indices[d][k] >= l.shape[d])
        return make_error(errc::out_of_range, TESSERA_MSG("array_orthogonal_write: index outside the array"));
    }
  }
  if (static_cast<int64_t>(src.size()) / itemsize < n)
    return make_error(errc::buffer_too_small, TESSERA_MSG("array_orthogonal_write: src smaller than the selection"));
  *total = t;
  *nitems = n;
  return ok_status();
}

}  // namespace

status array_orthogonal_write(array& a, const int64_t* const* indices, const int64_t* counts, bytes_view src) noexcept {
  TESSERA_TRY(detail::array_check_writable(a));
  const array_layout& l = array_access::layout(a);
  const int ndim = l.ndim;
  const int64_t itemsize = array_access::itemsize(a);
  if (ndim == 0) {
    if (static_cast<int64_t>(src.size()) < itemsize)
      return make_error(errc::buffer_too_small, TESSERA_MSG("array_orthogonal_write: src smaller than the selection"));
    return array_element_write(a, nullptr, bytes_view(src.data(), static_cast<size_t>(itemsize)));
  }
  int64_t total = 0;
  int64_t nitems = 0;
  TESSERA_TRY(selection_check(a, indices, counts, src, &total, &nitems));
  if (nitems == 0) return ok_status();

  // Per dimension: (value, position) sorted, then the starts of the runs that share a chunk (the "groups").
  using entry = detail::orthogonal_entry;
  owned_array<entry> entries;
  owned_array<int64_t> group_start;  // per dim: its groups' first entry, then one past the end
  TESSERA_TRY(entries.allocate(array_access::alloc(a), static_cast<size_t>(total)));
  TESSERA_TRY(group_start.allocate(array_access::alloc(a), static_cast<size_t>(total + ndim)));
  entry* e[kMaxDims] = {};
  int64_t* g[kMaxDims] = {};
  int64_t ngroups[kMaxDims] = {};
  int64_t src_strides[kMaxDims] = {};
  {
    int64_t eo = 0;
    int64_t stride = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      src_strides[d] = stride;
      stride *= counts[d];
    }
    for (int d = 0; d < ndim; ++d) {
      const int64_t n = counts[d];
      e[d] = entries.data() + eo;
      g[d] = group_start.data() + eo + d;
      for (int64_t k = 0; k < n; ++k) e[d][k] = entry{indices[d][k], k};
      detail::orthogonal_sort(e[d], n);
      int64_t prev_chunk = -1;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t c = e[d][k].value / l.chunkshape[d];
        if (c != prev_chunk) {
          g[d][ngroups[d]++] = k;
          prev_chunk = c;
        }
      }
      g[d][ngroups[d]] = n;
      eo += n;
    }
  }

  frame& f = array_access::frm(a);
  const int64_t chunk_nbytes = array_access::sizes(a).chunk_nbytes;
  owned_array<uint8_t> chunk, out;
  TESSERA_TRY(chunk.allocate(array_access::alloc(a), static_cast<size_t>(chunk_nbytes)));
  TESSERA_TRY(out.allocate(array_access::alloc(a), chunk_encode_bound(static_cast<size_t>(chunk_nbytes))));
  int64_t gi[kMaxDims] = {};  // the current group of each dimension: together they name one chunk
  for (;;) {
    int64_t cc[kMaxDims] = {};
    for (int d = 0; d < ndim; ++d) cc[d] = e[d][g[d][gi[d]]].value / l.chunkshape[d];
    auto nchunk = layout_chunk_index(l, cc);
    if (!nchunk.ok()) return nchunk.err();
    auto r = frame_chunk_decode(f, array_access::decoder(a), *nchunk, bytes_mut(chunk.data(), chunk.size()));
    if (!r.ok()) return r.err();
    if (static_cast<int64_t>(*r) != chunk_nbytes)
      return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's size disagrees with the geometry"));
    // Every combination of the groups' entries, in sorted order: a repeated index is written once per listing,
    // the last listed last.
    int64_t k[kMaxDims] = {};
    for (int d = 0; d < ndim; ++d) k[d] = g[d][gi[d]];
    for (;;) {
      int64_t from = 0;
      int64_t to = 0;
      for (int d = 0; d < ndim; ++d) {
        const entry& x = e[d][k[d]];
        from += x.pos * src_strides[d];
        to += chunk_item_offset(l, d, x.value);
      }
      memcpy(chunk.data() + to * itemsize, src.data() + from * itemsize, static_cast<size_t>(itemsize));
      int d = ndim - 1;
      for (; d >= 0; --d) {
        if (++k[d] < g[d][gi[d] + 1]) break;
        k[d] = g[d][gi[d]];
      }
      if (d < 0) break;
    }
    auto enc = detail::array_chunk_encode(a, bytes_view(chunk.data(), chunk.size()), bytes_mut(out.data(), out.size()));
    if (!enc.ok()) return enc.err();
    TESSERA_TRY(frame_chunk_update(f, *nchunk, *enc));
    int d = ndim - 1;
    for (; d >= 0; --d) {
      if (++gi[d] < ngroups[d]) break;
      gi[d] = 0;
    }
    if (d < 0) break;
  }
  return detail::array_finish(a);
}

}  // namespace tessera
