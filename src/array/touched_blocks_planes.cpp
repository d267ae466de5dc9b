// SPDX-License-Identifier: BSD-3-Clause
// A touched block's part unshuffled straight from the block's byte planes to the output (touched_blocks.hpp):
// a slice that wants a few rows of each block (a plane across the blocks) unshuffles those rows only, and in
// the same pass puts them where they go, instead of unshuffling the whole block and copying its part out.
#include "touched_blocks.hpp"

#include <string.h>

#include "chunk/chunk_internal.hpp"

#if TESSERA_SPEED_PATHS
#include "filters/elements_unshuffle.hpp"

namespace tessera::detail {

namespace {

// Bytes [first, first + n) of the unshuffled block, for items that are not whole elements.
void bytes_unshuffle(const block_planes& p, size_t first, size_t n, uint8_t* dst) noexcept {
  for (size_t x = first; x < first + n; ++x) *dst++ = p.plane[x % p.typesize][x / p.typesize];
}

// Rows of one element of N bytes each (a plane across the last dimension): element r is byte r * src_step of
// each plane from k, stored whole at o + r * o_step. The planes' pointers held in locals and each element stored
// at once: with the planes read through `p` and the output written byte by byte, the compiler reloads the
// pointers after every store (they might alias) and the loads of one element wait on the stores of the last.
template <size_t N>
void elements_gather(const block_planes& p, size_t k, size_t rows, size_t src_step, uint8_t* o, size_t o_step) noexcept {
  const uint8_t* plane[N];
  for (size_t b = 0; b < N; ++b) plane[b] = p.plane[b] + k;
  for (size_t r = 0, at = 0; r < rows; ++r, at += src_step, o += o_step) {
    uint8_t v[N];
    for (size_t b = 0; b < N; ++b) v[b] = plane[b][at];
    memcpy(o, v, N);
  }
}

// Touched block i's part as runs of rows: row(src, out, rows, src_step, out_step) for each run of `rows` rows
// along the dimension before the last (one row of shape[last] items each; src and out in items: the first row's
// offsets in the block and the output, then steps between rows), the other dimensions stepped like an odometer.
template <class Rows>
void touched_rows(const touched_blocks& t, size_t i, size_t* run, const Rows& row) noexcept {
  const array_layout& l = *t.l;
  int64_t src_start[kMaxDims], dst[kMaxDims], shape[kMaxDims];
  (void)touched_block(t, static_cast<int64_t>(i), src_start, dst, shape);
  const int last = l.ndim - 1;
  if (last < 0) {  // ndim 0: one row of the one item
    *run = 1;
    row(size_t{0}, size_t{0}, size_t{1}, size_t{0}, size_t{0});
    return;
  }
  // Offsets inside the block and the output, which touched_block keeps inside both: size_t items.
  size_t out_strides[kMaxDims] = {};
  size_t s = 1;
  for (int d = last; d >= 0; --d) {
    out_strides[d] = s;
    s *= static_cast<size_t>(t.out_shape[d]);
  }
  *run = static_cast<size_t>(shape[last]);
  const int row_dim = last - 1;
  const size_t rows = row_dim >= 0 ? static_cast<size_t>(shape[row_dim]) : 1;
  const size_t src_step = row_dim >= 0 ? static_cast<size_t>(l.block_item_strides[row_dim]) : 0;
  const size_t out_step = row_dim >= 0 ? out_strides[row_dim] : 0;
  int64_t pos[kMaxDims] = {};
  for (;;) {
    size_t src = static_cast<size_t>(src_start[last]), out = static_cast<size_t>(dst[last]);
    for (int d = 0; d <= row_dim; ++d) {
      src += static_cast<size_t>(src_start[d] + pos[d]) * static_cast<size_t>(l.block_item_strides[d]);
      out += static_cast<size_t>(dst[d] + pos[d]) * out_strides[d];
    }
    row(src, out, rows, src_step, out_step);
    int d = row_dim - 1;
    for (; d >= 0; --d) {
      if (++pos[d] < shape[d]) break;
      pos[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

bool touched_block_few(const touched_blocks& t, size_t i) noexcept {
  int64_t src_start[kMaxDims], dst[kMaxDims], shape[kMaxDims];
  (void)touched_block(t, static_cast<int64_t>(i), src_start, dst, shape);
  int64_t n = 1;
  for (int d = 0; d < t.l->ndim; ++d) n *= shape[d];
  return n * 4 <= t.l->block_nitems;
}

void touched_block_prefetch(void* context, size_t typesize, size_t b, const uint8_t* plane) noexcept {
  (void)b;
  const auto& p = *static_cast<const touched_block_planes_hint*>(context);
  const size_t itemsize = static_cast<size_t>(p.t->itemsize);
  if (typesize == 0 || itemsize % typesize != 0) return;  // bytes one by one: nothing worth fetching ahead
  const size_t per = itemsize / typesize;
  size_t run = 0;
  touched_rows(*p.t, p.i, &run, [&](size_t src, size_t, size_t rows, size_t src_step, size_t) noexcept {
    for (size_t r = 0; r < rows; ++r, src += src_step) {
      __builtin_prefetch(plane + src * per);
      __builtin_prefetch(plane + (src + run) * per - 1);
    }
  });
}

status touched_block_unshuffle(touched_blocks& t, size_t i, size_t block_bytes, const block_planes& planes) noexcept {
  const array_layout& l = *t.l;
  const size_t itemsize = static_cast<size_t>(t.itemsize);
  const size_t typesize = planes.typesize;
  if (static_cast<int64_t>(block_bytes) != l.block_nitems * t.itemsize)
    return make_error(errc::corrupt, TESSERA_MSG("array: a block's size disagrees with its chunk's header"));
  if (typesize == 0 || typesize > block_planes::kMaxPlanes || block_bytes % typesize != 0)
    return make_error(errc::corrupt, TESSERA_MSG("array: a shuffled block is not whole elements"));
  if (l.ndim == 0) {  // the one item
    bytes_unshuffle(planes, 0, itemsize, t.out.data());
    return ok_status();
  }
  // Items of whole elements (the usual case, typesize == itemsize): rows of elements, else byte by byte.
  const size_t per = itemsize % typesize == 0 ? itemsize / typesize : 0;
  size_t run = 0;
  touched_rows(t, i, &run, [&](size_t src, size_t out, size_t rows, size_t src_step, size_t out_step) noexcept {
    uint8_t* o = t.out.data() + out * itemsize;
    const size_t o_step = out_step * itemsize;
    if (per != 0) {
      size_t k = src * per;
      if (run * per == 1) {  // one element a row (a plane across the last dimension): its bytes, no call
        if (typesize == 4) {
          elements_gather<4>(planes, k, rows, src_step, o, o_step);
        } else if (typesize == 8) {
          elements_gather<8>(planes, k, rows, src_step, o, o_step);
        } else if (typesize == 2) {
          elements_gather<2>(planes, k, rows, src_step, o, o_step);
        } else {
          for (size_t r = 0; r < rows; ++r, k += src_step, o += o_step)
            for (size_t b = 0; b < typesize; ++b) o[b] = planes.plane[b][k];
        }
      } else {
        for (size_t r = 0; r < rows; ++r, k += src_step * per, o += o_step)
          elements_unshuffle(typesize, planes.plane, k, run * per, o);
      }
    } else {
      for (size_t r = 0; r < rows; ++r, src += src_step, o += o_step)
        bytes_unshuffle(planes, src * itemsize, run * itemsize, o);
    }
  });
  return ok_status();
}

}  // namespace tessera::detail
#endif  // TESSERA_SPEED_PATHS
