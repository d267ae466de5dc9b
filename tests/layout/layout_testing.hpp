// SPDX-License-Identifier: BSD-3-Clause
// Shared by the layout tests: random geometries and a brute-force model of where B2ND stores each item,
// written from the format's definition independently of src/layout (no shared code, no derived strides).
#pragma once

#include <cstdint>

#include "tessera/config.hpp"
#include "../support/random.hpp"

namespace tessera::test::layout {

struct geometry {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int32_t chunkshape[kMaxDims] = {};
  int32_t blockshape[kMaxDims] = {};
};

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The C-order index of `coords` in a grid of `extents`.
inline int64_t c_index(int ndim, const int64_t* extents, const int64_t* coords) {
  int64_t index = 0;
  for (int i = 0; i < ndim; ++i) index = index * extents[i] + coords[i];
  return index;
}

// The coordinates of C-order index `index` in a grid of `extents` (all > 0).
inline void c_coords(int ndim, const int64_t* extents, int64_t index, int64_t* coords) {
  for (int i = ndim - 1; i >= 0; --i) {
    coords[i] = index % extents[i];
    index /= extents[i];
  }
}

inline int64_t product(int ndim, const int64_t* extents) {
  int64_t p = 1;
  for (int i = 0; i < ndim; ++i) p *= extents[i];
  return p;
}

// The brute-force model's derived quantities (only for geometries the tests draw: no zero chunk shapes in
// non-empty dimensions).
struct model {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t chunk[kMaxDims] = {};
  int64_t block[kMaxDims] = {};
  int64_t extchunk[kMaxDims] = {};
  int64_t chunk_grid[kMaxDims] = {};
  int64_t block_grid[kMaxDims] = {};
  int64_t nitems = 1, nchunks = 1, chunk_items = 1, block_items = 1, blocks_per_chunk = 1;
};

inline model model_of(const geometry& g) {
  model m;
  m.ndim = g.ndim;
  for (int i = 0; i < g.ndim; ++i) {
    m.shape[i] = g.shape[i];
    m.chunk[i] = g.chunkshape[i];
    m.block[i] = g.blockshape[i];
    m.extchunk[i] = m.chunk[i] == 0 ? 0 : ceil_div(m.chunk[i], m.block[i]) * m.block[i];
    m.chunk_grid[i] = m.chunk[i] == 0 ? 0 : ceil_div(m.shape[i], m.chunk[i]);
    m.block_grid[i] = m.block[i] == 0 ? 0 : m.extchunk[i] / m.block[i];
    m.nitems *= m.shape[i];
    m.nchunks *= m.chunk_grid[i];
    m.chunk_items *= m.extchunk[i];
    m.block_items *= m.block[i];
    m.blocks_per_chunk *= m.block_grid[i];
  }
  return m;
}

// Where the item at array coordinates x is stored, straight from the definition.
struct location {
  int64_t nchunk, nblock, offset;
};
inline location model_locate(const model& m, const int64_t* x) {
  int64_t chunk_coords[kMaxDims], block_coords[kMaxDims], in_block[kMaxDims];
  for (int i = 0; i < m.ndim; ++i) {
    chunk_coords[i] = x[i] / m.chunk[i];
    block_coords[i] = (x[i] % m.chunk[i]) / m.block[i];
    in_block[i] = (x[i] % m.chunk[i]) % m.block[i];
  }
  location loc;
  loc.nchunk = c_index(m.ndim, m.chunk_grid, chunk_coords);
  loc.nblock = c_index(m.ndim, m.block_grid, block_coords);
  loc.offset = loc.nblock * m.block_items + c_index(m.ndim, m.block, in_block);
  return loc;
}

// A random valid geometry whose stored form (nchunks * items per chunk) stays below `max_store` items.
// Covers zero-extent dimensions, chunks not multiple of blocks, shapes not multiple of chunks, chunk = shape,
// block = chunk, blocks larger than chunks, chunks larger than the array.
inline geometry random_geometry(rng& r, int64_t max_store) {
  // Extents by ndim; 2 beyond 8 dimensions (builds with TESSERA_MAX_DIMS up to 16).
  static constexpr int64_t kMaxExtent[9] = {1, 40, 13, 7, 5, 4, 3, 3, 3};
  for (;;) {
    geometry g;
    g.ndim = static_cast<int>(r.range(0, kMaxDims));
    const int64_t max_extent = g.ndim <= 8 ? kMaxExtent[g.ndim] : 2;
    // About one array in ten is empty (one or two dimensions of extent 0).
    const bool empty = g.ndim > 0 && r.chance(10);
    const int zero_a = empty ? static_cast<int>(r.range(0, g.ndim - 1)) : -1;
    const int zero_b = empty && r.chance(30) ? static_cast<int>(r.range(0, g.ndim - 1)) : -1;
    for (int i = 0; i < g.ndim; ++i) {
      int64_t s = i == zero_a || i == zero_b ? 0 : r.range(1, max_extent);
      int64_t c;
      if (s == 0) c = r.range(0, 4);
      else if (r.chance(15)) c = s;                   // one chunk along this dimension
      else c = r.range(1, s + 2);                     // sometimes larger than the array
      int64_t b;
      if (c == 0) b = r.chance(50) ? 0 : r.range(1, 3);
      else if (r.chance(15)) b = c;                   // one block per chunk
      else if (r.chance(10)) b = c + r.range(1, 2);   // a block larger than the chunk
      else b = r.range(1, c);
      g.shape[i] = s;
      g.chunkshape[i] = static_cast<int32_t>(c);
      g.blockshape[i] = static_cast<int32_t>(b);
    }
    const model m = model_of(g);
    if (m.nchunks * m.chunk_items <= max_store && m.nitems <= max_store) return g;
  }
}

}  // namespace tessera::test::layout
