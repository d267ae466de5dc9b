#include "tessera/port/flash_frame.hpp"

#include <cstring>

#include "tessera/chunk.hpp"

namespace tessera {

namespace {

enum blob_tag : uint8_t { tag_chunk = 1, tag_tail = 2, tag_header = 3 };

constexpr uint32_t kHeaderSlots = 2;
constexpr uint32_t kIndexBlocksize = 16 * 1024;  // the frame codec's index chunks use 16 KiB blocks

// Offsets of the header's length fields and the msgpack markers before them (README_CFRAME_FORMAT.rst).
constexpr uint32_t kFrameLenMarker = 15;  // 0xcf uint64
constexpr uint32_t kNbytesMarker = 29;    // 0xd3 int64
constexpr uint32_t kCbytesMarker = 38;    // 0xd3 int64

uint32_t round_up(uint32_t v, uint32_t unit) noexcept { return (v + unit - 1) / unit * unit; }

void be_store64(uint8_t* p, uint64_t v) noexcept {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

// A growable in-memory storage, only to let frame_create write the empty frame for the params.
struct ram_store {
  allocator alloc{};
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t cap = 0;
};

status ram_read(void* c, uint64_t offset, bytes_mut dst) noexcept {
  auto& r = *static_cast<ram_store*>(c);
  if (offset > r.size || dst.size() > r.size - offset) return make_error(errc::truncated, "ram store: read past end");
  std::memcpy(dst.data(), r.data + offset, dst.size());
  return ok_status();
}
status ram_write(void* c, uint64_t offset, bytes_view src) noexcept {
  auto& r = *static_cast<ram_store*>(c);
  if (offset > SIZE_MAX - src.size()) return make_error(errc::overflow, "ram store: write past size_t");
  const size_t end = static_cast<size_t>(offset) + src.size();
  if (end > r.cap) {
    size_t cap = r.cap < 256 ? 256 : r.cap;
    while (cap < end) cap *= 2;
    auto* p = static_cast<uint8_t*>(allocator_allocate(r.alloc, cap, 1));
    if (p == nullptr) return make_error(errc::out_of_memory, "ram store: allocator refused");
    if (r.size != 0) std::memcpy(p, r.data, r.size);
    allocator_deallocate(r.alloc, r.data, r.cap, 1);
    r.data = p;
    r.cap = cap;
  }
  if (offset > r.size) std::memset(r.data + r.size, 0, static_cast<size_t>(offset) - r.size);
  std::memcpy(r.data + offset, src.data(), src.size());
  if (end > r.size) r.size = end;
  return ok_status();
}
status ram_size(void* c, uint64_t* out) noexcept {
  *out = static_cast<ram_store*>(c)->size;
  return ok_status();
}
status ram_truncate(void* c, uint64_t size) noexcept {
  auto& r = *static_cast<ram_store*>(c);
  if (size > r.size) return ram_write(c, size, bytes_view());
  r.size = static_cast<size_t>(size);
  return ok_status();
}

// The empty frame the frame codec writes for the params: its header and trailer are the templates.
status templates_build(flash_frame& ff, const frame_create_params& params) noexcept {
  if (params.chunksize <= 0)
    return make_error(errc::invalid_argument, "flash frame: params.chunksize must be set (every chunk the same nbytes)");
  ram_store r;
  r.alloc = ff.alloc;
  storage st;
  st.read = ram_read;
  st.write = ram_write;
  st.size = ram_size;
  st.truncate = ram_truncate;
  st.context = &r;
  frame f;
  frame_open_options o;
  o.writable = true;
  o.durable = false;
  status e = frame_create(f, st, ff.alloc, params, o);
  const frame_info* info = e.ok() ? frame_info_get(f) : nullptr;
  if (e.ok() && info == nullptr) e = make_error(errc::malformed, "flash frame: frame_create gave no header");
  if (e.ok() && (info->header_len < kFrameHeaderMinLen || info->frame_len != r.size ||
                 static_cast<uint64_t>(info->header_len) + info->trailer_len != info->frame_len))
    e = make_error(errc::malformed, "flash frame: the empty frame is not header + trailer");
  if (e.ok() && (r.data[kFrameLenMarker] != 0xcf || r.data[kNbytesMarker] != 0xd3 || r.data[kCbytesMarker] != 0xd3))
    e = make_error(errc::unsupported, "flash frame: unexpected header layout");
  if (e.ok()) {
    ff.header_len = info->header_len;
    ff.trailer_len = info->trailer_len;
    e = ff.header.allocate(ff.alloc, ff.header_len);
  }
  if (e.ok()) e = ff.trailer.allocate(ff.alloc, ff.trailer_len);
  if (e.ok()) {
    std::memcpy(ff.header.data(), r.data, ff.header_len);
    std::memcpy(ff.trailer.data(), r.data + ff.header_len, ff.trailer_len);
  }
  (void)frame_close(f);
  allocator_deallocate(r.alloc, r.data, r.cap, 1);
  ff.chunksize = params.chunksize;
  return e;
}

// A tag telling arrays of different params apart: the templates' CRC.
uint32_t templates_tag(const flash_frame& ff) noexcept {
  return flash_crc32_update(flash_crc32_update(0, bytes_view(ff.header.data(), ff.header.size())),
                            bytes_view(ff.trailer.data(), ff.trailer.size()));
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

// Bytes of the index+trailer blob for n chunks (the index is at most chunk_encode_bound of its offsets).
uint64_t tail_size(const flash_frame& ff, int64_t n) noexcept {
  return chunk_encode_bound(static_cast<size_t>(n) * 8) + static_cast<uint64_t>(ff.trailer_len);
}

// The header slot a finalize uses now: the first whose bytes are all still erased.
uint32_t next_header_slot(const flash_frame& ff) noexcept {
  return (ff.log.front_end + ff.slot_stride - 1) / ff.slot_stride;
}

status storage_read_cb(void* c, uint64_t offset, bytes_mut dst) noexcept {
  auto& ff = *static_cast<flash_frame*>(c);
  if (offset > ff.frame_len || dst.size() > ff.frame_len - offset)
    return make_error(errc::truncated, "flash frame: read past the frame's end");
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
    if (i == n || b.offset < base) return make_error(errc::corrupt, "flash frame: chunk list changed under the index");
    const uint64_t rel = b.offset - base;
    for (int k = 0; k < 8; ++k) offsets[i * 8 + k] = static_cast<uint8_t>(rel >> (8 * k));
    ++i;
  }
  if (i != n) return make_error(errc::corrupt, "flash frame: chunk count changed under the index");
  TESSERA_TRY(out.allocate(ff.alloc, chunk_encode_bound(n * 8)));
  chunk_encoder enc;
  chunk_encoder_options eo;
  eo.max_blocksize = kIndexBlocksize;
  TESSERA_TRY(chunk_encoder_init(enc, ff.alloc, eo));
  chunk_encode_params ep;
  ep.typesize = 8;
  ep.clevel = 0;  // stored: no codec needed on the device, and readers get the offsets in place
  ep.blocksize = static_cast<int32_t>(kIndexBlocksize);
  result<size_t> size = chunk_encode(enc, ep, bytes_view(offsets.data(), n * 8), bytes_mut(out.data(), out.size()));
  chunk_encoder_release(enc);
  return size;
}

}  // namespace

status flash_frame_create(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                          const frame_create_params& params) noexcept {
  TESSERA_TRY(open_prepare(ff, config, alloc, params));
  TESSERA_TRY(flash_log_format(ff.log, config, alloc, kHeaderSlots * ff.slot_stride, templates_tag(ff)));
  return ok_status();
}

status flash_frame_mount(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                         const frame_create_params& params) noexcept {
  TESSERA_TRY(open_prepare(ff, config, alloc, params));
  TESSERA_TRY(flash_log_mount(ff.log, config, alloc));
  if (ff.log.user_tag != templates_tag(ff) || ff.log.front_reserve != kHeaderSlots * ff.slot_stride)
    return make_error(errc::invalid_argument, "flash frame: the array on flash was created with other params");
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
        return make_error(errc::corrupt, "flash frame: a blob of unknown kind");
    }
  }
  if (last_is_header) {
    ff.frame_start = header.offset;
    if (ff.nchunks == 0) {
      ff.frame_len = ff.header_len + ff.trailer_len;
    } else {
      if (!ff.has_tail || ff.tail.aux != header.aux)
        return make_error(errc::corrupt, "flash frame: a header without its index and trailer");
      ff.frame_len = static_cast<uint64_t>(ff.tail.offset) + ff.tail.size - ff.frame_start;
    }
    ff.finalized = true;
  }
  return ok_status();
}

