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
  if (pos + 7 > len) return make_error(errc::truncated, TESSERA_MSG("frame: metalayer index past its section"));
  if (p[pos + 1] != 0xcd || p[pos + 4] != 0xde) return make_error(errc::malformed, TESSERA_MSG("frame: bad metalayer index markers"));
  pos += 5;
  const uint32_t n = static_cast<uint32_t>(be_load(p + pos, 2));
  pos += 2;
  if (n > max_entries) return make_error(errc::malformed, TESSERA_MSG("frame: too many metalayers"));
  if (n > cap_entries) return make_error(errc::malformed, TESSERA_MSG("frame: too many metalayers for the table"));
  for (uint32_t i = 0; i < n; ++i) {
    if (pos + 1 > len) return make_error(errc::truncated, TESSERA_MSG("frame: metalayer name past its section"));
    if ((p[pos] & 0xe0) != 0xa0) return make_error(errc::malformed, TESSERA_MSG("frame: metalayer name is not a fixstr"));
    const uint32_t nl = p[pos] & 0x1f;
    pos += 1;
    if (pos + nl + 5 > len) return make_error(errc::truncated, TESSERA_MSG("frame: metalayer entry past its section"));
    frame_meta_entry& e = out[i];
    e = frame_meta_entry{};
    std::memcpy(e.name, p + pos, nl);
    e.name[nl] = 0;
    e.name_len = static_cast<uint8_t>(nl);
    pos += nl;
    if (p[pos] != 0xd2) return make_error(errc::malformed, TESSERA_MSG("frame: metalayer offset is not an int32"));
    const int32_t off = as_signed32(be_load(p + pos + 1, 4));
    pos += 5;
    if (off < 0 || static_cast<uint64_t>(off) + 5 > len)
      return make_error(errc::malformed, TESSERA_MSG("frame: metalayer offset outside its section"));
    if (p[off] != 0xc6) return make_error(errc::malformed, TESSERA_MSG("frame: metalayer content is not a bin32"));
    const int32_t clen = as_signed32(be_load(p + off + 1, 4));
    if (clen < 0 || static_cast<uint64_t>(off) + 5 + static_cast<uint64_t>(clen) > len)
      return make_error(errc::truncated, TESSERA_MSG("frame: metalayer content past its section"));
    e.content_off = static_cast<uint32_t>(off) + 5;
    e.content_len = static_cast<uint32_t>(clen);
    for (uint32_t k = 0; k < i; ++k)
      if (out[k].name_len == e.name_len && std::memcmp(out[k].name, e.name, nl) == 0)
        return make_error(errc::malformed, TESSERA_MSG("frame: two metalayers with the same name"));
    if (copy && clen > 0) {
      e.data = static_cast<uint8_t*>(allocator_allocate(s->alloc, static_cast<size_t>(clen), 1));
      if (e.data == nullptr) {
        *count = i;
        return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused a vlmetalayer"));
      }
      std::memcpy(e.data, p + e.content_off, static_cast<size_t>(clen));
    }
    *count = i + 1;
  }
  *count = n;
  return ok_status();
}

// Views of metalayer tables for the section encoder: count(), name(i), content(i).
struct init_entries {  // the params' fixed metalayers
  const frame_metalayer_init* e;
  uint32_t n;
  uint32_t count() const noexcept { return n; }
  span<const char> name(uint32_t i) const noexcept { return e[i].name; }
  bytes_view content(uint32_t i) const noexcept { return e[i].content; }
};
struct vl_entries {  // vlmetalayers given to frame_trailer_encode
  const frame_vlmetalayer* e;
  uint32_t n;
  uint32_t count() const noexcept { return n; }
  span<const char> name(uint32_t i) const noexcept { return e[i].name; }
  bytes_view content(uint32_t i) const noexcept { return e[i].chunk; }
};
struct state_entries {  // a frame's vlmetalayers (owned chunks)
  const frame_meta_entry* e;
  uint32_t n;
  uint32_t count() const noexcept { return n; }
  span<const char> name(uint32_t i) const noexcept { return span<const char>(e[i].name, e[i].name_len); }
  bytes_view content(uint32_t i) const noexcept { return bytes_view(e[i].data, e[i].content_len); }
};

