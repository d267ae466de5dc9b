// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// B2ND n-dimensional arrays (c-blosc2's b2nd): an array of fixed-size items cut into chunks and blocks
/// (tessera/layout.hpp), stored in a Blosc2 frame whose "b2nd" metalayer holds the shape, the chunk and block
/// shapes and the dtype.
///
/// Where an array lives: a contiguous frame on any `storage` (a file through port/posix, a growable or fixed
/// buffer through port/memory, read-only bytes) or a sparse frame in a `storage_directory` (array_target). Raw
/// NOR flash takes arrays written chunk by chunk in order: array_frame_setup_make gives the flash frame writer its
/// parameters and array_chunk_pack the chunks (see port/flash/flash_frame.hpp); the finalized frame opens here.
///
/// Reading decodes only what a request touches: a slice reads only the chunks it intersects and, inside a
/// chunk, only the blocks it intersects (frame_block_decode) unless most of the chunk is needed (then the
/// chunk is decoded whole, in parallel with the executor). Scratch memory, from the array's allocator and freed
/// before each call returns: an element read uses one block; a slice read one block, or one decoded chunk when
/// it decodes chunks whole. Reads never change the frame.
///
/// Writing rewrites only the chunks a write touches. A write that covers a chunk's whole extent (cut at the
/// array's edge) starts from zeros, so the chunk's padding is zero; a partial write decodes the chunk and keeps
/// its padding (as the reference does). Each mutating call commits the frame when it succeeds (auto_commit;
/// turn it off to group several calls into one frame_commit with array_commit). On error, nothing is committed
/// and the in-memory frame may hold part of the change: close the array (dropping it: array_close then returns
/// errc::uncommitted, as it does for any change never committed) or retry. A rewritten chunk's new version goes
/// into space no committed frame references (see "Space" in tessera/frame.hpp): files stay near the size of
/// their data; array_compact makes one tight.
///
/// Chunks are encoded as the reference encodes them for the same parameters (the block size is the array's
/// block; typesize is the itemsize, or 1 above 255 bytes), so an array written here equals, chunk for chunk, one the
/// reference writes.
///
/// User codecs and filters (tessera/chunk.hpp, chunk_plugins): the application passes their implementations in
/// array_params::plugins (create, copy) or array_open_options::plugins (open); the array's decoder and chunk
/// writers run them, and arrays made from it (copies, array_open_again) keep them. Without them, reading a chunk
/// that needs one fails codec_unavailable (codec) or unsupported (filter); chunk_plugins_missing names the id.
///
/// Not supported: zstd dictionaries when writing (arrays with dictionary chunks read fine).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/allocator.hpp"
#include "tessera/array_partition.hpp"
#include "tessera/b2nd_meta.hpp"
#include "tessera/chunk.hpp"
#include "tessera/config.hpp"
#include "tessera/error.hpp"
#include "tessera/executor.hpp"
#include "tessera/frame.hpp"
#include "tessera/layout.hpp"
#include "tessera/span.hpp"
#include "tessera/storage.hpp"
#include "tessera/storage_directory.hpp"

