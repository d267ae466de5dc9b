// SPDX-License-Identifier: BSD-3-Clause
// Creating frames and changing them: chunk and metalayer changes in memory (chunk bytes written where the
// committed frame does not look), then frame_commit in the crash-safe order described in tessera/frame.hpp.
#include <string.h>
#include "tessera/cxx.hpp"

#include "frame/frame_internal.hpp"

namespace tessera {

using detail::frame_access;
using detail::frame_state;

namespace detail {
namespace {

status writable_check(const frame_state* s) noexcept {
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  if (!s->options.writable) return make_error(errc::read_only, TESSERA_MSG("frame: opened read-only"));
  if (s->poisoned != errc::ok)
    return make_error(s->poisoned, TESSERA_MSG("frame: a sync failed earlier: writes since the last commit may be lost; reopen the frame"));
  return ok_status();
}

// A sync of the frame's storage (or a sparse entry's). A failure poisons the handle: after a failed fsync Linux
// may drop the dirty pages yet mark them clean, so a retried commit would succeed over bytes that never reached
// the disk (PostgreSQL's lesson of 2018). Only a reopen, from what is durable, writes again.
status durable_sync(frame_state& s, const storage& st) noexcept {
  const status r = storage_sync(st);
  if (!r.ok()) s.poisoned = r.code;
  return r;
}

status name_check(span<const char> name) noexcept {
  if (name.empty() || name.size() > kFrameMetalayerNameMax)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: metalayer names have 1 to 31 bytes"));
  return ok_status();
}

// A chunk offered for writing: what the index records of its header, its exact bytes, and how the index holds it.
// Not the whole header: this sits in the change's frame, above the chunk's write.
struct incoming {
  int32_t nbytes = 0;
  int32_t cbytes = 0;
  int32_t blocksize = 0;
  bool vlblocks = false;
  chunk_special kind = chunk_special::none;
  bytes_view bytes;
  bool special = false;  // held by the index only
};

// Its own function: the parsed header stays off the change's frame.
__attribute__((noinline)) result<incoming> incoming_check(bytes_view chunk) noexcept {
  auto h = chunk_header_read(chunk);
  if (!h.ok()) return h.err();
  if (chunk.size() < static_cast<size_t>(h->cbytes)) return make_error(errc::truncated, TESSERA_MSG("frame: chunk shorter than its cbytes"));
  if (h->lazy) return make_error(errc::invalid_argument, TESSERA_MSG("frame: lazy chunks cannot be stored"));
  if (h->nbytes == 0) return make_error(errc::invalid_argument, TESSERA_MSG("frame: empty chunks are not stored (the reference would lose them)"));
  incoming in;
  in.nbytes = h->nbytes;
  in.cbytes = h->cbytes;
  in.blocksize = h->blocksize;
  in.vlblocks = h->vlblocks;
  in.kind = h->special;
  in.bytes = chunk.subspan(0, static_cast<size_t>(h->cbytes));
  in.special = h->special == chunk_special::zeros || h->special == chunk_special::nan || h->special == chunk_special::uninit;
  return in;
}

// Where the next new chunk bytes go: never inside the committed frame when durable.
uint64_t place_at(const frame_state& s) noexcept {
  uint64_t p = s.data_end;
  if (s.options.durable && s.committed_len > p) p = s.committed_len;
  if (s.space.end > p) p = s.space.end;  // a map that was disabled: past everything it placed
  return p;
}

// Stores a chunk's bytes: contiguous, after the data; sparse, in a fresh entry. Returns the index value.
// Its own function: a sparse entry's name and handle stay off the change's frame.
__attribute__((noinline)) result<int64_t> chunk_store(frame_state& s, const incoming& in, uint64_t* new_data_end) noexcept {
  *new_data_end = s.data_end;
  if (in.special) return index_special_value(in.kind);
  if (s.sparse) {
    const int64_t id = s.next_id;
    char name[16];
    TESSERA_TRY(frame_sparse_chunk_name(id, name, sizeof name));
    // Reserve the bookkeeping first, so a stored entry is never forgotten.
    if (s.nfresh == s.fresh_cap) {
      TESSERA_TRY(state_ids_push(s, &s.fresh, &s.nfresh, &s.fresh_cap, id));
      --s.nfresh;
    }
    // Each number is tried once: an entry whose creation failed may stay with its name never made durable
    // (posix syncs the directory when it creates a file, not when it opens one that exists), so a retry that
    // reopened it would commit a name a crash can lose.
    s.next_id = id + 1;
    sparse_entry e;
    if (const status o = e.open_name(s, name, storage_open::replace); !o.ok()) {
      (void)storage_directory_remove(s.dir, name);
      return o;
    }
    status w = storage_write(e.st, 0, in.bytes);
    if (w.ok() && s.options.durable) w = durable_sync(s, e.st);
    status c = e.close();
    if (!w.ok() || !c.ok()) {
      (void)storage_directory_remove(s.dir, name);
      return !w.ok() ? w : c;
    }
    // Cannot fail: its room was reserved before the entry was written.
    TESSERA_TRY(state_ids_push(s, &s.fresh, &s.nfresh, &s.fresh_cap, id));  // GCOVR_EXCL_BR_LINE: see above
    return id;
  }
  const bool reuse = s.space.active;
  const uint64_t pos = reuse ? space_take(s, in.bytes.size()) : place_at(s);
  const uint64_t end = pos + in.bytes.size();
  status w = end > static_cast<uint64_t>(INT64_MAX) ? make_error(errc::overflow, TESSERA_MSG("frame: frame too large"))
                                                     : frame_write(s, pos, in.bytes);
  if (!w.ok()) {
    if (reuse) space_free(s, pos, in.bytes.size());
    return w;
  }
  *new_data_end = end > s.data_end ? end : s.data_end;
  s.space.written += in.bytes.size();
  return static_cast<int64_t>(pos - s.info.header_len);
}

// The reference's rules for the super-chunk's chunksize after a change (-1: unset, 0: variable). The chunk table
// is in memory.
enum class change { append, insert, update };
status chunksize_after(frame_state& s, change kind, int64_t nchunk, int32_t nb, int32_t* out) noexcept {
  int32_t cs = s.schunk_chunksize;
  const int64_t n = s.nchunks;
  bool variable = cs == 0;
  if (cs == -1) cs = nb;
  if (!variable && kind != change::update && n > 0) {
    int32_t last = 0;
    TESSERA_TRY(frame_table_entry_nbytes(s, n - 1, &last));
    const bool misplaced = kind == change::insert && nchunk != n && nb != cs;
    if (last < cs || nb > cs || misplaced) variable = true;
  }
  if (!variable && kind == change::update && (nb > cs || (nchunk != n - 1 && nb != cs))) variable = true;
  // As the reference: a chunk larger than the chunksize an emptied frame kept is refused.
  if (!variable && cs > 0 && nb > cs)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: chunk larger than the frame's chunksize (the reference refuses it)"));
  *out = variable ? 0 : cs;
  return ok_status();
}

// A change once the chunk table is in memory: it reads no index (its locals would sit above the index's decoding).
__attribute__((noinline)) status chunk_change_table(frame_state& s, change kind, int64_t nchunk, bytes_view chunk) noexcept {
  TESSERA_TRY(table_in_memory_check(s));
  auto in = incoming_check(chunk);
  if (!in.ok()) return in.err();
  const int64_t n = s.nchunks;
  if (kind == change::insert && (nchunk < 0 || nchunk > n)) return make_error(errc::out_of_range, TESSERA_MSG("frame: insert position past the end"));
  if (kind == change::update && (nchunk < 0 || nchunk >= n)) return make_error(errc::out_of_range, TESSERA_MSG("frame: no chunk to update there"));
  if (kind == change::append) nchunk = n;
  // Regular and VL-block chunks do not mix.
  const bool sole = n == 0 || (kind == change::update && n == 1);
  if (!sole && in->vlblocks != s.info.vl_blocks)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: regular and variable-length-block chunks cannot mix"));
  int32_t cs = 0;
  TESSERA_TRY(chunksize_after(s, kind, nchunk, in->nbytes, &cs));
  frame_chunk_entry old;
  if (kind == change::update) {
    int32_t onb = 0;
    TESSERA_TRY(frame_table_entry_nbytes(s, nchunk, &onb));
    // The first version a contiguous frame drops builds its space map.
    if (!s.sparse && s.chunks[nchunk].offset >= 0) TESSERA_TRY(space_activate_table(s));
    old = s.chunks[nchunk];
  }
  const int64_t nspecial = s.nspecial + (in->special ? 1 : 0) - (kind == change::update && old.offset < 0 ? 1 : 0);
  if (cs == 0 && nspecial > 0)
    return make_error(errc::unsupported, TESSERA_MSG("frame: special-value chunks in a frame of different chunk sizes (unreadable by the reference)"));
  if (kind != change::update) TESSERA_TRY(state_chunks_reserve(s, n + 1));
  if (s.sparse && kind == change::update && old.offset >= 0) {
    // Reserve the doomed slot so the commit can remove the replaced entry.
    TESSERA_TRY(state_ids_push(s, &s.doomed, &s.ndoomed, &s.doomed_cap, old.offset));
    --s.ndoomed;
  }
  uint64_t new_end = 0;
  auto value = chunk_store(s, *in, &new_end);
  if (!value.ok()) return value.err();
  // Nothing fails from here on.
  frame_chunk_entry e;
  e.offset = *value;
  e.nbytes = in->nbytes;
  e.cbytes = in->special ? 0 : in->cbytes;
  e.blocksize = in->special ? 0 : in->blocksize;
  e.fresh = !s.sparse && !in->special ? 1 : 0;
  if (s.space.active && e.offset >= 0) s.space.live += static_cast<uint64_t>(e.cbytes);
  if (kind == change::update) {
    if (s.space.active) space_drop_chunk(s, old);
    s.chunks[nchunk] = e;
    s.info.nbytes += int64_t{e.nbytes} - old.nbytes;
    if (s.sparse && old.offset >= 0) {
      s.info.cbytes -= old.cbytes;
      s.doomed[s.ndoomed++] = old.offset;
    }
  } else {
    memmove(s.chunks + nchunk + 1, s.chunks + nchunk, sizeof(frame_chunk_entry) * static_cast<size_t>(n - nchunk));
    s.chunks[nchunk] = e;
    s.nchunks = n + 1;
    s.info.nbytes += e.nbytes;
  }
  if (s.sparse) s.info.cbytes += e.cbytes;
  else {
    s.data_end = new_end;
    s.info.cbytes = static_cast<int64_t>(s.data_end - s.info.header_len);
  }
  if (sole) s.info.vl_blocks = in->vlblocks;
  s.nspecial = nspecial;
  s.schunk_chunksize = cs;
  s.info.chunksize = cs;
  s.info.variable_chunks = cs == 0;
  s.info.nchunks = s.nchunks;
  s.dirty = true;
  return ok_status();
}

// A chunk appended, inserted or updated: the chunk table read into memory first, from this small frame.
status chunk_change(frame_state& s, change kind, int64_t nchunk, bytes_view chunk) noexcept {
  TESSERA_TRY(writable_check(&s));
  TESSERA_TRY(state_index_materialize(s));
  return chunk_change_table(s, kind, nchunk, chunk);
}

// ---- Commit --------------------------------------------------------------------------------------------------

// Header bytes for `info` (fixed fields) over the current metalayers.
void header_compose(frame_state& s, const frame_info& info, uint8_t* out) noexcept {
  const frame_info saved = s.info;
  s.info = info;
  memcpy(out, s.header, s.info.header_len);
  header_fixed_write(s, out);
  s.info = saved;
}

// An owned temporary buffer from the frame's allocator.
struct temp_buffer {
  frame_state* s = nullptr;
  uint8_t* p = nullptr;
  size_t n = 0;
  temp_buffer() noexcept = default;
  temp_buffer(const temp_buffer&) = delete;
  temp_buffer& operator=(const temp_buffer&) = delete;
  ~temp_buffer() {
    if (p != nullptr) allocator_deallocate(s->alloc, p, n, 16);
  }
  status get(frame_state& state, size_t size) noexcept {
    s = &state;
    n = size == 0 ? 1 : size;
    p = static_cast<uint8_t*>(allocator_allocate(state.alloc, n, 16));
    return p == nullptr ? make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused a commit buffer")) : ok_status();
  }
};

status sync_if(frame_state& s) noexcept { return s.options.durable ? durable_sync(s, s.st) : ok_status(); }

// The encoder for the index and vlmetalayers: the caller's, or the frame's own (inited once, on first need).
result<chunk_encoder*> encoder_get(frame_state& s) noexcept {
  if (s.options.encoder != nullptr) return s.options.encoder;
  if (!s.own_encoder_ready) {
    TESSERA_TRY(chunk_encoder_init(s.own_encoder, s.alloc, frame_encoder_options()));
    s.own_encoder_ready = true;
  }
  return &s.own_encoder;
}

// The index of entries [0, n) into out (room for frame_index_bound(n)), through a temporary of the
// little-endian entries; returns the index chunk's size. Take the encoder before any temporary (arenas free
// only their last block).
result<uint32_t> index_build(frame_state& s, chunk_encoder* enc, const frame_chunk_entry* e, int64_t n,
                             bytes_mut out) noexcept {
  temp_buffer src;
  TESSERA_TRY(src.get(s, static_cast<size_t>(n) * 8));
  for (int64_t i = 0; i < n; ++i) le_store64(src.p + 8 * i, static_cast<uint64_t>(e[i].offset));
  auto size = index_encode(enc, bytes_view(src.p, static_cast<size_t>(n) * 8), out);
  if (!size.ok()) return size.err();
  return static_cast<uint32_t>(*size);
}

// The storage's sector: a write that lies inside one aligned sector of this size is taken to reach the disk whole
// or not at all (docs/architecture.md, "The commit protocol"). Every commit point is such a write.
constexpr uint64_t kCommitSector = 512;

// The commit point, and its sync: the header bytes h[0, len) that differ from the storage's, in one write; the
// others are equal already. With `durable`, that write must lie inside one sector: the fixed fields a commit
// changes sit in the header's first 70 bytes (and a resize's shape in the b2nd metalayer after them). A change
// that would cross a sector is refused before anything is written (the frame's base_offset puts the header
// across one). When the write or its sync fails, the storage may show the new header while its disk keeps the
// old one, and a reopen would read the new one: the old bytes are written back and synced (best effort), so
// that what reads see is what is durable. *header_tried: the write was (maybe) made, so either frame may be the
// live one. Its own frame: the read buffer's locals stay off the commit's.
__attribute__((noinline)) status header_commit_write(frame_state& s, const uint8_t* h, uint32_t len,
                                                     bool* header_tried) noexcept {
  temp_buffer cur;
  TESSERA_TRY(cur.get(s, len));
  TESSERA_TRY(frame_read_into(s, 0, bytes_mut(cur.p, len)));
  uint32_t a = 0, b = len;
  while (a < len && cur.p[a] == h[a]) ++a;
  if (a == len) return sync_if(s);
  while (cur.p[b - 1] == h[b - 1]) --b;  // stops after a: cur.p[a] differs
  if (s.options.durable && (s.base + a) / kCommitSector != (s.base + b - 1) / kCommitSector)
    return make_error(errc::unsupported, TESSERA_MSG("frame: the commit's header change would cross a 512-byte sector of the storage and could tear: give the frame a base_offset that keeps its header's first bytes in one sector"));
  *header_tried = true;
  status w = frame_write(s, a, bytes_view(h + a, b - a));
  if (w.ok()) w = sync_if(s);
  if (!w.ok()) {
    (void)storage_write(s.st, s.base + a, bytes_view(cur.p + a, b - a));
    (void)storage_sync(s.st);
  }
  return w;
}

// What a clear of the front needs of the committed frame: its fixed header's sizes and its index chunk's place.
struct committed_front {
  int64_t nbytes = 0;          // the committed header's nbytes (0: no chunks)
  int64_t cbytes = 0;          // its chunks section
  uint64_t frame_len = 0;
  uint64_t index_pos = 0;      // the index chunk, from the frame's start
  uint32_t index_cbytes = 0;
  int64_t nchunks = 0;         // the index's entries
};

// The committed frame's fixed header and index chunk header, read and checked. Its own frame: the buffers are
// not on the stack while the index is decoded.
__attribute__((noinline)) status committed_front_read(frame_state& s, committed_front& c) noexcept {
  uint8_t fixed[kFrameHeaderMinLen];
  TESSERA_TRY(frame_read_into(s, 0, bytes_mut(fixed, sizeof fixed)));
  frame_info ci;
  TESSERA_TRY(header_fixed_parse(bytes_view(fixed, sizeof fixed), ci));
  c.nbytes = ci.nbytes;
  c.cbytes = ci.cbytes;
  c.frame_len = ci.frame_len;
  if (ci.nbytes == 0) return ok_status();
  c.index_pos = s.info.header_len + static_cast<uint64_t>(ci.cbytes);
  uint8_t ih_bytes[kChunkHeaderExtendedSize];
  TESSERA_TRY(frame_read_into(s, c.index_pos, bytes_mut(ih_bytes, sizeof ih_bytes)));
  auto ih = chunk_header_read(bytes_view(ih_bytes, sizeof ih_bytes));
  if (!ih.ok()) return ih.err();
  c.nchunks = ih->nbytes / 8;
  c.index_cbytes = ih->cbytes;
  if (c.nchunks <= 0) return make_error(errc::corrupt, TESSERA_MSG("frame: committed frame with data but an empty index"));
  return ok_status();
}

// The committed chunks that sit where the trailer goes, copied past every byte in use, then the committed index
// (tmp's table, their new places) and trailer after them, then the header pointing there. Its own frame: its
// locals are not on the stack while the index is decoded.
__attribute__((noinline)) status clear_front_move(frame_state& s, uint32_t tl, const committed_front& c,
                                                  frame_state& tmp, chunk_encoder* enc) noexcept {
  const uint32_t hl = s.info.header_len;
  const int64_t cn = c.nchunks;
  bool moved = c.index_pos < uint64_t{hl} + tl;
  // Past every byte in use and past where the cleared frame's trailer goes: what moves here is the durable
  // frame until the clear commits.
  uint64_t pos = place_at(s);
  if (pos < uint64_t{hl} + tl) pos = uint64_t{hl} + tl;
  for (int64_t i = 0; i < cn; ++i) {
    const int64_t off = tmp.chunks[i].offset;
    if (off < 0 || static_cast<uint64_t>(off) >= tl) continue;
    uint8_t hb[kChunkHeaderExtendedSize];
    TESSERA_TRY(frame_read_into(s, hl + static_cast<uint64_t>(off), bytes_mut(hb, kChunkHeaderMinSize)));
    const uint32_t cb = le_load32(hb + 12);  // the chunk header's cbytes
    if (cb > INT32_MAX || static_cast<uint64_t>(off) + cb > static_cast<uint64_t>(c.cbytes))
      return make_error(errc::corrupt, TESSERA_MSG("frame: committed chunk runs past its data"));
    temp_buffer b;
    TESSERA_TRY(b.get(s, cb));
    TESSERA_TRY(frame_read_into(s, hl + static_cast<uint64_t>(off), bytes_mut(b.p, cb)));
    TESSERA_TRY(frame_write(s, pos, bytes_view(b.p, cb)));
    tmp.chunks[i].offset = static_cast<int64_t>(pos - hl);
    pos += cb;
    moved = true;
  }
  if (!moved) return ok_status();
  // The committed trailer, unchanged, after the moved index.
  uint8_t ctail[kFrameTrailerMinLen];
  TESSERA_TRY(frame_read_into(s, c.frame_len - kFrameTrailerMinLen, bytes_mut(ctail, sizeof ctail)));
  auto ctlr = trailer_len_parse(bytes_view(ctail, sizeof ctail));
  if (!ctlr.ok()) return make_error(errc::corrupt, TESSERA_MSG("frame: committed trailer unreadable"));
  const uint32_t ctl = *ctlr;
  if (ctl < kFrameTrailerMinLen || ctl > c.frame_len) return make_error(errc::corrupt, TESSERA_MSG("frame: committed trailer unreadable"));
  auto ibound = frame_index_bound(cn);
  if (!ibound.ok()) return ibound.err();
  temp_buffer it;
  TESSERA_TRY(it.get(s, size_t{*ibound} + ctl));
  auto isz = index_build(s, enc, tmp.chunks, cn, bytes_mut(it.p, *ibound));
  if (!isz.ok()) return isz.err();
  TESSERA_TRY(frame_read_into(s, c.frame_len - ctl, bytes_mut(it.p + *isz, ctl)));
  TESSERA_TRY(frame_write(s, pos, bytes_view(it.p, size_t{*isz} + ctl)));
  TESSERA_TRY(sync_if(s));
  const uint64_t len = pos + *isz + ctl;
  temp_buffer hb;
  TESSERA_TRY(hb.get(s, hl));
  TESSERA_TRY(frame_read_into(s, 0, bytes_mut(hb.p, hl)));
  header_sizes_patch(hb.p, len, static_cast<int64_t>(pos - hl));
  if (s.committed_len < len) s.committed_len = len;  // from here on either frame may be the live one
  bool tried = false;
  return header_commit_write(s, hb.p, hl, &tried);
}

// Durable commit of a frame left without chunks: the trailer must sit right after the header, where the
// committed frame may keep chunks or its index. Those are first copied past every byte in use and committed
// (the same content, moved), so that the final rewrite only touches dead bytes. Not inlined, and with small
// locals: it decodes the committed index, which must not run under the commit's locals (cframe_commit calls
// both in turn), and reads and moves from frames of their own.
__attribute__((noinline)) status cframe_clear_front(frame_state& s, uint32_t tl) noexcept {
  committed_front c;
  TESSERA_TRY(committed_front_read(s, c));
  if (c.nbytes == 0) return ok_status();  // committed frame has no chunks: handled by the caller
  auto enc = encoder_get(s);
  if (!enc.ok()) return enc.err();
  // The committed offsets, decoded into a temporary state's table. The state comes from the allocator, not the
  // stack: it is 4 KiB, and commits run on a firmware's task stack.
  void* mem = allocator_allocate(s.alloc, sizeof(frame_state), alignof(frame_state));
  if (mem == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused a temporary state"));
  frame_state& tmp = *new (tessera::cxx::place, mem) frame_state;
  tmp.alloc = s.alloc;
  struct table_guard {
    frame_state* t;
    ~table_guard() {
      const allocator a = t->alloc;
      if (t->chunks != nullptr)
        allocator_deallocate(a, t->chunks, sizeof(frame_chunk_entry) * static_cast<size_t>(t->chunk_cap), alignof(frame_chunk_entry));
      if (t->scratch != nullptr) allocator_deallocate(a, t->scratch, t->scratch_cap, 16);
      t->chunks = nullptr;
      t->scratch = nullptr;
      t->~frame_state();
      allocator_deallocate(a, t, sizeof(frame_state), alignof(frame_state));
    }
  } guard{&tmp};
  tmp.st = s.st;
  tmp.base = s.base;
  TESSERA_TRY(state_chunks_reserve(tmp, c.nchunks));
  {
    auto ib = frame_bytes(tmp, c.index_pos, static_cast<size_t>(c.index_cbytes));
    if (!ib.ok()) return ib.err();
    TESSERA_TRY(index_decode(tmp, *ib, c.nchunks));
  }
  tmp.nchunks = c.nchunks;
  return clear_front_move(s, tl, c, tmp, *enc);
}

// What both kinds of commit need first: the chunk table, the trailer's size, and for a frame with chunks the
// index's bound and the encoder (taken before any temporary: arenas free only their last block).
struct commit_parts {
  uint32_t tl = 0;
  uint32_t hl = 0;
  bool has_data = false;
  uint32_t ibound = 0;
  chunk_encoder* enc = nullptr;
  frame_info ni{};  // the header fields to commit: s.info with the new trailer length
};

// The chunk table must be in memory (state_index_materialize, which the commits call first from a small frame:
// the index's reads are not under theirs).
status commit_parts_get(frame_state& s, commit_parts& c) noexcept {
  auto tls = trailer_size(s);
  if (!tls.ok()) return tls.err();
  c.tl = *tls;
  c.hl = s.info.header_len;
  c.has_data = s.nchunks > 0;
  if (c.has_data) {
    auto r = frame_index_bound(s.nchunks);
    if (!r.ok()) return r.err();
    c.ibound = *r;
    auto e = encoder_get(s);
    if (!e.ok()) return e.err();
    c.enc = *e;
  }
  c.ni = s.info;
  c.ni.trailer_len = c.tl;
  return ok_status();
}

// The index of s.chunks into out (c.ibound bytes): its size; 0 for a frame without chunks (no index).
result<uint32_t> commit_index_build(frame_state& s, const commit_parts& c, uint8_t* out) noexcept {
  if (!c.has_data) return uint32_t{0};
  return index_build(s, c.enc, s.chunks, s.nchunks, bytes_mut(out, c.ibound));
}

// The writes of a commit: index and trailer (buf + lead, at idx_pos) then the header, or, joined, header and
// trailer in one write (a frame without chunks over nothing durable: its creation, or not durable).
// *header_tried: the header was (maybe) written, so either frame may be the live one.
status cframe_commit_writes(frame_state& s, const frame_info& ni, bool joined, const uint8_t* buf, size_t lead,
                            uint64_t idx_pos, size_t tail_size, bool* header_tried) noexcept {
  if (joined) {
    if (s.committed_len < ni.frame_len) s.committed_len = ni.frame_len;
    *header_tried = true;
    TESSERA_TRY(frame_write(s, 0, bytes_view(buf, lead + tail_size)));
    return sync_if(s);
  }
  TESSERA_TRY(frame_write(s, idx_pos, bytes_view(buf + lead, tail_size)));
  TESSERA_TRY(sync_if(s));
  temp_buffer hb;
  TESSERA_TRY(hb.get(s, ni.header_len));
  header_compose(s, ni, hb.p);
  if (s.committed_len < ni.frame_len) s.committed_len = ni.frame_len;
  return header_commit_write(s, hb.p, ni.header_len, header_tried);
}

// Where the header's content (fixed fields and metalayers) ends: before header_len when the header is padded (a
// durable frame without chunks moves its trailer past the committed one: cframe_commit_materialized).
uint32_t header_content_end(const frame_state& s) noexcept {
  uint64_t end = 0;
  for (uint32_t i = 0; i < s.nmetas; ++i) {
    const uint64_t e = uint64_t{s.metas[i].content_off} + s.metas[i].content_len;
    if (e > end) end = e;
  }
  if (s.nmetas == 0) {  // the section of no metalayers: the header of a frame created without any
    uint64_t idx = 0;
    auto size = header_size_of(frame_create_params{}, &idx);
    end = size.ok() ? *size : s.info.header_len;
  }
  return end < s.info.header_len ? static_cast<uint32_t>(end) : s.info.header_len;
}

// A durable frame left without chunks over a committed frame: the format reads its trailer at header_len, where
// the committed frame keeps its own, so the header grows a pad and the trailer goes past what is durable (or
// into an earlier pad, right after the header's content, when it fits below the committed trailer). The pad
// holds the storage's bytes as they are, so the header's write touches only its content. Returns the new
// header_len; s.header is grown to it.
__attribute__((noinline)) result<uint32_t> header_pad_for_trailer(frame_state& s, uint32_t tl) noexcept {
  const uint32_t ce = header_content_end(s);
  uint64_t at = uint64_t{ce} + tl <= s.info.header_len ? ce : s.committed_len;
  if (at < s.header_reserve) at = s.committed_len > s.header_reserve ? s.committed_len : s.header_reserve;
  if (at > static_cast<uint64_t>(INT32_MAX)) return make_error(errc::overflow, TESSERA_MSG("frame: header too large"));
  const auto hl = static_cast<uint32_t>(at);
  TESSERA_TRY(state_buffer_reserve(s, &s.header, &s.header_cap, hl));
  if (hl > ce) TESSERA_TRY(frame_read_into(s, ce, bytes_mut(s.header + ce, hl - ce)));
  return hl;
}

// A padded header (left by a commit without chunks) loses its pad at the first commit with chunks: c-blosc2
// rebuilds headers at their computed size when it changes a frame and refuses a longer one. The chunks stay
// where they are: the header ends at its content, and their offsets (from the header's end) grow by the pad,
// which joins the chunks section as a hole. Undone when the commit fails.
struct header_unpad {
  frame_state& s;
  uint32_t pad = 0;
  bool keep = false;
  explicit header_unpad(frame_state& state) noexcept : s(state) {
    if (s.nchunks == 0) return;
    const uint32_t ce = header_content_end(s);
    pad = s.info.header_len - ce;
    shift(static_cast<int64_t>(pad));
    s.info.header_len = ce;
  }
  ~header_unpad() {
    if (keep || pad == 0) return;
    s.info.header_len += pad;
    shift(-static_cast<int64_t>(pad));
  }
  header_unpad(const header_unpad&) = delete;
  header_unpad& operator=(const header_unpad&) = delete;
  void shift(int64_t by) noexcept {
    if (by == 0) return;
    for (int64_t i = 0; i < s.nchunks; ++i)
      if (s.chunks[i].offset >= 0) s.chunks[i].offset += by;
  }
};

__attribute__((noinline)) status cframe_commit_materialized(frame_state& s) noexcept {
  header_unpad unpad(s);
  commit_parts c;
  TESSERA_TRY(commit_parts_get(s, c));
  const uint32_t tl = c.tl, hl = c.hl;
  const bool has_data = c.has_data;
  frame_info& ni = c.ni;
  if (!has_data) ni.cbytes = 0;
  temp_buffer buf;
  const bool without_index = !has_data && !(s.options.durable && s.committed_has_index);
  // Without chunks and without a committed index, the trailer follows the header: over nothing durable, both are
  // written together (one write); over a durable frame, the header is padded so that the trailer goes where the
  // committed frame does not look.
  const bool padded = without_index && s.options.durable && s.committed_len > 0;
  const bool joined = without_index && !padded;
  if (padded) {
    auto phl = header_pad_for_trailer(s, tl);
    if (!phl.ok()) return phl.err();
    ni.header_len = *phl;
  }
  const size_t lead = joined ? hl : 0;
  TESSERA_TRY(buf.get(s, lead + c.ibound + tl));
  auto r = commit_index_build(s, c, buf.p + lead);
  if (!r.ok()) return r.err();
  const uint32_t isize = *r;
  const uint64_t m = uint64_t{isize} + tl;
  // Where the index and trailer go: right after the chunks when they may be overwritten (not durable), else the
  // lowest free place past the last chunk (reuse), else past everything.
  const bool reuse = s.space.active;
  uint64_t idx_pos = ni.header_len;
  bool taken = false;
  if (has_data) {
    if (reuse) {
      const uint64_t ce = space_chunks_end(s);
      if (s.options.durable) {
        idx_pos = space_take_from(s, ce, m);
        taken = true;
      } else {
        idx_pos = ce;
      }
    } else {
      idx_pos = place_at(s);
    }
    ni.cbytes = static_cast<int64_t>(idx_pos - hl);
  }
  ni.frame_len = idx_pos + m;
  trailer_write(s, buf.p + lead + isize, tl);
  if (joined) header_compose(s, ni, buf.p);
  bool header_tried = false;
  const status w = cframe_commit_writes(s, ni, joined, buf.p, lead, idx_pos, m, &header_tried);
  if (!w.ok()) {
    if (header_tried && s.options.durable) {
      space_disable(s);  // either frame may be live: keep every byte
      s.space.uncertain = true;
    } else if (taken) {
      space_free(s, idx_pos, m);
    }
    return w;
  }
  // Committed.
  unpad.keep = true;
  s.info.header_len = ni.header_len;
  s.info.trailer_len = tl;
  s.info.frame_len = ni.frame_len;
  s.info.cbytes = ni.cbytes;
  s.committed_len = ni.frame_len;
  s.committed_cbytes = ni.cbytes;
  s.committed_has_index = has_data;
  s.data_end = idx_pos;
  s.dirty = false;
  if (s.space.active) space_committed(s, idx_pos, m);
  else
    for (int64_t i = 0; i < s.nchunks; ++i) s.chunks[i].fresh = 0;
  if (padded && s.space.active) {  // nothing below the trailer but the header (and its pad) now
    s.space.free.n = 0;
    s.space.retired.n = 0;
    s.space.meta = extent{idx_pos, m};
    s.space.end = idx_pos + m;
  }
  if (s.space.uncertain) {
    // Only the frame just committed is live: the map may be built again from it (at the next change).
    s.space.uncertain = false;
    s.space.disabled = false;
  }
  if (s.options.truncate_tail && s.st.truncate != nullptr) {
    auto size = storage_size(s.st);
    if (size.ok() && *size > s.base + ni.frame_len) (void)storage_truncate(s.st, s.base + ni.frame_len);
  }
  return ok_status();
}

// A commit of a frame whose chunk table is in memory: for a durable frame left without chunks whose committed
// frame has an index, the front cleared first (its own commit, which decodes the committed index), then the
// commit's own work. The index's decoding runs from this small frame, not under the commit's locals. A frame
// with an active space map has its table in memory (the map is built from it): the tidy and the compaction
// commit through here and read no index of their own.
status cframe_commit_table(frame_state& s) noexcept {
  TESSERA_TRY(table_in_memory_check(s));
  if (s.nchunks == 0 && s.options.durable && s.committed_has_index) {
    auto tl = trailer_size(s);
    if (!tl.ok()) return tl.err();
    space_disable(s);  // the front is cleared through its own commit: placement by appending meanwhile
    TESSERA_TRY(cframe_clear_front(s, *tl));
    TESSERA_TRY(cframe_commit_materialized(s));
    // Committed: only the cleared frame is live, and the map may be built again from it (at the next change or
    // compaction). After a failure it stays off: either frame may be live.
    s.space.disabled = false;
    return ok_status();
  }
  return cframe_commit_materialized(s);
}

// A commit: the chunk table read into memory first, from this small frame, then the commit.
status cframe_commit(frame_state& s) noexcept {
  TESSERA_TRY(state_index_materialize(s));
  return cframe_commit_table(s);
}

// How much free space a tidy lets stand: it acts when more than 1/relocate of the frame is free (moving the
// highest chunks down and committing) and when the index sits more than 1/index of the frame past the last chunk
// (a commit that moves it down). It compacts past 1/compact free when the copy costs at most twice what changes
// wrote since the last compaction (so that writing costs at most 3x its bytes over time), and past 1/compact_tx
// free when it costs at most half what this commit's transaction wrote (0: never).
struct tidy_shares {
  uint32_t relocate, index, compact, compact_tx;
};
// After a commit, extra commits (each costs two syncs) are paid only for free space beyond what the commit's
// changes superseded plus 1/10 of the frame: the relocation before each commit keeps rewrite loops near that,
// and the close brings the frame tight. A large transaction (one commit after many changes) pays for its
// compaction at once.
constexpr tidy_shares kTidyAfterCommit{10, 10, 10, 12};
constexpr tidy_shares kTidyAtClose{20, 32, 20, 0};

// Before a commit: the highest chunks move down into holes (what the last commit freed, and versions this
// transaction superseded), so that the commit itself makes it so. Optional work: on a failure the chunk stays
// where it is (its copy's bytes freed) and the commit goes on.
__attribute__((noinline)) void cframe_relocate(frame_state& s) noexcept {
  for (int round = 0; round < 4 && space_loose(s, 20); ++round) {
    auto moved = space_relocate(s);
    if (!moved.ok() || *moved == 0) return;
    s.dirty = true;
  }
}

// After a commit: when the frame is loose by the shares, the highest chunks move down into the holes and a
// second commit makes it so; when the index then sits far past the last chunk, a third one moves it down. Each
// is a commit of the same content: a crash leaves one of them. With `durable`, their errors are not the
// caller's (the changes are committed; moved chunks go with the next commit). In place (not durable) the second
// commit's index may already have overwritten the moved chunks' old bytes: its error is returned.
status cframe_compact(frame_state& s) noexcept;

uint64_t extents_bytes(const extent_set& set) noexcept {
  uint64_t n = 0;
  for (uint32_t i = 0; i < set.n; ++i) n += set.v[i].len;
  return n;
}

// `tolerated`: free bytes the tidy leaves alone, what the commit's changes freed (the versions they superseded,
// the old index): the next transaction's new versions fill them, so reclaiming them costs a commit that brings
// the frame tight only until that transaction supersedes as much again.
uint64_t free_excess(uint64_t free_bytes, uint64_t tolerated) noexcept {
  return free_bytes > tolerated ? free_bytes - tolerated : 0;
}

// The tidy's moves: chunks down into holes (a commit), then the index down (another).
__attribute__((noinline)) status cframe_tidy_moves(frame_state& s, uint64_t tolerated, const tidy_shares& share) noexcept {
  if (free_excess(extents_bytes(s.space.free), tolerated) * share.relocate > s.space.end) {
    auto moved = space_relocate(s);
    if (moved.ok() && *moved > 0) {
      s.dirty = true;
      const status c = cframe_commit_table(s);
      if (!c.ok()) {
        s.dirty = false;
        if (!s.options.durable) return c;
      }
    }
  }
  if (!s.space.active || !s.options.durable) return ok_status();
  const uint64_t ce = space_chunks_end(s);
  const uint64_t gap = s.data_end > ce ? s.data_end - ce : 0;
  const uint64_t m = s.space.meta.len;
  // Only when the index and trailer fit right after the last chunk (a bounded map may have forgotten that gap).
  bool fits = false;
  for (uint32_t i = 0; i < s.space.free.n && !fits; ++i) {
    const extent& e = s.space.free.v[i];
    fits = e.pos <= ce && e.pos + e.len >= ce + m;
  }
  if (s.nchunks > 0 && fits && free_excess(gap, tolerated) * share.index >= s.committed_len) {
    s.dirty = true;
    if (!cframe_commit_table(s).ok()) s.dirty = false;
  }
  return ok_status();
}

// Still loose (holes no high chunk fits): compaction, when what it copies (twice: the chunks past the first
// hole) is within the budget of the shares.
__attribute__((noinline)) status cframe_tidy_compact(frame_state& s, uint64_t written_tx, uint64_t tolerated,
                                                     const tidy_shares& share) noexcept {
  if (!s.space.active || s.space.free.n == 0) return ok_status();
  const uint64_t holes = extents_bytes(s.space.free);
  const uint64_t first = s.space.free.v[0].pos;
  const uint64_t past = s.space.end - first > holes ? s.space.end - first - holes : 0;
  const uint64_t excess = free_excess(holes, tolerated);
  const bool pays = (excess * share.compact > s.space.end && past <= 2 * s.space.written) ||
                    (excess * share.compact_tx > s.space.end && 2 * past <= written_tx);
  if (!pays) return ok_status();
  s.space.written = 0;
  const status c = cframe_compact(s);
  return c.ok() || s.options.durable ? ok_status() : c;
}

// The tidy after a commit or at close: the moves, then (durable) compaction. Inline, so that the two halves'
// frames sit side by side under the caller's, not on top of a frame of their own.
__attribute__((always_inline)) inline status cframe_tidy(frame_state& s, uint64_t written_tx, uint64_t tolerated,
                                                         const tidy_shares& share) noexcept {
  if (!s.space.active) return ok_status();
  const status moves = cframe_tidy_moves(s, tolerated, share);
  if (!moves.ok() || !s.options.durable) return moves;
  return cframe_tidy_compact(s, written_tx, tolerated, share);
}

}  // namespace

status cframe_close_tidy(frame_state& s) noexcept {
  if (s.sparse || !s.options.writable || s.dirty || s.poisoned != errc::ok) return ok_status();
  return cframe_tidy(s, 0, 0, kTidyAtClose);
}

namespace {

__attribute__((noinline)) status sframe_commit_materialized(frame_state& s) noexcept {
  commit_parts c;
  TESSERA_TRY(commit_parts_get(s, c));
  const uint32_t tl = c.tl, hl = c.hl;
  frame_info& ni = c.ni;
  temp_buffer buf;
  TESSERA_TRY(buf.get(s, size_t{hl} + c.ibound + tl));
  auto r = commit_index_build(s, c, buf.p + hl);
  if (!r.ok()) return r.err();
  const uint32_t isize = *r;
  ni.frame_len = uint64_t{hl} + isize + tl;
  header_compose(s, ni, buf.p);
  trailer_write(s, buf.p + hl + isize, tl);
  const char* target = s.options.durable ? kSparseIndexTempName : kSparseIndexName;
  {
    sparse_entry e;
    TESSERA_TRY(e.open_name(s, target, storage_open::replace));
    status w = storage_write(e.st, 0, bytes_view(buf.p, static_cast<size_t>(ni.frame_len)));
    if (w.ok() && s.options.durable) w = durable_sync(s, e.st);
    const status closed = e.close();
    if (w.ok()) w = closed;
    if (!w.ok()) {
      // The committed index is untouched: the temporary goes (best effort; else the next open's sweep).
      if (s.options.durable) (void)storage_directory_remove(s.dir, kSparseIndexTempName);
      return w;
    }
  }
  if (s.options.durable) {
    const status renamed = storage_directory_rename(s.dir, kSparseIndexTempName, kSparseIndexName);
    if (!renamed.ok()) {
      // Whether the rename took effect is unknown (a failed directory sync after it, say): the new index may be
      // the committed one, so this transaction's entries are no longer removed when it is dropped. The changes
      // stay pending; whatever the committed index does not reference, the next writable open sweeps.
      s.nfresh = 0;
      return renamed;
    }
  }
  // Committed: entries of replaced and deleted chunks are garbage now.
  s.info.trailer_len = tl;
  s.info.frame_len = ni.frame_len;
  s.dirty = false;
  s.nfresh = 0;
  char name[16];
  for (uint32_t i = 0; i < s.ndoomed; ++i)
    if (frame_sparse_chunk_name(s.doomed[i], name, sizeof name).ok()) (void)storage_directory_remove(s.dir, name);
  s.ndoomed = 0;
  return ok_status();
}

status sframe_commit(frame_state& s) noexcept {
  TESSERA_TRY(state_index_materialize(s));
  return sframe_commit_materialized(s);
}

status vlmeta_put(frame_state& s, span<const char> name, uint8_t* data, uint32_t size) noexcept {
  for (uint32_t i = 0; i < s.nvlmetas; ++i) {
    frame_meta_entry& e = s.vlmetas[i];
    if (names_equal(e, name)) {
      if (e.data != nullptr) allocator_deallocate(s.alloc, e.data, e.content_len, 1);
      e.data = data;
      e.content_len = size;
      s.dirty = true;
      return ok_status();
    }
  }
  if (s.nvlmetas >= kFrameMaxVlmetalayers) {
    allocator_deallocate(s.alloc, data, size, 1);
    return make_error(errc::out_of_range, TESSERA_MSG("frame: too many vlmetalayers"));
  }
  if (s.nvlmetas == s.vlcap) {
    const uint32_t want = s.vlcap == 0 ? 4 : s.vlcap * 2;
    void* p = allocator_allocate(s.alloc, sizeof(frame_meta_entry) * want, alignof(frame_meta_entry));
    if (p == nullptr) {
      allocator_deallocate(s.alloc, data, size, 1);
      return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused the vlmetalayer table"));
    }
    auto* t = static_cast<frame_meta_entry*>(p);
    for (uint32_t i = 0; i < want; ++i) new (tessera::cxx::place, &t[i]) frame_meta_entry;
    for (uint32_t i = 0; i < s.nvlmetas; ++i) t[i] = s.vlmetas[i];
    if (s.vlmetas != nullptr) allocator_deallocate(s.alloc, s.vlmetas, sizeof(frame_meta_entry) * s.vlcap, alignof(frame_meta_entry));
    s.vlmetas = t;
    s.vlcap = want;
  }
  frame_meta_entry& e = s.vlmetas[s.nvlmetas];
  e = frame_meta_entry{};
  memcpy(e.name, name.data(), name.size());
  e.name[name.size()] = 0;
  e.name_len = static_cast<uint8_t>(name.size());
  e.data = data;
  e.content_len = size;
  ++s.nvlmetas;
  s.info.nvlmetalayers = s.nvlmetas;
  s.info.has_vlmetalayers = true;
  s.dirty = true;
  return ok_status();
}

status create_common(frame_state& s, const frame_create_params& p) noexcept {
  TESSERA_TRY(header_build(s, p));
  frame_info& i = s.info;
  info_from_params(p, i);
  i.kind = s.sparse ? frame_kind::sparse : frame_kind::contiguous;
  s.schunk_chunksize = p.chunksize;
  if (p.expected_nchunks > 0) TESSERA_TRY(state_chunks_reserve(s, p.expected_nchunks));
  s.data_end = i.header_len;
  s.dirty = true;
  if (!s.sparse) space_start_empty(s);
  // A new frame's chunk table is in memory (there is no index to read): the commits that read none.
  return s.sparse ? sframe_commit_materialized(s) : cframe_commit_table(s);
}

}  // namespace
}  // namespace detail

namespace {

status create_state(frame_state& s, const void* params) noexcept {
  return detail::create_common(s, *static_cast<const frame_create_params*>(params));
}

status create_with(frame& f, const allocator& alloc, const frame_create_params& p, frame_open_options options,
                   const storage* st, const storage_directory* dir) noexcept {
  TESSERA_TRY(detail::frame_release(f));
  if (st != nullptr && st->write == nullptr) return make_error(errc::read_only, TESSERA_MSG("frame: cannot create in a read-only storage"));
  options.writable = true;
  return detail::state_install(f, alloc, options, st, dir, create_state, &p);
}

}  // namespace

status frame_create(frame& f, const storage& st, const allocator& alloc, const frame_create_params& p,
                    const frame_open_options& options) noexcept {
  return create_with(f, alloc, p, options, &st, nullptr);
}

status frame_create_sparse(frame& f, const storage_directory& dir, const allocator& alloc, const frame_create_params& p,
                           const frame_open_options& options) noexcept {
  return create_with(f, alloc, p, options, nullptr, &dir);
}

namespace detail {

status frame_chunk_append_table(frame& f, bytes_view chunk) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(writable_check(s));
  return chunk_change_table(*s, change::append, 0, chunk);
}

bytes_mut frame_append_room(frame& f, size_t size) noexcept {
  frame_state* s = frame_access::get(f);
  if (!writable_check(s).ok() || s->sparse) return bytes_mut{};
  // chunk_store's place: past the data, or the space map's end while it has no free extent (with one, the place
  // depends on the chunk's size, known only at the append).
  uint64_t pos = place_at(*s);
  if (s->space.active) {
    if (s->space.free.n != 0) return bytes_mut{};
    pos = s->space.end;
  }
  if (pos > UINT64_MAX - s->base) return bytes_mut{};  // GCOVR_EXCL_BR_LINE: a frame's place is inside its storage
  return storage_lend(s->st, s->base + pos, size);
}

status frame_chunk_insert_table(frame& f, int64_t nchunk, bytes_view chunk) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(writable_check(s));
  return chunk_change_table(*s, change::insert, nchunk, chunk);
}

status frame_chunk_update_table(frame& f, int64_t nchunk, bytes_view chunk) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(writable_check(s));
  return chunk_change_table(*s, change::update, nchunk, chunk);
}

