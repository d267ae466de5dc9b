// SPDX-License-Identifier: BSD-3-Clause
// Internals shared by the array's sources: access to the array's state, scratch helpers, and the read, write
// and chunk-packing cores the public calls are built from.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "chunk/chunk_internal.hpp"
#include "base/message_format.hpp"
#include "base/on_demand.hpp"
#include "tessera/array.hpp"

namespace tessera::detail {

struct array_access {
  static allocator& alloc(array& a) noexcept { return a.alloc_; }
  static frame& frm(array& a) noexcept { return a.frame_; }
  static const frame& frm(const array& a) noexcept { return a.frame_; }
  static bool& open(array& a) noexcept { return a.open_; }
  static bool open(const array& a) noexcept { return a.open_; }
  static bool& writable(array& a) noexcept { return a.writable_; }
  static bool writable(const array& a) noexcept { return a.writable_; }
  static array_layout& layout(array& a) noexcept { return a.layout_; }
  static const array_layout& layout(const array& a) noexcept { return a.layout_; }
  static layout_sizes& sizes(array& a) noexcept { return a.sizes_; }
  static const layout_sizes& sizes(const array& a) noexcept { return a.sizes_; }
  static int32_t& itemsize(array& a) noexcept { return a.itemsize_; }
  static int32_t itemsize(const array& a) noexcept { return a.itemsize_; }
  static int8_t& dtype_format(array& a) noexcept { return a.dtype_format_; }
  static int8_t dtype_format(const array& a) noexcept { return a.dtype_format_; }
  static owned_array<char>& dtype(array& a) noexcept { return a.dtype_; }
  static const owned_array<char>& dtype(const array& a) noexcept { return a.dtype_; }
  static chunk_encode_params& encode(array& a) noexcept { return a.encode_; }
  static const chunk_encode_params& encode(const array& a) noexcept { return a.encode_; }
  static executor& exec(array& a) noexcept { return a.exec_; }
  static const executor& exec(const array& a) noexcept { return a.exec_; }
  static chunk_decoder& decoder(array& a) noexcept { return a.decoder_; }
  // The user codecs and filters array_attach gives the decoder and the encode parameters (array_close keeps it).
  static const chunk_plugins*& plugins(array& a) noexcept { return a.plugins_; }
  static const chunk_plugins* plugins(const array& a) noexcept { return a.plugins_; }
  static chunk_encoder& encoder(array& a) noexcept { return a.encoder_; }
  static bool& encoder_ready(array& a) noexcept { return a.encoder_ready_; }
#if TESSERA_ERROR_MESSAGES
  static char* message(array& a) noexcept { return a.message_; }
#endif
  static owned_array<uint64_t>& read_state(array& a) noexcept { return a.read_state_; }