// Entries the section can hold: names of 1..31 bytes (fixstr), all different; contents within int32.
template <class Entries>
status metas_check(const Entries& e, uint32_t max_entries) noexcept {
  if (e.count() > max_entries) return make_error(errc::invalid_argument, TESSERA_MSG("frame: too many metalayers"));
  for (uint32_t i = 0; i < e.count(); ++i) {
    const span<const char> name = e.name(i);
    if (name.empty() || name.size() > kFrameMetalayerNameMax || name.data() == nullptr)
      return make_error(errc::invalid_argument, TESSERA_MSG("frame: metalayer names have 1 to 31 bytes"));
    if (e.content(i).size() > INT32_MAX / 2 || (e.content(i).data() == nullptr && !e.content(i).empty()))
      return make_error(errc::invalid_argument, TESSERA_MSG("frame: metalayer content too large or missing"));
    for (uint32_t k = 0; k < i; ++k) {
      const span<const char> other = e.name(k);
      if (other.size() == name.size() && std::memcmp(other.data(), name.data(), name.size()) == 0)
        return make_error(errc::invalid_argument, TESSERA_MSG("frame: two metalayers with one name"));
    }
  }
  return ok_status();
}

// The size of one metalayer section for these entries; fails when it cannot be represented.
template <class Entries>
result<uint64_t> metas_size(const Entries& e, uint64_t* idx_size) noexcept {
  uint64_t idx = 1 + 2 + 1 + 2;
  uint64_t total = 0;
  for (uint32_t i = 0; i < e.count(); ++i) {
    idx += 1 + e.name(i).size() + 1 + 4;
    total += 1 + 4 + uint64_t{e.content(i).size()};
  }
  if (idx + 1 >= (1u << 16)) return make_error(errc::overflow, TESSERA_MSG("frame: metalayer index larger than 64 KiB"));
  *idx_size = idx;
  return 1 + idx + 3 + total;  // 0x93, index, dc n, contents
}

// Writes a metalayer section at out: 0x93, cd idx_field, de n, {fixstr name, d2 offset}..., dc n,
// {c6 len, bytes}... Offsets are stored relative to the section's header or trailer (`base_off` is the
// section's offset in it). When offsets_out is given, entry i's content offset goes to offsets_out[i].
template <class Entries>
uint32_t metas_write(const Entries& e, uint64_t idx_field, uint32_t base_off, uint8_t* out,
                     frame_meta_entry* offsets_out) noexcept {
  const uint32_t n = e.count();
  uint8_t* p = out;
  *p++ = 0x93;
  *p++ = 0xcd;
  be_store(p, idx_field, 2);
  p += 2;
  *p++ = 0xde;
  be_store(p, n, 2);
  p += 2;
  uint8_t* first_off = nullptr;
  for (uint32_t i = 0; i < n; ++i) {
    const span<const char> name = e.name(i);
    *p++ = static_cast<uint8_t>(0xa0 | name.size());
    std::memcpy(p, name.data(), name.size());
    p += name.size();
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
    const bytes_view c = e.content(i);
    const uint32_t here = base_off + static_cast<uint32_t>(p - out);
    be_store(q, here, 4);
    q += 4 + (i + 1 < n ? 1 + e.name(i + 1).size() + 1 : 0);
    *p++ = 0xc6;
    be_store(p, c.size(), 4);
    p += 4;
    if (!c.empty()) std::memcpy(p, c.data(), c.size());
    if (offsets_out != nullptr) offsets_out[i].content_off = here + 5;
    p += c.size();
  }
  return static_cast<uint32_t>(p - out);
}

// The trailer: 0x94, version 1, the vlmetalayer section, ce trailer_len, d8 00 and a 16-byte (empty)
// fingerprint.
template <class Entries>
result<uint32_t> trailer_size_of(const Entries& e) noexcept {
  uint64_t idx = 0;
  auto size = metas_size(e, &idx);
  if (!size.ok()) return size.err();
  const uint64_t total = 2 + *size + 5 + 18;
  if (total > INT32_MAX) return make_error(errc::overflow, TESSERA_MSG("frame: trailer too large"));
  return static_cast<uint32_t>(total);
}