status frame_chunk_delete_table(frame& f, int64_t nchunk) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(writable_check(s));
  if (nchunk < 0 || nchunk >= s->nchunks) return make_error(errc::out_of_range, TESSERA_MSG("frame: no chunk to delete there"));
  TESSERA_TRY(table_in_memory_check(*s));
  int32_t onb = 0;
  TESSERA_TRY(frame_table_entry_nbytes(*s, nchunk, &onb));
  if (!s->sparse && s->chunks[nchunk].offset >= 0) TESSERA_TRY(space_activate_table(*s));
  const frame_chunk_entry old = s->chunks[nchunk];
  if (s->sparse && old.offset >= 0) TESSERA_TRY(state_ids_push(*s, &s->doomed, &s->ndoomed, &s->doomed_cap, old.offset));
  if (s->space.active) space_drop_chunk(*s, old);
  memmove(s->chunks + nchunk, s->chunks + nchunk + 1, sizeof(frame_chunk_entry) * static_cast<size_t>(s->nchunks - nchunk - 1));
  --s->nchunks;
  s->info.nchunks = s->nchunks;
  s->info.nbytes -= old.nbytes;
  if (old.offset < 0) --s->nspecial;
  if (s->sparse && old.offset >= 0) s->info.cbytes -= old.cbytes;
  if (s->nchunks == 0) s->info.vl_blocks = false;
  s->dirty = true;
  return ok_status();
}