  static array_layout& layout(array_chunk_packer& p) noexcept { return p.layout_; }
  static int32_t& itemsize(array_chunk_packer& p) noexcept { return p.itemsize_; }
  static chunk_encode_params& encode(array_chunk_packer& p) noexcept { return p.encode_; }
  static chunk_encoder& encoder(array_chunk_packer& p) noexcept { return p.encoder_; }
  static owned_array<uint8_t>& chunk(array_chunk_packer& p) noexcept { return p.chunk_; }
  static owned_array<uint8_t>& out(array_chunk_packer& p) noexcept { return p.out_; }
};

// An error whose message names values: `pattern` (wrapped in TESSERA_MSG) with each "{}" replaced by the next
// value, formatted into a's message buffer (valid until the next call on a). With messages compiled out the
// pattern is null and the formatter is never referenced: the message is the code's name.
inline error array_error_values(array& a, errc code, const char* pattern, int64_t v0, int64_t v1 = 0,
                                int64_t v2 = 0, int64_t v3 = 0) noexcept {
#if TESSERA_ERROR_MESSAGES
  const int64_t values[4] = {v0, v1, v2, v3};
  return make_error(code, message_format(array_access::message(a), kArrayMessageMax, pattern, values, 4));
#else
  (void)a;
  (void)pattern;
  (void)v0;
  (void)v1;
  (void)v2;
  (void)v3;
  return make_error(code, nullptr);
#endif
}

// A string literal as a name (no strlen in the core).
template <size_t N>
span<const char> name_of(const char (&s)[N]) noexcept {
  return span<const char>(s, N - 1);
}

// Copies a filter pipeline (ids and metas) between the structs that carry one (params, encode params, frame info).
template <typename To, typename From>
void filters_copy(To& to, const From& from) noexcept {
  for (int i = 0; i < kChunkMaxFilters; ++i) {
    to.filters[i] = from.filters[i];
    to.filters_meta[i] = from.filters_meta[i];
  }
}

// The layout's shape, chunk shape and block shape into a struct that carries them (params, b2nd metalayer).
template <typename To>
void shapes_from_layout(To& to, const array_layout& l) noexcept {
  for (int d = 0; d < l.ndim; ++d) {
    to.shape[d] = l.shape[d];
    to.chunkshape[d] = static_cast<int32_t>(l.chunkshape[d]);
    to.blockshape[d] = static_cast<int32_t>(l.blockshape[d]);
  }
}

[[nodiscard]] status array_check_open(const array& a) noexcept;
// Whether a buffer of `bytes` sized by what the file says fits the frame's max_alloc (else resource_limit, `what`).
[[nodiscard]] status array_budget_check(const array& a, uint64_t bytes, const char* what) noexcept;
// Buffers of per_worker bytes for each of `workers` workers in one allocation from the array's allocator (on the
// caller's thread, within max_alloc: else resource_limit, `what`), kept while large enough; *have is the size each
// buffer has.
[[nodiscard]] status worker_buffers_reserve(array& a, owned_array<uint8_t>& buffers, size_t* have, size_t per_worker,
                                            size_t workers, const char* what) noexcept;
[[nodiscard]] status array_check_writable(array& a) noexcept;
// array_close without the frame's tidy (frame_release): resets before a new state, failure paths, readers.
status array_release(array& a) noexcept;
// Commits when auto_commit is on.
[[nodiscard]] status array_finish(array& a) noexcept;

// Fills the region (region_shape at dst_start) of a C-order buffer of dst_shape with copies of one item.
[[nodiscard]] status region_fill(int ndim, int64_t itemsize, bytes_mut dst, const int64_t* dst_shape,
                                 const int64_t* dst_start, const int64_t* region_shape, bytes_view item) noexcept;

// region_fill with the item a special index entry (zeros, uninit, nan) stands for; an empty item in region_fill
// means zero bytes (items of any size).
[[nodiscard]] status region_fill_special(int ndim, int64_t itemsize, bytes_mut dst, const int64_t* dst_shape,
                                         const int64_t* dst_start, const int64_t* region_shape,
                                         chunk_special kind) noexcept;

// The item a special index entry (zeros, nan, uninit) stands for, into out (itemsize bytes); uninit reads as
// zeros, as the chunk decoder does.
[[nodiscard]] status special_item(chunk_special kind, int32_t itemsize, uint8_t* out) noexcept;

// Whether a stored chunk whose blocks are the array's decodes block by block on any of the decoder's workers
// (chunk_block_decode_on): no special value, memcpy, VL blocks or delta (a later block needs block 0 decoded
// first). When it does, the decoder is prepared for it here, on the caller's thread.
[[nodiscard]] result<bool> chunk_decodes_by_block(array& a, bytes_view chunk) noexcept;

// Reads [start, stop) of a into the region of the same extent at out_start of a C-order buffer of out_shape
// (out_shape null: a buffer of the slice's own shape, out_start ignored).
[[nodiscard]] status array_read_into(array& a, const int64_t* start, const int64_t* stop, bytes_mut out,
                                     const int64_t* out_shape, const int64_t* out_start) noexcept;

// array_slice_write without the commit; with src_shape, src is a C-order buffer of that shape whose box at
// src_start (null: its leading corner) holds the slice (array_slice_write_from checks them first).
[[nodiscard]] status array_slice_write_nocommit(array& a, const int64_t* start, const int64_t* stop,
                                               bytes_view src, const int64_t* src_shape = nullptr,
                                               const int64_t* src_start = nullptr) noexcept;

// Packs chunk nchunk of `layout` into chunk_buf (the padded chunk, zero padding) from the region of a C-order
// buffer of src_shape that starts at src_start (the chunk's first item there; null: the chunk's own start in the
// array). src_shape null: src holds the chunk's items alone, C order over the chunk's extent.
[[nodiscard]] detail::code_status chunk_pack_items(const array_layout& layout, int64_t itemsize, int64_t nchunk, bytes_view src,
                                      const int64_t* src_shape, const int64_t* src_start, bytes_mut chunk_buf,
                                      const executor& exec) noexcept;

#if TESSERA_SPEED_PATHS
// Whether chunk_encode_from_items can encode this array's chunks (no delta, the encoder's blocks are the
// array's), and chunk nchunk encoded straight from the whole array's C-order items (src_shape = the array's
// shape): each block gathered into the encoder's filter input, no staging copy of the chunk. Safe in executor
// tasks (allocates nothing when the encoder is prepared). progress (or null) is set to the number of blocks
// gathered so far (a relaxed atomic store: other workers read it to see how far this chunk is).
[[nodiscard]] bool chunk_gather_possible(const array_layout& layout, int64_t itemsize,
                                         const chunk_encode_params& params) noexcept;
[[nodiscard]] result<size_t> chunk_encode_from_items(chunk_encoder& e, const chunk_encode_params& params,
                                                     const array_layout& layout, int64_t itemsize, int64_t nchunk,
                                                     bytes_view src, const int64_t* src_shape, bytes_mut out,
                                                     uint32_t* progress = nullptr) noexcept;
#endif

// Encodes a padded chunk with a's parameters into out (chunk_nbytes + overhead bytes).
[[nodiscard]] result<bytes_view> array_chunk_encode(array& a, bytes_view chunk_buf, bytes_mut out) noexcept;

// The b2nd metalayer that describes a (its shape, partition and dtype).
[[nodiscard]] b2nd_meta array_meta_of(const array& a) noexcept;

// Re-publishes the b2nd metalayer after a shape change (same encoded size).
[[nodiscard]] status array_meta_publish(array& a) noexcept;

// Initializes `a` over an open frame (geometry from its b2nd metalayer), with the plugins already in `a`.
// `fresh`: the frame was just created and has no chunks yet.
[[nodiscard]] status array_attach(array& a, frame&& f, bool writable, const allocator& alloc,
                                  const executor& exec, bool fresh = false) noexcept;

// Source of items for a new array: writes the items of [start, stop) (new array coordinates) into the region
// of that extent at out_start of a C-order buffer of out_shape.
struct array_source {
  using read_fn = status (*)(void* context, const int64_t* start, const int64_t* stop, bytes_mut out,
                             const int64_t* out_shape, const int64_t* out_start) noexcept;
  array_source(read_fn r, void* c) noexcept : read(r), context(c) {}
  read_fn read = nullptr;               // called only when items is not set
  void* context = nullptr;
  bytes_view items;                     ///< when set: the whole array in C order, packed from directly
  const int64_t* items_shape = nullptr; ///< its shape
};

// A new frame at the target (its storage or its directory), writable, with the target's options.
[[nodiscard]] status frame_create_at(frame& f, const array_target& target, const allocator& alloc,
                                     const frame_create_params& p) noexcept;

// Creates a at target with params (ndim, shape, dtype, itemsize final) and fills it from source, chunk by chunk.
[[nodiscard]] status array_create_from_source(array& a, const array_target& target, const allocator& alloc,
                                              const array_params& params, const array_source& source) noexcept;

// array_partition_compute for array_frame_setup_make when a shape is not given (partition.cpp): on bare metal
// linked only by partition_link_auto (null otherwise).
[[nodiscard]] TESSERA_ON_DEMAND status array_partition_auto(int ndim, const int64_t* shape, int64_t itemsize,
                                                            int32_t* chunkshape, bool chunks_given,
                                                            int32_t* blockshape, bool blocks_given,
                                                            const array_partition_hints& hints) noexcept;

}  // namespace tessera::detail
