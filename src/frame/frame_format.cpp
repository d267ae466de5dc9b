// The bytes of a frame's header, trailer and index chunk, read and written exactly as the reference lays them
// out (fixed msgpack encodings at fixed offsets).
#include <cstring>

#include "frame/frame_internal.hpp"

namespace tessera::detail {

namespace {

constexpr uint8_t kMagic[8] = {'b', '2', 'f', 'r', 'a', 'm', 'e', 0};

// Markers the reference writes at fixed offsets of the header.
struct marker {
  uint32_t at;
  uint8_t value;
};
constexpr marker kHeaderMarkers[] = {{1, 0xa8}, {10, 0xd2}, {15, 0xcf}, {24, 0xa4}, {29, 0xd3}, {38, 0xd3},
                                     {47, 0xd2}, {52, 0xd2}, {57, 0xd2}, {62, 0xd1}, {65, 0xd1}, {69, 0xd8}};

// One metalayer map (header or trailer): 0x93, cd idx_size, de n, {fixstr name, d2 offset}..., then the
// contents (dc n, c6 len bytes...). Offsets are relative to `base` (the header or trailer start).
status metas_parse(bytes_view all, uint32_t at, uint32_t max_entries, frame_meta_entry* out, uint32_t* count,
                   bool copy, frame_state* s, uint32_t cap_entries) noexcept {
  const uint8_t* p = all.data();
  const uint64_t len = all.size();
  uint64_t pos = at;
  if (pos + 7 > len) return make_error(errc::truncated, "frame: metalayer index past its section");
  if (p[pos + 1] != 0xcd || p[pos + 4] != 0xde) return make_error(errc::malformed, "frame: bad metalayer index markers");
  pos += 5;
  const uint32_t n = static_cast<uint32_t>(be_load(p + pos, 2));
  pos += 2;
  if (n > max_entries) return make_error(errc::malformed, "frame: too many metalayers");
  if (n > cap_entries) return make_error(errc::malformed, "frame: too many metalayers for the table");
  for (uint32_t i = 0; i < n; ++i) {
    if (pos + 1 > len) return make_error(errc::truncated, "frame: metalayer name past its section");
    if ((p[pos] & 0xe0) != 0xa0) return make_error(errc::malformed, "frame: metalayer name is not a fixstr");
    const uint32_t nl = p[pos] & 0x1f;
    pos += 1;
    if (pos + nl + 5 > len) return make_error(errc::truncated, "frame: metalayer entry past its section");
    frame_meta_entry& e = out[i];
    e = frame_meta_entry{};
    std::memcpy(e.name, p + pos, nl);
    e.name[nl] = 0;
    e.name_len = static_cast<uint8_t>(nl);
    pos += nl;
    if (p[pos] != 0xd2) return make_error(errc::malformed, "frame: metalayer offset is not an int32");
    const int32_t off = as_signed32(be_load(p + pos + 1, 4));
    pos += 5;
    if (off < 0 || static_cast<uint64_t>(off) + 5 > len)
      return make_error(errc::malformed, "frame: metalayer offset outside its section");
    if (p[off] != 0xc6) return make_error(errc::malformed, "frame: metalayer content is not a bin32");
    const int32_t clen = as_signed32(be_load(p + off + 1, 4));
    if (clen < 0 || static_cast<uint64_t>(off) + 5 + static_cast<uint64_t>(clen) > len)
      return make_error(errc::truncated, "frame: metalayer content past its section");
    e.content_off = static_cast<uint32_t>(off) + 5;
    e.content_len = static_cast<uint32_t>(clen);
    for (uint32_t k = 0; k < i; ++k)
      if (out[k].name_len == e.name_len && std::memcmp(out[k].name, e.name, nl) == 0)
        return make_error(errc::malformed, "frame: two metalayers with the same name");
    if (copy && clen > 0) {
      e.data = static_cast<uint8_t*>(allocator_allocate(s->alloc, static_cast<size_t>(clen), 1));
      if (e.data == nullptr) {
        *count = i;
        return make_error(errc::out_of_memory, "frame: allocator refused a vlmetalayer");
      }
      std::memcpy(e.data, p + e.content_off, static_cast<size_t>(clen));
    }
    *count = i + 1;
  }
  *count = n;
  return ok_status();
}

// The size of one metalayer section for these entries; fails when it cannot be represented.
result<uint64_t> metas_size(const frame_meta_entry* e, uint32_t n, uint64_t* idx_size) noexcept {
  uint64_t idx = 1 + 2 + 1 + 2;
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    idx += 1 + e[i].name_len + 1 + 4;
    total += 1 + 4 + uint64_t{e[i].content_len};
  }
  if (idx >= (1u << 16)) return make_error(errc::overflow, "frame: metalayer index larger than 64 KiB");
  *idx_size = idx;
  return 1 + idx + 3 + total;  // 0x93, index, dc n, contents
}

// Writes a metalayer section at out (offsets stored relative to `base_off`, the section's offset in its
// header/trailer). `content(i)` gives entry i's bytes.
template <class Content>
uint32_t metas_write(const frame_meta_entry* e, uint32_t n, uint64_t idx_size, uint32_t base_off, uint8_t* out,
                     Content content, frame_meta_entry* offsets_out) noexcept {
  uint8_t* p = out;
  *p++ = 0x93;
  *p++ = 0xcd;
  be_store(p, idx_size, 2);
  p += 2;
  *p++ = 0xde;
  be_store(p, n, 2);
  p += 2;
  uint8_t* first_off = nullptr;
  for (uint32_t i = 0; i < n; ++i) {
    *p++ = static_cast<uint8_t>(0xa0 | e[i].name_len);
    std::memcpy(p, e[i].name, e[i].name_len);
    p += e[i].name_len;
    *p++ = 0xd2;
    if (i == 0) first_off = p;
    p += 4;
  }
  *p++ = 0xdc;
  be_store(p, n, 2);
  p += 2;
  // Walk the index again to fill each offset as its content lands.
  uint8_t* q = first_off;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t here = base_off + static_cast<uint32_t>(p - out);
    be_store(q, here, 4);
    q += 4 + (i + 1 < n ? 1 + e[i + 1].name_len + 1 : 0);
    *p++ = 0xc6;
    be_store(p, e[i].content_len, 4);
    p += 4;
    if (e[i].content_len > 0) std::memcpy(p, content(i), e[i].content_len);
    if (offsets_out != nullptr) offsets_out[i].content_off = here + 5;
    p += e[i].content_len;
  }
  return static_cast<uint32_t>(p - out);
}

}  // namespace

