// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Blosc2 frames (README_CFRAME_FORMAT.rst, README_SFRAME_FORMAT.rst): a contiguous frame (header, chunks, index
/// chunk, trailer) in one storage, or a sparse frame (the same header, index and trailer in `chunks.b2frame` and
/// one `XXXXXXXX.chunk` entry per chunk) in a storage_directory.
///
/// Reading is lazy: opening reads the header, the index and the trailer; chunks and single blocks are read
/// through the storage on demand (in place, without copies, when the storage exposes a view).
///
/// Writing is transactional. Chunk and metalayer operations change the frame in memory and write chunk bytes
/// only where the committed frame does not look; frame_commit makes them durable and visible at once. The write
/// order of a commit (contiguous frame, `durable` on):
///   1. new chunk bytes were written where the committed frame does not look (see "Space" below);
///   2. the new index chunk and trailer are written after the last chunk, also where the committed frame does not
///      look; sync;
///   3. the header bytes that changed (the fixed fields in its first 70 bytes, and a metalayer's content when
///      it changed) are rewritten in one write that lies inside one 512-byte sector of the storage: from here
///      on the storage holds the new frame; sync;
///   4. the storage is cut to the new frame's end (when the frame ends the storage and it can be truncated).
/// A failure (or crash) before step 3 leaves the old frame intact; after it, the new one. The only in-place
/// write is step 3's, which the reference format pins at the frame's start; the storage must write a write
/// inside one aligned 512-byte sector whole or not at all (storage.hpp). A commit whose header change would
/// cross a sector (a frame whose base_offset puts its header across one, and a metalayer change there) is
/// refused with unsupported before anything is written. A frame left without chunks keeps its trailer right
/// after the header (the format reads it there): over a committed frame, the header is padded so that the new
/// trailer goes where the committed frame does not look (past it, or back right after the header's content
/// when it fits below the committed trailer). A failed sync poisons the handle: after a failed fsync the
/// system may have dropped the writes since the last sync yet show them to reads, so every later change,
/// commit and compaction returns that error, and closing writes nothing; reopen the frame to go on from what
/// is durable.
/// Space (contiguous frames): bytes the last committed frame does not reference are free, and new bytes go
/// there before the storage grows. A chunk version written since the last commit is free as soon as it is
/// replaced or deleted; a version the committed frame uses, and the committed index and trailer, become free
/// once the next commit is durable. New chunk versions take the smallest free extent that holds them; the
/// index and trailer the lowest free place after the last chunk; past the frame nothing is kept (step 4).
/// Before a commit, frame_commit moves the highest chunks (up to 64, 16 at a time) down into free extents when
/// more than 1/20 of the frame is free, so the commit itself makes it so. After a commit, the free bytes the
/// commit's changes superseded are left for the next transaction's versions; only free space beyond them and
/// 1/10 of the frame costs further commits: the highest chunks move down and commit again, the index moves down
/// in a third commit when it sits far past the last chunk, and past 1/10 still free the frame is compacted
/// (frame_compact) provided that copies at most twice the chunk bytes changes wrote since the last compaction (so
/// writing costs at most about 3x its bytes), or, past 1/12 free, at most half of what this commit's transaction
/// wrote. frame_close does the same for a committed frame with lower thresholds (1/20 free), so that a closed
/// file is near its data's size. Each of these commits holds the same content: a crash leaves one of them; with
/// `durable` their failures are not reported (the moved chunks go with the next commit). The map of free bytes is built on the
/// first change that frees bytes (for an opened frame: every stored chunk's header is read once and the chunks
/// sorted, N * 16 bytes for the time of the call; a created frame starts with it), holds at most 1024 free and
/// 1024 retired extents (16 bytes each, from the frame's allocator): past that the smallest are forgotten and
/// stay dead until frame_compact. A frame whose chunks share or overlap bytes, or one whose commit failed at its header
/// write (either frame may then be live), only appends from then on (this handle). Readers of the same storage
/// must refresh after each commit: bytes an older frame used may be reused (or open with keep_old_frames).
/// A commit that leaves no chunks must put the trailer right after the header (the format says so): chunks
/// and the index in that range are first moved past the frame's end and committed (one extra commit).
/// Sparse frames: new chunk entries get fresh names, `chunks.b2frame.tmp` is written and synced and renamed
/// over `chunks.b2frame`, and only then are the entries of deleted or replaced chunks removed. Entries a crash
/// leaves behind (before the rename: the transaction's new ones; after it: the replaced ones) are removed by
/// the next writable frame_open_sparse; closing with changes not committed removes their new entries at once.
/// With `durable` off (in-memory frames), a commit writes the index and trailer right after the data, the
/// layout the reference writes, with no syncs: a frame built by appends (and metalayers and vlmetalayers set
/// with frame_vlmeta_set) is byte for byte the one the reference's contiguous super-chunk holds after the same
/// appends. (The reference compresses an index of 2 or more full 16 KiB blocks, 4096+ chunks, with 4 threads
/// that may place the blocks in any order; Tessera writes them in order, as its serial path does.)
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/allocator.hpp"
#include "tessera/chunk.hpp"
#include "tessera/error.hpp"
#include "tessera/span.hpp"
#include "tessera/storage.hpp"
#include "tessera/storage_directory.hpp"

