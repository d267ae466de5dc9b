// SPDX-License-Identifier: BSD-3-Clause
// Creating and opening arrays, their parameters, metalayers, and packing chunks for writers that append them
// (flash).
#include <stdint.h>
#include "tessera/cxx.hpp"
#include <string.h>

#include "array_internal.hpp"
#include "base/allocated.hpp"
#include "b2nd_geometry.hpp"
#include "chunk/chunk_internal.hpp"
#include "frame/frame_internal.hpp"
#include "tessera/dtype.hpp"
#include "tessera/slice_plan.hpp"
#include "tessera/nd_copy.hpp"

namespace tessera {

using detail::array_access;
using detail::name_of;

namespace {

template <size_t N>
bool names_equal(span<const char> a, const char (&b)[N]) noexcept {
  return a.size() == N - 1 && memcmp(a.data(), b, N - 1) == 0;
}

// The dtype string for an itemsize when none is given ("|u1", "|V<n>").
size_t default_dtype(int32_t itemsize, char* out) noexcept {
  if (itemsize == 1) {
    memcpy(out, "|u1", 3);  // NOLINT(bugprone-not-null-terminated-result): out is length-counted (returns 3)
    return 3;
  }
  char digits[12];
  size_t n = 0;
  for (int32_t v = itemsize; v > 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
  out[0] = '|';
  out[1] = 'V';
  for (size_t i = 0; i < n; ++i) out[2 + i] = digits[n - 1 - i];
  return 2 + n;
}

chunk_encode_params encode_params_from(const frame_info& info, int64_t block_nbytes) noexcept {
  chunk_encode_params e;
  e.typesize = chunk_typesize_of(info.typesize);
  e.clevel = info.clevel > kChunkMaxClevel ? kChunkMaxClevel : info.clevel;
  e.compressor = static_cast<codec>(info.compcode);
  e.compcode_meta = info.compcode_meta;
  detail::filters_copy(e, info);
  e.split = (info.splitmode >= 1 && info.splitmode <= 4) ? static_cast<split_mode>(info.splitmode)
                                                         : split_mode::forward_compat;
  e.blocksize = static_cast<int32_t>(block_nbytes);
  // Later chunks keep the dictionaries the frame records (where the codec has them: a foreign frame may say so
  // of another codec, which then writes without).
  e.use_dict = info.use_dict && codec_takes_dict(e.compressor);
  return e;
}

status decoder_setup(array& a) noexcept {
  chunk_decoder_options o;
  const int64_t block = array_access::sizes(a).block_nbytes;
  o.max_blocksize = block > 0 ? static_cast<size_t>(block) : 1;
  o.exec = array_access::exec(a);
  o.plugins = array_access::plugins(a);
  o.geometry = array_chunk_geometry(array_access::layout(a));
  return chunk_decoder_init(array_access::decoder(a), array_access::alloc(a), o);
}

}  // namespace

// ---- Setup -------------------------------------------------------------------------------------------------

status array_frame_setup_make(array_frame_setup& setup, const array_params& params) noexcept {
  if (params.ndim < 0 || params.ndim > kMaxDims)
    return make_error(errc::invalid_argument, TESSERA_MSG("array: ndim outside 0..kMaxDims"));
  const int ndim = params.ndim;
  // Item size and dtype.
  int32_t itemsize = params.itemsize;
  if (itemsize < 0) return make_error(errc::invalid_argument, TESSERA_MSG("array: negative itemsize"));
  char dtype_buf[16];
  span<const char> dtype = params.dtype;
  if (dtype.size() > kArrayMaxDtypeLen) return make_error(errc::invalid_argument, TESSERA_MSG("array: dtype string too long"));
  if (!dtype.empty()) {
    const dtype_info info = dtype_parse(dtype);
    if (info.known) {
      if (info.itemsize > static_cast<uint32_t>(INT32_MAX))
        return make_error(errc::unsupported, TESSERA_MSG("array: itemsize above the format's largest type"));
      if (itemsize != 0 && static_cast<uint32_t>(itemsize) != info.itemsize)
        return make_error(errc::invalid_argument, TESSERA_MSG("array: itemsize disagrees with the dtype"));
      itemsize = static_cast<int32_t>(info.itemsize);
    } else if (itemsize == 0) {
      return make_error(errc::invalid_argument, TESSERA_MSG("array: an unknown dtype needs an itemsize"));
    }
  } else {
    if (itemsize == 0) return make_error(errc::invalid_argument, TESSERA_MSG("array: neither dtype nor itemsize given"));
  }
  if (itemsize < 1) return make_error(errc::invalid_argument, TESSERA_MSG("array: itemsize < 1"));
  if (itemsize > kArrayMaxItemsize) return make_error(errc::unsupported, TESSERA_MSG("array: itemsize above the format's largest type"));
  if (dtype.empty()) dtype = span<const char>(dtype_buf, default_dtype(itemsize, dtype_buf));

  // Shapes.
  int32_t chunkshape[kMaxDims] = {};
  int32_t blockshape[kMaxDims] = {};
  bool chunks_given = false;
  bool blocks_given = false;
  for (int i = 0; i < ndim; ++i) {
    chunkshape[i] = params.chunkshape[i];
    blockshape[i] = params.blockshape[i];
    if (chunkshape[i] != 0) chunks_given = true;
    if (blockshape[i] != 0) blocks_given = true;
  }
  // A zero-extent array may give all-zero shapes on purpose: treat all zeros as "automatic" only when the
  // shape is not empty in that dimension (the partition then returns the same zeros anyway). Both given (or
  // ndim 0): the automatic partition is not reached, and layout_init checks the shapes but for this one.
  if ((chunks_given && blocks_given) || ndim == 0) {
    for (int i = 0; i < ndim; ++i)
      if (blockshape[i] > chunkshape[i])
        return make_error(errc::invalid_argument, TESSERA_MSG("array_partition: a block is larger than its chunk"));
  } else {
#if TESSERA_CODECS_ON_DEMAND
    if (&detail::array_partition_auto == nullptr)
      return make_error(errc::unsupported, TESSERA_MSG("array: the automatic chunk and block shapes are not linked into "
                                                       "this program (give both, or call tessera::partition_link_auto)"));
#endif
    TESSERA_TRY(detail::array_partition_auto(ndim, params.shape, itemsize, chunkshape, chunks_given, blockshape,
                                             blocks_given, params.partition));
  }
  TESSERA_TRY(layout_init(setup.layout, ndim, params.shape, chunkshape, blockshape));
  auto sizes = layout_sizes_compute(setup.layout, itemsize);
  if (!sizes.ok()) return sizes.err();
  if (sizes->block_nbytes > kChunkMaxBlocksize)
    return make_error(errc::overflow, TESSERA_MSG("array: a block exceeds the maximum block size"));
  setup.itemsize = itemsize;

  // Compression.
  if (params.clevel < 0 || params.clevel > kChunkMaxClevel)
    return make_error(errc::invalid_argument, TESSERA_MSG("array: clevel outside 0..9"));
  if (params.use_dict && !codec_takes_dict(params.compressor))
    return make_error(errc::invalid_argument, TESSERA_MSG("array: use_dict needs LZ4, LZ4HC or Zstd"));
  chunk_encode_params& e = setup.encode;
  e = chunk_encode_params{};
  e.typesize = chunk_typesize_of(itemsize);
  e.clevel = params.clevel;
  e.compressor = params.compressor;
  e.compcode_meta = params.compcode_meta;
  detail::filters_copy(e, params);
  e.split = params.split;
  e.blocksize = static_cast<int32_t>(sizes->block_nbytes);
  e.plugins = params.plugins;
  e.use_dict = params.use_dict;
  e.geometry = array_chunk_geometry(setup.layout);

  // The b2nd metalayer.
  b2nd_meta meta;
  meta.ndim = static_cast<int8_t>(ndim);
  for (int i = 0; i < ndim; ++i) {
    meta.shape[i] = params.shape[i];
    meta.chunkshape[i] = chunkshape[i];
    meta.blockshape[i] = blockshape[i];
  }
  meta.dtype = dtype;
  meta.has_dtype = true;
  auto meta_len = b2nd_meta_encode(meta, bytes_mut(setup.meta_bytes, sizeof setup.meta_bytes));
  if (!meta_len.ok()) return meta_len.err();

  if (params.nmetalayers > kFrameMaxMetalayers - 1 || (params.nmetalayers > 0 && params.metalayers == nullptr))
    return make_error(errc::invalid_argument, TESSERA_MSG("array: too many metalayers (or none given)"));
  setup.metalayers[0].name = name_of(kB2ndMetaName);
  setup.metalayers[0].content = bytes_view(setup.meta_bytes, *meta_len);
  for (uint32_t i = 0; i < params.nmetalayers; ++i) {
    if (names_equal(params.metalayers[i].name, kB2ndMetaName) || names_equal(params.metalayers[i].name, "caterva"))
      return make_error(errc::invalid_argument, TESSERA_MSG("array: the b2nd metalayer belongs to the array"));
    setup.metalayers[i + 1] = params.metalayers[i];
  }

  frame_create_params& f = setup.frame;
  f = frame_create_params{};
  f.typesize = itemsize;
  f.blocksize = static_cast<int32_t>(sizes->block_nbytes);
  f.chunksize = static_cast<int32_t>(sizes->chunk_nbytes);
  f.compcode = static_cast<uint8_t>(params.compressor);
  f.clevel = static_cast<uint8_t>(params.clevel);
  f.splitmode = static_cast<uint8_t>(params.split);
  f.use_dict = params.use_dict;
  detail::filters_copy(f, params);
  f.compcode_meta = params.compcode_meta;
  const uint32_t workers = params.exec.workers == 0 ? 1 : params.exec.workers;
  f.nthreads_comp = f.nthreads_decomp = static_cast<int16_t>(workers > 32767 ? 32767 : workers);
  f.metalayers = setup.metalayers;
  f.nmetalayers = params.nmetalayers + 1;
  f.expected_nchunks = setup.layout.nchunks;
  return ok_status();
}

// ---- Packing -----------------------------------------------------------------------------------------------

namespace detail {

namespace {

// Packing one chunk: each block of the stored chunk is copied from the source region it covers; only blocks that
// reach past the chunk's extent (padding) are cleared first. Blocks are disjoint, so they are packed in parallel.
struct pack_job {
  const array_layout* l = nullptr;
  int64_t itemsize = 0;
  bytes_view src;
  const int64_t* src_shape = nullptr;
  int64_t from[kMaxDims] = {};  // where the chunk's first item is in src
  int64_t ext[kMaxDims] = {};   // the chunk's extent (chunkshape cut at the array's edge)
  uint8_t* chunk = nullptr;
  tessera::cxx::atomic<bool> failed{false};
};

// Block nblock of the chunk into dst (block_nbytes bytes). Inlined into its callers: a size build has one.
__attribute__((always_inline)) inline status pack_block_into(const pack_job& j, int64_t nblock, uint8_t* dst) noexcept {
  const array_layout& l = *j.l;
  const size_t block_nbytes = static_cast<size_t>(l.block_nitems * j.itemsize);
  int64_t bc[kMaxDims] = {};
  TESSERA_TRY(layout_block_coords(l, nblock, bc));  // GCOVR_EXCL_BR_LINE: nblock is a block of the chunk
  int64_t from[kMaxDims] = {};
  int64_t region[kMaxDims] = {};
  bool padded = false;
  for (int d = 0; d < l.ndim; ++d) {
    // Inside the chunk: its extent and the block's start are below the chunkshape, an int32 (no 64-bit
    // multiply and compares per dimension on 32-bit targets).
    const int32_t bs = static_cast<int32_t>(l.blockshape[d]);
    const int32_t b0 = static_cast<int32_t>(bc[d]) * bs;
    const int32_t left = static_cast<int32_t>(j.ext[d]) - b0;
    const int32_t n = left < bs ? left : bs;
    if (n <= 0) {
      memset(dst, 0, block_nbytes);
      return ok_status();
    }
    padded |= n < bs;
    from[d] = j.from[d] + b0;
    region[d] = n;
  }
  if (padded) memset(dst, 0, block_nbytes);
  const int64_t zero[kMaxDims] = {};
  return nd_copy_region(l.ndim, j.itemsize, j.src, j.src_shape, from, bytes_mut(dst, block_nbytes), l.blockshape,
                        zero, region);
}

detail::code_status pack_block(const pack_job& j, int64_t nblock) noexcept {
  const size_t block_nbytes = static_cast<size_t>(j.l->block_nitems * j.itemsize);
  return pack_block_into(j, nblock, j.chunk + static_cast<size_t>(nblock) * block_nbytes);
}

// Where chunk nchunk of an array lies in a C-order source: src_shape, the chunk's first item at src_start (null:
// the chunk's own start in the array); src_shape null: src holds the chunk's items alone (the chunk's extent,
// from its origin). The chunk's start is computed into j.from, not into a local of the packing's frame.
__attribute__((always_inline)) inline status pack_job_init(pack_job& j, const array_layout& layout, int64_t itemsize, int64_t nchunk, bytes_view src,
                     const int64_t* src_shape, const int64_t* src_start) noexcept {
  TESSERA_TRY(layout_chunk_extent(layout, nchunk, j.from, j.ext));  // GCOVR_EXCL_BR_LINE: the callers' chunks are the grid's
  j.l = &layout;
  j.itemsize = itemsize;
  j.src = src;
  j.src_shape = src_shape != nullptr ? src_shape : j.ext;
  for (int d = 0; d < layout.ndim; ++d) {
    if (src_shape == nullptr) j.from[d] = 0;
    else if (src_start != nullptr) j.from[d] = src_start[d];
  }
  return ok_status();
}

void pack_task(void* context, size_t i, uint32_t) noexcept {
  auto& j = *static_cast<pack_job*>(context);
  // Every block lies inside the chunk and the chunk inside the source (the callers' checks): no copy fails.
  if (j.failed.load(tessera::cxx::memory_order_relaxed)) return;  // GCOVR_EXCL_BR_LINE: see above
  if (!pack_block(j, static_cast<int64_t>(i)).ok()) j.failed.store(true, tessera::cxx::memory_order_relaxed);  // GCOVR_EXCL_BR_LINE
}

#if TESSERA_SPEED_PATHS
// A chunk gathered block by block into the encoder; progress (or null) is told how many blocks are gathered.
struct gather_job : pack_job {
  uint32_t* progress = nullptr;
};

status gather_block(void* context, size_t nblock, bytes_mut dst) noexcept {
  const gather_job& j = *static_cast<const gather_job*>(context);
  // The encoder asks for blocks of the size chunk_gather_possible matched to the array's.
  if (static_cast<int64_t>(dst.size()) != j.l->block_nitems * j.itemsize)  // GCOVR_EXCL_BR_LINE: see above
    return make_error(errc::invalid_argument, TESSERA_MSG("array: a gathered block is not the array's"));  // GCOVR_EXCL_LINE
  if (j.progress != nullptr) __atomic_store_n(j.progress, static_cast<uint32_t>(nblock + 1), __ATOMIC_RELAXED);
  return pack_block_into(j, static_cast<int64_t>(nblock), dst.data());
}
#endif
// chunk_pack_items for items that are exactly the chunk's extent `ext`, serially: the packer's path, without the
// extent computed twice nor the parallel one.
detail::code_status chunk_pack_serial(const array_layout& layout, int64_t itemsize, bytes_view items, const int64_t* ext,
                         uint8_t* chunk) noexcept {
  if (layout.ndim == 0) {  // one item
    memcpy(chunk, items.data(), static_cast<size_t>(itemsize));
    return ok_status();
  }
  pack_job j;
  j.l = &layout;
  j.itemsize = itemsize;
  j.src = items;
  j.src_shape = ext;
  j.chunk = chunk;
  for (int d = 0; d < layout.ndim; ++d) j.ext[d] = ext[d];
  for (int64_t b = 0; b < layout.blocks_per_chunk; ++b) TESSERA_TRY(pack_block(j, b));
  return ok_status();
}

}  // namespace

#if TESSERA_SPEED_PATHS
bool chunk_gather_possible(const array_layout& layout, int64_t itemsize, const chunk_encode_params& params) noexcept {
  if (layout.ndim < 1) return false;
  for (uint8_t f : params.filters)
    if (f == static_cast<uint8_t>(filter_id::delta)) return false;
  auto bs = chunk_blocksize_compute(params, static_cast<size_t>(layout.extchunk_nitems * itemsize));
  return bs.ok() && int64_t{*bs} == layout.block_nitems * itemsize;
}

result<size_t> chunk_encode_from_items(chunk_encoder& e, const chunk_encode_params& params, const array_layout& layout,
                                       int64_t itemsize, int64_t nchunk, bytes_view src, const int64_t* src_shape,
                                       bytes_mut out, uint32_t* progress) noexcept {
  gather_job j;
  j.progress = progress;
  TESSERA_TRY(pack_job_init(j, layout, itemsize, nchunk, src, src_shape, nullptr));
  chunk_block_source b;
  b.gather = gather_block;
  b.context = &j;
  b.nbytes = static_cast<size_t>(layout.extchunk_nitems * itemsize);
  b.blocksize = static_cast<size_t>(layout.block_nitems * itemsize);
  return chunk_encode_gathered(e, params, b, out);
}
#endif

detail::code_status chunk_pack_items(const array_layout& layout, int64_t itemsize, int64_t nchunk, bytes_view src,
                        const int64_t* src_shape, const int64_t* src_start, bytes_mut chunk_buf,
                        const executor& exec) noexcept {
  pack_job j;
  TESSERA_TRY(pack_job_init(j, layout, itemsize, nchunk, src, src_shape, src_start));
  const int64_t chunk_nbytes = layout.extchunk_nitems * itemsize;
  if (static_cast<int64_t>(chunk_buf.size()) < chunk_nbytes)
    return make_error(errc::buffer_too_small, TESSERA_MSG("array: chunk buffer too small"));
  if (layout.ndim == 0) {  // one item
    if (src.size() < static_cast<size_t>(itemsize)) return make_error(errc::buffer_too_small, TESSERA_MSG("array: no item to pack"));
    memcpy(chunk_buf.data(), src.data(), static_cast<size_t>(itemsize));
    return ok_status();
  }
  j.chunk = chunk_buf.data();
  const size_t nblocks = static_cast<size_t>(layout.blocks_per_chunk);
  // Parallel when each worker gets at least ~64 KiB to copy (a wake-up costs about that much copying).
  if (exec.run != nullptr && exec.workers > 1 && chunk_nbytes >= int64_t{64} * 1024 * exec.workers && nblocks > 1) {
    executor_run(exec, nblocks, pack_task, &j);
    // No block copy fails (pack_task): the flag guards the callers' bounds.
    if (j.failed.load(tessera::cxx::memory_order_relaxed))  // GCOVR_EXCL_BR_LINE: see above
      return make_error(errc::out_of_range, TESSERA_MSG("array: the chunk's source region is outside the source"));  // GCOVR_EXCL_LINE
    return ok_status();
  }
  for (size_t b = 0; b < nblocks; ++b) TESSERA_TRY(pack_block(j, static_cast<int64_t>(b)));
  return ok_status();
}

status array_check_open(const array& a) noexcept {
  if (!array_access::open(a)) return make_error(errc::invalid_argument, TESSERA_MSG("array: not open"));
  return ok_status();
}

status array_budget_check(const array& a, uint64_t bytes, const char* what) noexcept {
  if (bytes > frame_max_alloc(array_access::frm(a))) return make_error(errc::resource_limit, what);
  return ok_status();
}

status worker_buffers_reserve(array& a, owned_array<uint8_t>& buffers, size_t* have, size_t per_worker, size_t workers,
                              const char* what) noexcept {
  if (*have >= per_worker && buffers.size() >= *have * workers) return ok_status();
  buffers.reset();
  *have = 0;
  if (workers == 0 || per_worker > SIZE_MAX / workers)
    return make_error(errc::overflow, TESSERA_MSG("array: worker buffers overflow"));
  TESSERA_TRY(array_budget_check(a, static_cast<uint64_t>(per_worker) * workers, what));
  TESSERA_TRY(buffers.allocate(array_access::alloc(a), per_worker * workers));
  *have = per_worker;
  return ok_status();
}

status array_check_writable(array& a) noexcept {
  TESSERA_TRY(array_check_open(a));
  if (!array_access::writable(a)) return make_error(errc::read_only, TESSERA_MSG("array: opened read-only"));
  if (!array_access::encoder_ready(a)) {
    chunk_encoder_options o;
    const int64_t block = array_access::sizes(a).block_nbytes;
    o.max_blocksize = block > 0 ? static_cast<size_t>(block) : 1;
    o.exec = array_access::exec(a);
    o.estimate_codec = array_access::encode(a).compressor;
    TESSERA_TRY(chunk_encoder_init(array_access::encoder(a), array_access::alloc(a), o));
    array_access::encoder_ready(a) = true;
  }
  return ok_status();
}

status array_finish(array& a) noexcept {
  if (!a.auto_commit) return ok_status();
  return frame_commit(array_access::frm(a));
}

result<bytes_view> array_chunk_encode(array& a, bytes_view chunk_buf, bytes_mut out) noexcept {
  auto n = chunk_encode(array_access::encoder(a), array_access::encode(a), chunk_buf, out);
  if (!n.ok()) return n.err();
  return bytes_view(out.data(), *n);
}

b2nd_meta array_meta_of(const array& a) noexcept {
  b2nd_meta m;
  const array_layout& l = array_access::layout(a);
  m.ndim = static_cast<int8_t>(l.ndim);
  shapes_from_layout(m, l);
  m.dtype = array_dtype(a);
  m.dtype_format = array_access::dtype_format(a);
  m.has_dtype = true;
  return m;
}

status array_meta_publish(array& a) noexcept {
  frame& f = array_access::frm(a);
  const span<const char> name =
      frame_meta_find(f, name_of(kB2ndMetaName)).ok() ? name_of(kB2ndMetaName) : name_of("caterva");
  auto old = frame_meta_find(f, name);
  if (!old.ok()) return old.err();
  const b2nd_meta meta = array_meta_of(a);
  const size_t need = b2nd_meta_encoded_size(meta);
  if (need == 0 || need > old->size())
    return make_error(errc::unsupported, TESSERA_MSG("array: the b2nd metalayer cannot be rewritten in place"));
  owned_array<uint8_t> buf;
  TESSERA_TRY(buf.allocate(array_access::alloc(a), old->size()));
  // Bytes past the new structure keep their old values (readers ignore them, as the reference does).
  memcpy(buf.data(), old->data(), old->size());
  auto n = b2nd_meta_encode(meta, bytes_mut(buf.data(), buf.size()));
  if (!n.ok()) return n.err();
  return frame_meta_update(f, name, bytes_view(buf.data(), buf.size()));
}

status array_attach(array& a, frame&& f, bool writable, const allocator& alloc, const executor& exec,
                    bool fresh) noexcept {
  const frame_info* info = frame_info_get(f);
  if (info == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("array: frame not open"));
  const span<const char> meta_name =
      frame_meta_find(f, name_of(kB2ndMetaName)).ok() ? name_of(kB2ndMetaName) : name_of("caterva");
  auto raw = frame_meta_find(f, meta_name);
  if (!raw.ok()) return make_error(errc::malformed, TESSERA_MSG("array: the frame has no b2nd metalayer"));
  span<const char> dt;  // views the metalayer's bytes
  {
    // About 1 KiB on the Cortex-M4: from the allocator, not the stack (an open or a create may run on a firmware
    // task's stack), and freed before the array's own allocations (an arena frees only its last block).
    detail::allocated<detail::b2nd_geometry> g;
    TESSERA_TRY(g.make(alloc));
    TESSERA_TRY(detail::b2nd_geometry_read(*raw, *info, fresh, frame_max_alloc(f), exec, *g));
    (void)array_release(a);
    array_access::alloc(a) = alloc;
    array_access::exec(a) = exec;
    array_access::layout(a) = g->layout;
    array_access::sizes(a) = g->sizes;
    array_access::itemsize(a) = info->typesize;
    array_access::dtype_format(a) = g->meta.dtype_format;
    dt = b2nd_meta_dtype_or_default(g->meta);
  }
  TESSERA_TRY(array_access::dtype(a).allocate(alloc, dt.size()));
  if (!dt.empty()) memcpy(array_access::dtype(a).data(), dt.data(), dt.size());
  array_access::encode(a) = encode_params_from(*info, array_access::sizes(a).block_nbytes);
  array_access::encode(a).plugins = array_access::plugins(a);
  array_access::encode(a).geometry = array_chunk_geometry(array_access::layout(a));
  TESSERA_TRY(decoder_setup(a));
  array_access::frm(a) = tessera::cxx::move(f);
  array_access::writable(a) = writable;
  array_access::open(a) = true;
  return ok_status();
}

}  // namespace detail

namespace {

// The packer's encoder options for a setup.
chunk_encoder_options packer_encoder_options(const array_frame_setup& setup, const executor& exec) noexcept {
  const int64_t block_nbytes = setup.layout.block_nitems * setup.itemsize;
  chunk_encoder_options o;
  o.max_blocksize = block_nbytes > 0 ? static_cast<size_t>(block_nbytes) : 1;
  o.exec = exec;
  o.estimate_codec = setup.encode.compressor;
  o.estimate_clevel = setup.encode.clevel;
  o.blosclz_hash_log = setup.blosclz_hash_log;
  return o;
}

// Bytes an owned_array of n bytes takes (rounded as owned_array allocates).
size_t packer_buffer_bytes(size_t n) noexcept { return n == 0 ? 0 : n + 64; }

}  // namespace

size_t array_chunk_packer_estimate(const array_frame_setup& setup, const executor& exec) noexcept {
  const size_t chunk_nbytes = static_cast<size_t>(setup.layout.extchunk_nitems * setup.itemsize);
  return chunk_encoder_estimate(packer_encoder_options(setup, exec)) + packer_buffer_bytes(chunk_nbytes) +
         packer_buffer_bytes(chunk_encode_bound(chunk_nbytes));
}

status array_chunk_packer_init(array_chunk_packer& p, const array_frame_setup& setup, const allocator& alloc,
                               const executor& exec) noexcept {
  array_access::layout(p) = setup.layout;
  array_access::itemsize(p) = setup.itemsize;
  array_access::encode(p) = setup.encode;
  const int64_t chunk_nbytes = setup.layout.extchunk_nitems * setup.itemsize;
  TESSERA_TRY(chunk_encoder_init(array_access::encoder(p), alloc, packer_encoder_options(setup, exec)));
  TESSERA_TRY(array_access::chunk(p).allocate(alloc, static_cast<size_t>(chunk_nbytes)));
  return array_access::out(p).allocate(alloc, chunk_encode_bound(static_cast<size_t>(chunk_nbytes)));
}

result<bytes_view> array_chunk_pack(array_chunk_packer& p, int64_t nchunk, bytes_view items) noexcept {
  const array_layout& l = array_access::layout(p);
  const int64_t itemsize = array_access::itemsize(p);
  if (itemsize < 1) return make_error(errc::invalid_argument, TESSERA_MSG("array_chunk_pack: packer not initialized"));
  int64_t cstart[kMaxDims] = {};
  int64_t cext[kMaxDims] = {};
  TESSERA_TRY(layout_chunk_extent(l, nchunk, cstart, cext));
  // The extent's bytes: at most the chunk's, an int32 (layout_sizes_compute checked it), so a size_t product.
  size_t n = static_cast<size_t>(itemsize);
  for (int i = 0; i < l.ndim; ++i) n *= static_cast<size_t>(cext[i]);
  if (items.size() != n)
    return make_error(errc::invalid_argument, TESSERA_MSG("array_chunk_pack: items are not the chunk's extent"));
  owned_array<uint8_t>& chunk = array_access::chunk(p);  // extchunk_nitems items (array_chunk_packer_init)
  TESSERA_TRY(detail::chunk_pack_serial(l, itemsize, items, cext, chunk.data()));
  owned_array<uint8_t>& out = array_access::out(p);
  auto r = chunk_encode(array_access::encoder(p), array_access::encode(p), bytes_view(chunk.data(), chunk.size()),
                        bytes_mut(out.data(), out.size()));
  if (!r.ok()) return r.err();
  return bytes_view(out.data(), *r);
}

// ---- Create, open, close -----------------------------------------------------------------------------------

namespace detail {

status frame_create_at(frame& f, const array_target& target, const allocator& alloc,
                       const frame_create_params& p) noexcept {
  frame_open_options o = target.options;
  o.writable = true;
  const bool contiguous = target.st.read != nullptr;
  if (contiguous == (target.dir.open != nullptr))
    return make_error(errc::invalid_argument, TESSERA_MSG("array: the target needs exactly one of a storage or a directory"));
  if (contiguous) return frame_create(f, target.st, alloc, p, o);
  return frame_create_sparse(f, target.dir, alloc, p, o);
}

}  // namespace detail

namespace {

// The origin of a chunk's own buffer (in the image, not on the stack of each chunk's packing).
constexpr int64_t kOrigin[kMaxDims] = {};

// The source's items for chunk n of a new array read into `items` (room for a chunk's items), C order over the
// chunk's extent; their bytes into *nbytes. Its own frame: the chunk's corners are not on the stack while the
// chunk is packed.
__attribute__((noinline)) status chunk_items_read(const array_layout& l, int64_t itemsize, int64_t n,
                                                  const detail::array_source& source, uint8_t* items,
                                                  size_t* nbytes) noexcept {
  int64_t cstart[kMaxDims] = {};
  int64_t cext[kMaxDims] = {};
  TESSERA_TRY(layout_chunk_extent(l, n, cstart, cext));  // GCOVR_EXCL_BR_LINE: a chunk of the create's loop
  int64_t cstop[kMaxDims] = {};
  int64_t nitems = 1;
  for (int d = 0; d < l.ndim; ++d) {
    cstop[d] = cstart[d] + cext[d];
    nitems *= cext[d];
  }
  const bytes_mut items_view(items, static_cast<size_t>(nitems * itemsize));
  TESSERA_TRY(source.read(source.context, cstart, cstop, items_view, cext, kOrigin));
  *nbytes = items_view.size();
  return ok_status();
}

// Packs chunk n of a new array into chunk: straight from the caller's C-order buffer when the source has one (no
// staging copy), else the source's items for the chunk read into `items` (room for a chunk's items) first.
status chunk_from_source(const array_layout& l, int64_t itemsize, int64_t n, const detail::array_source& source,
                         uint8_t* items, bytes_mut chunk, const executor& exec) noexcept {
  if (source.items.data() != nullptr)
    return detail::chunk_pack_items(l, itemsize, n, source.items, source.items_shape, nullptr, chunk, exec);
  size_t nbytes = 0;
  TESSERA_TRY(chunk_items_read(l, itemsize, n, source, items, &nbytes));
  return detail::chunk_pack_items(l, itemsize, n, bytes_view(items, nbytes), nullptr, nullptr, chunk, exec);
}

// Whole chunks encoded on every worker at once, each worker with its own serial encoder, then appended in
// order: a create's encode work spreads over the workers (blocks of one chunk in parallel gained 8% on two:
// every round of blocks ends waiting for its slowest). The chunks are the ones a serial create writes. A round's
// appends (the caller's: they may grow the storage through the allocator) run beside the next round's encodes
// (executor_run_beside), so the workers never idle through them, and, with no gap between runs, a pool's
// threads go from run to run without sleeping. Memory: per worker an encoder and a chunk; the encoded chunks of
// two rounds, a round holding one chunk per worker (from a C-order buffer: no chunk, blocks are gathered, and
// kRunChunksPerWorker encoded chunks per worker).
constexpr uint32_t kMaxChunkWorkers = 64;
#if TESSERA_SPEED_PATHS
// Chunks per worker in one run of a create from a C-order buffer (their encoded outputs held until the run's
// appends): 3 made runs of 2 workers end less often on their slowest chunk than 1 (create 2 threads ~10% faster).
constexpr uint32_t kRunChunksPerWorker = 3;
#endif
// A worker's progress while it encodes no chunk.
constexpr uint32_t kNoChunk = UINT32_MAX;

struct chunk_round {
  const array_layout* l = nullptr;
  int64_t itemsize = 0;
  const detail::array_source* source = nullptr;
  bool packed = false;      // the caller packed the round's chunks (a source read that is not thread-safe)
  bool gathered = false;    // each block gathered straight from the source's items into the encoder (no chunk)
  int64_t first = 0;        // the round's first chunk
  // Gathered rounds: the workers claim chunks from `next` (first + next), `base` of them, then up to `limit`:
  // a worker that runs out takes one more while another's chunk is less than half gathered (progress, blocks
  // per worker), so that the round does not end on that worker alone. The caller's appends before its first
  // chunk leave it a chunk behind the others; without the extra chunks an even round ends with the others idle
  // through about the appends' time.
  size_t next = 0;
  size_t base = 0;
  size_t limit = 0;
  uint32_t progress[kMaxChunkWorkers] = {};
  cxx::atomic<bool> bad_worker{false};
  uint8_t* chunks = nullptr;
  size_t chunk_bytes = 0;   // the stride between chunk buffers (chunk_nbytes rounded up to 64)
  size_t chunk_nbytes = 0;
  uint8_t* outs = nullptr;  // the round's encoded chunks (one half of the two rounds' buffers)
  size_t out_bytes = 0;
  chunk_encoder* encoders = nullptr;  // one per worker
  uint32_t nworkers = 0;
  const chunk_encode_params* params = nullptr;
  size_t* sizes = nullptr;  // the round's encoded sizes (one half of all_sizes)
  size_t all_sizes[2][kMaxChunkWorkers] = {};
  status errs[kMaxChunkWorkers];
};

// The previous round's encoded chunks, appended in order by the caller beside the next round's encodes.
struct round_appends {
  frame* f = nullptr;
  const uint8_t* outs = nullptr;
  size_t out_bytes = 0;
  const size_t* sizes = nullptr;
  size_t count = 0;
  status st;
};

void round_appends_run(void* context) noexcept {
  auto& a = *static_cast<round_appends*>(context);
  for (size_t i = 0; i < a.count && a.st.ok(); ++i)
    a.st = detail::frame_chunk_append_table(*a.f, bytes_view(a.outs + i * a.out_bytes, a.sizes[i]));
}

#if TESSERA_SPEED_PATHS
// Whether a worker other than `me` encodes a chunk it has gathered less than half of.
bool other_chunk_early(const chunk_round& r, uint32_t me) noexcept {
  const uint32_t half = static_cast<uint32_t>(r.l->blocks_per_chunk / 2);
  for (uint32_t o = 0; o < r.nworkers; ++o) {
    if (o == me) continue;
    const uint32_t p = __atomic_load_n(&r.progress[o], __ATOMIC_RELAXED);
    if (p != kNoChunk && p < half) return true;
  }
  return false;
}

// Worker `worker` encodes the round's chunks it claims until there are none for it (a gathered round).
void chunk_round_claim(chunk_round& r, uint32_t worker) noexcept {
  uint32_t* const progress = &r.progress[worker];
  for (;;) {
    size_t c = __atomic_load_n(&r.next, __ATOMIC_RELAXED);
    if (c >= r.limit || (c >= r.base && !other_chunk_early(r, worker))) return;
    // Claims are consecutive: an extra chunk is claimed only where the last one left off.
    if (!__atomic_compare_exchange_n(&r.next, &c, c + 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) continue;  // GCOVR_EXCL_BR_LINE: a race
    __atomic_store_n(progress, 0u, __ATOMIC_RELAXED);
    auto enc = detail::chunk_encode_from_items(r.encoders[worker], *r.params, *r.l, r.itemsize,
                                               r.first + static_cast<int64_t>(c), r.source->items,
                                               r.source->items_shape, bytes_mut(r.outs + c * r.out_bytes, r.out_bytes),
                                               progress);
    __atomic_store_n(progress, kNoChunk, __ATOMIC_RELAXED);
    if (!enc.ok()) r.errs[c] = enc.err();
    else r.sizes[c] = *enc;
  }
}
#endif

void chunk_round_task(void* context, size_t i, uint32_t worker) noexcept {
  auto& r = *static_cast<chunk_round*>(context);
  if (worker >= r.nworkers) {
    r.bad_worker.store(true, cxx::memory_order_relaxed);
    return;
  }
#if TESSERA_SPEED_PATHS
  if (r.gathered) {  // the task claims its chunks itself
    chunk_round_claim(r, worker);
    return;
  }
#endif
  const int64_t n = r.first + static_cast<int64_t>(i);
  const bytes_mut chunk(r.chunks + i * r.chunk_bytes, r.chunk_nbytes);
  if (!r.packed) {
    // Packed from the caller's buffer, which array_create checked covers the array: it cannot fail.
    const status st = chunk_from_source(*r.l, r.itemsize, n, *r.source, nullptr, chunk, executor_serial());
    if (!st.ok()) {  // GCOVR_EXCL_BR_LINE: see above
      r.errs[i] = st;  // GCOVR_EXCL_LINE
      return;          // GCOVR_EXCL_LINE
    }
  }
  auto enc = chunk_encode(r.encoders[worker], *r.params, bytes_view(chunk.data(), chunk.size()),
                          bytes_mut(r.outs + i * r.out_bytes, r.out_bytes));
  if (!enc.ok()) {
    r.errs[i] = enc.err();
    return;
  }
  r.sizes[i] = *enc;
}

// The chunks of a new array, `workers` at a time (exec.workers > 1), appended (the caller commits). Encoders,
// buffers and codec state are made here, on the caller's thread; the tasks only pack and encode. Not inlined:
// its locals are not on the stack under the caller's commit.
__attribute__((noinline)) status chunks_write_parallel(array& a, const detail::array_source& source, const executor& exec,
                             const allocator& alloc) noexcept {
  const array_layout& l = array_access::layout(a);
  const int64_t itemsize = array_access::itemsize(a);
  const size_t chunk_nbytes = static_cast<size_t>(array_access::sizes(a).chunk_nbytes);
  const size_t out_bytes = (chunk_encode_bound(chunk_nbytes) + 63) / 64 * 64;
  const size_t chunk_bytes = (chunk_nbytes + 63) / 64 * 64;
  const uint32_t w = exec.workers < kMaxChunkWorkers ? exec.workers : kMaxChunkWorkers;
  const chunk_encode_params& params = array_access::encode(a);
  owned_array<chunk_encoder> encoders;
  TESSERA_TRY(encoders.allocate(alloc, w));
  for (uint32_t i = 0; i < w; ++i) new (tessera::cxx::place, &encoders[i]) chunk_encoder;
  struct encoders_guard {
    owned_array<chunk_encoder>& e;
    uint32_t n;
    ~encoders_guard() {
      for (uint32_t i = 0; i < n; ++i) e[i].~chunk_encoder();
    }
  } guard{encoders, w};
  chunk_encoder_options eo;
  const int64_t block = array_access::sizes(a).block_nbytes;
  eo.max_blocksize = block > 0 ? static_cast<size_t>(block) : 1;
  eo.estimate_codec = params.compressor;
  for (uint32_t i = 0; i < w; ++i) {
    TESSERA_TRY(chunk_encoder_init(encoders[i], alloc, eo));
    TESSERA_TRY(detail::chunk_encoder_prepare(encoders[i], params, chunk_nbytes));
  }
  // Chunks are below 2 GiB and workers at most 64: only a 32-bit size_t can overflow.
  if (chunk_bytes > SIZE_MAX / w || out_bytes > SIZE_MAX / w) return make_error(errc::overflow, TESSERA_MSG("array: chunk buffers overflow"));  // GCOVR_EXCL_BR_LINE
  owned_array<uint8_t> chunks, outs, items;
  const bool packed = source.items.data() == nullptr;  // a source read (another array) runs on this thread
  bool gathered = false;
#if TESSERA_SPEED_PATHS
  gathered = !packed && detail::chunk_gather_possible(l, itemsize, params);
#endif
  // Chunks per run: one per worker when they are packed first (a chunk buffer each), else kRunChunksPerWorker
  // per worker, claimed dynamically, so that a run does not end waiting for its slowest chunk as often.
  uint32_t slots = w;   // encoded chunks a round may hold
  uint32_t base = w;    // chunks a round encodes before any extra one
#if TESSERA_SPEED_PATHS
  if (gathered) {
    // kRunChunksPerWorker per worker, and room for one extra per worker but one (chunk_round).
    slots = w * (kRunChunksPerWorker + 1) - 1 < kMaxChunkWorkers ? w * (kRunChunksPerWorker + 1) - 1 : kMaxChunkWorkers;
    base = slots - (w - 1);
  }
  if (out_bytes > SIZE_MAX / slots) return make_error(errc::overflow, TESSERA_MSG("array: chunk buffers overflow"));  // GCOVR_EXCL_BR_LINE: 32-bit only
#endif
  if (!gathered) TESSERA_TRY(chunks.allocate(alloc, chunk_bytes * w));
  if (out_bytes * slots > SIZE_MAX / 2) return make_error(errc::overflow, TESSERA_MSG("array: chunk buffers overflow"));  // GCOVR_EXCL_BR_LINE: 32-bit only
  TESSERA_TRY(outs.allocate(alloc, out_bytes * slots * 2));
  if (packed) TESSERA_TRY(items.allocate(alloc, static_cast<size_t>(l.chunk_nitems * itemsize)));
  detail::allocated<chunk_round> round;  // 64 sizes and statuses: from the allocator, not the stack
  TESSERA_TRY(round.make(alloc));
  chunk_round& r = *round;
  r.l = &l;
  r.itemsize = itemsize;
  r.source = &source;
  r.packed = packed;
  r.gathered = gathered;
  r.chunks = chunks.data();
  r.chunk_bytes = chunk_bytes;
  r.chunk_nbytes = chunk_nbytes;
  r.out_bytes = out_bytes;
  r.encoders = encoders.data();
  r.nworkers = w;
  r.params = &params;
  round_appends prev;  // the previous round's chunks, appended beside this round's encodes
  prev.f = &array_access::frm(a);
  prev.out_bytes = out_bytes;
  uint32_t half = 0;
  size_t count = 0;
  for (int64_t first = 0; first < l.nchunks; first += static_cast<int64_t>(count), half ^= 1u) {
    const int64_t left = l.nchunks - first;
    const size_t ntasks = static_cast<size_t>(left < slots ? left : slots);
    count = static_cast<size_t>(left < base ? left : base);
    r.first = first;
    r.outs = outs.data() + out_bytes * slots * half;
    r.sizes = r.all_sizes[half];
    r.next = 0;
    r.base = count;
    r.limit = ntasks;
    for (uint32_t i = 0; i < w; ++i) r.progress[i] = kNoChunk;
    for (size_t i = 0; i < ntasks; ++i) r.errs[i] = ok_status();
    if (packed) {
      for (size_t i = 0; i < count; ++i)
        TESSERA_TRY(chunk_from_source(l, itemsize, first + static_cast<int64_t>(i), source, items.data(),
                                      bytes_mut(r.chunks + i * chunk_bytes, chunk_nbytes), exec));
    }
    // A gathered round's tasks claim its chunks themselves (one task per slot, so that every worker gets one).
    executor_run_beside(exec, gathered ? ntasks : count, chunk_round_task, &r, round_appends_run, &prev);
    TESSERA_TRY(prev.st);
    if (r.bad_worker.load(cxx::memory_order_relaxed))
      return make_error(errc::invalid_argument, TESSERA_MSG("executor: a task ran with a worker index past executor.workers"));
    if (gathered) count = r.next;
    for (size_t i = 0; i < count; ++i) TESSERA_TRY(r.errs[i]);
    prev.outs = r.outs;
    prev.sizes = r.sizes;
    prev.count = count;
  }
  round_appends_run(&prev);  // the last round's
  return prev.st;
}

#if TESSERA_SPEED_PATHS
// Where the next chunk is encoded: straight into the storage, at the place its append writes it, when the storage
// lends that room (a memory buffer: the append then copies nothing), else into out. The same size either way,
// so the encoder's output limits, and the chunk's bytes, are the same.
bytes_mut encode_target(array& a, owned_array<uint8_t>& out) noexcept {
  const bytes_mut room = detail::frame_append_room(array_access::frm(a), out.size());
  return room.size() == out.size() ? room : bytes_mut(out.data(), out.size());
}
#endif

// The chunks of a new array one after the other, appended (the caller commits). Not inlined: its locals are not
// on the stack under the caller's commit, nor under the parallel create.
__attribute__((noinline)) status chunks_write_serial(array& a, const detail::array_source& source,
                                                     const allocator& alloc) noexcept {
  const array_layout& l = array_access::layout(a);
  const int64_t itemsize = array_access::itemsize(a);
  const int64_t chunk_nbytes = array_access::sizes(a).chunk_nbytes;
  const executor& exec = array_access::exec(a);
  owned_array<uint8_t> items, chunk, out;
  bool gathered = false;
#if TESSERA_SPEED_PATHS
  gathered = source.items.data() != nullptr && detail::chunk_gather_possible(l, itemsize, array_access::encode(a));
#endif
  if (l.nchunks > 0) {
    if (source.items.data() == nullptr) TESSERA_TRY(items.allocate(alloc, static_cast<size_t>(l.chunk_nitems * itemsize)));
    if (!gathered) TESSERA_TRY(chunk.allocate(alloc, static_cast<size_t>(chunk_nbytes)));
    TESSERA_TRY(out.allocate(alloc, chunk_encode_bound(static_cast<size_t>(chunk_nbytes))));
  }
  for (int64_t n = 0; n < l.nchunks; ++n) {
#if TESSERA_SPEED_PATHS
    if (gathered) {
      const bytes_mut target = encode_target(a, out);
      auto enc = detail::chunk_encode_from_items(array_access::encoder(a), array_access::encode(a), l, itemsize, n,
                                                 source.items, source.items_shape, target);
      if (!enc.ok()) return enc.err();
      TESSERA_TRY(detail::frame_chunk_append_table(array_access::frm(a), bytes_view(target.data(), *enc)));
      continue;
    }
#endif
    TESSERA_TRY(chunk_from_source(l, itemsize, n, source, items.data(), bytes_mut(chunk.data(), chunk.size()), exec));
#if TESSERA_SPEED_PATHS
    const bytes_mut target = encode_target(a, out);  // after the source's read: only the append comes between
#else
    const bytes_mut target(out.data(), out.size());
#endif
    auto enc = detail::array_chunk_encode(a, bytes_view(chunk.data(), chunk.size()), target);
    if (!enc.ok()) return enc.err();
    TESSERA_TRY(detail::frame_chunk_append_table(array_access::frm(a), *enc));
  }
  return ok_status();
}

// The chunks of a new array (open on its frame, nothing appended yet) from source, then the commit.
status chunks_write(array& a, const detail::array_source& source, const allocator& alloc) noexcept {
  TESSERA_TRY(detail::array_check_writable(a));
  const executor& exec = array_access::exec(a);
  if (exec.run != nullptr && exec.workers > 1 && array_access::layout(a).nchunks > 1)
    TESSERA_TRY(chunks_write_parallel(a, source, exec, alloc));
  else
    TESSERA_TRY(chunks_write_serial(a, source, alloc));
  return frame_commit(array_access::frm(a));
}

// Every chunk of a new array (open on its frame, nothing appended yet) one special chunk, as the reference's
// b2nd_zeros / b2nd_nans / b2nd_uninit / b2nd_full write them, then the commit.
status special_chunks_write(array& a, const chunk_encode_params& encode, chunk_special special, bytes_view item,
                            const allocator& alloc) noexcept {
  const array_layout& l = array_access::layout(a);
  owned_array<uint8_t> chunk;
  const int64_t chunk_nbytes = array_access::sizes(a).chunk_nbytes;
  if (l.nchunks > 0) {
    TESSERA_TRY(chunk.allocate(alloc, kChunkHeaderExtendedSize + static_cast<size_t>(array_access::itemsize(a))));
    auto n = chunk_encode_special(encode, special, static_cast<size_t>(chunk_nbytes), item,
                                  bytes_mut(chunk.data(), chunk.size()));
    if (!n.ok()) return n.err();
    for (int64_t i = 0; i < l.nchunks; ++i)
      TESSERA_TRY(detail::frame_chunk_append_table(array_access::frm(a), bytes_view(chunk.data(), *n)));
  }
  return frame_commit(array_access::frm(a));
}

}  // namespace

namespace detail {

namespace {

// A new array's frame made and attached to a, nothing appended yet. Its own frame: the setup and the frame
// handle are not on the stack while the chunks are written.
__attribute__((noinline)) status array_frame_open_new(array& a, const array_target& target, const allocator& alloc,
                                                      const array_params& params) noexcept {
  allocated<array_frame_setup> setup;  // 1.5 KiB on the Cortex-M4: from the allocator, not the stack
  TESSERA_TRY(setup.make(alloc));
  TESSERA_TRY(array_frame_setup_make(*setup, params));
  frame f;
  TESSERA_TRY(detail::frame_create_at(f, target, alloc, setup->frame));
  return array_attach(a, tessera::cxx::move(f), true, alloc, params.exec, true);
}

}  // namespace

status array_create_from_source(array& a, const array_target& target, const allocator& alloc,
                                const array_params& params, const array_source& source) noexcept {
  TESSERA_TRY(array_frame_open_new(a, target, alloc, params));
  // A create that fails leaves the handle closed, as it found it (not open on a frame that was never committed).
  const status s = chunks_write(a, source, alloc);
  if (!s.ok()) (void)array_release(a);
  return s;
}

}  // namespace detail

status array_create(array& a, const array_target& target, const allocator& alloc, const array_params& params,
                    const array_fill& fill) noexcept {
  array_access::plugins(a) = params.plugins;
  detail::allocated<array_frame_setup> setup;  // 1.5 KiB on the Cortex-M4: from the allocator, not the stack
  TESSERA_TRY(setup.make(alloc));
  TESSERA_TRY(array_frame_setup_make(*setup, params));
  const array_layout& l = setup->layout;
  const int64_t itemsize = setup->itemsize;
  int64_t nbytes = 0;
  {
    auto s = layout_sizes_compute(l, itemsize);
    if (!s.ok()) return s.err();
    nbytes = s->array_nbytes;
  }
  chunk_special special = chunk_special::none;
  switch (fill.kind) {
    case array_fill_kind::uninit: special = chunk_special::uninit; break;
    case array_fill_kind::zeros: special = chunk_special::zeros; break;
    case array_fill_kind::nans:
      if (itemsize != 4 && itemsize != 8)
        return make_error(errc::invalid_argument, TESSERA_MSG("array: NaN arrays need an itemsize of 4 or 8"));
      special = chunk_special::nan;
      break;
    case array_fill_kind::full:
      if (static_cast<int64_t>(fill.bytes.size()) != itemsize)
        return make_error(errc::invalid_argument, TESSERA_MSG("array: the fill value must be one item"));
      special = chunk_special::value;
      break;
    case array_fill_kind::buffer: {
      if (static_cast<int64_t>(fill.bytes.size()) < nbytes)
        return make_error(errc::buffer_too_small, TESSERA_MSG("array: the buffer is smaller than the array"));
      // Packed straight from the caller's buffer (items set): the source is never read through a callback.
      detail::array_source src{nullptr, nullptr};
      src.items = fill.bytes;
      src.items_shape = l.shape;
      return detail::array_create_from_source(a, target, alloc, params, src);
    }
    default: return make_error(errc::invalid_argument, TESSERA_MSG("array: unknown fill kind"));
  }
  frame f;
  TESSERA_TRY(detail::frame_create_at(f, target, alloc, setup->frame));
  TESSERA_TRY(detail::array_attach(a, tessera::cxx::move(f), true, alloc, params.exec, true));
  // A create that fails leaves the handle closed, as it found it (not open on a frame that was never committed).
  const status s = special_chunks_write(a, setup->encode, special, fill.bytes, alloc);
  if (!s.ok()) (void)detail::array_release(a);
  return s;
}

namespace {

status open_common(array& a, frame& f, const allocator& alloc, const array_open_options& options) noexcept {
  array_access::plugins(a) = options.plugins;
  status s = detail::array_attach(a, tessera::cxx::move(f), options.frame.writable, alloc, options.exec);
  if (!s.ok()) (void)detail::frame_release(f);
  return s;
}

}  // namespace

status array_open(array& a, const storage& st, const allocator& alloc, const array_open_options& options) noexcept {
  frame f;
  TESSERA_TRY(frame_open(f, st, alloc, options.frame));
  return open_common(a, f, alloc, options);
}

status array_open_sparse(array& a, const storage_directory& dir, const allocator& alloc,
                         const array_open_options& options) noexcept {
  frame f;
  TESSERA_TRY(frame_open_sparse(f, dir, alloc, options.frame));
  return open_common(a, f, alloc, options);
}

status array_open_frame(array& a, frame&& f, bool writable, const allocator& alloc, const executor& exec,
                        const chunk_plugins* plugins) noexcept {
  array_access::plugins(a) = plugins;
  return detail::array_attach(a, tessera::cxx::move(f), writable, alloc, exec);
}

status array_open_again(array& reader, const array& a, const allocator& alloc, const executor& exec) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  if (&reader == &a) return make_error(errc::invalid_argument, TESSERA_MSG("array_open_again: the same array"));
  // A torn or changing header is retried by frame_open_again; a metalayer caught between two commits shows as
  // a geometry that disagrees with the chunks, retried here.
  status last = ok_status();
  for (int attempt = 0; attempt < 8; ++attempt) {
    frame f;
    last = frame_open_again(f, array_access::frm(a), alloc);
    if (!last.ok()) return last;
    array fresh;
    array_access::plugins(fresh) = array_access::plugins(a);
    last = detail::array_attach(fresh, tessera::cxx::move(f), false, alloc, exec);
    if (last.ok()) {
      fresh.auto_commit = a.auto_commit;
      (void)detail::array_release(reader);
      reader = tessera::cxx::move(fresh);
      return ok_status();
    }
    if (last.code != errc::malformed && last.code != errc::corrupt) break;
  }
  return last;
}

status array_refresh(array& a) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  if (array_access::writable(a)) return make_error(errc::invalid_argument, TESSERA_MSG("array_refresh: a writable array is its own writer"));
  array fresh;
  TESSERA_TRY(array_open_again(fresh, a, array_access::alloc(a), array_access::exec(a)));
  (void)detail::array_release(a);
  a = tessera::cxx::move(fresh);
  return ok_status();
}

status array_commit(array& a) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  return frame_commit(array_access::frm(a));
}

