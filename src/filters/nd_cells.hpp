// SPDX-License-Identifier: BSD-3-Clause
// The cells of an n-d block, as c-blosc2's NDCELL and NDMEAN filters walk them (plugins/filters/ndcell, ndmean):
// the block (its items in C order) is cut into cells of cs[d] items per dimension, those at the block's far edges
// shorter (the block's extent); the cells go in C order of the cell grid, and inside a cell its rows (runs along
// the last dimension) in C order. A filter's forward pass writes the cells one after another; backward puts them
// back. Shared by ndcell.cpp and ndmean.cpp (each its own object file, linked on demand on bare metal).
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tessera/chunk.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

inline constexpr int kNdCellMaxDims = 8;  // the reference's NDCELL_MAX_DIM and NDMEAN_MAX_DIM

struct nd_cells {
  int ndim = 0;
  size_t bs[kNdCellMaxDims] = {};      // block shape, items
  size_t cs[kNdCellMaxDims] = {};      // cell shape (at most the block's)
  size_t stride[kNdCellMaxDims] = {};  // items between neighbours along each dimension
  size_t nitems = 0;
};

// The geometry's block against a block of `size` bytes of `typesize`-byte items: ndim 1..8 (else unsupported),
// every dimension positive and prod(blockshape) * typesize == size (else malformed: a chunk whose blocks are not
// the geometry's). Fills c but its cell shape. The errors carry the caller's static messages.
[[nodiscard]] inline status nd_cells_block(const chunk_nd_geometry& g, size_t typesize, size_t size, nd_cells& c,
                                           const char* no_geometry, const char* too_many_dims,
                                           const char* mismatch) noexcept {
  if (g.ndim <= 0) return make_error(errc::unsupported, no_geometry);
  if (g.ndim > kNdCellMaxDims) return make_error(errc::unsupported, too_many_dims);
  c.ndim = g.ndim;
  size_t bytes = typesize;  // >= 1: chunk headers and encode parameters refuse 0
  for (int d = 0; d < c.ndim; ++d) {
    if (g.blockshape[d] <= 0) return make_error(errc::malformed, mismatch);
    const size_t n = static_cast<size_t>(g.blockshape[d]);
    if (bytes > size / n) return make_error(errc::malformed, mismatch);
    bytes *= n;
    c.bs[d] = n;
  }
  if (bytes != size) return make_error(errc::malformed, mismatch);
  c.nitems = size / typesize;
  size_t s = 1;
  for (int d = c.ndim - 1; d >= 0; --d) {
    c.stride[d] = s;
    s *= c.bs[d];
  }
  return ok_status();
}

// Calls row(first_item, nitems) for every row of every cell, in the filters' order, and cell_end(nitems) after
// each cell's last row. Counters, no recursion; the stack holds a few arrays of kNdCellMaxDims.
template <typename Row, typename CellEnd>
void nd_cells_walk(const nd_cells& c, Row&& row, CellEnd&& cell_end) noexcept {
  const int nd = c.ndim;
  size_t ncell[kNdCellMaxDims] = {};
  size_t ii[kNdCellMaxDims] = {};
  size_t pad[kNdCellMaxDims] = {};
  size_t kk[kNdCellMaxDims] = {};
  for (int d = 0; d < nd; ++d) ncell[d] = (c.bs[d] + c.cs[d] - 1) / c.cs[d];
  for (;;) {
    size_t origin = 0;
    size_t cell_items = 1;
    for (int d = 0; d < nd; ++d) {
      origin += ii[d] * c.cs[d] * c.stride[d];
      pad[d] = ii[d] + 1 == ncell[d] && c.bs[d] % c.cs[d] != 0 ? c.bs[d] % c.cs[d] : c.cs[d];
      cell_items *= pad[d];
      kk[d] = 0;
    }
    const size_t len = pad[nd - 1];
    for (;;) {  // the rows: kk over pad[0 .. nd-2]
      size_t at = origin;
      for (int d = 0; d + 1 < nd; ++d) at += kk[d] * c.stride[d];
      row(at, len);
      int d = nd - 2;
      while (d >= 0 && ++kk[d] == pad[d]) kk[d--] = 0;
      if (d < 0) break;
    }
    cell_end(cell_items);
    int d = nd - 1;
    while (d >= 0 && ++ii[d] == ncell[d]) ii[d--] = 0;
    if (d < 0) break;
  }
}

// The block src (C order) into dst in cell order: the cells one after another, each in C order (NDCELL's
// forward pass).
inline void nd_cells_gather(const nd_cells& c, size_t typesize, const uint8_t* src, uint8_t* dst) noexcept {
  size_t o = 0;
  nd_cells_walk(
      c,
      [&](size_t at, size_t len) noexcept {
        memcpy(dst + o, src + at * typesize, len * typesize);
        o += len * typesize;
      },
      [](size_t) noexcept {});
}

// The reverse: src in cell order back into dst in C order (both filters' backward pass).
inline void nd_cells_scatter(const nd_cells& c, size_t typesize, const uint8_t* src, uint8_t* dst) noexcept {
  size_t o = 0;
  nd_cells_walk(
      c,
      [&](size_t at, size_t len) noexcept {
        memcpy(dst + at * typesize, src + o, len * typesize);
        o += len * typesize;
      },
      [](size_t) noexcept {});
}

}  // namespace tessera::detail