namespace tessera {

inline constexpr uint32_t kFrameHeaderMinLen = 87;   ///< the fixed part of the header, before the metalayers
inline constexpr uint32_t kFrameTrailerMinLen = 25;  ///< a trailer without vlmetalayers ends in these
inline constexpr uint32_t kFrameMaxMetalayers = 16;           ///< fixed metalayers a header holds at most
inline constexpr uint32_t kFrameMaxVlmetalayers = 8 * 1024;   ///< variable-length metalayers a trailer holds at most
inline constexpr uint32_t kFrameMetalayerNameMax = 31;        ///< bytes of a metalayer's name at most
inline constexpr char kSparseIndexName[] = "chunks.b2frame";  ///< a sparse frame's header, index and trailer
inline constexpr char kSparseIndexTempName[] = "chunks.b2frame.tmp";  ///< its replacement while a commit writes it

/// Where a frame lives.
enum class frame_kind : uint8_t {
  contiguous = 0,  ///< one storage: header, chunks, index, trailer
  sparse = 1       ///< a storage_directory: `chunks.b2frame` and one entry per chunk
};

/// The header's fields (and what follows from them).
struct frame_info {
  frame_kind kind = frame_kind::contiguous;  ///< contiguous or sparse
  uint8_t version = 0;          ///< general_flags bits 0..3: 2 (regular), 3 (variable chunks or VL blocks)
  bool variable_chunks = false; ///< general_flags bit 6
  bool vl_blocks = false;       ///< general_flags bit 7
  uint32_t header_len = 0;      ///< bytes of the header (fixed part and metalayers)
  uint64_t frame_len = 0;       ///< bytes of the whole frame, trailer included
  int64_t nbytes = 0;           ///< uncompressed bytes of all chunks
  int64_t cbytes = 0;           ///< contiguous: length of the chunks section (dead bytes included); sparse: sum of chunk sizes
  int32_t typesize = 0;         ///< bytes per item of the chunks
  int32_t blocksize = 0;        ///< the chunks' block size in bytes (0: automatic)
  int32_t chunksize = 0;        ///< 0: chunks of different sizes
  int16_t nthreads_comp = 1;    ///< the writer's compression threads, as recorded (informative only)
  int16_t nthreads_decomp = 1;  ///< the writer's decompression threads, as recorded (informative only)
  bool has_vlmetalayers = false;  ///< the trailer holds variable-length metalayers
  uint8_t compcode = 0;         ///< the API codec number (blosclz 0, lz4 1, lz4hc 2, zlib 4, zstd 5), or udcodec
  uint8_t clevel = 0;           ///< the compression level, 0..9
  uint8_t splitmode = 0;        ///< the API's BLOSC_*_SPLIT (1..4)
  bool use_dict = false;        ///< chunks carry a dictionary
  uint8_t filters[kChunkMaxFilters] = {};       ///< the filter pipeline (filter_id values)
  uint8_t filters_meta[kChunkMaxFilters] = {};  ///< each filter slot's meta
  uint8_t udcodec = 0;          ///< the user codec's id (compcode user)
  uint8_t compcode_meta = 0;    ///< the codec's meta
  int64_t nchunks = 0;          ///< chunks in the frame
  uint32_t trailer_len = 0;     ///< bytes of the trailer
  uint32_t nmetalayers = 0;     ///< fixed metalayers in the header
  uint32_t nvlmetalayers = 0;   ///< variable-length metalayers in the trailer
};

namespace detail {
struct frame_state;
struct frame_access;
}  // namespace detail

/// An open frame. Not copyable; movable. All memory from the allocator given at open/create.
class frame {
 public:
  frame() noexcept = default;  ///< not open: call frame_open or frame_create
  frame(const frame&) = delete;
  frame& operator=(const frame&) = delete;
  frame(frame&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }  ///< takes o's state; o is left closed
  frame& operator=(frame&& o) noexcept;  ///< closes this frame, then takes o's state
  ~frame();  ///< frame_close