bool array_dirty(const array& a) noexcept {
  return array_access::open(a) && array_access::writable(a) && frame_dirty(array_access::frm(a));
}

status array_compact(array& a) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  if (!array_access::writable(a)) return make_error(errc::read_only, TESSERA_MSG("array: opened read-only"));
  return frame_compact(array_access::frm(a));
}

namespace detail {
namespace {
// What closing leaves, once the frame is closed or released: the error a close reports, and no state.
status array_forget(array& a, status s, bool dropped) noexcept {
  if (s.ok() && dropped)
    s = make_error(errc::uncommitted, TESSERA_MSG("array_close: changes that were never committed were dropped"));
  array_access::open(a) = false;
  array_access::writable(a) = false;
  chunk_decoder_release(array_access::decoder(a));
  chunk_encoder_release(array_access::encoder(a));
  array_access::encoder_ready(a) = false;
  array_access::dtype(a).reset();
  array_access::read_state(a).reset();
  return s;
}
}  // namespace

// Without the frame's tidy (frame_release), so that the library's resets and failure paths never reach a commit.
status array_release(array& a) noexcept {
  const bool dropped = array_dirty(a);
  return array_forget(a, array_access::open(a) ? frame_release(array_access::frm(a)) : ok_status(), dropped);
}
}  // namespace detail

