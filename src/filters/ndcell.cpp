// SPDX-License-Identifier: BSD-3-Clause
// NDCELL (c-blosc2's registered filter 32, written from the reference's behaviour): a block's items regrouped
// cell by cell (nd_cells.hpp), cells of `meta` items per dimension (shorter where the block is). The reference
// refuses a cell of more items than the block (meta^ndim > prod(blockshape)), and so does this. Its own object
// file: on bare metal only a program that calls filter_link_ndcell links it.
#include <string.h>

#include "filters/filters.hpp"
#include "filters/nd_cells.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera::detail {

namespace {

// meta != 0 and a cell of meta^ndim items no larger than the block of `nitems` (the reference's checks).
status ndcell_cell_fits(const chunk_nd_geometry& g, uint8_t meta, uint64_t nitems) noexcept {
  if (meta == 0) return make_error(errc::malformed, TESSERA_MSG("ndcell: the filter meta (the cell edge) is 0"));
  uint64_t cell = 1;
  for (int d = 0; d < g.ndim; ++d) {
    cell *= meta;
    if (cell > nitems)
      return make_error(errc::unsupported, TESSERA_MSG("ndcell: a cell (meta^ndim items) larger than the block (the "
                                                       "reference refuses it)"));
  }
  return ok_status();
}

status ndcell_cells(const chunk_nd_geometry& g, uint8_t meta, size_t typesize, size_t size, nd_cells& c) noexcept {
  TESSERA_TRY(nd_cells_block(g, typesize, size, c,
                             TESSERA_MSG("ndcell: needs the blocks' n-d shape (chunk_decoder_options::geometry, "
                                         "chunk_encode_params::geometry, C: nd_blockshape; arrays give their own)"),
                             TESSERA_MSG("ndcell: more than 8 dimensions (the reference's limit)"),
                             TESSERA_MSG("ndcell: a block that is not prod(blockshape) items of typesize bytes (a "
                                         "chunk whose blocks are not the geometry's)")));
  TESSERA_TRY(ndcell_cell_fits(g, meta, c.nitems));
  for (int d = 0; d < c.ndim; ++d) c.cs[d] = c.bs[d] < meta ? c.bs[d] : meta;
  return ok_status();
}

}  // namespace

status ndcell_forward(const chunk_nd_geometry& g, uint8_t meta, size_t typesize, const uint8_t* src, uint8_t* dst,
                      size_t size) noexcept {
  nd_cells c;
  TESSERA_TRY(ndcell_cells(g, meta, typesize, size, c));
  nd_cells_gather(c, typesize, src, dst);
  return ok_status();
}

status ndcell_backward(const chunk_nd_geometry& g, uint8_t meta, size_t typesize, const uint8_t* src, uint8_t* dst,
                       size_t size) noexcept {
  nd_cells c;
  TESSERA_TRY(ndcell_cells(g, meta, typesize, size, c));
  nd_cells_scatter(c, typesize, src, dst);
  return ok_status();
}

}  // namespace tessera::detail

namespace tessera {
void filter_link_ndcell() noexcept {}
}  // namespace tessera
extern "C" void tessera_filter_link_ndcell(void) { tessera::filter_link_ndcell(); }