void flash_frame_close(flash_frame& ff) noexcept {
  flash_log_release(ff.log);
  ff.header.reset();
  ff.trailer.reset();
  ff.nchunks = 0;
  ff.has_tail = false;
  ff.finalized = false;
  ff.frame_start = 0;
  ff.frame_len = 0;
}

status flash_frame_append(flash_frame& ff, bytes_view chunk) noexcept {
  if (ff.header.data() == nullptr) return make_error(errc::invalid_argument, "flash frame: not open");
  if (ff.finalized) return make_error(errc::invalid_argument, "flash frame: finalized, no more chunks");
  result<chunk_header> h = chunk_header_read(chunk);
  if (!h.ok()) return h.err();
  if (static_cast<size_t>(h->cbytes) != chunk.size())
    return make_error(errc::invalid_argument, "flash frame: chunk size differs from its header's cbytes");
  if (h->nbytes != ff.chunksize)
    return make_error(errc::invalid_argument, "flash frame: chunk nbytes differs from the array's chunksize");
  if (h->vlblocks || h->lazy) return make_error(errc::unsupported, "flash frame: VL-block or lazy chunk");
  if (ff.nchunks >= INT32_MAX / 8 - 64) return make_error(errc::overflow, "flash frame: too many chunks");
  const uint64_t keep_bytes = round_up(static_cast<uint32_t>(tail_size(ff, ff.nchunks + 1)), ff.log.device.prog_size);
  flash_log_keep keep;
  keep.bytes = keep_bytes > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(keep_bytes);
  keep.records = 2;  // the index+trailer and the header
  result<flash_blob> b = flash_log_append(ff.log, tag_chunk, static_cast<uint32_t>(ff.nchunks),
                                          span<const bytes_view>(&chunk, 1), keep);
  if (!b.ok()) return b.err();
  ++ff.nchunks;
  ff.has_tail = false;
  return ok_status();
}