 private:
  friend struct detail::frame_access;
  detail::frame_state* s_ = nullptr;
};

/// The default memory budget of one call (frame_open_options::max_alloc): sizes read from a file are claims,
/// and no claim may make a call allocate more than this at once.
inline constexpr uint64_t kDefaultMaxAlloc = sizeof(void*) >= 8 ? uint64_t{1} << 30 : uint64_t{64} << 20;

/// How frame_open and frame_create open a frame.
struct frame_open_options {
  uint64_t base_offset = 0;  ///< contiguous frames: where the frame starts inside the storage
  /// The largest buffer a call on this frame allocates on the strength of what the file says (a header, a
  /// trailer, a chunk, an index); more fails with errc::resource_limit naming the field. Opening never costs
  /// memory in proportion to the number of chunks: the index is read a block at a time.
  uint64_t max_alloc = kDefaultMaxAlloc;
  bool writable = false;     ///< allow the write operations (the storage needs write)
  bool durable = true;       ///< the crash-safe write order above (off: the reference's in-place layout)
  /// Contiguous frames: cut the storage at the frame's end after a commit (when the storage can truncate).
  bool truncate_tail = true;
  /// Contiguous frames: never write over bytes an older committed frame used (no space reuse, no moves after a
  /// commit), so that readers that do not refresh keep reading the frame they opened; the storage then keeps
  /// every version of every rewritten chunk (frame_compact still works). Off (default): see "Space" above.
  bool keep_old_frames = false;
  /// Writable frames compress their index chunk and vlmetalayers as the reference does (see "Encoding a
  /// frame's parts" below). With null, the frame inits its own encoder from its allocator when it first needs
  /// one (chunk_encoder_estimate(frame_encoder_options()) bytes, kept until close). Else this one is used (it
  /// must outlive the frame and serve one call at a time).
  chunk_encoder* encoder = nullptr;
};

// ---- Opening -----------------------------------------------------------------------------------------------

/// Opens the contiguous frame at options.base_offset of `st`: reads the header, the index and the trailer.
/// The storage (and its context) must outlive the frame. Errors: truncated, malformed, corrupt, unsupported,
/// io (from the storage), out_of_memory.
[[nodiscard]] status frame_open(frame& f, const storage& st, const allocator& alloc,
                                const frame_open_options& options = frame_open_options{}) noexcept;
/// Opens the sparse frame in `dir` (which must outlive the frame). Opened writable, the open also sweeps the
/// directory when it has a `list` callback: entries named like chunk entries (frame_sparse_chunk_name) that the
/// committed index does not reference (what a crash or a failed removal left) and a stale `chunks.b2frame.tmp`
/// are removed; other names are left alone. The sweep's memory is 4 bytes per stored chunk of the index (within
/// max_alloc), whatever the directory holds; its failures are not reported (the next writable open sweeps
/// again). One writer at a time: a writable open removes another writer's uncommitted entries. Read-only opens
/// change nothing.
[[nodiscard]] status frame_open_sparse(frame& f, const storage_directory& dir, const allocator& alloc,
                                       const frame_open_options& options = frame_open_options{}) noexcept;
/// The options.max_alloc the frame was opened or created with (kDefaultMaxAlloc when it is not open).
[[nodiscard]] uint64_t frame_max_alloc(const frame& f) noexcept;
/// Opens another read-only handle on what f reads (the same storage or directory, offset and options), with its
/// own state: handles share nothing but the storage, so each may serve its own thread when the storage's reads
/// may run concurrently (storage.concurrent_reads, or a view). Picks up what was committed since f was opened.
/// A header that changes while it is read (a writer committing) is read again, up to 8 times.
[[nodiscard]] status frame_open_again(frame& out, const frame& f, const allocator& alloc) noexcept;
/// Picks up what a writer (another handle, thread or process) committed since f was opened: the new header,
/// index and trailer replace the old ones at once, or, on error, f stays as it was. Frames opened read-only only.
/// A committed writer's order (see the top of this file) means a reader sees the old frame or the new one,
/// never a mix; views returned before a refresh must not be used after it.
[[nodiscard]] status frame_refresh(frame& f) noexcept;
/// Closes the frame; changes not committed are dropped. A committed writable contiguous frame more than 1/20
/// free is tidied first (chunks moved down, index moved down, or compacted: commits of the same content; with
/// `durable` their failures are not reported). Returns the error of closing a sparse frame's entries, or of a
/// tidy's commit in place (not durable).
status frame_close(frame& f) noexcept;

namespace detail {
/// Frees f's state without the tidy of frame_close (what the destructor and a move into f do, and what the
/// library's own resets and failure paths use): changes not committed are dropped.
status frame_release(frame& f) noexcept;
}  // namespace detail

// ---- Reading -----------------------------------------------------------------------------------------------

/// The header's fields, as of the last change (committed or not). Null when f is not open.
[[nodiscard]] const frame_info* frame_info_get(const frame& f) noexcept;

/// Fixed metalayers (in the header): name of metalayer i, and content by name (a view valid until the next
/// change of that metalayer). Names compare exactly.
[[nodiscard]] result<span<const char>> frame_meta_name(const frame& f, uint32_t i) noexcept;
/// The content of fixed metalayer `name` (see above). Errors: out_of_range (no such metalayer).
[[nodiscard]] result<bytes_view> frame_meta_find(const frame& f, span<const char> name) noexcept;
/// Variable-length metalayers (in the trailer). Each is stored as a Blosc2 chunk; _raw returns that chunk,
/// _nbytes its decoded size, _decode decodes it into out.
[[nodiscard]] result<span<const char>> frame_vlmeta_name(const frame& f, uint32_t i) noexcept;
/// The chunk that stores variable-length metalayer `name` (see above).
[[nodiscard]] result<bytes_view> frame_vlmeta_raw(const frame& f, span<const char> name) noexcept;
/// The decoded size of variable-length metalayer `name`.
[[nodiscard]] result<size_t> frame_vlmeta_nbytes(const frame& f, span<const char> name) noexcept;
/// Decodes variable-length metalayer `name` into out (at least its nbytes) and returns its size.
[[nodiscard]] result<size_t> frame_vlmeta_decode(const frame& f, chunk_decoder& d, span<const char> name,
                                                 bytes_mut out) noexcept;

/// What the index says of chunk nchunk. Reads the chunk's header from the storage for stored chunks.
struct frame_chunk_ref {
  chunk_special special = chunk_special::none;  ///< zeros, nan or uninit: given by the index, nothing stored
  int32_t nbytes = 0;    ///< the chunk's decoded size in bytes
  int32_t cbytes = 0;    ///< of the stored chunk (0 for special index entries)
  int32_t blocksize = 0; ///< of the stored chunk, as its header says (0 for special index entries)
  int64_t offset = 0;    ///< contiguous: in the chunks section; sparse: the chunk entry's number
};
/// Looks up chunk nchunk in the index (see frame_chunk_ref). Errors: out_of_range, and those of reading.
[[nodiscard]] result<frame_chunk_ref> frame_chunk_locate(frame& f, int64_t nchunk) noexcept;

/// How many chunks from nchunk on share chunk nchunk's special index entry (zeros, NaN or uninitialized) and its
/// size: at least 1 when chunk nchunk is special, 0 when it is stored. Lets a walk over the index (verify,
/// sums) cost the runs, not the entries: O(1) for an index chunk that is itself one special value (the
/// reference's all-zeros arrays), else one comparison per entry, in memory. Errors: out_of_range, and those of
/// reading the index.
[[nodiscard]] result<int64_t> frame_chunk_special_run(frame& f, int64_t nchunk) noexcept;

/// The compressed chunk nchunk: for a read-only frame, a view into the storage when it has one (valid while
/// nobody writes the storage); for a writable frame, and without a view, read into `buffer` (allocated from the
/// frame's allocator), so the frame's own later writes never invalidate it. For special index entries, a 32-byte
/// special-value chunk is built in `buffer`.
[[nodiscard]] result<bytes_view> frame_chunk_read(frame& f, int64_t nchunk, owned_array<uint8_t>& buffer) noexcept;

/// Decodes chunk nchunk into out (at least its nbytes) and returns nbytes.
[[nodiscard]] result<size_t> frame_chunk_decode(frame& f, chunk_decoder& d, int64_t nchunk, bytes_mut out) noexcept;

/// Decodes block nblock of chunk nchunk into out and returns its size. Reads only the chunk's header, its block
/// starts (and dictionary) and that block's streams (block 0's too under the delta filter); with a storage view,
/// reads nothing. Variable-length-block chunks are read whole.
[[nodiscard]] result<size_t> frame_block_decode(frame& f, chunk_decoder& d, int64_t nchunk, size_t nblock,
                                                bytes_mut out) noexcept;

/// Decodes the requested blocks of chunk nchunk over the decoder's executor (chunk_decode_blocks). With a storage
/// view nothing is read; else the chunk's header, block starts (and dictionary) and the requested blocks' streams
/// (block 0's too under the delta filter) are read, adjacent blocks in one read, into the frame's scratch (at most
/// the chunk's compressed size). Variable-length-block, memcpyed and small chunks are read whole.
[[nodiscard]] status frame_blocks_decode(frame& f, chunk_decoder& d, int64_t nchunk,
                                         const chunk_block_request& request) noexcept;

// ---- Creating and writing ----------------------------------------------------------------------------------

/// A fixed metalayer of a frame being created.
struct frame_metalayer_init {
  span<const char> name;  ///< 1..31 bytes
  bytes_view content;     ///< msgpack, by convention
};

/// The header of a frame being created: what its chunks are (codec, filters, sizes) and its fixed metalayers.
struct frame_create_params {
  int32_t typesize = 1;    ///< bytes per item of the chunks
  int32_t blocksize = 0;   ///< the chunks' block size in bytes (0: automatic)
  int32_t chunksize = -1;  ///< -1: set by the first chunk (the reference's fresh super-chunk); b2nd sets it
  uint8_t compcode = 0;    ///< API codec number
  uint8_t clevel = 5;      ///< the compression level, 0..9
  uint8_t splitmode = 4;   ///< BLOSC_FORWARD_COMPAT_SPLIT
  bool use_dict = false;   ///< chunks carry a dictionary
  uint8_t filters[kChunkMaxFilters] = {0, 0, 0, 0, 0, 1};  ///< the filter pipeline (default: shuffle last)
  uint8_t filters_meta[kChunkMaxFilters] = {};             ///< each filter slot's meta
  uint8_t compcode_meta = 0;     ///< the codec's meta
  int16_t nthreads_comp = 1;     ///< recorded in the header (informative only)
  int16_t nthreads_decomp = 1;   ///< recorded in the header (informative only)
  const frame_metalayer_init* metalayers = nullptr;  ///< fixed once the frame exists (contents can change in place)
  uint32_t nmetalayers = 0;      ///< entries in metalayers (at most kFrameMaxMetalayers)
  int64_t expected_nchunks = 0;  ///< reserve the in-memory index up front (one allocation; handy with arenas)
};

/// Writes an empty frame (header and trailer) at options.base_offset of `st` and opens it for writing.
[[nodiscard]] status frame_create(frame& f, const storage& st, const allocator& alloc, const frame_create_params& p,
                                  const frame_open_options& options = frame_open_options{}) noexcept;
/// The same in a directory: writes `chunks.b2frame`. Chunk entries of a frame the directory held before are
/// not referenced by the new one: new chunks replace those of the same numbers, and the next writable
/// frame_open_sparse sweeps the rest (the sweep is not linked into programs that only create).
[[nodiscard]] status frame_create_sparse(frame& f, const storage_directory& dir, const allocator& alloc,
                                         const frame_create_params& p,
                                         const frame_open_options& options = frame_open_options{}) noexcept;

/// Chunk changes (visible to the reading calls at once; durable at frame_commit). `chunk` is a complete Blosc2
/// chunk (its header's cbytes bytes). Special-value chunks of zeros, NaNs or uninitialized values go into the
/// index only. The reference's rules hold: a frame does not mix VL-block and regular chunks; chunksize becomes 0
/// when chunk sizes start to differ; a frame with chunks of different sizes cannot hold special index entries
/// (the reference could not read them: errc::unsupported); empty chunks are refused (the reference would lose
/// them).
[[nodiscard]] status frame_chunk_append(frame& f, bytes_view chunk) noexcept;
/// Inserts `chunk` before chunk nchunk (0..nchunks: nchunks appends). Rules as frame_chunk_append.
[[nodiscard]] status frame_chunk_insert(frame& f, int64_t nchunk, bytes_view chunk) noexcept;
/// Replaces chunk nchunk with `chunk`. Rules as frame_chunk_append.
[[nodiscard]] status frame_chunk_update(frame& f, int64_t nchunk, bytes_view chunk) noexcept;
/// Removes chunk nchunk; the chunks after it move down by one. Errors: out_of_range.
[[nodiscard]] status frame_chunk_delete(frame& f, int64_t nchunk) noexcept;

/// Replaces the content of fixed metalayer `name` with one of the same size.
[[nodiscard]] status frame_meta_update(frame& f, span<const char> name, bytes_view content) noexcept;
/// Adds fixed metalayer `name` (c-blosc2's blosc2_meta_add, which only an empty super-chunk survives) to a frame
/// that may hold chunks: pending changes are committed first, then the header grows. In a contiguous frame the
/// chunks, index and trailer in the way move past what is used and are committed (the same content), then a
/// commit writes the longer header; each commit leaves the old frame or the new one. A durable frame's longer
/// header must fit the storage's first 512-byte sector past byte 11 (the commit point is one write):
/// unsupported when it would not, and with keep_old_frames. Errors: invalid_argument (a bad or existing name),
/// out_of_range (16 metalayers already), those of commits and the storage.
[[nodiscard]] status frame_meta_add(frame& f, span<const char> name, bytes_view content) noexcept;
/// Adds or replaces variable-length metalayer `name`; content is stored as the Blosc2 chunk frame_vlmeta_encode
/// makes (the reference's blosc2_vlmeta_add with default cparams). _chunk takes an already made chunk, checked
/// to be one.
[[nodiscard]] status frame_vlmeta_set(frame& f, span<const char> name, bytes_view content) noexcept;
/// frame_vlmeta_set with content already made into a chunk (see above).
[[nodiscard]] status frame_vlmeta_set_chunk(frame& f, span<const char> name, bytes_view chunk) noexcept;
/// Removes variable-length metalayer `name`.
[[nodiscard]] status frame_vlmeta_delete(frame& f, span<const char> name) noexcept;

/// Makes every change since the last commit durable, in the order described at the top of this file. On error
/// the committed frame is the previous one (or, when the header write itself failed, possibly either) and the
/// in-memory state is unchanged: retry, or close and reopen. After a failed sync the handle is poisoned (every
/// later write or commit returns that error): close and reopen.
[[nodiscard]] status frame_commit(frame& f) noexcept;
/// Whether there are uncommitted changes.
[[nodiscard]] bool frame_dirty(const frame& f) noexcept;

/// Rewrites a contiguous frame tight: header, chunks (in the order of their positions), index, trailer, nothing
/// in between, the storage cut at its end. Pending changes are committed first. In place, with the commit's
/// old-or-new guarantee: the chunks past the first hole are copied past everything in use and committed, then
/// copied down to their final places and committed again (the storage needs room for that copy on top of the
/// frame for the time of the call; a fixed buffer without it fails no_space, the frame as it was). A frame
/// that is already tight is left alone. Sparse frames: pending changes are committed (each chunk is its own
/// entry; there is nothing to compact). Errors: those of commits and the storage; unsupported for a frame
/// whose chunks share or overlap bytes.
[[nodiscard]] status frame_compact(frame& f) noexcept;

/// Where a frame's bytes go (contiguous: the chunks section holds chunks and dead bytes; sparse: no dead bytes).
struct frame_space_stats {
  uint64_t frame_len = 0;    ///< the frame's length (the header's)
  uint64_t chunk_bytes = 0;  ///< stored chunks, each counted once (special-value entries hold none)
  uint64_t meta_bytes = 0;   ///< header, index and trailer
  uint64_t free_bytes = 0;   ///< dead bytes inside the frame: frame_len - chunk_bytes - meta_bytes
};
/// As of the last commit or change. The chunk bytes come from the count the space map keeps through every change
/// (a created frame, or an opened one after a change that freed bytes: no read); else every stored chunk's header
/// is read. Errors: those of reading.
[[nodiscard]] result<frame_space_stats> frame_space_get(frame& f) noexcept;

// ---- Encoding a frame's parts --------------------------------------------------------------------------------
// The encoders the frame writer itself uses, for writers that lay a frame out on their own (e.g. append-only
// flash). None allocates. A contiguous frame is: header, chunks section (cbytes bytes), index chunk, trailer;
// frame_len is the sum. Sizes are checked against out: errc::buffer_too_small when it is shorter.

/// The fields of a header that change as the frame does (the rest comes from the frame_create_params).
struct frame_header_fields {
  frame_kind kind = frame_kind::contiguous;  ///< contiguous or sparse
  uint64_t frame_len = 0;          ///< bytes of the whole frame, trailer included
  int64_t nbytes = 0;              ///< uncompressed bytes of all chunks
  int64_t cbytes = 0;              ///< contiguous: the chunks section's length; sparse: the chunks' total size
  int32_t chunksize = -1;          ///< every chunk's nbytes; -1: no chunk yet (a fresh super-chunk); 0: chunks of
                                   ///< different sizes (sets the variable-chunks flag and format version 3)
  bool vl_blocks = false;          ///< the chunks have variable-length blocks (format version 3)
  bool has_vlmetalayers = false;  ///< the trailer holds variable-length metalayers
};

/// The parameters that create a frame like `info`'s (codec, filters, sizes, threads); no metalayers: set
/// metalayers/nmetalayers from frame_meta_name/frame_meta_find when they are wanted too.
[[nodiscard]] frame_create_params frame_create_params_from(const frame_info& info) noexcept;

/// The header's length for these params (fixed part and metalayers). Errors: invalid_argument (params),
/// overflow (metalayers too large).
[[nodiscard]] result<uint32_t> frame_header_size(const frame_create_params& p) noexcept;
/// Writes the header (frame_header_size bytes) and returns its length.
[[nodiscard]] result<size_t> frame_header_encode(const frame_create_params& p, const frame_header_fields& fields,
                                                 bytes_mut out) noexcept;

/// The index chunk: one little-endian int64 per chunk (its offset in the chunks section, the sparse entry
/// number, or a special value), as a Blosc2 chunk the reference's way: BloscLZ, clevel 5, typesize 8, shuffle,
/// never split, 16 KiB blocks (stored verbatim when that does not gain). A frame without chunks has no index.
inline constexpr int32_t kFrameIndexBlocksize = 16 * 1024;
/// The largest index chunk for nchunks entries (the stored form): nchunks * 8 + 32. Errors: overflow.
[[nodiscard]] result<uint32_t> frame_index_bound(int64_t nchunks) noexcept;
/// The index value of a special chunk kind (zeros, nan, uninit).
[[nodiscard]] int64_t frame_index_special(chunk_special kind) noexcept;
/// Encodes the index chunk for `entries_le` (nchunks * 8 bytes, little-endian int64) into out and returns its
/// size. With encoder null the chunk is the stored form (what the reference writes when compression does not
/// gain; any reader opens it) and needs no encoder memory. Errors: invalid_argument (not whole int64s, no
/// entries), buffer_too_small, and the encoder's.
[[nodiscard]] result<size_t> frame_index_encode(chunk_encoder* encoder, bytes_view entries_le, bytes_mut out) noexcept;
/// frame_index_encode(nullptr, ...): the stored form only, for writers that never compress the index (flash):
/// they link no call into the encoder.
[[nodiscard]] result<size_t> frame_index_encode_stored(bytes_view entries_le, bytes_mut out) noexcept;

/// A variable-length metalayer as the trailer holds it: its name (1..31 bytes) and its content as a chunk.
struct frame_vlmetalayer {
  span<const char> name;  ///< 1..31 bytes
  bytes_view chunk;       ///< the content as a chunk (frame_vlmeta_encode)
};
/// Encodes vlmetalayer content as the reference's blosc2_vlmeta_add does with default cparams (BloscLZ,
/// clevel 5, typesize 8, shuffle, automatic split and block size). out needs chunk_encode_bound(content.size()).
[[nodiscard]] result<size_t> frame_vlmeta_encode(chunk_encoder& encoder, bytes_view content, bytes_mut out) noexcept;
/// The trailer's length for these vlmetalayers (names distinct), and the trailer's bytes.
[[nodiscard]] result<uint32_t> frame_trailer_size(span<const frame_vlmetalayer> vlmetas) noexcept;
/// Writes the trailer (frame_trailer_size bytes) and returns its length.
[[nodiscard]] result<size_t> frame_trailer_encode(span<const frame_vlmetalayer> vlmetas, bytes_mut out) noexcept;
/// The trailer of a frame without vlmetalayers (the bytes frame_trailer_encode writes for none), constant: for
/// writers that never add any (the flash port), without the general trailer encoder.
[[nodiscard]] bytes_view frame_trailer_empty() noexcept;

/// Options for an encoder that serves a frame's index and vlmetalayers (scratch for the index's blocks; bigger
/// vlmetalayer blocks grow it).
[[nodiscard]] chunk_encoder_options frame_encoder_options() noexcept;

/// Helpers for sparse frames: the entry name of chunk number `id` ("%08X.chunk"), into out (at least 15 bytes).
[[nodiscard]] status frame_sparse_chunk_name(int64_t id, char* out, size_t out_size) noexcept;

}  // namespace tessera
