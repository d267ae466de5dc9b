// SPDX-License-Identifier: BSD-3-Clause
// NDMEAN (c-blosc2's registered filter 33, written from the reference's behaviour): a block of float32 or float64
// items cut into cells (nd_cells.hpp) of min(meta, blockshape[d]) items per dimension; forward writes each cell,
// in the cells' order, as its mean repeated (summed in float for float32, double for float64, row after row,
// then divided by the cell's item count: the reference's arithmetic, so the same bits); backward puts the cells
// back in place (lossy: the means stay). The reference reads the cell edge as a signed byte (1..127 only) and
// places the cells with the first dimension's cell edge: when the block's first dimension is shorter than the
// edge and another longer, its cells overlap, the chunks it writes then fail its own reader, and this refuses
// those geometries both ways. Its own object file: on bare metal only a program that calls filter_link_ndmean
// links it.
#include <string.h>

#include "base/byte_order.hpp"
#include "filters/filters.hpp"
#include "filters/nd_cells.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera::detail {

namespace {

status ndmean_meta(uint8_t meta) noexcept {
  if (static_cast<int8_t>(meta) <= 0)
    return make_error(errc::malformed, TESSERA_MSG("ndmean: the filter meta (the cell edge) is not 1..127"));
  return ok_status();
}

// The geometries whose cells the reference misplaces (see above).
status ndmean_placement(const chunk_nd_geometry& g, uint8_t meta) noexcept {
  if (g.blockshape[0] >= meta) return ok_status();
  for (int d = 1; d < g.ndim; ++d)
    if (g.blockshape[d] > meta)
      return make_error(errc::unsupported, TESSERA_MSG("ndmean: a block shorter than the cell edge in its first dimension "
                                                       "and longer in another (the reference writes such chunks and "
                                                       "cannot read them back)"));
  return ok_status();
}

status ndmean_typesize(size_t typesize) noexcept {
  if (typesize != 4 && typesize != 8)
    return make_error(errc::unsupported, TESSERA_MSG("ndmean: writing needs float32 or float64 items (typesize 4 or 8)"));
  return ok_status();
}

status ndmean_cells(const chunk_nd_geometry& g, uint8_t meta, size_t typesize, size_t size, nd_cells& c) noexcept {
  TESSERA_TRY(nd_cells_block(g, typesize, size, c,
                             TESSERA_MSG("ndmean: needs the blocks' n-d shape (chunk_decoder_options::geometry, "
                                         "chunk_encode_params::geometry, C: nd_blockshape; arrays give their own)"),
                             TESSERA_MSG("ndmean: more than 8 dimensions (the reference's limit)"),
                             TESSERA_MSG("ndmean: a block that is not prod(blockshape) items of typesize bytes (a "
                                         "chunk whose blocks are not the geometry's)")));
  TESSERA_TRY(ndmean_meta(meta));
  TESSERA_TRY(ndmean_placement(g, meta));
  for (int d = 0; d < c.ndim; ++d) c.cs[d] = c.bs[d] < meta ? c.bs[d] : meta;
  return ok_status();
}

// The cells of src as their means into dst (elements of T, stored as little-endian U bits: the items are the
// file's little-endian floats, "<f4" and "<f8", so a block gives the same chunk on every host, byte for byte the
// reference's on the little-endian hosts it runs on).
template <typename T, typename U>
void means(const nd_cells& c, const uint8_t* src, uint8_t* dst) noexcept {
  T sum = 0;
  uint8_t* o = dst;
  nd_cells_walk(
      c,
      [&](size_t at, size_t len) noexcept {
        for (size_t i = 0; i < len; ++i) {
          const U bits = static_cast<U>(le_load(src + (at + i) * sizeof(T), sizeof(T)));
          T v;
          memcpy(&v, &bits, sizeof v);
          sum += v;
        }
      },
      [&](size_t items) noexcept {
        const T mean = sum / static_cast<T>(static_cast<uint32_t>(items));
        U bits;
        memcpy(&bits, &mean, sizeof bits);
        for (size_t i = 0; i < items; ++i, o += sizeof(T)) le_store(o, bits, sizeof(T));
        sum = 0;
      });
}

}  // namespace

status ndmean_forward(const chunk_nd_geometry& g, uint8_t meta, size_t typesize, const uint8_t* src, uint8_t* dst,
                      size_t size) noexcept {
  TESSERA_TRY(ndmean_typesize(typesize));
  nd_cells c;
  TESSERA_TRY(ndmean_cells(g, meta, typesize, size, c));
  if (typesize == 4) means<float, uint32_t>(c, src, dst);
  else means<double, uint64_t>(c, src, dst);
  return ok_status();
}

status ndmean_backward(const chunk_nd_geometry& g, uint8_t meta, size_t typesize, const uint8_t* src, uint8_t* dst,
                       size_t size) noexcept {
  nd_cells c;
  TESSERA_TRY(ndmean_cells(g, meta, typesize, size, c));
  nd_cells_scatter(c, typesize, src, dst);
  return ok_status();
}

}  // namespace tessera::detail

namespace tessera {
void filter_link_ndmean() noexcept {}
}  // namespace tessera
extern "C" void tessera_filter_link_ndmean(void) { tessera::filter_link_ndmean(); }