status flash_frame_finalize(flash_frame& ff) noexcept {
  if (ff.header.data() == nullptr) return make_error(errc::invalid_argument, "flash frame: not open");
  if (ff.finalized) return ok_status();
  const uint32_t slot = next_header_slot(ff);
  if (slot >= kHeaderSlots)
    return make_error(errc::no_space, "flash frame: both header slots were torn by power cuts; no cframe possible");
  const uint32_t start = slot * ff.slot_stride;
  const uint32_t base = start + ff.header_len;  // the chunks section
  uint8_t* h = ff.header.data();
  if (ff.nchunks == 0) {
    // The empty frame: header and trailer back to back, in the slot (frame_create's bytes as they are).
    const bytes_view pieces[2] = {bytes_view(h, ff.header_len), bytes_view(ff.trailer.data(), ff.trailer_len)};
    result<flash_blob> hb = flash_log_write_front(ff.log, tag_header, slot, start, span<const bytes_view>(pieces, 2));
    if (!hb.ok()) return hb.err();
    ff.frame_start = start;
    ff.frame_len = ff.header_len + ff.trailer_len;
    ff.finalized = true;
    return ok_status();
  }
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
  // The header: frame_create's, with the lengths of this frame.
  const uint64_t frame_len = static_cast<uint64_t>(ff.tail.offset) + ff.tail.size - start;
  be_store64(h + kFrameLenMarker + 1, frame_len);
  be_store64(h + kNbytesMarker + 1, static_cast<uint64_t>(ff.nchunks) * static_cast<uint64_t>(ff.chunksize));
  be_store64(h + kCbytesMarker + 1, static_cast<uint64_t>(ff.tail.offset - base));
  const bytes_view piece(h, ff.header_len);
  result<flash_blob> hb = flash_log_write_front(ff.log, tag_header, slot, start, span<const bytes_view>(&piece, 1));
  if (!hb.ok()) return hb.err();
  ff.frame_start = start;
  ff.frame_len = frame_len;
  ff.finalized = true;
  return ok_status();
}

result<size_t> flash_frame_chunk_read(flash_frame& ff, int64_t nchunk, bytes_mut out) noexcept {
  if (ff.header.data() == nullptr) return make_error(errc::invalid_argument, "flash frame: not open");
  if (nchunk < 0 || nchunk >= ff.nchunks) return make_error(errc::out_of_range, "flash frame: no such chunk");
  flash_log_cursor cursor;
  flash_blob b;
  int64_t i = 0;
  for (;;) {
    result<bool> more = flash_log_next(ff.log, cursor, &b);
    if (!more.ok()) return more.err();
    if (!*more) return make_error(errc::corrupt, "flash frame: chunk missing from the log");
    if (b.tag != tag_chunk) continue;
    if (i++ == nchunk) break;
  }
  if (out.size() < b.size) return make_error(errc::buffer_too_small, "flash frame: buffer smaller than the chunk");
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

}  // namespace tessera
