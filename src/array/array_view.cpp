// SPDX-License-Identifier: BSD-3-Clause
// The decode-only reader over a frame in memory (tessera/array_view.hpp). It parses the frame with the frame
// layer's own checks (header, trailer, index: frame_internal.hpp), the array with b2nd_geometry_read, and reads
// slices with the array's touched-block request; only the glue is its own.
#include "tessera/array_view.hpp"

#include <string.h>
#include "tessera/cxx.hpp"

#include "../chunk/chunk_internal.hpp"
#include "../frame/frame_internal.hpp"
#include "array_internal.hpp"
#include "b2nd_geometry.hpp"
#include "tessera/array.hpp"
#include "tessera/slice_plan.hpp"
#include "touched_blocks.hpp"

namespace tessera {

namespace {

using namespace detail;

// The frame's header, its b2nd geometry and where the index and the chunks are, into v.
detail::code_status view_parse(array_view& v, bytes_view frame, const array_view_options& options) noexcept {
  frame_info info;
  TESSERA_TRY(header_fixed_parse(frame, info));
  if (info.kind != frame_kind::contiguous) return make_error(errc::unsupported, TESSERA_MSG("array_view: a sparse frame (open it with array_open_sparse)"));
  if (info.frame_len > frame.size()) return make_error(errc::truncated, TESSERA_MSG("frame: storage shorter than the frame length"));
  if (info.frame_len < kFrameHeaderMinLen + kFrameTrailerMinLen) return make_error(errc::malformed, TESSERA_MSG("frame: frame length too small"));
  frame = frame.subspan(0, static_cast<size_t>(info.frame_len));
  uint64_t trailer_off = 0;
  uint32_t trailer_len = 0;
  TESSERA_TRY(frame_trailer_locate(info, frame.subspan(frame.size() - kFrameTrailerMinLen), &trailer_off, &trailer_len));
  if (info.nbytes > 0) {
    auto pos = frame_index_pos(info, false, trailer_off);
    if (!pos.ok()) return pos.err();
    const bytes_view rest = frame.subspan(static_cast<size_t>(*pos), static_cast<size_t>(trailer_off - *pos));
    chunk_header ih;
    TESSERA_TRY(frame_index_check(info, *pos, trailer_off, rest, &ih, &info.nchunks));
    if (ih.blocksize < 8 || ih.blocksize % 8 != 0) return make_error(errc::unsupported, TESSERA_MSG("array_view: index blocks that split an entry"));
    chunk_decoder_options o;
    o.max_blocksize = static_cast<size_t>(ih.blocksize);
    if (chunk_decoder_estimate(o) > options.max_alloc)
      return make_error(errc::resource_limit, TESSERA_MSG("frame: a chunk's blocksize needs more decoder scratch than max_alloc"));
    v.index = rest.subspan(0, static_cast<size_t>(ih.cbytes));
    v.index_blocksize = ih.blocksize;
    v.chunks = frame.subspan(info.header_len, static_cast<size_t>(info.cbytes));
  } else {
    info.nchunks = 0;
  }

  // The b2nd metalayer (or the older caterva one), viewed in the header; the geometry straight into the view
  // (the layout is most of a geometry: not on the stack).
  const bytes_view header = frame.subspan(0, info.header_len);
  uint32_t meta_off = 0, meta_len = 0;
  bool found = false;
  TESSERA_TRY(header_meta_find(header, name_of(kB2ndMetaName), name_of("caterva"), &found, &meta_off, &meta_len));
  if (!found) return make_error(errc::malformed, TESSERA_MSG("array: the frame has no b2nd metalayer"));
  b2nd_meta meta;
  layout_sizes sizes;
  TESSERA_TRY(b2nd_geometry_read_into(header.subspan(meta_off, meta_len), info, false, options.max_alloc,
                                      executor_serial(), meta, v.layout, sizes));
  v.itemsize = info.typesize;
  v.dtype = b2nd_meta_dtype_or_default(meta);
  v.chunk_nbytes = sizes.chunk_nbytes;
  v.blocksize = info.blocksize;
  return ok_status();
}

// One index entry: the 8 bytes of block i / per_block, decoded only as far as the entry.
struct entry_read {
  size_t nblock = 0;
  size_t at = 0;
  uint8_t bytes[8] = {};
  static size_t block(void* c, size_t) noexcept { return static_cast<entry_read*>(c)->nblock; }
  static void range(void* c, size_t, size_t* begin, size_t* end) noexcept {
    *begin = static_cast<entry_read*>(c)->at;
    *end = *begin + 8;
  }
  static status consume(void* c, size_t, bytes_view decoded, uint32_t) noexcept {
    auto& e = *static_cast<entry_read*>(c);
    if (decoded.size() < e.at + 8) return make_error(errc::corrupt, TESSERA_MSG("frame: index block shorter than its header says"));
    memcpy(e.bytes, decoded.data() + e.at, 8);
    return ok_status();
  }
};

// Chunk nchunk's bytes into *out: in place, or a special chunk written into sc. A status and an out parameter,
// not a result<bytes_view>: no result to build from each error.
detail::code_status view_chunk(array_view& v, int64_t nchunk, uint8_t (&sc)[kChunkStoredOverhead], bytes_view* out) noexcept {
  const size_t per_block = static_cast<size_t>(v.index_blocksize) / 8;
  entry_read e;
  e.nblock = static_cast<size_t>(nchunk) / per_block;
  e.at = static_cast<size_t>(nchunk) % per_block * 8;
  chunk_block_request r;
  r.count = 1;
  r.block = entry_read::block;
  r.range = entry_read::range;
  r.consume = entry_read::consume;
  r.context = &e;
  TESSERA_TRY(chunk_decode_fixed_blocks(v.decoder, v.index, r));
  const int64_t off = as_signed(le_load64(e.bytes));
  auto kind = index_special(off);
  if (!kind.ok()) return kind.err();
  if (*kind != chunk_special::none) {
    special_chunk_write(*kind, static_cast<int32_t>(v.chunk_nbytes), static_cast<int32_t>(v.itemsize), v.blocksize, sc);
    *out = bytes_view(sc, sizeof sc);
    return ok_status();
  }
  if (static_cast<uint64_t>(off) >= v.chunks.size()) return make_error(errc::corrupt, TESSERA_MSG("frame: chunk offset past the chunks section"));
  const bytes_view rest = v.chunks.subspan(static_cast<size_t>(off));
  chunk_header hd;
  TESSERA_TRY(chunk_header_parse(rest, hd));
  const chunk_header* const h = &hd;
  if (static_cast<uint64_t>(h->cbytes) > rest.size()) return make_error(errc::corrupt, TESSERA_MSG("frame: chunk runs past the frame's data"));
  if (h->nbytes != v.chunk_nbytes) return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's nbytes disagrees with the b2nd chunk shape"));
  if (h->special == chunk_special::none && h->blocksize != v.layout.block_nitems * v.itemsize)
    return make_error(errc::unsupported, TESSERA_MSG("array_view: a chunk whose blocks are not the array's (read it with array_open)"));
  *out = rest.subspan(0, static_cast<size_t>(h->cbytes));
  return ok_status();
}

// A slice read's state, in the view's read_state: its kMaxDims-sized arrays stay off the caller's stack. Not
// constructed as a whole: each part is set before it is read (slice_plan_init assigns the whole plan, the
// iterator is constructed over it, touched_blocks_init sets every field a request reads), and clearing the
// arrays first (a memset per array) was a sixth of the read's code.
struct view_read_state {
  slice_plan plan;
  slice_chunk_iterator chunks{plan};
  touched_blocks t;
};
static_assert(sizeof(view_read_state) <= sizeof(array_view::read_state) && alignof(view_read_state) <= 8,
              "array_view::read_state holds a read's state");
static_assert(__has_trivial_destructor(view_read_state) && __is_trivially_copyable(slice_plan) &&
                  __is_trivially_copyable(touched_blocks),
              "the read state's parts are plain data, set in place");

}  // namespace

size_t array_view_estimate(size_t block_nbytes) noexcept {
  // The view's decoder is serial: its estimate for one block size bounds open (the workers' table) and every
  // read (scratch for that block, block 0 under delta, codec contexts made on first use).
  chunk_decoder_options o;
  o.max_blocksize = block_nbytes;
  return chunk_decoder_estimate(o);
}

size_t array_view_estimate(const array_view& v) noexcept {
  const size_t block = static_cast<size_t>(v.layout.block_nitems) * static_cast<size_t>(v.itemsize);
  const size_t index = v.index_blocksize > 0 ? static_cast<size_t>(v.index_blocksize) : 0;
  return array_view_estimate(block > index ? block : index);
}

status array_view_open(array_view& v, bytes_view frame, const allocator& alloc, const array_view_options& options) noexcept {
  array_view_close(v);
  detail::code_status e = view_parse(v, frame, options);
  if (e.ok()) {
    chunk_decoder_options o;
    o.max_blocksize = 0;  // scratch is made when a read first needs it, sized by that chunk's pipeline
    o.plugins = options.plugins;
    o.geometry = array_chunk_geometry(v.layout);
    e = chunk_decoder_init(v.decoder, alloc, o);
  }
  v.open = e.ok();
  return e;
}

status array_view_slice_read(array_view& v, const int64_t* start, const int64_t* stop, bytes_mut out) noexcept {
  if (!v.open) return make_error(errc::invalid_argument, TESSERA_MSG("array_view: not open"));
  auto& st = *static_cast<view_read_state*>(static_cast<void*>(v.read_state));  // trivially destructible: nothing to end
  slice_plan& plan = st.plan;
  TESSERA_TRY(slice_plan_init(plan, v.layout, start, stop));
  if (static_cast<uint64_t>(out.size()) / static_cast<uint64_t>(v.itemsize) < static_cast<uint64_t>(plan.nitems))
    return make_error(errc::buffer_too_small, TESSERA_MSG("array: output buffer smaller than its shape"));
  slice_chunk_iterator& chunks = *new (tessera::cxx::place, &st.chunks) slice_chunk_iterator(plan);
  touched_blocks& t = st.t;
  while (chunks.next()) {
    const slice_chunk& c = chunks.chunk();
    if (!touched_blocks_init(t, v.layout, v.itemsize, c, out, plan.shape, c.slice_start)) continue;
    uint8_t sc[kChunkStoredOverhead];
    bytes_view chunk;
    TESSERA_TRY(view_chunk(v, c.nchunk, sc, &chunk));
    TESSERA_TRY(chunk_decode_fixed_blocks(v.decoder, chunk, touched_blocks_request(t)));
  }
  return ok_status();
}

status array_view_element_read(array_view& v, const int64_t* coords, bytes_mut item) noexcept {
  if (!v.open) return make_error(errc::invalid_argument, TESSERA_MSG("array_view: not open"));
  int64_t stop[kMaxDims] = {};
  for (int d = 0; d < v.layout.ndim; ++d) stop[d] = coords[d] + (coords[d] < INT64_MAX ? 1 : 0);
  return array_view_slice_read(v, coords, stop, item);
}

void array_view_close(array_view& v) noexcept {
  chunk_decoder_release(v.decoder);
  v.open = false;
}

}  // namespace tessera