template <class Entries>
void trailer_write_of(const Entries& e, uint8_t* out, uint32_t size) noexcept {
  uint64_t idx = 0;
  (void)metas_size(e, &idx);
  out[0] = 0x94;
  out[1] = 0x01;  // trailer format version
  const uint32_t n = metas_write(e, idx, 2, out + 2, nullptr);
  uint8_t* p = out + 2 + n;
  *p++ = 0xce;
  be_store(p, size, 4);
  p += 4;
  *p++ = 0xd8;
  *p++ = 0;  // no fingerprint
  std::memset(p, 0, 16);
}

}  // namespace

bool names_equal(const frame_meta_entry& e, span<const char> name) noexcept {
  return name.size() == e.name_len && (name.empty() || std::memcmp(name.data(), e.name, name.size()) == 0);
}

status header_fixed_parse(bytes_view h, frame_info& info) noexcept {
  if (h.size() < kFrameHeaderMinLen) return make_error(errc::truncated, TESSERA_MSG("frame: shorter than its fixed header"));
  const uint8_t* p = h.data();
  if ((p[0] & 0xf0) != 0x90) return make_error(errc::malformed, TESSERA_MSG("frame: header is not a msgpack fixarray"));
  if (std::memcmp(p + kFhMagic, kMagic, sizeof kMagic) != 0) return make_error(errc::malformed, TESSERA_MSG("frame: no b2frame magic"));
  for (const marker& m : kHeaderMarkers)
    if (p[m.at] != m.value) return make_error(errc::malformed, TESSERA_MSG("frame: unexpected marker in the fixed header"));
  if (p[kFhHasVlmeta] != 0xc2 && p[kFhHasVlmeta] != 0xc3) return make_error(errc::malformed, TESSERA_MSG("frame: has_vlmetalayers is not a bool"));
  info = frame_info{};
  const uint8_t flags = p[kFhFlags];
  info.version = flags & 0x0f;
  if (info.version > kFrameVersionVlBlocks) return make_error(errc::unsupported, TESSERA_MSG("frame: a newer frame format version"));
  if (((flags >> 4) & 0x3) != 1) return make_error(errc::unsupported, TESSERA_MSG("frame: chunk offsets other than 64-bit"));
  info.variable_chunks = (flags & kFrameFlagVariableChunks) != 0;
  info.vl_blocks = (flags & kFrameFlagVlBlocks) != 0;
  const uint8_t type = p[kFhType] & 0x0f;
  if (type > 1) return make_error(errc::unsupported, TESSERA_MSG("frame: unknown frame type"));
  info.kind = static_cast<frame_kind>(type);
  const int32_t hl = as_signed32(be_load(p + kFhHeaderLen, 4));
  if (hl < static_cast<int32_t>(kFrameHeaderMinLen)) return make_error(errc::malformed, TESSERA_MSG("frame: header length too small"));
  info.header_len = static_cast<uint32_t>(hl);
  info.frame_len = be_load(p + kFhFrameLen, 8);
  if (info.frame_len > static_cast<uint64_t>(INT64_MAX)) return make_error(errc::malformed, TESSERA_MSG("frame: frame length too large"));
  if (info.header_len > info.frame_len) return make_error(errc::malformed, TESSERA_MSG("frame: header longer than the frame"));
  info.nbytes = as_signed(be_load(p + kFhNbytes, 8));
  info.cbytes = as_signed(be_load(p + kFhCbytes, 8));
  if (info.nbytes < 0 || info.cbytes < 0) return make_error(errc::malformed, TESSERA_MSG("frame: negative sizes in the header"));
  info.typesize = as_signed32(be_load(p + kFhTypesize, 4));
  info.blocksize = as_signed32(be_load(p + kFhBlocksize, 4));
  info.chunksize = as_signed32(be_load(p + kFhChunksize, 4));
  if (info.typesize <= 0) return make_error(errc::malformed, TESSERA_MSG("frame: typesize zero or negative"));
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
  if (nfilters > kChunkMaxFilters) return make_error(errc::malformed, TESSERA_MSG("frame: more filters than the 6 slots"));
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
      return make_error(errc::malformed, TESSERA_MSG("frame: negative chunksize with data"));
    } else {
      info.nchunks = -1;  // from the index chunk
    }
  }
  return ok_status();
}

