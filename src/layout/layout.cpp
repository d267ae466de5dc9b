// SPDX-License-Identifier: BSD-3-Clause
// Chunk and block geometry of a B2ND array; see tessera/layout.hpp for the format's rules.
#include "tessera/layout.hpp"

#include "mul_checked.hpp"

namespace tessera {

using detail::mul_checked;

namespace {

// Decomposes a C-order index over `extents` (all > 0) into coordinates.
void index_split(int ndim, const int64_t* extents, int64_t index, int64_t* coords) noexcept {
  for (int i = ndim - 1; i >= 0; --i) {
    coords[i] = index % extents[i];
    index /= extents[i];
  }
}

}  // namespace

namespace {

// Fills l (reset by the caller) dimension by dimension, innermost first: the dimensions from ndim on are 1s, so
// one loop and one set of running products serve all, and each running product, before it takes dimension i in,
// is dimension i's C-order stride. Every product is checked as it grows, so every stride is (a zero extent makes
// the whole product 0, not its suffixes). Chunk and block shapes are below 2^31: their arithmetic is 32-bit.
detail::code_status layout_fill(array_layout& l, int ndim, const int64_t* shape, const int32_t* chunkshape,
                   const int32_t* blockshape) noexcept {
  l.ndim = ndim;
  int64_t extnitems = 1;
  for (int i = kMaxDims - 1; i >= 0; --i) {
    const bool in = i < ndim;
    const int64_t s = in ? shape[i] : 1;
    const int32_t c = in ? chunkshape[i] : 1;
    const int32_t b = in ? blockshape[i] : 1;
    if (s < 0) return make_error(errc::invalid_argument, TESSERA_MSG("layout: negative shape"));
    if (c < 0) return make_error(errc::invalid_argument, TESSERA_MSG("layout: negative chunkshape"));
    if (b < 0) return make_error(errc::invalid_argument, TESSERA_MSG("layout: negative blockshape"));
    if (b == 0 && c != 0) return make_error(errc::invalid_argument, TESSERA_MSG("layout: blockshape 0 with chunkshape non-zero"));
    if (c == 0 && s != 0) return make_error(errc::invalid_argument, TESSERA_MSG("layout: chunkshape 0 in a non-empty dimension"));
    if (in) {  // the dimensions from ndim on keep strides 0
      l.item_strides[i] = l.nitems;
      l.chunk_strides[i] = l.nchunks;
      l.block_strides[i] = l.blocks_per_chunk;
      l.block_item_strides[i] = l.block_nitems;
    }
    l.shape[i] = s;
    l.chunkshape[i] = c;
    l.blockshape[i] = b;
    // c == 0 only in an empty dimension (the reference's placeholder for empty arrays): no chunks, no blocks,
    // and the extents stay 0 (l was reset).
    if (c != 0) {
      const int64_t srem = s % c;
      int64_t ext = s;
      if (srem != 0 && __builtin_add_overflow(s, c - srem, &ext))
        return make_error(errc::overflow, TESSERA_MSG("layout: shape rounded up to chunkshape overflows int64"));
      l.extshape[i] = ext;
      l.chunk_grid[i] = s / c + (srem != 0);
      const uint32_t bgrid = static_cast<uint32_t>(c) / static_cast<uint32_t>(b) +
                             (static_cast<uint32_t>(c) % static_cast<uint32_t>(b) != 0);
      l.block_grid[i] = bgrid;
      l.extchunkshape[i] = bgrid * static_cast<uint32_t>(b);  // below c + b: fits uint32
    }
    if (!mul_checked(l.nitems, s) || !mul_checked(extnitems, l.extshape[i]))
      return make_error(errc::overflow, TESSERA_MSG("layout: item count overflows int64"));
    if (!mul_checked(l.extchunk_nitems, l.extchunkshape[i]))
      return make_error(errc::overflow, TESSERA_MSG("layout: items per stored chunk overflow int64"));
    // Both stay at most INT32_MAX before each step, and a shape is below 2^31: the products fit uint64.
    l.chunk_nitems = static_cast<int64_t>(static_cast<uint64_t>(l.chunk_nitems) * static_cast<uint32_t>(c));
    if (l.chunk_nitems > INT32_MAX)
      return make_error(errc::overflow, TESSERA_MSG("layout: prod(chunkshape) overflows int32"));
    l.block_nitems = static_cast<int64_t>(static_cast<uint64_t>(l.block_nitems) * static_cast<uint32_t>(b));
    if (l.block_nitems > INT32_MAX)
      return make_error(errc::overflow, TESSERA_MSG("layout: prod(blockshape) overflows int32"));
    // Both are bounded by products checked above (extnitems and extchunk_nitems).
    l.nchunks *= l.chunk_grid[i];
    l.blocks_per_chunk *= l.block_grid[i];
  }
  return ok_status();
}

}  // namespace

status layout_init(array_layout& out, int ndim, const int64_t* shape, const int32_t* chunkshape,
                   const int32_t* blockshape) noexcept {
  out = array_layout{};
  if (ndim < 0 || ndim > kMaxDims) return make_error(errc::unsupported, TESSERA_MSG("layout: ndim outside 0..kMaxDims"));
  if (ndim > 0 && (shape == nullptr || chunkshape == nullptr || blockshape == nullptr))
    return make_error(errc::invalid_argument, TESSERA_MSG("layout: null shape, chunkshape or blockshape"));
  const status e = layout_fill(out, ndim, shape, chunkshape, blockshape);
  if (!e.ok()) out = array_layout{};
  return e;
}

result<layout_sizes> layout_sizes_compute(const array_layout& layout, int64_t itemsize) noexcept {
  if (itemsize < 1) return make_error(errc::invalid_argument, TESSERA_MSG("layout: itemsize < 1"));
  layout_sizes s;
  s.array_nbytes = layout.nitems;
  s.chunk_nbytes = layout.extchunk_nitems;
  if (!mul_checked(s.array_nbytes, itemsize))
    return make_error(errc::overflow, TESSERA_MSG("layout: array byte size overflows int64"));
  if (!mul_checked(s.chunk_nbytes, itemsize) || s.chunk_nbytes > kMaxChunkBytes)
    return make_error(errc::overflow, TESSERA_MSG("layout: chunk byte size exceeds the Blosc2 chunk limit"));
  s.block_nbytes = layout.block_nitems * itemsize;  // a block is part of the chunk checked just above
  return s;
}

namespace {

// One grid of the layout (the chunk grid, or a chunk's block grid), for index <-> coordinates.
struct grid_view {
  const int64_t* extents;
  const int64_t* strides;
  int64_t count;
  const char* outside;  // coordinates outside the grid
  const char* empty;    // a grid with no cells
  const char* past;     // an index past its cells
};

grid_view chunk_grid_of(const array_layout& l) noexcept {
  return {l.chunk_grid, l.chunk_strides, l.nchunks, TESSERA_MSG("layout: chunk coordinates outside the chunk grid"),
          TESSERA_MSG("layout: the array has no chunks"), TESSERA_MSG("layout: chunk index outside the array")};
}

grid_view block_grid_of(const array_layout& l) noexcept {
  return {l.block_grid, l.block_strides, l.blocks_per_chunk, TESSERA_MSG("layout: block coordinates outside the block grid"),
          TESSERA_MSG("layout: a chunk has no blocks"), TESSERA_MSG("layout: block index outside the chunk")};
}

result<int64_t> grid_index(int ndim, const grid_view& g, const int64_t* coords) noexcept {
  int64_t index = 0;
  for (int i = 0; i < ndim; ++i) {
    if (coords[i] < 0 || coords[i] >= g.extents[i]) return make_error(errc::out_of_range, g.outside);
    index += coords[i] * g.strides[i];
  }
  // A grid without cells has an extent of 0, which refused every coordinate above (kept for ndim 0's sake).
  if (g.count == 0) return make_error(errc::out_of_range, g.empty);  // GCOVR_EXCL_BR_LINE: see above
  return index;
}

detail::code_status grid_coords(int ndim, const grid_view& g, int64_t index, int64_t* coords) noexcept {
  if (index < 0 || index >= g.count) return make_error(errc::out_of_range, g.past);
  index_split(ndim, g.extents, index, coords);
  return ok_status();
}

}  // namespace

result<int64_t> layout_chunk_index(const array_layout& layout, const int64_t* chunk_coords) noexcept {
  return grid_index(layout.ndim, chunk_grid_of(layout), chunk_coords);
}

status layout_chunk_coords(const array_layout& layout, int64_t nchunk, int64_t* chunk_coords) noexcept {
  return grid_coords(layout.ndim, chunk_grid_of(layout), nchunk, chunk_coords);
}

result<int64_t> layout_block_index(const array_layout& layout, const int64_t* block_coords) noexcept {
  return grid_index(layout.ndim, block_grid_of(layout), block_coords);
}

status layout_block_coords(const array_layout& layout, int64_t nblock, int64_t* block_coords) noexcept {
  return grid_coords(layout.ndim, block_grid_of(layout), nblock, block_coords);
}

status layout_chunk_extent(const array_layout& layout, int64_t nchunk, int64_t* chunk_start,
                           int64_t* chunk_extent) noexcept {
  if (nchunk < 0 || nchunk >= layout.nchunks)
    return make_error(errc::out_of_range, TESSERA_MSG("layout: chunk index outside the array"));
  int64_t coords[kMaxDims];
  index_split(layout.ndim, layout.chunk_grid, nchunk, coords);
  for (int i = 0; i < layout.ndim; ++i) {
    const int64_t start = coords[i] * layout.chunkshape[i];  // < extshape: no overflow
    const int64_t rest = layout.shape[i] - start;
    chunk_start[i] = start;
    chunk_extent[i] = rest < layout.chunkshape[i] ? rest : layout.chunkshape[i];
  }
  return ok_status();
}

result<item_location> layout_locate(const array_layout& layout, const int64_t* coords) noexcept {
  item_location loc;
  int64_t in_block = 0;
  for (int i = 0; i < layout.ndim; ++i) {
    const int64_t x = coords[i];
    if (x < 0 || x >= layout.shape[i]) return make_error(errc::out_of_range, TESSERA_MSG("layout: coordinates outside the array"));
    const int64_t c = layout.chunkshape[i];
    const int64_t b = layout.blockshape[i];
    const int64_t within_chunk = x % c;
    loc.nchunk += (x / c) * layout.chunk_strides[i];
    loc.nblock += (within_chunk / b) * layout.block_strides[i];
    in_block += (within_chunk % b) * layout.block_item_strides[i];
  }
  loc.offset = loc.nblock * layout.block_nitems + in_block;
  return loc;
}

status layout_item_coords(const array_layout& layout, int64_t nchunk, int64_t offset, int64_t* coords) noexcept {
  if (nchunk < 0 || nchunk >= layout.nchunks)
    return make_error(errc::out_of_range, TESSERA_MSG("layout: chunk index outside the array"));
  if (offset < 0 || offset >= layout.extchunk_nitems)
    return make_error(errc::out_of_range, TESSERA_MSG("layout: item offset outside the stored chunk"));
  int64_t chunk_coords[kMaxDims];
  int64_t block_coords[kMaxDims];
  int64_t item_coords[kMaxDims];
  index_split(layout.ndim, layout.chunk_grid, nchunk, chunk_coords);
  index_split(layout.ndim, layout.block_grid, offset / layout.block_nitems, block_coords);
  index_split(layout.ndim, layout.blockshape, offset % layout.block_nitems, item_coords);
  bool padding = false;
  for (int i = 0; i < layout.ndim; ++i) {
    const int64_t within_chunk = block_coords[i] * layout.blockshape[i] + item_coords[i];
    const int64_t x = chunk_coords[i] * layout.chunkshape[i] + within_chunk;
    padding |= within_chunk >= layout.chunkshape[i] || x >= layout.shape[i];
    coords[i] = x;
  }
  if (padding) return make_error(errc::out_of_range, TESSERA_MSG("layout: the slot is padding"));
  return ok_status();
}

bool layout_chunk_is_c_order(const array_layout& layout) noexcept {
  // Walking from the outermost dimension: blocks of extent 1 first, then one dimension whose block extent
  // divides the chunk's, then blocks spanning the whole chunk.
  int i = 0;
  while (i < layout.ndim && layout.blockshape[i] == 1) ++i;
  if (i < layout.ndim) {
    if (layout.blockshape[i] == 0 || layout.chunkshape[i] % layout.blockshape[i] != 0) return false;
    ++i;
  }
  for (; i < layout.ndim; ++i)
    if (layout.blockshape[i] != layout.chunkshape[i]) return false;
  return true;
}

}  // namespace tessera
