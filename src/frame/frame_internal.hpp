// SPDX-License-Identifier: BSD-3-Clause
// Internals shared by the frame reader and writer: the frame's in-memory state, the byte layout of the header
// and the trailer (the reference pins every encoding, so they are built byte by byte; byte order in
// base/byte_order.hpp), and storage access.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../base/byte_order.hpp"  // relative: tests include this header without src/ on the path
#include "tessera/frame.hpp"

namespace tessera::detail {

// Offsets of the header's fixed fields (README_CFRAME_FORMAT.rst).
inline constexpr uint32_t kFhMagic = 2;           // "b2frame\0"
inline constexpr uint32_t kFhHeaderLen = 11;      // int32 after d2
inline constexpr uint32_t kFhFrameLen = 16;       // uint64 after cf
inline constexpr uint32_t kFhFlags = 25;
inline constexpr uint32_t kFhType = 26;
inline constexpr uint32_t kFhCodecs = 27;
inline constexpr uint32_t kFhOtherFlags = 28;
inline constexpr uint32_t kFhNbytes = 30;
inline constexpr uint32_t kFhCbytes = 39;
inline constexpr uint32_t kFhTypesize = 48;
inline constexpr uint32_t kFhBlocksize = 53;
inline constexpr uint32_t kFhChunksize = 58;
inline constexpr uint32_t kFhNthreadsC = 63;
inline constexpr uint32_t kFhNthreadsD = 66;
inline constexpr uint32_t kFhHasVlmeta = 68;
inline constexpr uint32_t kFhFilterCount = 70;    // the fixext16 type byte (after d8 at 69): number of filters
inline constexpr uint32_t kFhFilters = 71;        // 6 filters, udcodec, compcode_meta, 6 filter metas, flags2
inline constexpr uint32_t kFhFiltersMeta = 79;
inline constexpr uint32_t kFhUdcodec = 77;
inline constexpr uint32_t kFhCodecMeta = 78;
inline constexpr uint32_t kFhOtherFlags2 = 85;
inline constexpr uint32_t kFhMetalayers = 87;     // 0x93, then cd idx_size, de map16...
inline constexpr uint32_t kFhIdxSize = 89;

inline constexpr uint8_t kFrameFlag64BitOffsets = 0x10;
inline constexpr uint8_t kFrameFlagVariableChunks = 0x40;
inline constexpr uint8_t kFrameFlagVlBlocks = 0x80;
inline constexpr uint8_t kFrameVersionRc1 = 2;
inline constexpr uint8_t kFrameVersionVlBlocks = 3;
inline constexpr uint8_t kFrameUdcodecFormat = 6;
inline constexpr uint8_t kFrameCodecLast = 6;      // API codec numbers at or above are user-defined
inline constexpr uint32_t kTrailerLenFromEnd = 22;  // the trailer length field, counted from the frame's end

inline int64_t as_signed(uint64_t v) noexcept {
  return v <= static_cast<uint64_t>(INT64_MAX) ? static_cast<int64_t>(v) : -static_cast<int64_t>(~v) - 1;
}
inline int32_t as_signed32(uint64_t v) noexcept {
  const uint32_t u = static_cast<uint32_t>(v);
  return u <= 0x7fffffffu ? static_cast<int32_t>(u) : -static_cast<int32_t>(~u) - 1;
}

// A metalayer entry: name and content inside an owned byte block.
struct frame_meta_entry {
  char name[kFrameMetalayerNameMax + 1] = {};
  uint8_t name_len = 0;
  uint32_t content_off = 0;  // fixed metalayers: offset of the content in the header
  uint32_t content_len = 0;
  uint8_t* data = nullptr;   // vlmetalayers: the owned content (a chunk)
};

// What the index holds for each chunk, plus what we learned of it.
struct frame_chunk_entry {
  int64_t offset = 0;      // as in the index: negative means a special value
  int32_t nbytes = -1;     // -1: not read yet
  int32_t cbytes = -1;
  int32_t blocksize = -1;  // of the stored chunk's header; -1: not read yet (0 for special entries)
  uint8_t fresh = 0;       // contiguous: its bytes were written since the last commit (no committed frame uses them)
};

// ---- Space reuse in contiguous frames (frame_space.cpp) ---------------------------------------------------------
// Positions relative to the frame's start. Bytes at and past `end` are free; below it, `free` lists the extents
// that may be written now and `retired` those the last committed frame still uses but the pending one does not
// (free once the next commit is durable). Both are bounded (kSpaceExtentsMax each, 16 bytes an extent, grown from
// the frame's allocator as needed): past the bound, or when the allocator refuses, the smallest extent is
// forgotten and stays dead (counted in `lost`) until compaction. The map is built on a frame's first change that
// frees bytes (created frames: at creation, empty) and costs nothing before.
struct extent {
  uint64_t pos = 0;
  uint64_t len = 0;
};
struct extent_set {
  extent* v = nullptr;  // sorted by pos, disjoint, never adjacent
  uint32_t n = 0;
  uint32_t cap = 0;
};
inline constexpr uint32_t kSpaceExtentsMax = 1024;
struct space_map {
  bool active = false;    // placement goes through the map
  bool disabled = false;  // never reuse (chunks that share or overlap bytes, or after an uncertain commit)
  bool uncertain = false; // disabled by a commit whose header write failed: either frame may be live until the next
  extent_set free;
  extent_set retired;
  extent meta{};          // durable: the committed index and trailer (free after the next commit)
  uint64_t end = 0;
  uint64_t live = 0;      // bytes of the pending frame's stored chunks
  uint64_t lost = 0;
  uint64_t written = 0;   // chunk bytes the caller's changes wrote since the last compaction (its budget)
  uint64_t written_at_commit = 0;  // `written` after the last commit: a transaction wrote the difference
};

// The committed index chunk, read a block at a time: opening costs O(1) memory in the number of chunks. A
// writable frame reads it into frame_state::chunks on its first change (state_index_materialize).
struct lazy_index {
  bool active = false;
  uint64_t pos = 0;          // the index chunk, relative to the frame (sparse: inside chunks.b2frame)
  uint32_t cbytes = 0;
  chunk_header h{};
  int64_t special_value = 0; // h.special: what every entry holds
  int64_t cached_first = 0;  // entries [cached_first, cached_first + cached_count) are in `block`
  int64_t cached_count = 0;
  uint8_t* block = nullptr;  // one decoded index block (little-endian int64s)
  size_t block_cap = 0;
  chunk_decoder decoder;     // serial, for the index's blocks; inited on first need
  bool decoder_ready = false;
  // Entries whose sizes were learned from their chunk's header, direct-mapped by chunk number: repeated reads
  // of the same chunks do not read their headers again.
  static constexpr int kRecent = 64;
  int64_t recent_n[kRecent] = {};
  frame_chunk_entry recent[kRecent];
  lazy_index() noexcept {
    for (int64_t& n : recent_n) n = -1;
  }
};

// Where a stored chunk's bytes are: a storage and the absolute position of the chunk in it.
struct chunk_source {
  const storage* st = nullptr;  // the frame's storage or an open sparse entry's, which outlives the source
  uint64_t pos = 0;
  uint64_t limit = 0;  // bytes available from pos (the chunk's cbytes must fit)
};

// A stored chunk read a few consecutive blocks at a time, on any thread when its storage allows concurrent reads
// (frame_blocks_reader_init, chunk_blocks_read).
struct chunk_blocks_reader {
  chunk_source src;
  const uint8_t* prefix = nullptr;  // the header and block starts as stored (data_start bytes)
  uint32_t header_size = 0;
  uint32_t nblocks = 0;
  uint32_t blocksize = 0;
  uint64_t data_start = 0;
  uint64_t cbytes = 0;
  bool ascending = true;  // block starts in increasing order
  const uint8_t* sorted = nullptr;  // not ascending: the starts sorted, in the prefix buffer after the stored ones
  uint32_t nstreams = 1;       // streams in each block but the last (block_nstreams), for the copies' check
  uint32_t nstreams_last = 1;  // and in the last
  bool memcpyed = false;  // the blocks are stored as they are, one after another after the header
};

struct frame_state {
  allocator alloc{};
  frame_open_options options{};
  storage st{};              // contiguous: the frame's storage; sparse: unused (entries opened per access)
  storage_directory dir{};
  bool sparse = false;
  uint64_t base = 0;         // contiguous: the frame's start in st