status header_metas_parse(frame_state& s) noexcept {
  bytes_view h(s.header, s.info.header_len);
  if (h.size() < kFhMetalayers + 6) return make_error(errc::truncated, TESSERA_MSG("frame: header ends before its metalayers"));
  uint32_t n = 0;
  status e = metas_parse(h, kFhMetalayers, kFrameMaxMetalayers, s.metas, &n, false, &s, kFrameMaxMetalayers);
  s.nmetas = e.ok() ? n : 0;
  s.info.nmetalayers = s.nmetas;
  return e;
}

void header_fixed_encode(const frame_info& info, int32_t chunksize, bool sparse, bool has_vlmetalayers,
                         uint8_t* p) noexcept {
  p[0] = 0x9e;
  p[1] = 0xa8;
  std::memcpy(p + kFhMagic, kMagic, sizeof kMagic);
  for (const marker& m : kHeaderMarkers) p[m.at] = m.value;
  be_store(p + kFhHeaderLen, info.header_len, 4);
  be_store(p + kFhFrameLen, info.frame_len, 8);
  const bool variable = chunksize == 0;
  uint8_t flags = (variable || info.vl_blocks) ? kFrameVersionVlBlocks : kFrameVersionRc1;
  flags |= kFrameFlag64BitOffsets;
  if (variable) flags |= kFrameFlagVariableChunks;
  if (info.vl_blocks) flags |= kFrameFlagVlBlocks;
  p[kFhFlags] = flags;
  p[kFhType] = sparse ? 1 : 0;
  const uint8_t codec_id = info.compcode >= kFrameCodecLast ? kFrameUdcodecFormat : info.compcode;
  p[kFhCodecs] = static_cast<uint8_t>(codec_id | (info.clevel << 4));
  p[kFhOtherFlags] = static_cast<uint8_t>((info.splitmode - 1) & 0x3);
  be_store(p + kFhNbytes, static_cast<uint64_t>(info.nbytes), 8);
  be_store(p + kFhCbytes, static_cast<uint64_t>(info.cbytes), 8);
  be_store(p + kFhTypesize, static_cast<uint32_t>(info.typesize), 4);
  be_store(p + kFhBlocksize, static_cast<uint32_t>(info.blocksize), 4);
  be_store(p + kFhChunksize, static_cast<uint32_t>(chunksize), 4);
  be_store(p + kFhNthreadsC, static_cast<uint16_t>(info.nthreads_comp), 2);
  be_store(p + kFhNthreadsD, static_cast<uint16_t>(info.nthreads_decomp), 2);
  p[kFhHasVlmeta] = has_vlmetalayers ? 0xc3 : 0xc2;
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

void header_fixed_write(const frame_state& s, uint8_t* p) noexcept {
  header_fixed_encode(s.info, s.schunk_chunksize, s.sparse, s.nvlmetas > 0, p);
}

status params_check(const frame_create_params& p) noexcept {
  // Above 255 bytes the frame keeps the real typesize and chunk headers say 1 (the reference's wide types).
  if (p.typesize <= 0 || p.typesize > kChunkMaxBlocksize)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: typesize must be 1..BLOSC2_MAXTYPESIZE"));
  if (p.blocksize < 0 || p.chunksize < -1) return make_error(errc::invalid_argument, TESSERA_MSG("frame: negative block or chunk size"));
  if (p.clevel > 15 || p.splitmode < 1 || p.splitmode > 4) return make_error(errc::invalid_argument, TESSERA_MSG("frame: clevel or splitmode out of range"));
  if (p.nmetalayers > kFrameMaxMetalayers) return make_error(errc::invalid_argument, TESSERA_MSG("frame: more than 16 metalayers"));
  if (p.nmetalayers > 0 && p.metalayers == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: metalayers missing"));
  return metas_check(init_entries{p.metalayers, p.nmetalayers}, kFrameMaxMetalayers);
}

void info_from_params(const frame_create_params& p, frame_info& i) noexcept {
  i.typesize = p.typesize;
  i.blocksize = p.blocksize;
  i.chunksize = p.chunksize;
  i.compcode = p.compcode;
  i.clevel = p.clevel;
  i.splitmode = p.splitmode;
  i.use_dict = p.use_dict;
  for (int k = 0; k < kChunkMaxFilters; ++k) {
    i.filters[k] = p.filters[k];
    i.filters_meta[k] = p.filters_meta[k];
  }
  i.udcodec = p.compcode;
  i.compcode_meta = p.compcode_meta;
  i.nthreads_comp = p.nthreads_comp;
  i.nthreads_decomp = p.nthreads_decomp;
  i.version = kFrameVersionRc1;
  i.nmetalayers = p.nmetalayers;
}

result<uint32_t> header_size_of(const frame_create_params& p, uint64_t* idx_size) noexcept {
  TESSERA_TRY(params_check(p));
  auto size = metas_size(init_entries{p.metalayers, p.nmetalayers}, idx_size);
  if (!size.ok()) return size.err();
  const uint64_t hl = kFhMetalayers + *size;
  if (hl > INT32_MAX) return make_error(errc::overflow, TESSERA_MSG("frame: header too large"));
  return static_cast<uint32_t>(hl);
}

result<uint32_t> header_encode(const frame_create_params& p, const frame_header_fields& fields, bytes_mut out,
                               frame_meta_entry* offsets_out) noexcept {
  uint64_t idx = 0;
  auto hl = header_size_of(p, &idx);
  if (!hl.ok()) return hl.err();
  if (fields.frame_len > static_cast<uint64_t>(INT64_MAX) || fields.nbytes < 0 || fields.cbytes < 0 ||
      fields.chunksize < -1 || (fields.kind != frame_kind::contiguous && fields.kind != frame_kind::sparse))
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: header fields out of range"));
  if (out.size() < *hl) return make_error(errc::buffer_too_small, TESSERA_MSG("frame: buffer shorter than the header"));
  frame_info info;
  info_from_params(p, info);
  info.header_len = *hl;
  info.frame_len = fields.frame_len;
  info.nbytes = fields.nbytes;
  info.cbytes = fields.cbytes;
  info.vl_blocks = fields.vl_blocks;
  header_fixed_encode(info, fields.chunksize, fields.kind == frame_kind::sparse, fields.has_vlmetalayers, out.data());
  // The header's index size counts its 0x93 marker too (the trailer's does not): the reference measures
  // them from different starts.
  metas_write(init_entries{p.metalayers, p.nmetalayers}, idx + 1, kFhMetalayers, out.data() + kFhMetalayers,
              offsets_out);
  return *hl;
}

status header_build(frame_state& s, const frame_create_params& prm) noexcept {
  uint64_t idx = 0;
  auto hl = header_size_of(prm, &idx);
  if (!hl.ok()) return hl.err();
  for (uint32_t i = 0; i < prm.nmetalayers; ++i) {
    frame_meta_entry& e = s.metas[i];
    e = frame_meta_entry{};
    std::memcpy(e.name, prm.metalayers[i].name.data(), prm.metalayers[i].name.size());
    e.name_len = static_cast<uint8_t>(prm.metalayers[i].name.size());
    e.content_len = static_cast<uint32_t>(prm.metalayers[i].content.size());
  }
  s.nmetas = prm.nmetalayers;
  TESSERA_TRY(state_buffer_reserve(s, &s.header, &s.header_cap, *hl));
  std::memset(s.header, 0, *hl);
  frame_header_fields fields;
  fields.kind = s.sparse ? frame_kind::sparse : frame_kind::contiguous;
  fields.chunksize = prm.chunksize;
  fields.frame_len = *hl;
  auto written = header_encode(prm, fields, bytes_mut(s.header, *hl), s.metas);
  if (!written.ok()) return written.err();
  s.info.header_len = *hl;
  s.info.nmetalayers = s.nmetas;
  return ok_status();
}

result<uint32_t> trailer_size(const frame_state& s) noexcept {
  return trailer_size_of(state_entries{s.vlmetas, s.nvlmetas});
}

void trailer_write(const frame_state& s, uint8_t* out, uint32_t size) noexcept {
  trailer_write_of(state_entries{s.vlmetas, s.nvlmetas}, out, size);
}

status trailer_parse(frame_state& s, bytes_view t) noexcept {
  if (t.size() < kFrameTrailerMinLen) return make_error(errc::truncated, TESSERA_MSG("frame: trailer too short"));
  if (t[0] != 0x94) return make_error(errc::malformed, TESSERA_MSG("frame: trailer is not a 4-element fixarray"));
  // The count of vlmetalayers comes first, to size the table.
  if (t[3] != 0xcd || t[6] != 0xde) return make_error(errc::malformed, TESSERA_MSG("frame: bad vlmetalayer index markers"));
  const uint32_t n = static_cast<uint32_t>(be_load(t.data() + 7, 2));
  if (n > kFrameMaxVlmetalayers) return make_error(errc::malformed, TESSERA_MSG("frame: too many vlmetalayers"));
  // Each index entry takes at least 7 bytes (a name of 1 byte and an int32 offset): the count is a claim the
  // trailer's length must back before it sizes the table.
  if (uint64_t{n} * 7 > t.size()) return make_error(errc::malformed, TESSERA_MSG("frame: more vlmetalayers than the trailer holds"));
  if (n > s.vlcap) {
    void* p = allocator_allocate(s.alloc, sizeof(frame_meta_entry) * n, alignof(frame_meta_entry));
    if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused the vlmetalayer table"));
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

namespace {
// The stored (memcpyed) form of the index chunk: the header the reference writes when compression does not
// gain, then the entries verbatim.
void index_stored_write(bytes_view entries, uint8_t* out) noexcept {
  const uint32_t nbytes = static_cast<uint32_t>(entries.size());
  const uint32_t bs = nbytes < static_cast<uint32_t>(kFrameIndexBlocksize) ? nbytes : kFrameIndexBlocksize;
  std::memset(out, 0, kChunkStoredOverhead);
  out[0] = kChunkVersionStable;
  out[1] = 1;
  // Extended header (shuffle and bitshuffle bits both set), memcpyed; the reference marks no split only
  // from its minimum buffer size (32 bytes) on.
  out[2] = kChunkFlagShuffle | kChunkFlagBitshuffle | kChunkFlagMemcpyed;
  if (nbytes >= 32) out[2] |= kChunkFlagNoSplit;
  out[3] = 8;
  le_store32(out + 4, nbytes);
  le_store32(out + 8, bs);
  le_store32(out + 12, nbytes + kChunkStoredOverhead);
  out[16 + kChunkMaxFilters - 1] = static_cast<uint8_t>(filter_id::shuffle);
  std::memcpy(out + kChunkStoredOverhead, entries.data(), nbytes);
}
}  // namespace

result<size_t> index_encode(chunk_encoder* encoder, bytes_view entries, bytes_mut out) noexcept {
  if (entries.empty() || entries.size() % 8 != 0)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: index entries are whole int64s, at least one"));
  auto bound = frame_index_bound(static_cast<int64_t>(entries.size() / 8));
  if (!bound.ok()) return bound.err();
  if (out.size() < *bound) return make_error(errc::buffer_too_small, TESSERA_MSG("frame: buffer shorter than the index bound"));
  if (encoder == nullptr) {
    index_stored_write(entries, out.data());
    return size_t{*bound};
  }
  chunk_encode_params ep;
  ep.typesize = 8;
  ep.clevel = 5;
  ep.compressor = codec::blosclz;
  ep.split = split_mode::never;
  ep.blocksize = kFrameIndexBlocksize;
  // The reference's output buffer is exactly nbytes + 32: the memcpyed fallback depends on it.
  return chunk_encode(*encoder, ep, entries, out.subspan(0, *bound));
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
  return make_error(errc::malformed, TESSERA_MSG("frame: index entry with an unknown special value"));
}

int64_t index_special_value(chunk_special kind) noexcept {
  const uint64_t v = (uint64_t{1} << 63) | (static_cast<uint64_t>(kind) << 56);
  return as_signed(v);
}

}  // namespace tessera::detail

namespace tessera {

frame_create_params frame_create_params_from(const frame_info& i) noexcept {
  frame_create_params p;
  p.typesize = i.typesize;
  p.blocksize = i.blocksize;
  p.chunksize = i.chunksize;
  p.compcode = i.compcode;
  p.clevel = i.clevel;
  p.splitmode = i.splitmode;
  p.use_dict = i.use_dict;
  for (int k = 0; k < kChunkMaxFilters; ++k) {
    p.filters[k] = i.filters[k];
    p.filters_meta[k] = i.filters_meta[k];
  }
  p.compcode_meta = i.compcode_meta;
  p.nthreads_comp = i.nthreads_comp;
  p.nthreads_decomp = i.nthreads_decomp;
  return p;
}

result<uint32_t> frame_header_size(const frame_create_params& p) noexcept {
  uint64_t idx = 0;
  return detail::header_size_of(p, &idx);
}

result<size_t> frame_header_encode(const frame_create_params& p, const frame_header_fields& fields,
                                   bytes_mut out) noexcept {
  auto n = detail::header_encode(p, fields, out, nullptr);
  if (!n.ok()) return n.err();
  return size_t{*n};
}

result<uint32_t> frame_index_bound(int64_t nchunks) noexcept {
  if (nchunks < 0 || nchunks > (INT32_MAX - static_cast<int64_t>(detail::kChunkStoredOverhead)) / 8)
    return make_error(errc::overflow, TESSERA_MSG("frame: too many chunks for the index"));
  return static_cast<uint32_t>(nchunks * 8 + detail::kChunkStoredOverhead);
}

int64_t frame_index_special(chunk_special kind) noexcept { return detail::index_special_value(kind); }

result<size_t> frame_index_encode(chunk_encoder* encoder, bytes_view entries_le, bytes_mut out) noexcept {
  return detail::index_encode(encoder, entries_le, out);
}

result<size_t> frame_vlmeta_encode(chunk_encoder& encoder, bytes_view content, bytes_mut out) noexcept {
  if (content.size() > static_cast<size_t>(INT32_MAX) - kChunkMaxOverhead)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: vlmetalayer content too large"));
  const size_t bound = chunk_encode_bound(content.size());
  if (out.size() < bound) return make_error(errc::buffer_too_small, TESSERA_MSG("frame: buffer shorter than the vlmetalayer bound"));
  // BLOSC2_CPARAMS_DEFAULTS, and an output buffer of exactly content + 32 bytes, as blosc2_vlmeta_add.
  chunk_encode_params ep;
  ep.typesize = 8;
  ep.clevel = 5;
  ep.compressor = codec::blosclz;
  ep.split = split_mode::forward_compat;
  ep.blocksize = 0;
  return chunk_encode(encoder, ep, content, out.subspan(0, bound));
}

result<uint32_t> frame_trailer_size(span<const frame_vlmetalayer> vlmetas) noexcept {
  if (vlmetas.size() > kFrameMaxVlmetalayers) return make_error(errc::invalid_argument, TESSERA_MSG("frame: too many vlmetalayers"));
  const detail::vl_entries e{vlmetas.data(), static_cast<uint32_t>(vlmetas.size())};
  TESSERA_TRY(detail::metas_check(e, kFrameMaxVlmetalayers));
  return detail::trailer_size_of(e);
}

result<size_t> frame_trailer_encode(span<const frame_vlmetalayer> vlmetas, bytes_mut out) noexcept {
  auto size = frame_trailer_size(vlmetas);
  if (!size.ok()) return size.err();
  if (out.size() < *size) return make_error(errc::buffer_too_small, TESSERA_MSG("frame: buffer shorter than the trailer"));
  detail::trailer_write_of(detail::vl_entries{vlmetas.data(), static_cast<uint32_t>(vlmetas.size())}, out.data(), *size);
  return size_t{*size};
}

chunk_encoder_options frame_encoder_options() noexcept {
  chunk_encoder_options o;
  o.max_blocksize = kFrameIndexBlocksize;
  o.estimate_codec = codec::blosclz;
  o.estimate_clevel = 5;
  return o;
}

}  // namespace tessera