bool names_equal(const frame_meta_entry& e, span<const char> name) noexcept {
  return name.size() == e.name_len && (name.empty() || std::memcmp(name.data(), e.name, name.size()) == 0);
}

status header_fixed_parse(bytes_view h, frame_info& info) noexcept {
  if (h.size() < kFrameHeaderMinLen) return make_error(errc::truncated, "frame: shorter than its fixed header");
  const uint8_t* p = h.data();
  if ((p[0] & 0xf0) != 0x90) return make_error(errc::malformed, "frame: header is not a msgpack fixarray");
  if (std::memcmp(p + kFhMagic, kMagic, sizeof kMagic) != 0) return make_error(errc::malformed, "frame: no b2frame magic");
  for (const marker& m : kHeaderMarkers)
    if (p[m.at] != m.value) return make_error(errc::malformed, "frame: unexpected marker in the fixed header");
  if (p[kFhHasVlmeta] != 0xc2 && p[kFhHasVlmeta] != 0xc3) return make_error(errc::malformed, "frame: has_vlmetalayers is not a bool");
  info = frame_info{};
  const uint8_t flags = p[kFhFlags];
  info.version = flags & 0x0f;
  if (info.version > kFrameVersionVlBlocks) return make_error(errc::unsupported, "frame: a newer frame format version");
  if (((flags >> 4) & 0x3) != 1) return make_error(errc::unsupported, "frame: chunk offsets other than 64-bit");
  info.variable_chunks = (flags & kFrameFlagVariableChunks) != 0;
  info.vl_blocks = (flags & kFrameFlagVlBlocks) != 0;
  const uint8_t type = p[kFhType] & 0x0f;
  if (type > 1) return make_error(errc::unsupported, "frame: unknown frame type");
  info.kind = static_cast<frame_kind>(type);
  const int32_t hl = as_signed32(be_load(p + kFhHeaderLen, 4));
  if (hl < static_cast<int32_t>(kFrameHeaderMinLen)) return make_error(errc::malformed, "frame: header length too small");
  info.header_len = static_cast<uint32_t>(hl);
  info.frame_len = be_load(p + kFhFrameLen, 8);
  if (info.frame_len > static_cast<uint64_t>(INT64_MAX)) return make_error(errc::malformed, "frame: frame length too large");
  if (info.header_len > info.frame_len) return make_error(errc::malformed, "frame: header longer than the frame");
  info.nbytes = as_signed(be_load(p + kFhNbytes, 8));
  info.cbytes = as_signed(be_load(p + kFhCbytes, 8));
  if (info.nbytes < 0 || info.cbytes < 0) return make_error(errc::malformed, "frame: negative sizes in the header");
  info.typesize = as_signed32(be_load(p + kFhTypesize, 4));
  info.blocksize = as_signed32(be_load(p + kFhBlocksize, 4));
  info.chunksize = as_signed32(be_load(p + kFhChunksize, 4));
  if (info.typesize <= 0) return make_error(errc::malformed, "frame: typesize zero or negative");
  info.nthreads_comp = static_cast<int16_t>(static_cast<uint16_t>(be_load(p + kFhNthreadsC, 2)));
  info.nthreads_decomp = static_cast<int16_t>(static_cast<uint16_t>(be_load(p + kFhNthreadsD, 2)));
  info.has_vlmetalayers = p[kFhHasVlmeta] == 0xc3;
  const uint8_t codecs = p[kFhCodecs];
  info.clevel = codecs >> 4;
  info.compcode = codecs & 0x0f;
  if (info.compcode == kFrameUdcodecFormat) info.compcode = p[kFhUdcodec];
  info.splitmode = static_cast<uint8_t>((p[kFhOtherFlags] & 0x3) + 1);
  info.use_dict = (p[kFhOtherFlags2] & 0x1) != 0;
  const uint8_t nfilters = p[kFhFilterCount];
  if (nfilters > kChunkMaxFilters) return make_error(errc::malformed, "frame: more filters than the 6 slots");
  for (int i = 0; i < nfilters; ++i) {
    info.filters[i] = p[kFhFilters + i];
    info.filters_meta[i] = p[kFhFiltersMeta + i];
  }
  info.udcodec = p[kFhUdcodec];
  info.compcode_meta = p[kFhCodecMeta];
  if (info.nbytes > 0) {
    if (info.chunksize > 0) {
      info.nchunks = info.nbytes / info.chunksize + (info.nbytes % info.chunksize != 0 ? 1 : 0);
    } else if (info.chunksize < 0) {
      return make_error(errc::malformed, "frame: negative chunksize with data");
    } else {
      info.nchunks = -1;  // from the index chunk
    }
  }
  return ok_status();
}

