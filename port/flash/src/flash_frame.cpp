#include "tessera/port/flash_frame.hpp"

#include <cstring>

#include "tessera/chunk.hpp"

namespace tessera {

namespace {

enum blob_tag : uint8_t { tag_chunk = 1, tag_tail = 2, tag_header = 3 };

constexpr uint32_t kHeaderSlots = 2;

uint32_t round_up(uint32_t v, uint32_t unit) noexcept { return (v + unit - 1) / unit * unit; }

// The header for a frame of nchunks chunks ending at frame_len, with a chunks section of cbytes.
status header_encode(flash_frame& ff, int64_t nchunks, uint64_t frame_len, uint64_t cbytes) noexcept {
  frame_header_fields hf;
  hf.frame_len = frame_len;
  hf.nbytes = nchunks * int64_t{ff.chunksize};
  hf.cbytes = static_cast<int64_t>(cbytes);
  hf.chunksize = ff.chunksize;
  result<size_t> n = frame_header_encode(ff.params, hf, bytes_mut(ff.header.data(), ff.header.size()));
  if (!n.ok()) return n.err();
  return *n == ff.header_len ? ok_status() : make_error(errc::corrupt, TESSERA_MSG("flash frame: header length changed"));
}

// Keeps a copy of the params (and their metalayers) and encodes the empty array's header and the trailer.
status templates_build(flash_frame& ff, const frame_create_params& params) noexcept {
  if (params.chunksize <= 0)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: params.chunksize must be set (every chunk the same nbytes)"));
  result<uint32_t> hl = frame_header_size(params);  // also checks the params
  if (!hl.ok()) return hl.err();
  size_t meta_total = 0;
  for (uint32_t i = 0; i < params.nmetalayers; ++i)
    meta_total += params.metalayers[i].name.size() + params.metalayers[i].content.size();
  TESSERA_TRY(ff.meta_bytes.allocate(ff.alloc, meta_total));
  ff.params = params;
  uint8_t* at = ff.meta_bytes.data();
  for (uint32_t i = 0; i < params.nmetalayers; ++i) {
    const frame_metalayer_init& m = params.metalayers[i];
    std::memcpy(at, m.name.data(), m.name.size());
    ff.metas[i].name = span<const char>(reinterpret_cast<const char*>(at), m.name.size());
    at += m.name.size();
    // Zeros first: the tag below must not depend on contents (flash_frame_meta_update changes them).
    if (!m.content.empty()) std::memset(at, 0, m.content.size());
    ff.metas[i].content = bytes_view(at, m.content.size());
    at += m.content.size();
  }
  ff.params.metalayers = params.nmetalayers > 0 ? ff.metas : nullptr;
  ff.chunksize = params.chunksize;
  ff.header_len = *hl;
  ff.trailer = frame_trailer_empty();
  ff.trailer_len = static_cast<uint32_t>(ff.trailer.size());
  TESSERA_TRY(ff.header.allocate(ff.alloc, ff.header_len));
  // The tag telling arrays of different params apart: the CRC of the empty array's header and trailer with the
  // metalayer contents zeroed (names, sizes and every other param still count).
  TESSERA_TRY(header_encode(ff, 0, uint64_t{ff.header_len} + ff.trailer_len, 0));
  ff.tag = flash_crc32_update(flash_crc32_update(0, bytes_view(ff.header.data(), ff.header.size())),
                              bytes_view(ff.trailer.data(), ff.trailer.size()));
  for (uint32_t i = 0; i < params.nmetalayers; ++i) {
    const bytes_view c = params.metalayers[i].content;
    uint8_t* dst = ff.meta_bytes.data() + (ff.metas[i].content.data() - ff.meta_bytes.data());
    if (!c.empty()) std::memcpy(dst, c.data(), c.size());
  }
  return header_encode(ff, 0, uint64_t{ff.header_len} + ff.trailer_len, 0);
}

status open_prepare(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                    const frame_create_params& params) noexcept {
  flash_frame_close(ff);
  ff.alloc = alloc;
  TESSERA_TRY(flash_device_validate(config.device));
  TESSERA_TRY(templates_build(ff, params));
  // Each header slot can hold header + trailer: an empty array's frame is exactly that.
  ff.slot_stride = round_up(ff.header_len + ff.trailer_len, config.device.prog_size);
  return ok_status();
}

// Bytes of the index+trailer blob for n chunks (the stored index: its bound). 32 bits: append keeps n below
// INT32_MAX / 8.
uint32_t tail_size(const flash_frame& ff, uint32_t n) noexcept { return 8 * n + kChunkMaxOverhead + ff.trailer_len; }

// The header slot a finalize uses now: the first whose bytes are all still erased.
uint32_t next_header_slot(const flash_frame& ff) noexcept {
  return (ff.log.front_end + ff.slot_stride - 1) / ff.slot_stride;
}

status storage_read_cb(void* c, uint64_t offset, bytes_mut dst) noexcept {
  auto& ff = *static_cast<flash_frame*>(c);
  if (offset > ff.frame_len || dst.size() > ff.frame_len - offset)
    return make_error(errc::truncated, TESSERA_MSG("flash frame: read past the frame's end"));
  return flash_log_read(ff.log, static_cast<uint32_t>(ff.frame_start + offset), dst);
}

status storage_size_cb(void* c, uint64_t* out) noexcept {
  *out = static_cast<flash_frame*>(c)->frame_len;
  return ok_status();
}

// Builds the index chunk (offsets relative to the chunks section at `base`) into `out`; returns its size.
result<size_t> index_build(flash_frame& ff, uint32_t base, owned_array<uint8_t>& out) noexcept {
  const size_t n = static_cast<size_t>(ff.nchunks);
  owned_array<uint8_t> offsets;
  TESSERA_TRY(offsets.allocate(ff.alloc, n * 8));
  flash_log_cursor cursor;
  flash_blob b;
  size_t i = 0;
  for (;;) {
    result<bool> more = flash_log_next(ff.log, cursor, &b);
    if (!more.ok()) return more.err();
    if (!*more) break;
    if (b.tag != tag_chunk) continue;
    if (i == n || b.offset < base) return make_error(errc::corrupt, TESSERA_MSG("flash frame: chunk list changed under the index"));
    // A little-endian int64 offset whose high half is zero (the region is below 4 GiB): one 32-bit store.
    uint32_t rel = b.offset - base;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    rel = __builtin_bswap32(rel);
#endif
    std::memcpy(&offsets[i * 8], &rel, 4);
    std::memset(&offsets[i * 8 + 4], 0, 4);
    ++i;
  }
  if (i != n) return make_error(errc::corrupt, TESSERA_MSG("flash frame: chunk count changed under the index"));
  result<uint32_t> bound = frame_index_bound(ff.nchunks);
  if (!bound.ok()) return bound.err();
  TESSERA_TRY(out.allocate(ff.alloc, *bound));
  // Stored: no codec memory on the device, and readers get the offsets in place.
  return frame_index_encode_stored(bytes_view(offsets.data(), n * 8), bytes_mut(out.data(), out.size()));
}

}  // namespace

status flash_frame_create(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                          const frame_create_params& params) noexcept {
  TESSERA_TRY(open_prepare(ff, config, alloc, params));
  TESSERA_TRY(flash_log_format(ff.log, config, alloc, kHeaderSlots * ff.slot_stride, ff.tag));
  return ok_status();
}

status flash_frame_mount(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                         const frame_create_params& params) noexcept {
  TESSERA_TRY(open_prepare(ff, config, alloc, params));
  TESSERA_TRY(flash_log_mount(ff.log, config, alloc));
  if (ff.log.user_tag != ff.tag || ff.log.front_reserve != kHeaderSlots * ff.slot_stride)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: the array on flash was created with other params"));
  flash_log_cursor cursor;
  flash_blob b;
  flash_blob header{};
  bool last_is_header = false;
  for (;;) {
    result<bool> more = flash_log_next(ff.log, cursor, &b);
    if (!more.ok()) return more.err();
    if (!*more) break;
    last_is_header = false;
    switch (b.tag) {
      case tag_chunk:
        ++ff.nchunks;
        ff.has_tail = false;
        break;
      case tag_tail:
        ff.tail = b;
        ff.has_tail = true;
        break;
      case tag_header:
        header = b;
        last_is_header = true;
        break;
      default:
        return make_error(errc::corrupt, TESSERA_MSG("flash frame: a blob of unknown kind"));
    }
  }
  if (last_is_header) {
    ff.frame_start = header.offset;
    if (ff.nchunks == 0) {
      ff.frame_len = ff.header_len + ff.trailer_len;
    } else {
      if (!ff.has_tail || ff.tail.aux != header.aux)
        return make_error(errc::corrupt, TESSERA_MSG("flash frame: a header without its index and trailer"));
      ff.frame_len = static_cast<uint64_t>(ff.tail.offset) + ff.tail.size - ff.frame_start;
    }
    ff.finalized = true;
  }
  return ok_status();
}

void flash_frame_close(flash_frame& ff) noexcept {
  flash_log_release(ff.log);
  ff.header.reset();
  ff.trailer = bytes_view();
  ff.meta_bytes.reset();
  ff.params = frame_create_params{};
  ff.tag = 0;
  ff.nchunks = 0;
  ff.has_tail = false;
  ff.finalized = false;
  ff.frame_start = 0;
  ff.frame_len = 0;
}

status flash_frame_append(flash_frame& ff, bytes_view chunk) noexcept {
  if (ff.header.data() == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: not open"));
  if (ff.finalized) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: finalized, no more chunks"));
  result<chunk_header> h = chunk_header_read(chunk);
  if (!h.ok()) return h.err();
  if (static_cast<size_t>(h->cbytes) != chunk.size())
    return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: chunk size differs from its header's cbytes"));
  if (h->nbytes != ff.chunksize)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: chunk nbytes differs from the array's chunksize"));
  if (h->vlblocks || h->lazy) return make_error(errc::unsupported, TESSERA_MSG("flash frame: VL-block or lazy chunk"));
  if (ff.nchunks >= INT32_MAX / 8 - 64) return make_error(errc::overflow, TESSERA_MSG("flash frame: too many chunks"));
  flash_log_keep keep;
  keep.bytes = round_up(tail_size(ff, static_cast<uint32_t>(ff.nchunks) + 1), ff.log.device.prog_size);
  keep.records = 2;  // the index+trailer and the header
  result<flash_blob> b = flash_log_append(ff.log, tag_chunk, static_cast<uint32_t>(ff.nchunks),
                                          span<const bytes_view>(&chunk, 1), keep);
  if (!b.ok()) return b.err();
  ++ff.nchunks;
  ff.has_tail = false;
  return ok_status();
}

status flash_frame_finalize(flash_frame& ff) noexcept {
  if (ff.header.data() == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: not open"));
  if (ff.finalized) return ok_status();
  const uint32_t slot = next_header_slot(ff);
  if (slot >= kHeaderSlots)
    return make_error(errc::no_space, TESSERA_MSG("flash frame: both header slots were torn by power cuts; no cframe possible"));
  const uint32_t start = slot * ff.slot_stride;
  const uint32_t base = start + ff.header_len;  // the chunks section
  // The empty frame: header and trailer back to back, in the slot. Else the index and trailer go after the
  // chunks (once per slot) and the header into the slot.
  uint64_t frame_len = uint64_t{ff.header_len} + ff.trailer_len;
  uint64_t cbytes = 0;
  size_t npieces = 2;
  if (ff.nchunks != 0) {
    if (!ff.has_tail || ff.tail.aux != slot) {
      owned_array<uint8_t> index;
      result<size_t> isize = index_build(ff, base, index);
      if (!isize.ok()) return isize.err();
      const bytes_view pieces[2] = {bytes_view(index.data(), *isize), bytes_view(ff.trailer.data(), ff.trailer_len)};
      flash_log_keep keep;
      keep.records = 1;  // the header
      result<flash_blob> tb = flash_log_append(ff.log, tag_tail, slot, span<const bytes_view>(pieces, 2), keep);
      if (!tb.ok()) return tb.err();
      ff.tail = *tb;
      ff.has_tail = true;
    }
    frame_len = static_cast<uint64_t>(ff.tail.offset) + ff.tail.size - start;
    cbytes = static_cast<uint64_t>(ff.tail.offset - base);
    npieces = 1;
  }
  // The header, with the lengths of this frame.
  TESSERA_TRY(header_encode(ff, ff.nchunks, frame_len, cbytes));
  const bytes_view pieces[2] = {bytes_view(ff.header.data(), ff.header_len), bytes_view(ff.trailer.data(), ff.trailer_len)};
  result<flash_blob> hb = flash_log_write_front(ff.log, tag_header, slot, start, span<const bytes_view>(pieces, npieces));
  if (!hb.ok()) return hb.err();
  ff.frame_start = start;
  ff.frame_len = frame_len;
  ff.finalized = true;
  return ok_status();
}

status flash_frame_meta_update(flash_frame& ff, span<const char> name, bytes_view content) noexcept {
  if (ff.header.data() == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: not open"));
  if (ff.finalized) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: finalized, metalayers are written"));
  for (uint32_t i = 0; i < ff.params.nmetalayers; ++i) {
    frame_metalayer_init& m = ff.metas[i];
    if (m.name.size() != name.size() || (!name.empty() && std::memcmp(m.name.data(), name.data(), name.size()) != 0))
      continue;
    if (content.size() != m.content.size())
      return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: a metalayer update must keep the content's size"));
    // The content lives in meta_bytes (templates_build): write it there.
    uint8_t* dst = ff.meta_bytes.data() + (m.content.data() - ff.meta_bytes.data());
    if (!content.empty()) std::memmove(dst, content.data(), content.size());
    return ok_status();
  }
  return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: no metalayer of that name"));
}

result<size_t> flash_frame_chunk_read(flash_frame& ff, int64_t nchunk, bytes_mut out) noexcept {
  if (ff.header.data() == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: not open"));
  if (nchunk < 0 || nchunk >= ff.nchunks) return make_error(errc::out_of_range, TESSERA_MSG("flash frame: no such chunk"));
  flash_log_cursor cursor;
  flash_blob b;
  int64_t i = 0;
  for (;;) {
    result<bool> more = flash_log_next(ff.log, cursor, &b);
    if (!more.ok()) return more.err();
    if (!*more) return make_error(errc::corrupt, TESSERA_MSG("flash frame: chunk missing from the log"));
    if (b.tag != tag_chunk) continue;
    if (i++ == nchunk) break;
  }
  if (out.size() < b.size) return make_error(errc::buffer_too_small, TESSERA_MSG("flash frame: buffer smaller than the chunk"));
  TESSERA_TRY(flash_log_read(ff.log, b.offset, out.subspan(0, b.size)));
  return static_cast<size_t>(b.size);
}

storage flash_frame_storage(flash_frame& ff) noexcept {
  storage st;
  if (!ff.finalized) return st;
  st.read = storage_read_cb;
  st.size = storage_size_cb;
  st.context = &ff;
  return st;
}

bytes_view flash_frame_view(const flash_frame& ff) noexcept {
  const flash_device& d = ff.log.device;
  if (!ff.finalized || d.mapped == nullptr) return bytes_view();
  const uint8_t* region = d.mapped + static_cast<size_t>(ff.log.first_sector) * d.sector_size;
  return bytes_view(region + ff.frame_start, static_cast<size_t>(ff.frame_len));
}

}  // namespace tessera