status array_close(array& a) noexcept {
  const bool dropped = array_dirty(a);
  return detail::array_forget(a, array_access::open(a) ? frame_close(array_access::frm(a)) : ok_status(), dropped);
}

// ---- What it is --------------------------------------------------------------------------------------------

bool array_is_open(const array& a) noexcept { return array_access::open(a); }
const array_layout& array_layout_get(const array& a) noexcept { return array_access::layout(a); }
int32_t array_itemsize(const array& a) noexcept { return array_access::itemsize(a); }
int64_t array_nbytes(const array& a) noexcept { return array_access::sizes(a).array_nbytes; }
span<const char> array_dtype(const array& a) noexcept {
  const owned_array<char>& d = array_access::dtype(a);
  return span<const char>(d.data(), d.size());
}
frame& array_frame(array& a) noexcept { return array_access::frm(a); }
const frame& array_frame(const array& a) noexcept { return array_access::frm(a); }

array_params array_params_get(const array& a) noexcept {
  array_params p;
  const array_layout& l = array_access::layout(a);
  p.ndim = l.ndim;
  detail::shapes_from_layout(p, l);
  p.dtype = array_dtype(a);
  p.itemsize = array_access::itemsize(a);
  const chunk_encode_params& e = array_access::encode(a);
  p.compressor = e.compressor;
  p.clevel = e.clevel;
  detail::filters_copy(p, e);
  p.split = e.split;
  p.compcode_meta = e.compcode_meta;
  p.use_dict = e.use_dict;
  p.plugins = array_access::plugins(a);
  p.exec = array_access::exec(a);
  return p;
}

