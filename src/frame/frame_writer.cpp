// Creating frames and changing them: chunk and metalayer changes in memory (chunk bytes written where the
// committed frame does not look), then frame_commit in the crash-safe order described in tessera/frame.hpp.
#include <cstring>

#include "frame/frame_internal.hpp"

namespace tessera {

using detail::frame_access;
using detail::frame_state;

namespace detail {
namespace {

status writable_check(const frame_state* s) noexcept {
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  if (!s->options.writable) return make_error(errc::invalid_argument, TESSERA_MSG("frame: opened read-only"));
  return ok_status();
}

status name_check(span<const char> name) noexcept {
  if (name.empty() || name.size() > kFrameMetalayerNameMax)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: metalayer names have 1 to 31 bytes"));
  return ok_status();
}

// A chunk offered for writing: its header, its exact bytes, and how the index holds it.
struct incoming {
  chunk_header h;
  bytes_view bytes;
  bool special = false;  // held by the index only
};

result<incoming> incoming_check(bytes_view chunk) noexcept {
  auto h = chunk_header_read(chunk);
  if (!h.ok()) return h.err();
  if (chunk.size() < static_cast<size_t>(h->cbytes)) return make_error(errc::truncated, TESSERA_MSG("frame: chunk shorter than its cbytes"));
  if (h->lazy) return make_error(errc::invalid_argument, TESSERA_MSG("frame: lazy chunks cannot be stored"));
  if (h->nbytes == 0) return make_error(errc::invalid_argument, TESSERA_MSG("frame: empty chunks are not stored (the reference would lose them)"));
  incoming in;
  in.h = *h;
  in.bytes = chunk.subspan(0, static_cast<size_t>(h->cbytes));
  in.special = h->special == chunk_special::zeros || h->special == chunk_special::nan || h->special == chunk_special::uninit;
  return in;
}

// Where the next new chunk bytes go: never inside the committed frame when durable.
uint64_t place_at(const frame_state& s) noexcept {
  uint64_t p = s.data_end;
  if (s.options.durable && s.committed_len > p) p = s.committed_len;
  return p;
}

// Stores a chunk's bytes: contiguous, after the data; sparse, in a fresh entry. Returns the index value.
result<int64_t> chunk_store(frame_state& s, const incoming& in, uint64_t* new_data_end) noexcept {
  *new_data_end = s.data_end;
  if (in.special) return index_special_value(in.h.special);
  if (s.sparse) {
    const int64_t id = s.next_id;
    char name[16];
    TESSERA_TRY(frame_sparse_chunk_name(id, name, sizeof name));
    // Reserve the bookkeeping first, so a stored entry is never forgotten.
    if (s.nfresh == s.fresh_cap) {
      TESSERA_TRY(state_ids_push(s, &s.fresh, &s.nfresh, &s.fresh_cap, id));
      --s.nfresh;
    }
    sparse_entry e;
    TESSERA_TRY(e.open_name(s, name, storage_open::replace));
    status w = storage_write(e.st, 0, in.bytes);
    if (w.ok() && s.options.durable) w = storage_sync(e.st);
    status c = e.close();
    if (!w.ok() || !c.ok()) {
      (void)storage_directory_remove(s.dir, name);
      return !w.ok() ? w : c;
    }
    TESSERA_TRY(state_ids_push(s, &s.fresh, &s.nfresh, &s.fresh_cap, id));
    s.next_id = id + 1;
    return id;
  }
  const uint64_t pos = place_at(s);
  const uint64_t end = pos + in.bytes.size();
  if (end > static_cast<uint64_t>(INT64_MAX)) return make_error(errc::overflow, TESSERA_MSG("frame: frame too large"));
  TESSERA_TRY(frame_write(s, pos, in.bytes));
  *new_data_end = end;
  return static_cast<int64_t>(pos - s.info.header_len);
}

// The reference's rules for the super-chunk's chunksize after a change (-1: unset, 0: variable).
enum class change { append, insert, update };
status chunksize_after(frame_state& s, change kind, int64_t nchunk, int32_t nb, int32_t* out) noexcept {
  int32_t cs = s.schunk_chunksize;
  const int64_t n = s.nchunks;
  bool variable = cs == 0;
  if (cs == -1) cs = nb;
  if (!variable && kind != change::update && n > 0) {
    int32_t last = 0;
    TESSERA_TRY(frame_chunk_entry_nbytes(s, n - 1, &last));
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

status chunk_change(frame_state& s, change kind, int64_t nchunk, bytes_view chunk) noexcept {
  TESSERA_TRY(writable_check(&s));
  TESSERA_TRY(state_index_materialize(s));
  auto in = incoming_check(chunk);
  if (!in.ok()) return in.err();
  const int64_t n = s.nchunks;
  if (kind == change::insert && (nchunk < 0 || nchunk > n)) return make_error(errc::out_of_range, TESSERA_MSG("frame: insert position past the end"));
  if (kind == change::update && (nchunk < 0 || nchunk >= n)) return make_error(errc::out_of_range, TESSERA_MSG("frame: no chunk to update there"));
  if (kind == change::append) nchunk = n;
  // Regular and VL-block chunks do not mix.
  const bool sole = n == 0 || (kind == change::update && n == 1);
  if (!sole && in->h.vlblocks != s.info.vl_blocks)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: regular and variable-length-block chunks cannot mix"));
  int32_t cs = 0;
  TESSERA_TRY(chunksize_after(s, kind, nchunk, in->h.nbytes, &cs));
  frame_chunk_entry old;
  if (kind == change::update) {
    int32_t onb = 0;
    TESSERA_TRY(frame_chunk_entry_nbytes(s, nchunk, &onb));
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
  e.nbytes = in->h.nbytes;
  e.cbytes = in->special ? 0 : in->h.cbytes;
  e.blocksize = in->special ? 0 : in->h.blocksize;
  if (kind == change::update) {
    s.chunks[nchunk] = e;
    s.info.nbytes += int64_t{e.nbytes} - old.nbytes;
    if (s.sparse && old.offset >= 0) {
      s.info.cbytes -= old.cbytes;
      s.doomed[s.ndoomed++] = old.offset;
    }
  } else {
    std::memmove(s.chunks + nchunk + 1, s.chunks + nchunk, sizeof(frame_chunk_entry) * static_cast<size_t>(n - nchunk));
    s.chunks[nchunk] = e;
    s.nchunks = n + 1;
    s.info.nbytes += e.nbytes;
  }
  if (s.sparse) s.info.cbytes += e.cbytes;
  else {
    s.data_end = new_end;
    s.info.cbytes = static_cast<int64_t>(s.data_end - s.info.header_len);
  }
  if (sole) s.info.vl_blocks = in->h.vlblocks;
  s.nspecial = nspecial;
  s.schunk_chunksize = cs;
  s.info.chunksize = cs;
  s.info.variable_chunks = cs == 0;
  s.info.nchunks = s.nchunks;
  s.dirty = true;
  return ok_status();
}

// ---- Commit --------------------------------------------------------------------------------------------------

// Header bytes for `info` (fixed fields) over the current metalayers.
void header_compose(frame_state& s, const frame_info& info, uint8_t* out) noexcept {
  const frame_info saved = s.info;
  s.info = info;
  std::memcpy(out, s.header, s.info.header_len);
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

status sync_if(frame_state& s) noexcept { return s.options.durable ? storage_sync(s.st) : ok_status(); }

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

// Durable commit of a frame left without chunks: the trailer must sit right after the header, where the
// committed frame may keep chunks or its index. Those are first copied past every byte in use and committed
// (the same content, moved), so that the final rewrite only touches dead bytes.
status cframe_clear_front(frame_state& s, uint32_t tl) noexcept {
  const uint32_t hl = s.info.header_len;
  // The committed frame, from the storage.
  uint8_t fixed[kFrameHeaderMinLen];
  TESSERA_TRY(frame_read_into(s, 0, bytes_mut(fixed, sizeof fixed)));
  frame_info ci;
  TESSERA_TRY(header_fixed_parse(bytes_view(fixed, sizeof fixed), ci));
  if (ci.nbytes == 0) return ok_status();  // committed frame has no chunks: handled by the caller
  const uint64_t cidx = hl + static_cast<uint64_t>(ci.cbytes);
  uint8_t ih_bytes[kChunkHeaderExtendedSize];
  TESSERA_TRY(frame_read_into(s, cidx, bytes_mut(ih_bytes, sizeof ih_bytes)));
  auto ih = chunk_header_read(bytes_view(ih_bytes, sizeof ih_bytes));
  if (!ih.ok()) return ih.err();
  const int64_t cn = ih->nbytes / 8;
  if (cn <= 0) return make_error(errc::corrupt, TESSERA_MSG("frame: committed frame with data but an empty index"));
  auto enc = encoder_get(s);
  if (!enc.ok()) return enc.err();
  // The committed offsets, decoded into a temporary state's table.
  frame_state tmp;
  tmp.alloc = s.alloc;
  struct table_guard {
    frame_state* t;
    ~table_guard() {
      if (t->chunks != nullptr)
        allocator_deallocate(t->alloc, t->chunks, sizeof(frame_chunk_entry) * static_cast<size_t>(t->chunk_cap), alignof(frame_chunk_entry));
      if (t->scratch != nullptr) allocator_deallocate(t->alloc, t->scratch, t->scratch_cap, 16);
      t->chunks = nullptr;
      t->scratch = nullptr;
    }
  } guard{&tmp};
  tmp.st = s.st;
  tmp.base = s.base;
  TESSERA_TRY(state_chunks_reserve(tmp, cn));
  {
    auto ib = frame_bytes(tmp, cidx, static_cast<size_t>(ih->cbytes));
    if (!ib.ok()) return ib.err();
    TESSERA_TRY(index_decode(tmp, *ib, cn));
  }
  tmp.nchunks = cn;
  bool moved = cidx < uint64_t{hl} + tl;
  uint64_t pos = place_at(s);
  for (int64_t i = 0; i < cn; ++i) {
    const int64_t off = tmp.chunks[i].offset;
    if (off < 0 || static_cast<uint64_t>(off) >= tl) continue;
    uint8_t hb[kChunkHeaderExtendedSize];
    TESSERA_TRY(frame_read_into(s, hl + static_cast<uint64_t>(off), bytes_mut(hb, kChunkHeaderMinSize)));
    const uint32_t cb = le_load32(hb + 12);  // the chunk header's cbytes
    if (cb > INT32_MAX || static_cast<uint64_t>(off) + cb > static_cast<uint64_t>(ci.cbytes))
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
  TESSERA_TRY(frame_read_into(s, ci.frame_len - kFrameTrailerMinLen, bytes_mut(ctail, sizeof ctail)));
  auto ctlr = trailer_len_parse(bytes_view(ctail, sizeof ctail));
  if (!ctlr.ok()) return make_error(errc::corrupt, TESSERA_MSG("frame: committed trailer unreadable"));
  const uint32_t ctl = *ctlr;
  if (ctl < kFrameTrailerMinLen || ctl > ci.frame_len) return make_error(errc::corrupt, TESSERA_MSG("frame: committed trailer unreadable"));
  auto ibound = frame_index_bound(cn);
  if (!ibound.ok()) return ibound.err();
  temp_buffer it;
  TESSERA_TRY(it.get(s, size_t{*ibound} + ctl));
  auto isz = index_build(s, *enc, tmp.chunks, cn, bytes_mut(it.p, *ibound));
  if (!isz.ok()) return isz.err();
  TESSERA_TRY(frame_read_into(s, ci.frame_len - ctl, bytes_mut(it.p + *isz, ctl)));
  TESSERA_TRY(frame_write(s, pos, bytes_view(it.p, size_t{*isz} + ctl)));
  TESSERA_TRY(sync_if(s));
  const uint64_t len = pos + *isz + ctl;
  temp_buffer hb;
  TESSERA_TRY(hb.get(s, hl));
  TESSERA_TRY(frame_read_into(s, 0, bytes_mut(hb.p, hl)));
  header_sizes_patch(hb.p, len, static_cast<int64_t>(pos - hl));
  if (s.committed_len < len) s.committed_len = len;  // from here on either frame may be the live one
  TESSERA_TRY(frame_write(s, 0, bytes_view(hb.p, hl)));
  TESSERA_TRY(sync_if(s));
  return ok_status();
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

status commit_parts_get(frame_state& s, commit_parts& c) noexcept {
  TESSERA_TRY(state_index_materialize(s));
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

status cframe_commit(frame_state& s) noexcept {
  commit_parts c;
  TESSERA_TRY(commit_parts_get(s, c));
  const uint32_t tl = c.tl, hl = c.hl;
  const bool has_data = c.has_data;
  frame_info& ni = c.ni;
  uint64_t idx_pos = hl;
  if (has_data) {
    idx_pos = place_at(s);
    ni.cbytes = static_cast<int64_t>(idx_pos - hl);
  } else {
    ni.cbytes = 0;
    if (s.options.durable && s.committed_has_index) TESSERA_TRY(cframe_clear_front(s, tl));
  }
  temp_buffer buf;
  const bool joined = !has_data && !(s.options.durable && s.committed_has_index);
  // Without chunks and without a committed index, header and trailer are rewritten together (one write).
  const size_t lead = joined ? hl : 0;
  TESSERA_TRY(buf.get(s, lead + c.ibound + tl));
  auto r = commit_index_build(s, c, buf.p + lead);
  if (!r.ok()) return r.err();
  const uint32_t isize = *r;
  ni.frame_len = idx_pos + isize + tl;
  trailer_write(s, buf.p + lead + isize, tl);
  if (joined) {
    header_compose(s, ni, buf.p);
    if (s.committed_len < ni.frame_len) s.committed_len = ni.frame_len;
    TESSERA_TRY(frame_write(s, 0, bytes_view(buf.p, lead + tl)));
    TESSERA_TRY(sync_if(s));
  } else {
    TESSERA_TRY(frame_write(s, idx_pos, bytes_view(buf.p, isize + tl)));
    TESSERA_TRY(sync_if(s));
    temp_buffer hb;
    TESSERA_TRY(hb.get(s, hl));
    header_compose(s, ni, hb.p);
    if (s.committed_len < ni.frame_len) s.committed_len = ni.frame_len;
    TESSERA_TRY(frame_write(s, 0, bytes_view(hb.p, hl)));
    TESSERA_TRY(sync_if(s));
  }
  // Committed.
  s.info.trailer_len = tl;
  s.info.frame_len = ni.frame_len;
  s.info.cbytes = ni.cbytes;
  s.committed_len = ni.frame_len;
  s.committed_cbytes = ni.cbytes;
  s.committed_has_index = has_data;
  s.data_end = idx_pos;
  s.dirty = false;
  if (s.options.truncate_tail && s.st.truncate != nullptr) {
    auto size = storage_size(s.st);
    if (size.ok() && *size > s.base + ni.frame_len) (void)storage_truncate(s.st, s.base + ni.frame_len);
  }
  return ok_status();
}

status sframe_commit(frame_state& s) noexcept {
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
    TESSERA_TRY(storage_write(e.st, 0, bytes_view(buf.p, static_cast<size_t>(ni.frame_len))));
    if (s.options.durable) TESSERA_TRY(storage_sync(e.st));
    TESSERA_TRY(e.close());
  }
  if (s.options.durable) TESSERA_TRY(storage_directory_rename(s.dir, kSparseIndexTempName, kSparseIndexName));
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
    for (uint32_t i = 0; i < want; ++i) new (&t[i]) frame_meta_entry;
    for (uint32_t i = 0; i < s.nvlmetas; ++i) t[i] = s.vlmetas[i];
    if (s.vlmetas != nullptr) allocator_deallocate(s.alloc, s.vlmetas, sizeof(frame_meta_entry) * s.vlcap, alignof(frame_meta_entry));
    s.vlmetas = t;
    s.vlcap = want;
  }
  frame_meta_entry& e = s.vlmetas[s.nvlmetas];
  e = frame_meta_entry{};
  std::memcpy(e.name, name.data(), name.size());
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
  return s.sparse ? sframe_commit(s) : cframe_commit(s);
}

}  // namespace
}  // namespace detail

namespace {

status create_state(frame_state& s, const void* params) noexcept {
  return detail::create_common(s, *static_cast<const frame_create_params*>(params));
}

status create_with(frame& f, const allocator& alloc, const frame_create_params& p, frame_open_options options,
                   const storage* st, const storage_directory* dir) noexcept {
  TESSERA_TRY(frame_close(f));
  if (st != nullptr && st->write == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: cannot create in a read-only storage"));
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
  int32_t onb = 0;
  TESSERA_TRY(detail::frame_chunk_entry_nbytes(*s, nchunk, &onb));
  const detail::frame_chunk_entry old = s->chunks[nchunk];
  if (s->sparse && old.offset >= 0) TESSERA_TRY(detail::state_ids_push(*s, &s->doomed, &s->ndoomed, &s->doomed_cap, old.offset));
  std::memmove(s->chunks + nchunk, s->chunks + nchunk + 1,
               sizeof(detail::frame_chunk_entry) * static_cast<size_t>(s->nchunks - nchunk - 1));
  --s->nchunks;
  s->info.nchunks = s->nchunks;
  s->info.nbytes -= old.nbytes;
  if (old.offset < 0) --s->nspecial;
  if (s->sparse && old.offset >= 0) s->info.cbytes -= old.cbytes;
  if (s->nchunks == 0) s->info.vl_blocks = false;
  s->dirty = true;
  return ok_status();
}

status frame_meta_update(frame& f, span<const char> name, bytes_view content) noexcept {
  frame_state* s = frame_access::get(f);
  TESSERA_TRY(detail::writable_check(s));
  for (uint32_t i = 0; i < s->nmetas; ++i) {
    detail::frame_meta_entry& e = s->metas[i];
    if (!detail::names_equal(e, name)) continue;
    if (content.size() != e.content_len)
      return make_error(errc::invalid_argument, TESSERA_MSG("frame: a fixed metalayer keeps its size (the header cannot move)"));
    if (!content.empty()) std::memcpy(s->header + e.content_off, content.data(), content.size());
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
  std::memcpy(data, s->scratch, *size);
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
  std::memcpy(data, chunk.data(), size);
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
  return s->sparse ? detail::sframe_commit(*s) : detail::cframe_commit(*s);
}

}  // namespace tessera
