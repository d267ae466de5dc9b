// SPDX-License-Identifier: BSD-3-Clause
// The n-d filter fuzzers' shared parts (fuzz_ndcell.cpp, fuzz_ndmean.cpp): the recipe of a block (its geometry,
// the cell edge, typesize, bytes) and an independent model of the cell order the filters write (c-blosc2's
// NDCELL and NDMEAN): the cells in C order of the cell grid, each cell's items in C order, the cells at the
// block's far edges cut short by it.
#pragma once

#include <cstring>
#include <vector>

#include "../../src/filters/filters.hpp"
#include "fuzz_build.hpp"

namespace tessera::fuzz {

struct nd_block {
  chunk_nd_geometry g;
  uint8_t meta = 0;
  size_t typesize = 1;
  std::vector<uint8_t> bytes;  // the block, sometimes a few bytes off prod(blockshape) * typesize
  bool consistent = false;     // the geometry is valid and the bytes are its block
};

// The recipe: ndim (sometimes 0 or past 8), the block shape (sometimes 0 or negative), the cell edge, typesize
// (from `typesizes`), then the bytes.
inline nd_block nd_block_read(recipe& r, const uint8_t* typesizes, size_t ntypesizes) {
  nd_block b;
  const uint8_t k = r.u8();
  b.g.ndim = static_cast<int8_t>(k % 16 == 0 ? (k >> 4) % 11 : 1 + (k >> 4) % 4);
  const int8_t ndim = b.g.ndim < kMaxDims ? b.g.ndim : static_cast<int8_t>(kMaxDims);
  uint64_t items = 1;
  bool valid = b.g.ndim >= 1 && b.g.ndim <= 8;
  for (int d = 0; d < ndim; ++d) {
    const uint8_t v = r.u8();
    b.g.blockshape[d] = v == 255 ? -1 : v % (ndim <= 2 ? 40 : ndim <= 4 ? 9 : 3);
    if (b.g.blockshape[d] <= 0) valid = false;
    else items *= static_cast<uint64_t>(b.g.blockshape[d]);
  }
  b.meta = r.u8();
  if ((b.meta & 0x80) == 0) b.meta = static_cast<uint8_t>(1 + b.meta % 9);  // mostly a small cell edge
  b.typesize = typesizes[r.pick(ntypesizes)];
  if (items > 65536) items = 1, valid = false;
  size_t size = static_cast<size_t>(items) * b.typesize;
  const uint8_t off = r.u8();
  if (off % 16 == 0) size += off / 16, valid = valid && off / 16 == 0;  // a block that is not the geometry's
  b.bytes.assign(size, 0);
  const bytes_view seed = r.take(r.left());
  for (size_t i = 0; i < size; ++i) b.bytes[i] = seed.empty() ? static_cast<uint8_t>(i) : seed[i % seed.size()];
  b.consistent = valid;
  return b;
}

// The block's items in the filters' cell order (item indices in C order of the block), and each cell's size.
inline void cells_model(const nd_block& b, std::vector<size_t>& order, std::vector<size_t>& cell_sizes) {
  const int nd = b.g.ndim;
  size_t bs[8], cs[8], ncell[8], stride[8];
  size_t s = 1;
  for (int d = nd - 1; d >= 0; --d) {
    bs[d] = static_cast<size_t>(b.g.blockshape[d]);
    cs[d] = bs[d] < b.meta ? bs[d] : b.meta;
    ncell[d] = (bs[d] + cs[d] - 1) / cs[d];
    stride[d] = s;
    s *= bs[d];
  }
  size_t cell[8] = {};
  for (;;) {
    // This cell's extent, then its items in C order.
    size_t lo[8], len[8], it[8] = {};
    size_t n = 1;
    for (int d = 0; d < nd; ++d) {
      lo[d] = cell[d] * cs[d];
      len[d] = lo[d] + cs[d] <= bs[d] ? cs[d] : bs[d] - lo[d];
      n *= len[d];
    }
    cell_sizes.push_back(n);
    for (size_t k = 0; k < n; ++k) {
      size_t at = 0;
      for (int d = 0; d < nd; ++d) at += (lo[d] + it[d]) * stride[d];
      order.push_back(at);
      for (int d = nd - 1; d >= 0 && ++it[d] == len[d]; --d) it[d] = 0;
    }
    int d = nd - 1;
    while (d >= 0 && ++cell[d] == ncell[d]) cell[d--] = 0;
    if (d < 0) break;
  }
}

}  // namespace tessera::fuzz