  frame_info info{};         // current (pending) header fields; frame_len and trailer_len as committed
  int32_t schunk_chunksize = -1;  // the reference's super-chunk chunksize: -1 until the first chunk

  uint8_t* header = nullptr; // header_len bytes (fixed fields rewritten at commit)
  size_t header_cap = 0;
  frame_meta_entry metas[kFrameMaxMetalayers];
  uint32_t nmetas = 0;

  frame_meta_entry* vlmetas = nullptr;
  uint32_t nvlmetas = 0;
  uint32_t vlcap = 0;

  frame_chunk_entry* chunks = nullptr;  // the index as a table (created or changed frames); else `lazy`
  lazy_index lazy;
  int64_t nchunks = 0;
  int64_t chunk_cap = 0;

  // Contiguous geometry (relative to the frame start).
  uint64_t committed_len = 0;   // frame_len of the committed frame
  int64_t committed_cbytes = 0; // its chunks section
  bool committed_has_index = false;
  uint64_t data_end = 0;        // end of the chunks section: header_len + cbytes of the pending frame
  space_map space;              // which bytes may be written (frame_space.cpp)
  // Sparse: the next fresh chunk entry number, and entries to remove after the next commit.
  int64_t next_id = 0;
  int64_t* doomed = nullptr;
  uint32_t ndoomed = 0;
  uint32_t doomed_cap = 0;
  int64_t* fresh = nullptr;      // entries written since the last commit (removed when dropped)
  uint32_t nfresh = 0;
  uint32_t fresh_cap = 0;