status frame_table_load(frame& f) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(writable_check(s));
  return state_index_materialize(*s);
}

}  // namespace detail

status frame_chunk_append(frame& f, bytes_view chunk) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  return detail::chunk_change(*s, detail::change::append, 0, chunk);
}

status frame_chunk_insert(frame& f, int64_t nchunk, bytes_view chunk) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  return detail::chunk_change(*s, detail::change::insert, nchunk, chunk);
}

status frame_chunk_update(frame& f, int64_t nchunk, bytes_view chunk) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  return detail::chunk_change(*s, detail::change::update, nchunk, chunk);
}

status frame_chunk_delete(frame& f, int64_t nchunk) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  if (nchunk < 0 || nchunk >= s->nchunks) return make_error(errc::out_of_range, TESSERA_MSG("frame: no chunk to delete there"));
  TESSERA_TRY(detail::state_index_materialize(*s));
  return detail::frame_chunk_delete_table(f, nchunk);
}

namespace detail {
namespace {

status chunk_move(frame_state& s, int64_t i, uint64_t q) noexcept;
status commit_moves(frame_state& s) noexcept;

// The header with one fixed metalayer more: s's metalayers (contents from s.header) and `name`, laid out as the
// reference lays them out, the fixed fields copied from s.header (a commit rewrites the ones that change).
// Into a buffer from the allocator (*out, *len) and the entries' new offsets into metas (kFrameMaxMetalayers).
status header_with_meta(frame_state& s, span<const char> name, bytes_view content, uint8_t** out, uint32_t* len,
                        frame_meta_entry* metas) noexcept {
  const size_t inits_size = sizeof(frame_metalayer_init) * kFrameMaxMetalayers;
  auto* inits = static_cast<frame_metalayer_init*>(allocator_allocate(s.alloc, inits_size, alignof(frame_metalayer_init)));
  if (inits == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused the metalayer table"));
  for (uint32_t i = 0; i < s.nmetas; ++i) {
    inits[i].name = span<const char>(s.metas[i].name, s.metas[i].name_len);
    inits[i].content = bytes_view(s.header + s.metas[i].content_off, s.metas[i].content_len);
  }
  inits[s.nmetas].name = name;
  inits[s.nmetas].content = content;
  frame_create_params p;
  p.typesize = s.info.typesize > 0 ? s.info.typesize : 1;
  p.metalayers = inits;
  p.nmetalayers = s.nmetas + 1;
  uint64_t idx = 0;
  status st = ok_status();
  auto size = header_size_of(p, &idx);
  if (!size.ok()) st = size.err();
  uint8_t* h = nullptr;
  if (st.ok()) {
    h = static_cast<uint8_t*>(allocator_allocate(s.alloc, *size, 16));
    if (h == nullptr) st = make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused a header"));
  }
  if (st.ok()) {
    frame_header_fields fields;
    fields.kind = s.sparse ? frame_kind::sparse : frame_kind::contiguous;
    auto w = header_encode(p, fields, bytes_mut(h, *size), metas);
    if (!w.ok()) st = w.err();
  }
  if (st.ok()) {
    memcpy(h, s.header, kFhMetalayers);  // the fixed fields as they are (the commit sets header_len and sizes)
    for (uint32_t i = 0; i <= s.nmetas; ++i) {
      const span<const char> n = inits[i].name;
      memcpy(metas[i].name, n.data(), n.size());
      metas[i].name[n.size()] = 0;
      metas[i].name_len = static_cast<uint8_t>(n.size());
      metas[i].content_len = static_cast<uint32_t>(inits[i].content.size());
    }
    *out = h;
    *len = *size;
  } else if (h != nullptr) {
    allocator_deallocate(s.alloc, h, *size, 16);
  }
  allocator_deallocate(s.alloc, inits, inits_size, alignof(frame_metalayer_init));
  return st;
}

// A contiguous frame's header grows from hl to nhl bytes. First [hl, nhl) is cleared: the chunks there move past
// what is used and, when durable, a commit of the same content puts them, the index and the trailer out of it (a
// frame without chunks pads its header to at least nhl). Then the new header takes the place: every chunk's offset
// from the longer header, and a commit whose header write covers the new bytes (one sector: checked before).
status cframe_header_grow(frame_state& s, uint32_t nhl) noexcept {
  const uint32_t hl = s.info.header_len;
  if (nhl <= hl) return ok_status();
  const bool durable = s.options.durable;
  space_reserve(s, hl, nhl);
  bool moved = false;
  for (int64_t i = 0; i < s.nchunks; ++i) {
    const frame_chunk_entry& e = s.chunks[i];
    if (e.offset < 0 || e.cbytes <= 0 || uint64_t{hl} + static_cast<uint64_t>(e.offset) >= nhl) continue;
    const uint64_t q = space_take(s, static_cast<uint64_t>(e.cbytes));
    const status st = chunk_move(s, i, q);
    if (!st.ok()) {
      space_free(s, q, static_cast<uint64_t>(e.cbytes));
      return st;
    }
    space_reserve(s, hl, nhl);  // not durable, the old bytes were freed at once: they stay the header's
    moved = true;
  }
  const extent meta = s.space.meta;
  const bool meta_in = durable && (s.nchunks == 0 || (meta.len > 0 && meta.pos < nhl && meta.pos + meta.len > hl));
  if (durable && (moved || meta_in)) {
    s.header_reserve = nhl;
    const status st = commit_moves(s);
    s.header_reserve = 0;
    TESSERA_TRY(st);
    space_reserve(s, hl, nhl);  // what that commit freed there is the header's now
  }
  const uint32_t grow = nhl - hl;
  for (int64_t i = 0; i < s.nchunks; ++i)
    if (s.chunks[i].offset >= 0) s.chunks[i].offset -= grow;
  s.info.header_len = nhl;
  return ok_status();
}

}  // namespace
}  // namespace detail

status frame_meta_add(frame& f, span<const char> name, bytes_view content) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  TESSERA_TRY(detail::name_check(name));
  for (uint32_t i = 0; i < s->nmetas; ++i)
    if (detail::names_equal(s->metas[i], name)) return make_error(errc::invalid_argument, TESSERA_MSG("frame: a fixed metalayer with that name exists"));
  if (s->nmetas >= kFrameMaxMetalayers) return make_error(errc::out_of_range, TESSERA_MSG("frame: more than 16 metalayers"));
  if (content.size() > static_cast<size_t>(INT32_MAX) - 64) return make_error(errc::invalid_argument, TESSERA_MSG("frame: metalayer content too large"));
  if (!s->sparse && (s->options.keep_old_frames || s->space.disabled))
    return make_error(errc::unsupported, TESSERA_MSG("frame: adding a metalayer rewrites the frame's front: not with keep_old_frames, nor over chunks that share bytes"));
  TESSERA_TRY(frame_commit(f));
  TESSERA_TRY(detail::state_index_materialize(*s));
  if (!s->sparse) TESSERA_TRY(detail::space_activate_table(*s));
  if (!s->sparse && !s->space.active && s->nchunks > 0)
    return make_error(errc::unsupported, TESSERA_MSG("frame: adding a metalayer rewrites the frame's front: not over chunks that share bytes"));
  const size_t metas_size = sizeof(detail::frame_meta_entry) * kFrameMaxMetalayers;
  void* mem = allocator_allocate(s->alloc, metas_size, alignof(detail::frame_meta_entry));
  if (mem == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused the metalayer table"));
  auto* metas = static_cast<detail::frame_meta_entry*>(mem);
  for (uint32_t i = 0; i < kFrameMaxMetalayers; ++i) new (tessera::cxx::place, &metas[i]) detail::frame_meta_entry;
  uint8_t* h = nullptr;
  uint32_t nhl = 0;
  status st = detail::header_with_meta(*s, name, content, &h, &nhl, metas);
  // The commit point covers the fixed fields (from byte 11) to the new header's end: it must fit one sector.
  if (st.ok() && !s->sparse && s->options.durable && nhl > s->info.header_len &&
      (s->base + 11) / detail::kCommitSector != (s->base + nhl - 1) / detail::kCommitSector)
    st = make_error(errc::unsupported, TESSERA_MSG("frame: the header with that metalayer would not fit the storage's first 512-byte sector: its write could tear"));
  const uint32_t old_hl = s->info.header_len;
  const uint32_t new_hl = nhl > old_hl ? nhl : old_hl;
  // Room first: once the header has grown, nothing but the commit may fail (the pending frame stays whole).
  if (st.ok()) st = detail::state_buffer_reserve(*s, &s->header, &s->header_cap, new_hl);
  if (st.ok() && !s->sparse) st = detail::cframe_header_grow(*s, new_hl);
  if (st.ok()) {
    // A padded header longer than the new one keeps its pad after it (the storage's bytes, as they are).
    memcpy(s->header, h, nhl);
    for (uint32_t i = 0; i <= s->nmetas; ++i) {
      s->metas[i] = metas[i];
    }
    s->nmetas += 1;
    s->info.nmetalayers = s->nmetas;
    if (s->sparse) s->info.header_len = nhl;
    s->dirty = true;
    st = frame_commit(f);
  }
  if (h != nullptr) allocator_deallocate(s->alloc, h, nhl, 16);
  allocator_deallocate(s->alloc, mem, metas_size, alignof(detail::frame_meta_entry));
  return st;
}

status frame_meta_update(frame& f, span<const char> name, bytes_view content) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  for (uint32_t i = 0; i < s->nmetas; ++i) {
    detail::frame_meta_entry& e = s->metas[i];
    if (!detail::names_equal(e, name)) continue;
    if (content.size() != e.content_len)
      return make_error(errc::invalid_argument, TESSERA_MSG("frame: a fixed metalayer keeps its size (the header cannot move)"));
    if (!content.empty()) memcpy(s->header + e.content_off, content.data(), content.size());
    s->dirty = true;
    return ok_status();
  }
  return make_error(errc::out_of_range, TESSERA_MSG("frame: no fixed metalayer with that name"));
}