namespace tessera {

inline constexpr char kB2ndMetaName[] = "b2nd";  ///< the metalayer that makes a frame a B2ND array
/// The largest item (the reference's BLOSC2_MAXTYPESIZE). Items above 255 bytes are stored as the reference
/// stores them: the real size in the frame's typesize, 1 in every chunk header (no shuffle across bytes).
inline constexpr int32_t kArrayMaxItemsize = kChunkMaxBlocksize;
/// The typesize a chunk header records for an item size: itself up to 255, else 1.
[[nodiscard]] constexpr uint8_t chunk_typesize_of(int64_t itemsize) noexcept {
  return itemsize > 255 || itemsize < 1 ? uint8_t{1} : static_cast<uint8_t>(itemsize);
}
inline constexpr size_t kArrayMaxDtypeLen = 255;  ///< bytes of a dtype string this API writes
/// Bytes of an array's message buffer: the errors of its calls that name values ("array_slice_read: dimension
/// 2: stop 40 outside 0..32") are formatted there. Only when messages are compiled in (TESSERA_ERROR_MESSAGES):
/// a small firmware's handles have no buffer and those errors carry the code's name.
inline constexpr size_t kArrayMessageMax = 128;

// ---- Parameters --------------------------------------------------------------------------------------------

/// What a new array is: geometry, item type, compression, executor, extra metalayers.
struct array_params {
  int ndim = 0;                          ///< 0..kMaxDims; 0 is a scalar (one item)
  int64_t shape[kMaxDims] = {};          ///< items per dimension (>= 0)
  /// All zeros (over ndim): chosen automatically (tessera/array_partition.hpp). Otherwise used as given.
  int32_t chunkshape[kMaxDims] = {};
  int32_t blockshape[kMaxDims] = {};     ///< as chunkshape: all zeros for automatic
  array_partition_hints partition{};     ///< for the automatic shapes

  /// NumPy dtype string ("<f8"); empty: "|u1" for itemsize 1, else "|V<itemsize>". An unknown dtype string is
  /// kept verbatim (it then needs itemsize).
  span<const char> dtype{};
  int32_t itemsize = 0;                  ///< 0: from the dtype. Else must agree with a known dtype.

  /// Compression (the reference's defaults: BloscLZ, level 5, shuffle). A user codec: chunk_user_codec_id(id),
  /// user filters by id in `filters`, both implemented in `plugins`.
  codec compressor = codec::blosclz;
  int clevel = 5;                        ///< 0..9; 0 stores chunks verbatim
  uint8_t filters[kChunkMaxFilters] = {0, 0, 0, 0, 0, static_cast<uint8_t>(filter_id::shuffle)};  ///< the pipeline
  uint8_t filters_meta[kChunkMaxFilters] = {};  ///< each filter slot's meta
  split_mode split = split_mode::forward_compat;  ///< whether blocks are split into streams
  uint8_t compcode_meta = 0;             ///< the codec's meta
  /// A dictionary in every chunk (LZ4, LZ4HC, Zstd; chunk_encode_params::use_dict), recorded in the frame so
  /// that later writes keep it.
  bool use_dict = false;
  /// User codecs and filters for writing and reading this array (caller-owned; must outlive the array).
  const chunk_plugins* plugins = nullptr;

  /// Decoding and encoding run on this executor (exec.workers is stored as the frame's nthreads).
  executor exec = executor_serial();