  int64_t nspecial = 0;          // index entries holding special values
  uint32_t reads_open = 0;       // read brackets open on this handle (frame_reads_scope)
  // A failed sync: the storage may have dropped the writes since the last commit while still showing them (Linux
  // marks the pages clean after a failed fsync), so no later write or commit of this handle can be trusted.
  errc poisoned = errc::ok;
  uint32_t header_reserve = 0;   // a padded header is at least this long (frame_meta_add's first commit)
  bool dirty = false;
  uint8_t* scratch = nullptr;   // grow-only buffer for reads
  size_t scratch_cap = 0;
  uint8_t* worker_scratch = nullptr;  // grow-only: one block's compressed bytes per decoder worker
  size_t worker_scratch_cap = 0;
  chunk_blocks_reader workers_reader;  // the chunk those workers read their blocks from (blocks_decode_lazy)
  uint8_t* starts_sorted = nullptr;   // grow-only: a chunk's block starts sorted, when stored out of order
  size_t starts_sorted_cap = 0;

  // The encoder of the index and vlmetalayers: options.encoder, or this one, inited on first need.
  chunk_encoder own_encoder;
  bool own_encoder_ready = false;
};

struct frame_access {
  static frame_state* get(const frame& f) noexcept { return f.s_; }
  static void set(frame& f, frame_state* s) noexcept { f.s_ = s; }
};

// ---- Allocation helpers --------------------------------------------------------------------------------------

// Grows *buf to at least `need` bytes; a need above options.max_alloc fails with resource_limit and `what` (the
// field of the file that asked for it).
[[nodiscard]] status state_buffer_reserve(frame_state& s, uint8_t** buf, size_t* cap, size_t need,
                                          const char* what = TESSERA_MSG("frame: a size read from the file exceeds max_alloc")) noexcept;
// Whether `bytes` fits the frame's budget (options.max_alloc).
[[nodiscard]] status state_budget_check(const frame_state& s, uint64_t bytes, const char* what) noexcept;
[[nodiscard]] status state_chunks_reserve(frame_state& s, int64_t count) noexcept;
[[nodiscard]] status state_ids_push(frame_state& s, int64_t** ids, uint32_t* n, uint32_t* cap, int64_t id) noexcept;
// Frees a live state (not null: its callers free only what state_new returned) and everything it holds.
void state_free(frame_state* s) noexcept;
[[nodiscard]] result<frame_state*> state_new(const allocator& alloc) noexcept;

// ---- Storage access ------------------------------------------------------------------------------------------

// Reads [pos, pos + n) of the contiguous frame (pos relative to the frame start): a view when the storage has
// one, else into the state's scratch. Valid until the next read or write.
[[nodiscard]] result<bytes_view> frame_bytes(frame_state& s, uint64_t pos, size_t n) noexcept;
// st's view (st: the frame's storage or a sparse entry's), or none when st brackets its views (reads_begin) and
// no bracket of this handle is open.
[[nodiscard]] bytes_view frame_state_view(const frame_state& s, const storage& st) noexcept;
[[nodiscard]] status frame_read_into(frame_state& s, uint64_t pos, bytes_mut dst) noexcept;
[[nodiscard]] status frame_write(frame_state& s, uint64_t pos, bytes_view src) noexcept;

// ---- Space (frame_space.cpp) ---------------------------------------------------------------------------------------

void space_release(frame_state& s) noexcept;
// Starts the map of a new frame (nothing to scan): the committed frame is the header and the trailer.
void space_start_empty(frame_state& s) noexcept;
// Builds the map of an opened frame whose pending chunks are the committed ones plus fresh appends: every stored
// chunk's size is read (its header), chunks are sorted by position, the gaps between them are free. Chunks that
// overlap disable reuse. The chunk table must be in memory (state_index_materialize ran): the index is not read.
// Errors: the storage's, out_of_memory (the sort's N * 16 bytes), resource_limit.
[[nodiscard]] status space_activate_table(frame_state& s) noexcept;
// Disables reuse for good (this handle): what was written stays where it is, new bytes go past everything.
void space_disable(frame_state& s) noexcept;
// Where n new bytes go: the smallest free extent that holds them, else the end.
[[nodiscard]] uint64_t space_take(frame_state& s, uint64_t n) noexcept;
// The lowest free position >= lo with n free bytes from it (or the end), taken.
[[nodiscard]] uint64_t space_take_from(frame_state& s, uint64_t lo, uint64_t n) noexcept;
// The lowest free extent that holds n bytes ending at or before limit, taken; UINT64_MAX when none.
[[nodiscard]] uint64_t space_take_below(frame_state& s, uint64_t n, uint64_t limit) noexcept;
// Bytes nothing references any more (written and superseded before a commit, or a failed write): free now.
void space_free(frame_state& s, uint64_t pos, uint64_t len) noexcept;
// Takes [from, to) out of the free space (the map grows past it when needed): no new byte goes there.
void space_reserve(frame_state& s, uint64_t from, uint64_t to) noexcept;
// A stored chunk version the pending frame drops: free now when fresh (or not durable), else at the next commit.
void space_drop_chunk(frame_state& s, const frame_chunk_entry& e) noexcept;
// The end of the pending frame's chunks (header_len when none). Needs every stored chunk's size (active map).
[[nodiscard]] uint64_t space_chunks_end(const frame_state& s) noexcept;
// After a durable commit of index and trailer at [p, p + m): what it retired is free, bytes past the frame are
// free, chunks are no longer fresh.
void space_committed(frame_state& s, uint64_t p, uint64_t m) noexcept;
// Whether more than 1/share of the frame's extent is free: worth moving chunks down.
[[nodiscard]] bool space_loose(const frame_state& s, uint32_t share) noexcept;
// At close, a committed writable contiguous frame with reuse on is brought tight (relocation, index, compaction
// as after a commit, with lower thresholds); errors only from a commit in place (not durable).
[[nodiscard]] status cframe_close_tidy(frame_state& s) noexcept;
// Moves up to 16 of the highest stored chunks into free extents below them (their old bytes dropped): returns how
// many moved.
[[nodiscard]] result<uint32_t> space_relocate(frame_state& s) noexcept;

// Sparse entries.
struct sparse_entry {
  frame_state* s = nullptr;
  storage st{};
  bool open = false;
  sparse_entry() noexcept = default;
  sparse_entry(const sparse_entry&) = delete;
  sparse_entry& operator=(const sparse_entry&) = delete;
  ~sparse_entry();
  [[nodiscard]] status open_name(frame_state& state, const char* name, storage_open mode) noexcept;
  [[nodiscard]] status close() noexcept;
};

// A writable sparse frame with nothing pending: removes the directory's chunk entries (frame_sparse_chunk_name's
// names) the committed index does not reference, and a stale kSparseIndexTempName. No-op without a list
// callback. Errors: the listing's, out_of_memory or resource_limit (the index's chunk numbers, 4 bytes each);
// failed removals are left for the next sweep.
[[nodiscard]] status sframe_sweep(frame_state& s) noexcept;

// ---- Header, trailer, index ----------------------------------------------------------------------------------

// Parses the fixed fields of a header (at least kFrameHeaderMinLen bytes) into info (not nchunks).
[[nodiscard]] detail::code_status header_fixed_parse(bytes_view h, frame_info& info) noexcept;
// Parses the metalayers section of a complete header (header_len bytes): the entries' names and where their
// contents are in h.
[[nodiscard]] detail::code_status header_metas_read(bytes_view h, frame_meta_entry (&out)[kFrameMaxMetalayers],
                                       uint32_t* count) noexcept;
// The metalayer named `name` or `alt` (the first entry with either) in a complete header: where its content is,
// *found false when there is none. The header's metalayers are checked as header_metas_read checks them (same
// errors, same order), reading the section as a stream: no table of entries on the stack (a reader's open).
[[nodiscard]] detail::code_status header_meta_find(bytes_view h, span<const char> name, span<const char> alt, bool* found,
                                      uint32_t* off, uint32_t* len) noexcept;
// Parses the metalayers section of a complete header (header_len bytes) into s.metas.
[[nodiscard]] detail::code_status header_metas_parse(frame_state& s) noexcept;
// Writes the fixed fields (kFrameHeaderMinLen bytes) of a header from info and the other changing fields.
void header_fixed_encode(const frame_info& info, int32_t chunksize, bool sparse, bool has_vlmetalayers,
                         uint8_t* h) noexcept;
// Rewrites the fixed fields of s.header from s.info.
void header_fixed_write(const frame_state& s, uint8_t* h) noexcept;
// Checks frame_create_params; fills a frame_info's fields from them.
[[nodiscard]] detail::code_status params_check(const frame_create_params& p) noexcept;
void info_from_params(const frame_create_params& p, frame_info& info) noexcept;
// The header's length for p (and its metalayer index size), and the header (frame_header_encode): with
// offsets_out, each metalayer's content offset is stored in offsets_out[i].content_off.
[[nodiscard]] result<uint32_t> header_size_of(const frame_create_params& p, uint64_t* idx_size) noexcept;
[[nodiscard]] result<uint32_t> header_encode(const frame_create_params& p, const frame_header_fields& fields,
                                             bytes_mut out, frame_meta_entry* offsets_out) noexcept;
// Builds a complete header for the params into s.header (and s.metas).
[[nodiscard]] detail::code_status header_build(frame_state& s, const frame_create_params& p) noexcept;

// The trailer for s.vlmetas: its size, and its bytes into out (exactly that size).
[[nodiscard]] result<uint32_t> trailer_size(const frame_state& s) noexcept;
void trailer_write(const frame_state& s, uint8_t* out, uint32_t size) noexcept;
// Parses a trailer (trailer_len bytes) into s.vlmetas (contents copied).
[[nodiscard]] detail::code_status trailer_parse(frame_state& s, bytes_view t) noexcept;
// The trailer's length from the frame's last kFrameTrailerMinLen bytes (a uint32, 22 bytes before the end).
[[nodiscard]] result<uint32_t> trailer_len_parse(bytes_view tail) noexcept;
// The trailer's place in a frame with these fixed fields, from the frame's last kFrameTrailerMinLen bytes.
[[nodiscard]] detail::code_status frame_trailer_locate(const frame_info& info, bytes_view tail, uint64_t* trailer_off,
                                          uint32_t* trailer_len) noexcept;
// The index chunk of a frame with data: right after the chunks section (sparse: after the header), checked to lie
// before the trailer; then its header, read from `head` (its first bytes, cut at the trailer), checked against
// the frame's fields: n entries.
[[nodiscard]] result<uint64_t> frame_index_pos(const frame_info& info, bool sparse, uint64_t trailer_off) noexcept;
[[nodiscard]] detail::code_status frame_index_check(const frame_info& info, uint64_t pos, uint64_t trailer_off, bytes_view head,
                                       chunk_header* h, int64_t* n) noexcept;
// Rewrites the header's frame length and cbytes in place (their fixed encodings: every other byte stays).
void header_sizes_patch(uint8_t* header, uint64_t frame_len, int64_t cbytes) noexcept;

// The index chunk for little-endian int64 entries (frame_index_encode).
[[nodiscard]] result<size_t> index_encode(chunk_encoder* encoder, bytes_view entries, bytes_mut out) noexcept;
[[nodiscard]] result<size_t> index_encode_stored(bytes_view entries, bytes_mut out) noexcept;
// Decodes the index chunk (cbytes bytes) into s.chunks[0, n).
[[nodiscard]] status index_decode(frame_state& s, bytes_view chunk, int64_t n) noexcept;
// Sets up s.lazy for the committed index chunk at pos (its header already read and checked): n entries.
[[nodiscard]] status index_lazy_open(frame_state& s, uint64_t pos, const chunk_header& h, int64_t n) noexcept;
// The index entry of chunk i (0 <= i < s.nchunks): its offset, and its sizes when known (-1 otherwise).
[[nodiscard]] status index_entry_get(frame_state& s, int64_t i, frame_chunk_entry* out) noexcept;
// How many entries from i (before `limit`) hold entry i's special value and size: 0 when entry i is not special.
// O(1) for an index chunk that is itself one special value, else a compare per entry in memory order.
[[nodiscard]] result<int64_t> index_special_run(frame_state& s, int64_t i, int64_t limit) noexcept;
// Records the sizes learned from chunk i's header.
void index_entry_learn(frame_state& s, int64_t i, const frame_chunk_entry& e) noexcept;
// Turns the lazy index into the table a change needs (24 bytes a chunk, within max_alloc); no-op when done.
[[nodiscard]] status state_index_materialize(frame_state& s) noexcept;
// frame_chunk_append for a frame whose chunk table is in memory (a frame just created, or one whose table
// state_index_materialize read; invalid_argument when it is not): it reads no index, so the caller's locals do
// not sit above the index's decoding (array_create's appends).
[[nodiscard]] status frame_chunk_append_table(frame& f, bytes_view chunk) noexcept;
// Room of `size` bytes in the storage itself where the next appended chunk's bytes go (storage::lend), for a
// writer that encodes the chunk there: its frame_chunk_append_table then writes without a copy. Empty when the
// storage lends none or the place is decided only at the append (sparse frames, a frame that reuses space).
[[nodiscard]] bytes_mut frame_append_room(frame& f, size_t size) noexcept;
// The same for insert, update and delete, and the reads a rewrite makes (locate, decode): the writers' variants
// that read no index. A writer calls frame_table_load first, from a small frame (slice writes, shape edits), so
// the index's decoding is never under the writer's own locals.
[[nodiscard]] status frame_chunk_insert_table(frame& f, int64_t nchunk, bytes_view chunk) noexcept;
[[nodiscard]] status frame_chunk_update_table(frame& f, int64_t nchunk, bytes_view chunk) noexcept;
[[nodiscard]] status frame_chunk_delete_table(frame& f, int64_t nchunk) noexcept;
[[nodiscard]] result<frame_chunk_ref> frame_chunk_locate_table(frame& f, int64_t nchunk) noexcept;
[[nodiscard]] result<size_t> frame_chunk_decode_table(frame& f, chunk_decoder& d, int64_t nchunk, bytes_mut out) noexcept;
// Reads a writable frame's chunk table into memory (state_index_materialize; a no-op when it is there).
[[nodiscard]] status frame_table_load(frame& f) noexcept;
void index_lazy_release(frame_state& s) noexcept;
// invalid_argument unless the chunk table is in memory (a new frame, or state_index_materialize ran): the
// variants that read no index (frame_chunk_append_table, frame_table_entry_nbytes, the commit's) refuse otherwise.
[[nodiscard]] inline status table_in_memory_check(const frame_state& s) noexcept {
  if (s.lazy.active) return make_error(errc::invalid_argument, TESSERA_MSG("frame: the chunk table is not in memory"));
  return ok_status();
}

// Decodes the requested blocks of the stored chunk at src (frame_blocks_decode), reading only what they need; with
// copy, decodes nothing and sets *copy to the chunk it would have decoded (frame_blocks_copy).
[[nodiscard]] status blocks_decode_lazy(frame_state& s, chunk_decoder& d, const chunk_source& src,
                                        const chunk_block_request& r, bytes_view* copy = nullptr) noexcept;

// The header of a memcpyed or special-value chunk.
inline constexpr uint32_t kChunkStoredOverhead = 32;
// A 32-byte special-value chunk.
void special_chunk_write(chunk_special kind, int32_t nbytes, int32_t typesize, int32_t blocksize, uint8_t* out) noexcept;

// What an index value means: a stored chunk (offset >= 0) or a special kind. Errors for unknown kinds.
[[nodiscard]] result<chunk_special> index_special(int64_t offset) noexcept;
[[nodiscard]] int64_t index_special_value(chunk_special kind) noexcept;

[[nodiscard]] bool names_equal(const frame_meta_entry& e, span<const char> name) noexcept;

// Reader internals the writer uses.
// A new state for f over st (contiguous, from options.base_offset) or dir (sparse), made ready by
// setup(state, context): f holds it only when setup succeeds (else it is freed). Closes f first.
using state_setup = status (*)(frame_state& s, const void* context) noexcept;
[[nodiscard]] status state_install(frame& f, const allocator& alloc, const frame_open_options& options,
                                   const storage* st, const storage_directory* dir, state_setup setup,
                                   const void* context) noexcept;
[[nodiscard]] status frame_open_cframe_state(frame_state& s) noexcept;
[[nodiscard]] status frame_open_sframe_state(frame_state& s) noexcept;
[[nodiscard]] status frame_chunk_entry_nbytes(frame_state& s, int64_t i, int32_t* out) noexcept;
// The same from the chunk table in memory (state_index_materialize ran; invalid_argument when it did not): never
// reads the index, so a caller with large locals does not hold them above the index's decoding.
[[nodiscard]] status frame_table_entry_nbytes(frame_state& s, int64_t i, int32_t* out) noexcept;
[[nodiscard]] result<frame_chunk_ref> chunk_locate(frame_state& s, int64_t nchunk) noexcept;
// chunk_locate from the chunk table in memory (invalid_argument when it is not): reads no index.
[[nodiscard]] result<frame_chunk_ref> chunk_locate_table(frame_state& s, int64_t nchunk) noexcept;
// Whether frame_chunk_read hands out views that stay valid until close (a read-only contiguous frame whose
// storage is memory or a map): readers may then decode chunks in place, on any thread.
[[nodiscard]] bool frame_chunks_in_place(const frame& f) noexcept;
// One read operation on f (an array's slice, item or selection read): its storage's reads_begin and reads_end
// around it, and, in between, views of a storage with such a bracket (posix_mapping's map under its lease). Outside
// a bracket of this handle the frame never asks such a storage for its view (frame_state_view): another handle's
// bracket on the same storage, on another thread, may end at any moment.
class frame_reads_scope {
 public:
  explicit frame_reads_scope(const frame& f) noexcept;
  ~frame_reads_scope();
  frame_reads_scope(const frame_reads_scope&) = delete;
  frame_reads_scope& operator=(const frame_reads_scope&) = delete;