status frame_vlmeta_set(frame& f, span<const char> name, bytes_view content) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  TESSERA_TRY(detail::name_check(name));
  if (content.size() > static_cast<size_t>(INT32_MAX) - kChunkMaxOverhead)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: vlmetalayer content too large"));
  auto enc = detail::encoder_get(*s);
  if (!enc.ok()) return enc.err();
  // Encoded into the scratch, then kept at its exact size.
  const size_t bound = chunk_encode_bound(content.size());
  TESSERA_TRY(detail::state_buffer_reserve(*s, &s->scratch, &s->scratch_cap, bound));
  auto size = frame_vlmeta_encode(**enc, content, bytes_mut(s->scratch, bound));
  if (!size.ok()) return size.err();
  auto* data = static_cast<uint8_t*>(allocator_allocate(s->alloc, *size, 1));
  if (data == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused a vlmetalayer"));
  memcpy(data, s->scratch, *size);
  return detail::vlmeta_put(*s, name, data, static_cast<uint32_t>(*size));
}

status frame_vlmeta_set_chunk(frame& f, span<const char> name, bytes_view chunk) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  TESSERA_TRY(detail::name_check(name));
  auto h = chunk_header_read(chunk);
  if (!h.ok()) return h.err();
  if (static_cast<size_t>(h->cbytes) != chunk.size()) return make_error(errc::invalid_argument, TESSERA_MSG("frame: vlmetalayer chunk size mismatch"));
  const uint32_t size = static_cast<uint32_t>(chunk.size());
  auto* data = static_cast<uint8_t*>(allocator_allocate(s->alloc, size, 1));
  if (data == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused a vlmetalayer"));
  memcpy(data, chunk.data(), size);
  return detail::vlmeta_put(*s, name, data, size);
}