  /// Fixed metalayers besides "b2nd" (at most kFrameMaxMetalayers - 1). Their sizes are fixed for ever.
  const frame_metalayer_init* metalayers = nullptr;
  uint32_t nmetalayers = 0;  ///< entries in metalayers
};

/// Where a new array goes: a contiguous frame at options.base_offset of `st`, or a sparse frame in `dir`
/// (exactly one of the two: a storage is set when it has a read callback, a directory when it has open). Both are
/// held by value, so a target made from a temporary (`array_target_contiguous(growable_buffer_storage(b))`)
/// may be kept and used later; what their contexts point to (the buffer, file or directory) must outlive the
/// array.
struct array_target {
  storage st{};             ///< a contiguous frame's storage (no callbacks: none)
  storage_directory dir{};  ///< a sparse frame's directory (no callbacks: none)
  frame_open_options options{};  ///< `writable` is implied
};
/// A contiguous frame at the start of st (`durable`: the crash-safe write order, see frame_open_options).
[[nodiscard]] inline array_target array_target_contiguous(const storage& st, bool durable = true) noexcept {
  array_target t;
  t.st = st;
  t.options.durable = durable;
  return t;
}
/// A sparse frame in dir.
[[nodiscard]] inline array_target array_target_sparse(const storage_directory& dir) noexcept {
  array_target t;
  t.dir = dir;
  return t;
}

/// The initial contents of a new array. zeros, nans and uninit write special index entries only (no chunk
/// bytes); full writes one repeated-value chunk (32 + itemsize bytes) per chunk, padding included; buffer
/// takes the C-order items of the whole array (prod(shape) * itemsize bytes).
enum class array_fill_kind : uint8_t {
  uninit,  ///< unspecified items (read as zeros)
  zeros,   ///< every item zero
  nans,    ///< every item NaN (itemsize 4 or 8)
  full,    ///< every item the same value
  buffer   ///< the items given
};
/// The initial contents of a new array: a kind and, for full and buffer, its bytes (array_fill_zeros...).
struct array_fill {
  array_fill_kind kind = array_fill_kind::zeros;  ///< which contents
  bytes_view bytes{};  ///< full: one item; buffer: the items
};
/// Every item zero.
[[nodiscard]] inline array_fill array_fill_zeros() noexcept { return array_fill{array_fill_kind::zeros, {}}; }
/// Unspecified items (written as special index entries, read as zeros).
[[nodiscard]] inline array_fill array_fill_uninit() noexcept { return array_fill{array_fill_kind::uninit, {}}; }
/// Every item NaN (itemsize 4 or 8).
[[nodiscard]] inline array_fill array_fill_nans() noexcept { return array_fill{array_fill_kind::nans, {}}; }
/// Every item `item` (itemsize bytes, viewed: it must stay valid until array_create returns).
[[nodiscard]] inline array_fill array_fill_full(bytes_view item) noexcept {
  return array_fill{array_fill_kind::full, item};
}
/// The items of the whole array in C order (prod(shape) * itemsize bytes, viewed until array_create returns).
[[nodiscard]] inline array_fill array_fill_buffer(bytes_view items) noexcept {
  return array_fill{array_fill_kind::buffer, items};
}

/// How array_open opens an array.
struct array_open_options {
  frame_open_options frame{};         ///< the frame's options (base offset, memory budget, writable, ...)
  executor exec = executor_serial();  ///< decoding and encoding run on this executor
  /// User codecs and filters the array's chunks may need (caller-owned; must outlive the array).
  const chunk_plugins* plugins = nullptr;
};

// ---- The array ---------------------------------------------------------------------------------------------

namespace detail {
struct array_access;
}

/// An open array: its frame, geometry, codec state. Not copyable; movable. Memory from the allocator given at
/// create/open, called only on the thread of the current call (tessera/allocator.hpp). One call at a time on one
/// handle; for reads from several threads, one handle each (array_open_again).
class array {
 public:
  array() noexcept = default;  ///< not open: call array_create or array_open
  array(const array&) = delete;
  array& operator=(const array&) = delete;
  array(array&&) noexcept = default;  ///< takes the other array's state
  array& operator=(array&&) noexcept = default;  ///< takes the other array's state (close this one first)
  ~array() = default;

  bool auto_commit = true;  ///< commit the frame after each successful mutating call