status header_metas_parse(frame_state& s) noexcept {
  bytes_view h(s.header, s.info.header_len);
  if (h.size() < kFhMetalayers + 6) return make_error(errc::truncated, "frame: header ends before its metalayers");
  uint32_t n = 0;
  status e = metas_parse(h, kFhMetalayers, kFrameMaxMetalayers, s.metas, &n, false, &s, kFrameMaxMetalayers);
  s.nmetas = e.ok() ? n : 0;
  s.info.nmetalayers = s.nmetas;
  return e;
}

void header_fixed_write(const frame_state& s, uint8_t* p) noexcept {
  const frame_info& info = s.info;
  p[0] = 0x9e;
  p[1] = 0xa8;
  std::memcpy(p + kFhMagic, kMagic, sizeof kMagic);
  for (const marker& m : kHeaderMarkers) p[m.at] = m.value;
  be_store(p + kFhHeaderLen, info.header_len, 4);
  be_store(p + kFhFrameLen, info.frame_len, 8);
  const bool variable = s.schunk_chunksize == 0;
  uint8_t flags = (variable || info.vl_blocks) ? kFrameVersionVlBlocks : kFrameVersionRc1;
  flags |= kFrameFlag64BitOffsets;
  if (variable) flags |= kFrameFlagVariableChunks;
  if (info.vl_blocks) flags |= kFrameFlagVlBlocks;
  p[kFhFlags] = flags;
  p[kFhType] = s.sparse ? 1 : 0;
  const uint8_t codec_id = info.compcode >= kFrameCodecLast ? kFrameUdcodecFormat : info.compcode;
  p[kFhCodecs] = static_cast<uint8_t>(codec_id | (info.clevel << 4));
  p[kFhOtherFlags] = static_cast<uint8_t>((info.splitmode - 1) & 0x3);
  be_store(p + kFhNbytes, static_cast<uint64_t>(info.nbytes), 8);
  be_store(p + kFhCbytes, static_cast<uint64_t>(info.cbytes), 8);
  be_store(p + kFhTypesize, static_cast<uint32_t>(info.typesize), 4);
  be_store(p + kFhBlocksize, static_cast<uint32_t>(info.blocksize), 4);
  be_store(p + kFhChunksize, static_cast<uint32_t>(s.schunk_chunksize), 4);
  be_store(p + kFhNthreadsC, static_cast<uint16_t>(info.nthreads_comp), 2);
  be_store(p + kFhNthreadsD, static_cast<uint16_t>(info.nthreads_decomp), 2);
  p[kFhHasVlmeta] = s.nvlmetas > 0 ? 0xc3 : 0xc2;
  p[kFhFilterCount] = kChunkMaxFilters;
  for (int i = 0; i < 8; ++i) p[kFhFilters + i] = 0;
  for (int i = 0; i < 8; ++i) p[kFhFiltersMeta + i] = 0;
  for (int i = 0; i < kChunkMaxFilters; ++i) {
    p[kFhFilters + i] = info.filters[i];
    p[kFhFiltersMeta + i] = info.filters_meta[i];
  }
  p[kFhUdcodec] = info.compcode;
  p[kFhCodecMeta] = info.compcode_meta;
  p[kFhOtherFlags2] = info.use_dict ? 1 : 0;
  p[86] = 0;
}

