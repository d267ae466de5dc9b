// SPDX-License-Identifier: BSD-3-Clause
#include "b2nd_geometry.hpp"

#include "tessera/array.hpp"
#include "tessera/chunk.hpp"

namespace tessera::detail {

detail::code_status b2nd_geometry_read(bytes_view raw, const frame_info& info, bool fresh, uint64_t max_alloc,
                          const executor& exec, b2nd_geometry& out) noexcept {
  return b2nd_geometry_read_into(raw, info, fresh, max_alloc, exec, out.meta, out.layout, out.sizes);
}

detail::code_status b2nd_geometry_read_into(bytes_view raw, const frame_info& info, bool fresh, uint64_t max_alloc,
                               const executor& exec, b2nd_meta& meta_out, array_layout& layout,
                               layout_sizes& sizes_out) noexcept {
  TESSERA_TRY(b2nd_meta_decode_into(raw, meta_out));
  const b2nd_meta* const meta = &meta_out;
  if (status e = layout_init(layout, meta->ndim, meta->shape, meta->chunkshape, meta->blockshape); !e.ok())
    return e.code == errc::invalid_argument ? make_error(errc::malformed, TESSERA_MSG(e.message)) : e;
  if (info.typesize < 1 || info.typesize > kArrayMaxItemsize)
    return make_error(errc::malformed, TESSERA_MSG("array: the frame's typesize is outside 1..BLOSC2_MAXTYPESIZE"));
  auto sizes = layout_sizes_compute(layout, info.typesize);
  if (!sizes.ok()) return sizes.err();
  sizes_out = *sizes;
  if (info.nchunks != (fresh ? 0 : layout.nchunks))
    return make_error(errc::malformed, TESSERA_MSG("array: the frame's chunk count disagrees with the b2nd geometry"));
  // Every chunk of a b2nd array holds a whole padded chunk: a frame with one chunk size must have this one.
  if (!fresh && info.chunksize > 0 && info.chunksize != sizes->chunk_nbytes)
    return make_error(errc::malformed, TESSERA_MSG("array: the frame's chunksize disagrees with the b2nd chunk shape"));
  if (static_cast<uint64_t>(sizes->chunk_nbytes) > max_alloc)
    return make_error(errc::resource_limit, TESSERA_MSG("array: the b2nd chunk shape makes chunks larger than max_alloc"));
  chunk_decoder_options o;
  o.max_blocksize = sizes->block_nbytes > 0 ? static_cast<size_t>(sizes->block_nbytes) : 1;
  o.exec = exec;
  if (chunk_decoder_estimate(o) > max_alloc)
    return make_error(errc::resource_limit, TESSERA_MSG("array: the b2nd block shape needs more decoder scratch than max_alloc"));
  return ok_status();
}

}  // namespace tessera::detail