 private:
  friend struct detail::array_access;
  allocator alloc_{};
  frame frame_;
  bool open_ = false;
  bool writable_ = false;
  array_layout layout_{};
  layout_sizes sizes_{};
  int32_t itemsize_ = 0;
  int8_t dtype_format_ = kB2ndDtypeNumpy;
  owned_array<char> dtype_;
  chunk_encode_params encode_{};
  executor exec_ = executor_serial();
  const chunk_plugins* plugins_ = nullptr;  ///< set by each create/open entry point before array_attach
  chunk_decoder decoder_;
  chunk_encoder encoder_;
  bool encoder_ready_ = false;
#if TESSERA_ERROR_MESSAGES
  char message_[kArrayMessageMax] = {};  ///< the last error message that names values (see error::message)
#endif
  owned_array<uint64_t> read_state_;  ///< a slice read's plan and chunk state, off the caller's stack, kept for the next read
};

// ---- Creating, opening, closing ----------------------------------------------------------------------------

/// Creates an array at `target` and commits it. Errors: invalid_argument (parameters, a fill of the wrong size,
/// nans for an itemsize other than 4 or 8), unsupported (itemsize > kArrayMaxItemsize), overflow (a chunk beyond the format's
/// limit), and those of the frame and the storage.
[[nodiscard]] status array_create(array& a, const array_target& target, const allocator& alloc,
                                  const array_params& params, const array_fill& fill) noexcept;

/// Opens the array in a contiguous frame (at options.frame.base_offset of st) or a sparse one. The frame must
/// hold a "b2nd" (or legacy "caterva") metalayer and the chunks its geometry needs. The itemsize is the frame's
/// typesize (files exist whose dtype string disagrees). Errors: malformed (no b2nd metalayer, chunks that
/// disagree with the geometry), and those of frame_open and b2nd_meta_decode.
[[nodiscard]] status array_open(array& a, const storage& st, const allocator& alloc,
                                const array_open_options& options = array_open_options{}) noexcept;
/// Opens the array in the sparse frame in dir; as array_open.
[[nodiscard]] status array_open_sparse(array& a, const storage_directory& dir, const allocator& alloc,
                                       const array_open_options& options = array_open_options{}) noexcept;
/// Takes over an open frame (e.g. one opened at an offset, or a finalized flash frame).
[[nodiscard]] status array_open_frame(array& a, frame&& f, bool writable, const allocator& alloc,
                                      const executor& exec = executor_serial(),
                                      const chunk_plugins* plugins = nullptr) noexcept;

/// Another read-only array over what `a` reads (the same storage or directory, options and geometry), with its
/// own frame state, decoder and executor (and a's plugins): a service reads one array from several threads with one such handle
/// per thread. Handles share only the storage, whose reads must be allowed to run concurrently
/// (storage.concurrent_reads: posix_file, posix_mapping; or a view: const_buffer). One handle takes one call at a
/// time; the allocator must allow calls from the threads the handles are used on. Picks up what was committed.
[[nodiscard]] status array_open_again(array& reader, const array& a, const allocator& alloc,
                                      const executor& exec = executor_serial()) noexcept;
/// Picks up what a writer (another process, thread or handle) has committed since `a` was opened or last
/// refreshed: new chunks, a new shape, metalayers. Read-only arrays only. The writer's commit order means `a`
/// sees the old array or the new one, never a half-committed state; on error `a` stays as it was.
[[nodiscard]] status array_refresh(array& a) noexcept;

/// Commits pending changes (only needed with auto_commit off).
[[nodiscard]] status array_commit(array& a) noexcept;
/// Whether the array has changes not committed yet (auto_commit off, or a writing call that failed): closing
/// would drop them.
[[nodiscard]] bool array_dirty(const array& a) noexcept;
/// Rewrites a writable array's contiguous frame tight (frame_compact: pending changes committed first, old-or-new
/// after a crash, room for a copy of the moved chunks needed meanwhile). Sparse arrays: commits only.
[[nodiscard]] status array_compact(array& a) noexcept;
/// Closes the array. Changes not committed are dropped, and then errc::uncommitted is returned (the array is
/// closed all the same): commit first, or check array_dirty. The destructor drops them silently. A writable
/// contiguous frame with free space past 1/20 of it is tidied first (frame_close), in commits of the same content.
status array_close(array& a) noexcept;

// ---- What it is --------------------------------------------------------------------------------------------

[[nodiscard]] bool array_is_open(const array& a) noexcept;  ///< true between a successful create/open and close
[[nodiscard]] const array_layout& array_layout_get(const array& a) noexcept;  ///< ndim, shape, chunk/block shapes
/// The n-d geometry of the chunks of an array of layout l (its ndim and block shape), for a chunk decoder or
/// encoder that works on an array's chunks outside the array calls (chunk_decoder_options::geometry,
/// chunk_encode_params::geometry): the chunks that use NDLZ, ZFP, NDCELL or NDMEAN need it. The array's own
/// decoder and chunk writers (and array_view's) have it.
[[nodiscard]] inline chunk_nd_geometry array_chunk_geometry(const array_layout& l) noexcept {
  chunk_nd_geometry g;
  g.ndim = static_cast<int8_t>(l.ndim);
  for (int d = 0; d < l.ndim; ++d) g.blockshape[d] = static_cast<int32_t>(l.blockshape[d]);
  return g;
}
[[nodiscard]] int32_t array_itemsize(const array& a) noexcept;             ///< bytes per item
[[nodiscard]] int64_t array_nbytes(const array& a) noexcept;               ///< prod(shape) * itemsize
[[nodiscard]] span<const char> array_dtype(const array& a) noexcept;  ///< the NumPy dtype string (the array's copy)
[[nodiscard]] frame& array_frame(array& a) noexcept;  ///< the array's frame (for frame-level reads and metalayers)
/// The array's frame, read-only: e.g. frame_info_get(array_frame(a))->cbytes, the compressed bytes of its chunks
/// (the reference's cbytes; b2nd's extchunkshape is array_layout_get(a).extchunkshape).
[[nodiscard]] const frame& array_frame(const array& a) noexcept;
/// The parameters of this array (shape, chunk and block shapes, dtype, compression, executor; no extra
/// metalayers): a start for array_copy and friends. The dtype views the array's own copy.
[[nodiscard]] array_params array_params_get(const array& a) noexcept;

// ---- Reading -----------------------------------------------------------------------------------------------

/// The whole array into `out` (at least array_nbytes), C order.
[[nodiscard]] status array_read(array& a, bytes_mut out) noexcept;
/// The slice [start, stop) into `out` (C order, shape stop - start). Pointers may be null for ndim 0.
/// Errors: out_of_range (bad bounds), buffer_too_small, and decoding errors.
[[nodiscard]] status array_slice_read(array& a, const int64_t* start, const int64_t* stop, bytes_mut out) noexcept;
/// One item at `coords` into out (itemsize bytes).
[[nodiscard]] status array_element_read(array& a, const int64_t* coords, bytes_mut out) noexcept;
/// An orthogonal selection: for each dimension d, counts[d] indices (any order, repeats allowed) in
/// indices[d]; `out` receives the items at every combination, C order over (counts[0], ..., counts[ndim-1]).
/// Each touched block is decoded once. Scratch: one block plus 16 bytes per index.
[[nodiscard]] status array_orthogonal_read(array& a, const int64_t* const* indices, const int64_t* counts,
                                           bytes_mut out) noexcept;
/// The slice [start, stop) into the box of the same extent at `buffer_start` of `buffer`, a C-order array of
/// `buffer_shape` (ndim values each; buffer_start null: the leading corner), as c-blosc2's
/// b2nd_get_slice_cbuffer with a larger buffershape. Items of the buffer outside the box are left as they are
/// (the reference zeroes them), so several slices can be gathered into one buffer.
/// Errors: out_of_range (bad bounds, or the box outside buffer_shape), invalid_argument (null pointers with
/// ndim > 0, negative buffer_shape), overflow (buffer_shape's byte size), buffer_too_small (buffer smaller than
/// prod(buffer_shape) items), and decoding errors.
[[nodiscard]] status array_slice_read_into(array& a, const int64_t* start, const int64_t* stop, bytes_mut buffer,
                                           const int64_t* buffer_shape, const int64_t* buffer_start) noexcept;

// ---- Writing -----------------------------------------------------------------------------------------------

/// Writes `src` (C order, shape stop - start) into the slice [start, stop). Needs the array writable.
[[nodiscard]] status array_slice_write(array& a, const int64_t* start, const int64_t* stop, bytes_view src) noexcept;
/// Writes one item (itemsize bytes) at `coords`. Needs the array writable.
[[nodiscard]] status array_element_write(array& a, const int64_t* coords, bytes_view item) noexcept;
/// Writes the slice [start, stop) from the box of the same extent at `buffer_start` of `buffer`, a C-order array
/// of `buffer_shape` (as array_slice_read_into; c-blosc2's b2nd_set_slice_cbuffer with a larger buffershape).
/// Needs the array writable; errors as array_slice_read_into's, then those of array_slice_write.
[[nodiscard]] status array_slice_write_from(array& a, const int64_t* start, const int64_t* stop, bytes_view buffer,
                                            const int64_t* buffer_shape, const int64_t* buffer_start) noexcept;
/// Writes an orthogonal selection (c-blosc2's b2nd_set_orthogonal_selection), the inverse of
/// array_orthogonal_read: `src` holds the items of every combination of the indices, C order over (counts[0],
/// ..., counts[ndim-1]). An index listed twice in one dimension receives the item listed last (C order of src).
/// Every index is checked before anything is written. Each touched chunk is decoded, updated and encoded once.
/// Needs the array writable (else as array_slice_write). Scratch: one decoded and one encoded chunk plus 24
/// bytes per index. Errors: invalid_argument (negative count, null indices), out_of_range (an index outside the
/// array), overflow, buffer_too_small (src smaller than the selection), and those of array_slice_write.
[[nodiscard]] status array_orthogonal_write(array& a, const int64_t* const* indices, const int64_t* counts,
                                            bytes_view src) noexcept;

// ---- Metalayers --------------------------------------------------------------------------------------------

/// Fixed metalayers: content by name (a view valid until the next change), and an update with content of the
/// same size. "b2nd" belongs to the array: updating it is invalid_argument.
[[nodiscard]] result<bytes_view> array_meta_find(const array& a, span<const char> name) noexcept;
/// Replaces the content of fixed metalayer `name` with content of the same size (see above).
[[nodiscard]] status array_meta_update(array& a, span<const char> name, bytes_view content) noexcept;
/// Adds fixed metalayer `name` (c-blosc2's blosc2_meta_add) to an open writable array, chunks and all: pending
/// changes are committed first, then the frame's header grows in commits that each leave the old array or the
/// new one (frame_meta_add). Errors: invalid_argument (a bad name, one that exists), out_of_range (16
/// metalayers), unsupported (keep_old_frames; a durable frame whose longer header would leave the storage's
/// first 512-byte sector), read_only, and those of commits and the storage.
[[nodiscard]] status array_meta_add(array& a, span<const char> name, bytes_view content) noexcept;
/// The number of fixed metalayers, "b2nd" included (blosc2's schunk->nmetalayers).
[[nodiscard]] uint32_t array_meta_count(const array& a) noexcept;
/// The name of fixed metalayer i (header order; "b2nd" is one of them). Errors: out_of_range (i >= count).
[[nodiscard]] result<span<const char>> array_meta_name(const array& a, uint32_t i) noexcept;
/// Whether fixed metalayer `name` exists (blosc2_meta_exists).
[[nodiscard]] bool array_meta_exists(const array& a, span<const char> name) noexcept;
/// The number of variable-length metalayers (blosc2's schunk->nvlmetalayers).
[[nodiscard]] uint32_t array_vlmeta_count(const array& a) noexcept;
/// The name of variable-length metalayer i (trailer order, blosc2_vlmeta_get_names). Errors: out_of_range.
[[nodiscard]] result<span<const char>> array_vlmeta_name(const array& a, uint32_t i) noexcept;
/// Whether variable-length metalayer `name` exists (blosc2_vlmeta_exists).
[[nodiscard]] bool array_vlmeta_exists(const array& a, span<const char> name) noexcept;
/// Variable-length metalayers: decoded size, decode into out, set (adds or replaces), delete. Reading one takes
/// a mutable array: it decodes with the array's chunk decoder and its scratch (no allocation per call).
[[nodiscard]] result<size_t> array_vlmeta_nbytes(const array& a, span<const char> name) noexcept;
/// Decodes variable-length metalayer `name` into out (at least its decoded size) and returns that size.
[[nodiscard]] result<size_t> array_vlmeta_read(array& a, span<const char> name, bytes_mut out) noexcept;
/// Adds or replaces variable-length metalayer `name`.
[[nodiscard]] status array_vlmeta_write(array& a, span<const char> name, bytes_view content) noexcept;
/// Removes variable-length metalayer `name`.
[[nodiscard]] status array_vlmeta_delete(array& a, span<const char> name) noexcept;

// ---- Changing the shape in place ---------------------------------------------------------------------------

/// Grows or shrinks any dimensions at their ends. Items that appear are zero (padding they come from is cleared
/// first); items that go are dropped. Chunks wholly outside the new shape are deleted, new ones are zero index
/// entries; only kept edge chunks that grow are rewritten.
[[nodiscard]] status array_resize(array& a, const int64_t* new_shape) noexcept;
/// Resizes with the change placed at `start` (c-blosc2's b2nd_resize with start; null: at the ends, as
/// array_resize). Per dimension d: growing inserts new_shape[d] - shape[d] zero items before position start[d];
/// shrinking removes the shape[d] - new_shape[d] items from start[d] on. At the end (start[d] == shape[d] when
/// growing, == new_shape[d] when shrinking) any change works; elsewhere start[d] and the change must be
/// multiples of the chunk extent (whole chunks move: the reference's rule), else invalid_argument. Errors also:
/// out_of_range (start[d] outside 0..shape[d], or removed items past the end). Checked before anything changes.
[[nodiscard]] status array_resize_at(array& a, const int64_t* new_shape, const int64_t* start) noexcept;
/// Inserts `src` (C order; the array's shape with `count` items along axis) before position `pos` of axis.
/// At the end (pos == shape[axis]) any count works. Elsewhere pos and count must be multiples of the chunk
/// extent along axis (whole chunks move: the reference's rule): else invalid_argument.
[[nodiscard]] status array_insert(array& a, int axis, int64_t pos, int64_t count, bytes_view src) noexcept;
/// array_insert at the end.
[[nodiscard]] status array_append(array& a, int axis, int64_t count, bytes_view src) noexcept;
/// Deletes items [pos, pos + count) along axis. At the end any count works; elsewhere as array_insert.
[[nodiscard]] status array_delete(array& a, int axis, int64_t pos, int64_t count) noexcept;

// ---- New arrays from arrays --------------------------------------------------------------------------------

// `params` (may be null: the source's own) gives the new array's chunk and block shapes, compression, executor
// and extra metalayers; its ndim, shape, dtype and itemsize are ignored (they come from the operation).
// Chunk and block shapes must have the new array's ndim (or be all zero: automatic).

/// The slice [start, stop) of src as a new array. Scratch: a few chunks.
[[nodiscard]] status array_slice_copy(array& dst, const array_target& target, const allocator& alloc, array& src,
                                      const int64_t* start, const int64_t* stop,
                                      const array_params* params = nullptr) noexcept;
/// The whole of src, e.g. with other chunk and block shapes (rechunking) or compression.
[[nodiscard]] status array_copy(array& dst, const array_target& target, const allocator& alloc, array& src,
                                const array_params* params = nullptr) noexcept;
/// src1 then src2 along axis (their other extents, itemsizes and dtypes must agree).
[[nodiscard]] status array_concatenate(array& dst, const array_target& target, const allocator& alloc, array& src1,
                                       array& src2, int axis, const array_params* params = nullptr) noexcept;
/// src without its dimensions of extent 1 (all of them when `axes` is null, else those with axes[d] true:
/// they must have extent 1). When each removed dimension has chunk and block extent 1 the stored chunks are
/// the same and are copied as they are; otherwise the array is re-chunked (chunk and block shapes minus the
/// removed dimensions).
[[nodiscard]] status array_squeeze(array& dst, const array_target& target, const allocator& alloc, array& src,
                                   const bool* axes = nullptr) noexcept;
/// src with new dimensions of extent 1 (chunk and block extent 1): the result has new_ndim dimensions, those
/// with axes[d] true are the new ones. The stored chunks do not change and are copied as they are.
[[nodiscard]] status array_expand_dims(array& dst, const array_target& target, const allocator& alloc, array& src,
                                       const bool* axes, int new_ndim) noexcept;
/// A copy of the frame's contents elsewhere (e.g. an in-memory array saved to a file): chunks as they are
/// (compressed bytes, special entries), all metalayers and vlmetalayers.
[[nodiscard]] status array_save(array& dst, const array_target& target, const allocator& alloc, array& src) noexcept;

// ---- Writing chunk by chunk (flash) ------------------------------------------------------------------------

/// The frame parameters of a new array (for flash_frame_create or frame_create): holds the "b2nd" metalayer
/// and the list of metalayers that params.metalayers points at. Not movable (frame.metalayers points inside).
struct array_frame_setup {
  array_frame_setup() noexcept = default;
  array_frame_setup(const array_frame_setup&) = delete;
  array_frame_setup& operator=(const array_frame_setup&) = delete;