// ---- Metalayers --------------------------------------------------------------------------------------------

result<bytes_view> array_meta_find(const array& a, span<const char> name) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  return frame_meta_find(array_access::frm(a), name);
}

status array_meta_update(array& a, span<const char> name, bytes_view content) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  if (names_equal(name, kB2ndMetaName) || names_equal(name, "caterva"))
    return make_error(errc::invalid_argument, TESSERA_MSG("array: the b2nd metalayer belongs to the array"));
  if (!array_access::writable(a)) return make_error(errc::read_only, TESSERA_MSG("array: opened read-only"));
  TESSERA_TRY(frame_meta_update(array_access::frm(a), name, content));
  return detail::array_finish(a);
}

status array_meta_add(array& a, span<const char> name, bytes_view content) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  if (!array_access::writable(a)) return make_error(errc::read_only, TESSERA_MSG("array: opened read-only"));
  TESSERA_TRY(frame_meta_add(array_access::frm(a), name, content));
  return detail::array_finish(a);
}

uint32_t array_meta_count(const array& a) noexcept {
  const frame_info* info = array_access::open(a) ? frame_info_get(array_access::frm(a)) : nullptr;
  return info != nullptr ? info->nmetalayers : 0;
}

result<span<const char>> array_meta_name(const array& a, uint32_t i) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  return frame_meta_name(array_access::frm(a), i);
}