status frame_vlmeta_delete(frame& f, span<const char> name) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  for (uint32_t i = 0; i < s->nvlmetas; ++i) {
    if (!detail::names_equal(s->vlmetas[i], name)) continue;
    if (s->vlmetas[i].data != nullptr) allocator_deallocate(s->alloc, s->vlmetas[i].data, s->vlmetas[i].content_len, 1);
    for (uint32_t k = i; k + 1 < s->nvlmetas; ++k) s->vlmetas[k] = s->vlmetas[k + 1];
    --s->nvlmetas;
    s->vlmetas[s->nvlmetas] = detail::frame_meta_entry{};
    s->info.nvlmetalayers = s->nvlmetas;
    s->info.has_vlmetalayers = s->nvlmetas > 0;
    s->dirty = true;
    return ok_status();
  }
  return make_error(errc::out_of_range, TESSERA_MSG("frame: no vlmetalayer with that name"));
}

status frame_commit(frame& f) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  if (!s->dirty) return ok_status();
  if (s->sparse) return detail::sframe_commit(*s);
  const uint64_t written_tx = s->space.written - s->space.written_at_commit;
  const uint64_t superseded = detail::extents_bytes(s->space.retired) + s->space.meta.len;
  if (s->space.active) detail::cframe_relocate(*s);
  TESSERA_TRY(detail::cframe_commit(*s));
  const status t = detail::cframe_tidy(*s, written_tx, superseded, detail::kTidyAfterCommit);
  s->space.written_at_commit = s->space.written;
  return t;
}

}  // namespace tessera