status header_build(frame_state& s, const frame_create_params& prm) noexcept {
  if (prm.nmetalayers > kFrameMaxMetalayers) return make_error(errc::invalid_argument, "frame: more than 16 metalayers");
  if (prm.nmetalayers > 0 && prm.metalayers == nullptr) return make_error(errc::invalid_argument, "frame: metalayers missing");
  for (uint32_t i = 0; i < prm.nmetalayers; ++i) {
    const frame_metalayer_init& m = prm.metalayers[i];
    if (m.name.empty() || m.name.size() > kFrameMetalayerNameMax)
      return make_error(errc::invalid_argument, "frame: metalayer names have 1 to 31 bytes");
    if (m.content.size() > INT32_MAX / 2) return make_error(errc::invalid_argument, "frame: metalayer content too large");
    frame_meta_entry& e = s.metas[i];
    e = frame_meta_entry{};
    std::memcpy(e.name, m.name.data(), m.name.size());
    e.name_len = static_cast<uint8_t>(m.name.size());
    e.content_len = static_cast<uint32_t>(m.content.size());
    for (uint32_t k = 0; k < i; ++k)
      if (names_equal(s.metas[k], m.name)) return make_error(errc::invalid_argument, "frame: two metalayers with one name");
  }
  s.nmetas = prm.nmetalayers;
  uint64_t idx = 0;
  auto size = metas_size(s.metas, s.nmetas, &idx);
  if (!size.ok()) return size.err();
  const uint64_t hl = kFhMetalayers + *size;
  if (hl > INT32_MAX) return make_error(errc::overflow, "frame: header too large");
  TESSERA_TRY(state_buffer_reserve(s, &s.header, &s.header_cap, static_cast<size_t>(hl)));
  std::memset(s.header, 0, static_cast<size_t>(hl));
  s.info.header_len = static_cast<uint32_t>(hl);
  metas_write(s.metas, s.nmetas, idx, kFhMetalayers, s.header + kFhMetalayers,
              [&](uint32_t i) { return prm.metalayers[i].content.data(); }, s.metas);
  s.info.nmetalayers = s.nmetas;
  return ok_status();
}