 private:
  frame_state* s_;
};
// Whether f's chunks may be read a few blocks at a time (frame_blocks_reader_init, chunk_blocks_read), with
// `parallel`, on several threads at once (a contiguous frame whose storage allows concurrent reads; a sparse
// frame's entries say so each: chunk_blocks_reader.src.st->concurrent_reads).
[[nodiscard]] bool frame_blocks_readable_by_tasks(const frame& f, bool parallel) noexcept;
// The room frame_blocks_reader_init's prefix needs for chunks of up to max_blocks blocks: the header, the block
// starts as stored and, for starts stored out of order, a sorted copy of them.
constexpr uint64_t frame_blocks_prefix_size(uint64_t max_blocks) noexcept {
  return kChunkHeaderExtendedSize + 8 * max_blocks;
}
// The most prefix bytes (16k blocks) a reader of several chunks keeps per chunk; chunks of more blocks are read
// one at a time (frame_blocks_decode).
inline constexpr size_t kBlocksPrefixMax = static_cast<size_t>(frame_blocks_prefix_size(16384));
// Chunk nchunk set up for chunk_blocks_read: its header and block starts read into prefix (room for
// frame_blocks_prefix_size(max_blocks) bytes). A sparse frame's chunk is read through *entry, opened here
// and to be kept open while its blocks are read (without entry, a sparse frame's chunks are not read so). False,
// with nothing set up, for a chunk that is not read so: a special value, a dictionary, VL blocks, a lazy chunk,
// the delta filter (it reads block 0), or more than max_blocks blocks.
[[nodiscard]] result<bool> frame_blocks_reader_init(frame& f, int64_t nchunk, uint32_t max_blocks, uint8_t* prefix,
                                                    chunk_blocks_reader* out, sparse_entry* entry = nullptr) noexcept;
// The bytes chunk_blocks_read needs for blocks [first, first + count).
[[nodiscard]] result<size_t> chunk_blocks_size(const chunk_blocks_reader& r, size_t first, size_t count) noexcept;
// Blocks [first, first + count) read into buffer (chunk_blocks_size bytes) as a chunk of their own: the prefix,
// their streams, their starts pointing at them (the others' as stored: never decoded) and cbytes its size,
// which the decoder reads as the stored chunk for those blocks (a fixed-size block reads its own start only). A memcpyed chunk gives the blocks'
// bytes alone (count * blocksize, the last block maybe shorter).
[[nodiscard]] result<bytes_view> chunk_blocks_read(const chunk_blocks_reader& r, size_t first, size_t count,
                                                   bytes_mut buffer) noexcept;
// frame_blocks_decode's reading without its decoding: *copy is the chunk the decoder would read for the request
// (in place, or the requested blocks' streams copied into the state's scratch with the chunk's header, bstarts
// and dictionary: valid until the frame's next read), for a caller that decodes the blocks itself. Empty when
// the chunk is not read that way (a special-value or memcpyed chunk, a sparse frame's entry in memory):
// frame_blocks_decode then.
[[nodiscard]] status frame_blocks_copy(frame& f, chunk_decoder& d, int64_t nchunk, const chunk_block_request& request,
                                       bytes_view* copy) noexcept;
// The compressed bytes of chunk nchunk: a view into the storage when it has one and may_view, else read into
// *buffer (or the state's scratch when buffer is null).
[[nodiscard]] result<bytes_view> chunk_bytes(frame_state& s, int64_t nchunk, owned_array<uint8_t>* buffer,
                                             bool may_view = true) noexcept;

}  // namespace tessera::detail