namespace tessera {
namespace detail {
namespace {

// Stored chunks sorted by position (extent.len holds the chunk's number), from the frame's allocator.
struct chunk_order {
  frame_state* s = nullptr;
  extent* v = nullptr;
  size_t n = 0;
  size_t cap = 0;
  chunk_order() noexcept = default;
  chunk_order(const chunk_order&) = delete;
  chunk_order& operator=(const chunk_order&) = delete;
  ~chunk_order() {
    if (v != nullptr) allocator_deallocate(s->alloc, v, sizeof(extent) * cap, alignof(extent));
  }
  status build(frame_state& state) noexcept {
    s = &state;
    size_t count = 0;
    for (int64_t i = 0; i < state.nchunks; ++i)
      if (state.chunks[i].offset >= 0) ++count;
    cap = count == 0 ? 1 : count;
    TESSERA_TRY(state_budget_check(state, sizeof(extent) * static_cast<uint64_t>(cap), TESSERA_MSG("frame: compaction's chunk order exceeds max_alloc")));
    v = static_cast<extent*>(allocator_allocate(state.alloc, sizeof(extent) * cap, alignof(extent)));
    if (v == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused compaction's chunk order"));
    for (int64_t i = 0; i < state.nchunks; ++i)
      if (state.chunks[i].offset >= 0) v[n++] = extent{static_cast<uint64_t>(state.chunks[i].offset), static_cast<uint64_t>(i)};
    // Insertion sort would be quadratic: a heap sort on positions.
    auto sift = [this](size_t i, size_t size) noexcept {
      for (;;) {
        size_t c = 2 * i + 1;
        if (c >= size) return;
        if (c + 1 < size && v[c + 1].pos > v[c].pos) ++c;
        if (v[c].pos <= v[i].pos) return;
        const extent t = v[i];
        v[i] = v[c];
        v[c] = t;
        i = c;
      }
    };
    for (size_t i = n / 2; i-- > 0;) sift(i, n);
    for (size_t k = n; k-- > 1;) {
      const extent t = v[0];
      v[0] = v[k];
      v[k] = t;
      sift(0, k);
    }
    return ok_status();
  }
};

// Copies chunk i to position q (taken by the caller) and makes the entry point there; the old bytes dropped.
status chunk_move(frame_state& s, int64_t i, uint64_t q) noexcept {
  frame_chunk_entry& e = s.chunks[i];
  const uint64_t hl = s.info.header_len;
  const uint64_t pos = hl + static_cast<uint64_t>(e.offset);
  const size_t n = static_cast<size_t>(e.cbytes);
  TESSERA_TRY(state_buffer_reserve(s, &s.scratch, &s.scratch_cap, n));
  TESSERA_TRY(frame_read_into(s, pos, bytes_mut(s.scratch, n)));
  TESSERA_TRY(frame_write(s, q, bytes_view(s.scratch, n)));
  const frame_chunk_entry old = e;
  space_drop_chunk(s, old);
  e.offset = static_cast<int64_t>(q - hl);
  e.fresh = 1;
  s.space.live += n;
  if (q + n > s.data_end) s.data_end = q + n;
  return ok_status();
}

// Only [from, to) is free (nothing the pending frame uses lies there), never the committed index and trailer.
// Nothing else the durable frame references lies there: compaction commits any pending moves first (retired
// extents are then free).
void space_free_only(frame_state& s, uint64_t from, uint64_t to) noexcept {
  s.space.free.n = 0;
  s.space.lost = 0;
  if (to > from) space_free(s, from, to - from);
  if (s.space.meta.len > 0) space_reserve(s, s.space.meta.pos, s.space.meta.pos + s.space.meta.len);
}

// A commit of moved chunks: the same content, so a failure leaves nothing pending for the caller.
status commit_moves(frame_state& s) noexcept {
  s.dirty = true;
  status st = cframe_commit_table(s);
  if (!st.ok()) s.dirty = false;
  return st;
}

status cframe_compact_active(frame_state& s) noexcept;

status cframe_compact(frame_state& s) noexcept {
  if (!s.options.keep_old_frames) return cframe_compact_active(s);
  // Readers of older frames must stand aside for the time of a compaction: the map lives only for it.
  s.options.keep_old_frames = false;
  const status st = cframe_compact_active(s);
  s.options.keep_old_frames = true;
  s.space.active = false;
  space_release(s);
  return st;
}

// The chunk table is in memory (frame_compact reads it first; the tidy's frames have an active map).
status cframe_compact_active(frame_state& s) noexcept {
  TESSERA_TRY(space_activate_table(s));
  // Moves an earlier tidy could not commit (its error was not the caller's) are committed first: compaction
  // starts from a pending frame that is the durable one, so what it frees no crash can need.
  if (s.space.active && s.space.retired.n > 0) TESSERA_TRY(commit_moves(s));
  // Without chunks there is nothing to move (the map is off after the commit that cleared the frame): only the
  // bytes past the frame go.
  if (!s.space.active && s.nchunks > 0)
    return make_error(errc::unsupported, TESSERA_MSG("frame: chunks that share or overlap bytes are not compacted"));
  const uint64_t hl = s.info.header_len;
  chunk_order order;
  TESSERA_TRY(order.build(s));
  uint64_t t = hl;
  size_t k = 0;
  while (k < order.n && hl + order.v[k].pos == t) {
    t += static_cast<uint64_t>(s.chunks[order.v[k].len].cbytes);
    ++k;
  }
  const uint64_t tight_end = hl + s.space.live;
  if (k < order.n) {
    // 1. The chunks past the first hole, copied past everything in use (and past room for the final index and
    //    trailer), committed.
    auto ib = frame_index_bound(s.nchunks);
    if (!ib.ok()) return ib.err();
    auto tl = trailer_size(s);
    if (!tl.ok()) return tl.err();
    uint64_t stage = tight_end + *ib + *tl;
    if (stage < s.space.end) stage = s.space.end;
    s.space.end = stage;
    for (size_t j = k; j < order.n; ++j) {
      const int64_t i = static_cast<int64_t>(order.v[j].len);
      const uint64_t q = space_take_from(s, stage, static_cast<uint64_t>(s.chunks[i].cbytes));
      status st = chunk_move(s, i, q);
      if (!st.ok()) {
        s.dirty = false;  // what moved goes with the next commit
        return st;
      }
    }
    TESSERA_TRY(commit_moves(s));
    // 2. Down to their final places, right after the chunks already there, and committed.
    space_free_only(s, t, stage);
    for (size_t j = k; j < order.n; ++j) {
      const int64_t i = static_cast<int64_t>(order.v[j].len);
      const uint64_t q = space_take_from(s, t, static_cast<uint64_t>(s.chunks[i].cbytes));
      if (q != t) return make_error(errc::corrupt, TESSERA_MSG("frame: compaction lost its place"));
      status st = chunk_move(s, i, q);
      if (!st.ok()) {
        s.dirty = false;
        return st;
      }
      t += static_cast<uint64_t>(s.chunks[i].cbytes);
    }
    TESSERA_TRY(commit_moves(s));
  }
  // 3. The index and trailer right after the chunks (twice when they overlap where they must go).
  for (int round = 0; round < 2; ++round) {
    const uint64_t ce = s.nchunks > 0 ? space_chunks_end(s) : hl;
    if (s.data_end == ce) break;
    if (s.nchunks == 0) break;
    space_free_only(s, ce, s.data_end);
    TESSERA_TRY(commit_moves(s));
  }
  // Bytes past the frame (left by changes that were dropped) go too.
  if (s.options.truncate_tail && s.st.truncate != nullptr) {
    auto size = storage_size(s.st);
    if (size.ok() && *size > s.base + s.committed_len) TESSERA_TRY(storage_truncate(s.st, s.base + s.committed_len));
  }
  return ok_status();
}

}  // namespace
}  // namespace detail

status frame_compact(frame& f) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  TESSERA_TRY(frame_commit(f));
  if (s->sparse) return ok_status();
  TESSERA_TRY(detail::state_index_materialize(*s));  // from this small frame, not under the compaction's
  return detail::cframe_compact(*s);
}

result<frame_space_stats> frame_space_get(frame& f) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  frame_space_stats st;
  st.frame_len = s->info.frame_len;
  if (!s->sparse && s->space.active && !s->space.disabled) {
    // The space map counts the pending frame's stored chunk bytes through every change (space_map::live): a
    // created frame, or an opened one once a change built the map, reads no chunk header.
    st.chunk_bytes = s->space.live;
  } else {
    for (int64_t i = 0; i < s->nchunks; ++i) {
      auto r = frame_chunk_locate(f, i);
      if (!r.ok()) return r.err();
      if (r->special == chunk_special::none) {
        st.chunk_bytes += static_cast<uint64_t>(r->cbytes);
        continue;
      }
      // A run of special entries holds no bytes: skipped at once (10^8 zero chunks cost one step).
      auto run = detail::index_special_run(*s, i, s->nchunks);
      if (!run.ok()) return run.err();
      if (*run > 1) i += *run - 1;
    }
  }
  if (s->sparse) {
    st.meta_bytes = st.frame_len;
    return st;
  }
  const uint64_t section = static_cast<uint64_t>(s->info.cbytes);
  st.meta_bytes = st.frame_len > section ? st.frame_len - section : 0;
  st.free_bytes = section > st.chunk_bytes ? section - st.chunk_bytes : 0;
  return st;
}

}  // namespace tessera