result<uint32_t> trailer_size(const frame_state& s) noexcept {
  uint64_t idx = 0;
  auto size = metas_size(s.vlmetas, s.nvlmetas, &idx);
  if (!size.ok()) return size.err();
  const uint64_t total = 2 + *size + 5 + 18;
  if (total > INT32_MAX) return make_error(errc::overflow, "frame: trailer too large");
  return static_cast<uint32_t>(total);
}

void trailer_write(const frame_state& s, uint8_t* out, uint32_t size) noexcept {
  uint64_t idx = 0;
  (void)metas_size(s.vlmetas, s.nvlmetas, &idx);
  out[0] = 0x94;
  out[1] = 0x01;  // trailer format version
  const uint32_t n = metas_write(s.vlmetas, s.nvlmetas, idx, 2, out + 2,
                                 [&](uint32_t i) { return static_cast<const uint8_t*>(s.vlmetas[i].data); }, nullptr);
  uint8_t* p = out + 2 + n;
  *p++ = 0xce;
  be_store(p, size, 4);
  p += 4;
  *p++ = 0xd8;
  *p++ = 0;  // no fingerprint
  std::memset(p, 0, 16);
}

status trailer_parse(frame_state& s, bytes_view t) noexcept {
  if (t.size() < kFrameTrailerMinLen) return make_error(errc::truncated, "frame: trailer too short");
  if (t[0] != 0x94) return make_error(errc::malformed, "frame: trailer is not a 4-element fixarray");
  // The count of vlmetalayers comes first, to size the table.
  if (t[3] != 0xcd || t[6] != 0xde) return make_error(errc::malformed, "frame: bad vlmetalayer index markers");
  const uint32_t n = static_cast<uint32_t>(be_load(t.data() + 7, 2));
  if (n > kFrameMaxVlmetalayers) return make_error(errc::malformed, "frame: too many vlmetalayers");
  if (n > s.vlcap) {
    void* p = allocator_allocate(s.alloc, sizeof(frame_meta_entry) * n, alignof(frame_meta_entry));
    if (p == nullptr) return make_error(errc::out_of_memory, "frame: allocator refused the vlmetalayer table");
    if (s.vlmetas != nullptr) allocator_deallocate(s.alloc, s.vlmetas, sizeof(frame_meta_entry) * s.vlcap, alignof(frame_meta_entry));
    s.vlmetas = static_cast<frame_meta_entry*>(p);
    s.vlcap = n;
    for (uint32_t i = 0; i < n; ++i) new (&s.vlmetas[i]) frame_meta_entry;
  }
  uint32_t got = 0;
  status e = metas_parse(t, 2, kFrameMaxVlmetalayers, s.vlmetas, &got, true, &s, s.vlcap);
  s.nvlmetas = got;
  if (!e.ok()) return e;
  s.info.nvlmetalayers = s.nvlmetas;
  return ok_status();
}