bool array_meta_exists(const array& a, span<const char> name) noexcept {
  return array_access::open(a) && frame_meta_find(array_access::frm(a), name).ok();
}

uint32_t array_vlmeta_count(const array& a) noexcept {
  const frame_info* info = array_access::open(a) ? frame_info_get(array_access::frm(a)) : nullptr;
  return info != nullptr ? info->nvlmetalayers : 0;
}

result<span<const char>> array_vlmeta_name(const array& a, uint32_t i) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  return frame_vlmeta_name(array_access::frm(a), i);
}

bool array_vlmeta_exists(const array& a, span<const char> name) noexcept {
  return array_access::open(a) && frame_vlmeta_raw(array_access::frm(a), name).ok();
}

result<size_t> array_vlmeta_nbytes(const array& a, span<const char> name) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  return frame_vlmeta_nbytes(array_access::frm(a), name);
}

result<size_t> array_vlmeta_read(array& a, span<const char> name, bytes_mut out) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  return frame_vlmeta_decode(array_access::frm(a), array_access::decoder(a), name, out);
}

status array_vlmeta_write(array& a, span<const char> name, bytes_view content) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  if (!array_access::writable(a)) return make_error(errc::read_only, TESSERA_MSG("array: opened read-only"));
  TESSERA_TRY(frame_vlmeta_set(array_access::frm(a), name, content));
  return detail::array_finish(a);
}

status array_vlmeta_delete(array& a, span<const char> name) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  if (!array_access::writable(a)) return make_error(errc::read_only, TESSERA_MSG("array: opened read-only"));
  TESSERA_TRY(frame_vlmeta_delete(array_access::frm(a), name));
  return detail::array_finish(a);
}

}  // namespace tessera