  frame_create_params frame{};   ///< the frame's parameters; frame.metalayers points at `metalayers`
  array_layout layout{};         ///< the array's geometry
  int32_t itemsize = 0;          ///< bytes per item
  chunk_encode_params encode{};  ///< how its chunks are encoded (array_chunk_packer)
  /// The packer's BloscLZ match table (chunk_encoder_options::blosclz_hash_log): 0, the reference's 64 KiB and
  /// bytes; 8 to 13 for a firmware's smaller table (valid chunks, not the reference's bytes).
  uint8_t blosclz_hash_log = 0;
  uint8_t meta_bytes[32 + 19 * kMaxDims + kArrayMaxDtypeLen] = {};  ///< the encoded "b2nd" metalayer
  frame_metalayer_init metalayers[kFrameMaxMetalayers] = {};  ///< "b2nd" first, then params.metalayers
};
/// Validates params (with automatic shapes) and fills setup. Errors as array_create's.
[[nodiscard]] status array_frame_setup_make(array_frame_setup& setup, const array_params& params) noexcept;

/// Encodes chunks of an array described by a setup, in any order, into the packer's buffer.
class array_chunk_packer {
 public:
  array_chunk_packer() noexcept = default;
  array_chunk_packer(const array_chunk_packer&) = delete;
  array_chunk_packer& operator=(const array_chunk_packer&) = delete;

 private:
  friend struct detail::array_access;
  array_layout layout_{};
  int32_t itemsize_ = 0;
  chunk_encode_params encode_{};
  chunk_encoder encoder_;
  owned_array<uint8_t> chunk_;   ///< the padded chunk
  owned_array<uint8_t> out_;     ///< the encoded chunk
};
/// Scratch: two chunks plus the encoder's (from alloc).
[[nodiscard]] status array_chunk_packer_init(array_chunk_packer& p, const array_frame_setup& setup,
                                             const allocator& alloc,
                                             const executor& exec = executor_serial()) noexcept;
/// The bytes array_chunk_packer_init takes from its allocator for this setup and executor (an arena of this
/// size never refuses the packer, nor its packing).
[[nodiscard]] size_t array_chunk_packer_estimate(const array_frame_setup& setup,
                                                 const executor& exec = executor_serial()) noexcept;
/// Chunk nchunk from its items in C order (shape: the chunk's extent, chunkshape cut at the array's edge);
/// padding is zero. Returns the encoded chunk (a view of the packer's buffer, valid until the next call).
[[nodiscard]] result<bytes_view> array_chunk_pack(array_chunk_packer& p, int64_t nchunk, bytes_view items) noexcept;

}  // namespace tessera