result<uint32_t> index_chunk_size(int64_t n) noexcept {
  if (n < 0 || n > (INT32_MAX - static_cast<int64_t>(kChunkStoredOverhead)) / 8)
    return make_error(errc::overflow, "frame: too many chunks for the index");
  return static_cast<uint32_t>(n * 8 + kChunkStoredOverhead);
}

namespace {
void stored_header(uint8_t* out, uint8_t typesize, uint32_t nbytes, uint32_t blocksize, uint8_t last_filter) noexcept {
  std::memset(out, 0, kChunkStoredOverhead);
  out[0] = kChunkVersionStable;
  out[1] = 1;
  // Extended header (shuffle and bitshuffle bits both set), memcpyed, no split.
  out[2] = kChunkFlagShuffle | kChunkFlagBitshuffle | kChunkFlagMemcpyed | kChunkFlagNoSplit;
  out[3] = typesize;
  le_store32(out + 4, nbytes);
  le_store32(out + 8, blocksize);
  le_store32(out + 12, nbytes + kChunkStoredOverhead);
  out[16 + 5] = last_filter;
}
}  // namespace

void index_chunk_write(const frame_state& s, uint8_t* out, uint32_t size) noexcept {
  const uint32_t nbytes = size - kChunkStoredOverhead;
  const uint32_t bs = nbytes < kIndexBlocksize ? (nbytes == 0 ? 1 : nbytes) : kIndexBlocksize;
  stored_header(out, 8, nbytes, bs, static_cast<uint8_t>(filter_id::shuffle));
  for (int64_t i = 0; i < s.nchunks; ++i)
    le_store64(out + kChunkStoredOverhead + 8 * i, static_cast<uint64_t>(s.chunks[i].offset));
}

void stored_chunk_write(bytes_view content, uint8_t typesize, uint8_t* out) noexcept {
  const uint32_t nbytes = static_cast<uint32_t>(content.size());
  const uint32_t bs = nbytes == 0 ? 1 : (nbytes < kIndexBlocksize ? nbytes : kIndexBlocksize);
  stored_header(out, typesize, nbytes, bs, 0);
  if (nbytes > 0) std::memcpy(out + kChunkStoredOverhead, content.data(), nbytes);
}

void special_chunk_write(chunk_special kind, int32_t nbytes, int32_t typesize, int32_t blocksize, uint8_t* out) noexcept {
  std::memset(out, 0, kChunkStoredOverhead);
  out[0] = kChunkVersionStable;
  out[1] = 1;
  out[2] = kChunkFlagShuffle | kChunkFlagBitshuffle | kChunkFlagNoSplit;
  out[3] = static_cast<uint8_t>(typesize > 255 ? 1 : typesize);
  int32_t bs = blocksize > 0 ? blocksize : nbytes;
  if (nbytes > 0 && bs > nbytes) bs = nbytes;
  if (bs <= 0) bs = 1;
  le_store32(out + 4, static_cast<uint32_t>(nbytes));
  le_store32(out + 8, static_cast<uint32_t>(bs));
  le_store32(out + 12, kChunkStoredOverhead);
  out[31] = static_cast<uint8_t>(static_cast<uint8_t>(kind) << 4);
}

result<chunk_special> index_special(int64_t offset) noexcept {
  if (offset >= 0) return chunk_special::none;
  const uint8_t b = static_cast<uint8_t>(static_cast<uint64_t>(offset) >> 56);
  // The reference tests the kinds in this order.
  if (b & 0x1) return chunk_special::zeros;
  if (b & 0x4) return chunk_special::uninit;
  if (b & 0x2) return chunk_special::nan;
  return make_error(errc::malformed, "frame: index entry with an unknown special value");
}

int64_t index_special_value(chunk_special kind) noexcept {
  const uint64_t v = (uint64_t{1} << 63) | (static_cast<uint64_t>(kind) << 56);
  return as_signed(v);
}

}  // namespace tessera::detail
