// SPDX-License-Identifier: BSD-3-Clause
// The bytes of a frame's header, trailer and index chunk, exactly as the reference lays them out. Header and
// trailer are msgpack in the fixed encodings the format pins (so every field keeps its offset, and the writer can
// patch sizes in place), read and written through the bounded msgpack reader and writer of src/format.
#include <string.h>

#include "frame/frame_internal.hpp"
#include "tessera/msgpack.hpp"
#include "tessera/cxx.hpp"

namespace tessera::detail {

namespace {

constexpr char kMagic[8] = {'b', '2', 'f', 'r', 'a', 'm', 'e', 0};
constexpr uint32_t kHeaderFields = 14;  // the header's fixarray, metalayers included
constexpr uint32_t kTrailerFields = 4;  // version, vlmetalayers, trailer length, fingerprint
constexpr int8_t kTrailerVersion = 1;
constexpr uint32_t kMetasFields = 3;    // a metalayer section: index size, names to offsets, contents
constexpr size_t kFlagsLen = 4;         // the fixstr of flags, frame type, codecs and other flags
constexpr size_t kFiltersLen = 16;      // the fixext16 of filters, codec bytes, filter metas, other flags 2
constexpr size_t kBin32Head = 5;        // c6 and a 4-byte length

// A big-endian field at a fixed offset: one load and a byte swap, not a byte loop.
template <typename U>
U be_at(const uint8_t* p) noexcept {
  const U v = le_load_as<U>(p);
  if constexpr (sizeof(U) == 2) return __builtin_bswap16(v);
  else if constexpr (sizeof(U) == 4) return __builtin_bswap32(v);
  else return __builtin_bswap64(v);
}

// A metalayer section (header or trailer) opens with fixarray 3, uint16 index size, map16 n: n, which the
// caller's table must hold.
detail::code_status metas_count_read(msgpack_reader& r, uint32_t max_entries, uint32_t* n) noexcept {
  if (r.remaining() < 7) return make_error(errc::truncated, TESSERA_MSG("frame: metalayer index past its section"));
  (void)r.read_raw(1);          // the fixarray: not checked, as by the reference
  (void)r.read_uint16_fixed();  // the index size: not needed to read the index
  *n = r.read_map16();
  if (!r.ok()) return r.err();
  if (*n > max_entries) return make_error(errc::malformed, TESSERA_MSG("frame: too many metalayers"));
  return ok_status();
}

// The n entries of a metalayer map, {fixstr name: int32 offset}, each offset (from the start of `all`, the
// header or trailer) leading to a bin32 content. With copy_to, contents are copied into its allocator's blocks.
detail::code_status metas_parse(bytes_view all, msgpack_reader& r, uint32_t n, frame_meta_entry* out, uint32_t* count,
                   frame_state* copy_to) noexcept {
  for (uint32_t i = 0; i < n; ++i) {
    const span<const char> name = r.read_fixstr();
    const int32_t off = r.read_int32_fixed();
    if (!r.ok()) return r.err();
    frame_meta_entry& e = out[i];
    e = frame_meta_entry{};
    memcpy(e.name, name.data(), name.size());  // a fixstr: at most 31 bytes
    e.name_len = static_cast<uint8_t>(name.size());
    if (off < 0 || static_cast<uint64_t>(off) + kBin32Head > all.size())
      return make_error(errc::malformed, TESSERA_MSG("frame: metalayer offset outside its section"));
    msgpack_reader c(all.subspan(static_cast<size_t>(off)));
    const bytes_view content = c.read_bin32();
    if (!c.ok()) return c.err();
    e.content_off = static_cast<uint32_t>(off) + kBin32Head;
    e.content_len = static_cast<uint32_t>(content.size());
    for (uint32_t k = 0; k < i; ++k)
      if (names_equal(out[k], name)) return make_error(errc::malformed, TESSERA_MSG("frame: two metalayers with the same name"));
    if (copy_to != nullptr && !content.empty()) {
      e.data = static_cast<uint8_t*>(allocator_allocate(copy_to->alloc, content.size(), 1));
      if (e.data == nullptr) {
        *count = i;
        return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused a vlmetalayer"));
      }
      memcpy(e.data, content.data(), content.size());
    }
    *count = i + 1;
  }
  *count = n;
  return ok_status();
}

// Views of metalayer tables for the section encoder: count(), name(i), content(i). One view type reading its
// table through a function, not a template per table: the section code exists once (a firmware writing
// headers and an empty trailer carried three copies of it).
struct meta_entries {
  meta_entries(const void* t, uint32_t c, frame_metalayer_init (*f)(const void*, uint32_t) noexcept) noexcept
      : table(t), n(c), at(f) {}
  const void* table;
  uint32_t n;
  frame_metalayer_init (*at)(const void* table, uint32_t i) noexcept;  // entry i's name and content
  uint32_t count() const noexcept { return n; }
  span<const char> name(uint32_t i) const noexcept { return at(table, i).name; }
  bytes_view content(uint32_t i) const noexcept { return at(table, i).content; }
};
struct init_entries : meta_entries {  // the params' fixed metalayers
  init_entries(const frame_metalayer_init* e, uint32_t count) noexcept : meta_entries{e, count, &entry} {}
  static frame_metalayer_init entry(const void* t, uint32_t i) noexcept {
    return static_cast<const frame_metalayer_init*>(t)[i];
  }
};
struct vl_entries : meta_entries {  // vlmetalayers given to frame_trailer_encode
  vl_entries(const frame_vlmetalayer* e, uint32_t count) noexcept : meta_entries{e, count, &entry} {}
  static frame_metalayer_init entry(const void* t, uint32_t i) noexcept {
    const frame_vlmetalayer& v = static_cast<const frame_vlmetalayer*>(t)[i];
    return {v.name, v.chunk};
  }
};
struct state_entries : meta_entries {  // a frame's vlmetalayers (owned chunks)
  state_entries(const frame_meta_entry* e, uint32_t count) noexcept : meta_entries{e, count, &entry} {}
  static frame_metalayer_init entry(const void* t, uint32_t i) noexcept {
    const frame_meta_entry& m = static_cast<const frame_meta_entry*>(t)[i];
    return {span<const char>(m.name, m.name_len), bytes_view(m.data, m.content_len)};
  }
};

// The size of one metalayer section for these entries, which it checks in the same pass: at most max_entries,
// names of 1..31 bytes (fixstr), all different, contents within int32. Fails when they are not, or when the
// section cannot be represented.
result<uint64_t> metas_size(const meta_entries& e, uint32_t max_entries, uint64_t* idx_size) noexcept {
  if (e.count() > max_entries) return make_error(errc::invalid_argument, TESSERA_MSG("frame: too many metalayers"));
  uint64_t idx = 1 + 2 + 1 + 2;
  uint64_t total = 0;
  for (uint32_t i = 0; i < e.count(); ++i) {
    const span<const char> name = e.name(i);
    const bytes_view content = e.content(i);
    if (name.empty() || name.size() > kFrameMetalayerNameMax || name.data() == nullptr)
      return make_error(errc::invalid_argument, TESSERA_MSG("frame: metalayer names have 1 to 31 bytes"));
    if (content.size() > INT32_MAX / 2 || (content.data() == nullptr && !content.empty()))
      return make_error(errc::invalid_argument, TESSERA_MSG("frame: metalayer content too large or missing"));
    for (uint32_t k = 0; k < i; ++k) {
      const span<const char> other = e.name(k);
      if (other.size() == name.size() && memcmp(other.data(), name.data(), name.size()) == 0)
        return make_error(errc::invalid_argument, TESSERA_MSG("frame: two metalayers with one name"));
    }
    idx += 1 + name.size() + 1 + 4;
    total += 1 + 4 + uint64_t{content.size()};
  }
  if (idx + 1 >= (1u << 16)) return make_error(errc::overflow, TESSERA_MSG("frame: metalayer index larger than 64 KiB"));
  *idx_size = idx;
  return 1 + idx + 3 + total;  // 0x93, index, dc n, contents
}

// Writes a metalayer section at p, which lies at byte `at` of the header or trailer: fixarray 3 [uint16
// index_field, map16 {fixstr name: int32 offset}, array16 [bin32 content]]. idx_size is the index's size from
// metas_size; offsets count from the start of the header or trailer (whose size, below INT32_MAX, the caller
// checked). Every field in its fixed form, stored directly: the section's size is known. With offsets_out,
// entry i's content offset goes to offsets_out[i].content_off. Returns the end.
uint8_t* metas_write(const meta_entries& e, uint64_t idx_size, uint16_t index_field, uint8_t* p, uint32_t at,
                     frame_meta_entry* offsets_out) noexcept {
  const uint32_t n = e.count();
  // The contents follow the fixarray, the index and the array16 header.
  at += 1 + static_cast<uint32_t>(idx_size) + 3;
  *p++ = 0x90 | kMetasFields;
  *p++ = 0xcd;
  be_store16(p, index_field);
  p[2] = 0xde;
  be_store16(p + 3, static_cast<uint16_t>(n));
  p += 5;
  for (uint32_t i = 0; i < n; ++i) {
    const span<const char> name = e.name(i);  // 1..31 bytes (metas_size)
    *p++ = static_cast<uint8_t>(0xa0 | name.size());
    memcpy(p, name.data(), name.size());
    p += name.size();
    *p++ = 0xd2;
    be_store32(p, at);
    p += 4;
    if (offsets_out != nullptr) offsets_out[i].content_off = at + kBin32Head;
    at += kBin32Head + static_cast<uint32_t>(e.content(i).size());
  }
  *p++ = 0xdc;
  be_store16(p, static_cast<uint16_t>(n));
  p += 2;
  for (uint32_t i = 0; i < n; ++i) {
    const bytes_view c = e.content(i);
    *p++ = 0xc6;
    be_store32(p, static_cast<uint32_t>(c.size()));
    p += 4;
    if (!c.empty()) memcpy(p, c.data(), c.size());
    p += c.size();
  }
  return p;
}

// The trailer: 0x94, version 1, the vlmetalayer section, ce trailer_len, d8 00 and a 16-byte (empty)
// fingerprint.
result<uint32_t> trailer_size_of(const meta_entries& e) noexcept {
  uint64_t idx = 0;
  auto size = metas_size(e, kFrameMaxVlmetalayers, &idx);
  if (!size.ok()) return size.err();
  const uint64_t total = 2 + *size + 5 + 18;
  if (total > INT32_MAX) return make_error(errc::overflow, TESSERA_MSG("frame: trailer too large"));
  return static_cast<uint32_t>(total);
}

void trailer_write_of(const meta_entries& e, uint8_t* out, uint32_t size) noexcept {
  uint64_t idx = 0;
  (void)metas_size(e, kFrameMaxVlmetalayers, &idx);
  out[0] = 0x90 | kTrailerFields;
  out[1] = kTrailerVersion;  // a positive fixint
  uint8_t* p = metas_write(e, idx, static_cast<uint16_t>(idx), out + 2, 2, nullptr);
  *p++ = 0xce;
  be_store32(p, size);
  p[4] = 0xd8;
  p[5] = 0;  // type 0: no fingerprint, 16 zero bytes
  memset(p + 6, 0, kFiltersLen);
}

// The header's fixed fields (kFrameHeaderMinLen bytes at p), the first 13 of its 14, in the encodings the
// format pins (the reader's kPinned): the markers from one table and each value stored at its offset, not
// through a dozen msgpack writer calls. The same bytes as those calls wrote. `info` is a frame_info or the
// frame_create_params (the fields they share), `s` the lengths and sizes: a writer from params builds no
// frame_info for it.
struct header_sizes {
  uint32_t header_len;
  uint64_t frame_len;
  int64_t nbytes;
  int64_t cbytes;
  bool vl_blocks;
};
template <class Info>
void header_fields_put(uint8_t* p, const Info& info, const header_sizes& s, int32_t chunksize, bool sparse,
                       bool has_vlmetalayers) noexcept {
  static constexpr uint8_t kMarkers[][2] = {
      {0, 0x90 | kHeaderFields}, {kFhMagic - 1, 0xa8},    {kFhHeaderLen - 1, 0xd2}, {kFhFrameLen - 1, 0xcf},
      {kFhFlags - 1, 0xa4},      {kFhNbytes - 1, 0xd3},   {kFhCbytes - 1, 0xd3},    {kFhTypesize - 1, 0xd2},
      {kFhBlocksize - 1, 0xd2},  {kFhChunksize - 1, 0xd2}, {kFhNthreadsC - 1, 0xd1}, {kFhNthreadsD - 1, 0xd1},
      {kFhFilterCount - 1, 0xd8}, {kFhFilterCount, kChunkMaxFilters}};  // the ext's type: the filter slots
  static_assert(kFiltersLen == 16 && kFhMetalayers == kFhFilters + kFiltersLen, "the filters field is a fixext16");
  static_assert(kFhHasVlmeta + 1 == kFhFilterCount - 1 && kFhFlags + kFlagsLen == kFhNbytes - 1, "pinned offsets");
  memset(p, 0, kFhMetalayers);
  for (const auto& m : kMarkers) p[m[0]] = m[1];
  memcpy(p + kFhMagic, kMagic, sizeof kMagic);
  be_store32(p + kFhHeaderLen, s.header_len);
  be_store64(p + kFhFrameLen, s.frame_len);
  const bool variable = chunksize == 0;
  uint8_t flags = (variable || s.vl_blocks) ? kFrameVersionVlBlocks : kFrameVersionRc1;
  flags |= kFrameFlag64BitOffsets;
  if (variable) flags |= kFrameFlagVariableChunks;
  if (s.vl_blocks) flags |= kFrameFlagVlBlocks;
  const uint8_t codec_id = info.compcode >= kFrameCodecLast ? kFrameUdcodecFormat : info.compcode;
  p[kFhFlags] = flags;
  p[kFhType] = sparse ? 1 : 0;
  p[kFhCodecs] = static_cast<uint8_t>(codec_id | (info.clevel << 4));
  p[kFhOtherFlags] = static_cast<uint8_t>((info.splitmode - 1) & 0x3);
  be_store64(p + kFhNbytes, static_cast<uint64_t>(s.nbytes));
  be_store64(p + kFhCbytes, static_cast<uint64_t>(s.cbytes));
  be_store32(p + kFhTypesize, static_cast<uint32_t>(info.typesize));
  be_store32(p + kFhBlocksize, static_cast<uint32_t>(info.blocksize));
  be_store32(p + kFhChunksize, static_cast<uint32_t>(chunksize));
  be_store16(p + kFhNthreadsC, static_cast<uint16_t>(info.nthreads_comp));
  be_store16(p + kFhNthreadsD, static_cast<uint16_t>(info.nthreads_decomp));
  p[kFhHasVlmeta] = has_vlmetalayers ? 0xc3 : 0xc2;
  memcpy(p + kFhFilters, info.filters, kChunkMaxFilters);
  memcpy(p + kFhFiltersMeta, info.filters_meta, kChunkMaxFilters);
  p[kFhUdcodec] = info.compcode;
  p[kFhCodecMeta] = info.compcode_meta;
  p[kFhOtherFlags2] = info.use_dict ? 1 : 0;
}

// The fields frame_info and frame_create_params share, from one to the other.
template <class To, class From>
void shared_fields_copy(const From& f, To& t) noexcept {
  t.typesize = f.typesize;
  t.blocksize = f.blocksize;
  t.chunksize = f.chunksize;
  t.compcode = f.compcode;
  t.clevel = f.clevel;
  t.splitmode = f.splitmode;
  t.use_dict = f.use_dict;
  for (int k = 0; k < kChunkMaxFilters; ++k) {
    t.filters[k] = f.filters[k];
    t.filters_meta[k] = f.filters_meta[k];
  }
  t.compcode_meta = f.compcode_meta;
  t.nthreads_comp = f.nthreads_comp;
  t.nthreads_decomp = f.nthreads_decomp;
}

bool spans_equal(span<const char> a, span<const char> b) noexcept {
  return a.size() == b.size() && (a.empty() || memcmp(a.data(), b.data(), a.size()) == 0);
}
}  // namespace

bool names_equal(const frame_meta_entry& e, span<const char> name) noexcept {
  return name.size() == e.name_len && (name.empty() || memcmp(name.data(), e.name, name.size()) == 0);
}

detail::code_status header_fixed_parse(bytes_view h, frame_info& info) noexcept {
  if (h.size() < kFrameHeaderMinLen) return make_error(errc::truncated, TESSERA_MSG("frame: shorter than its fixed header"));
  // Every field in its pinned encoding, so each at its offset: the markers are checked in one pass (the
  // fixarray's count is not, as by the reference) and the values loaded where they sit, all inside the fixed part.
  static constexpr uint8_t kPinned[][2] = {
      {kFhMagic - 1, 0xa8},     {kFhHeaderLen - 1, 0xd2}, {kFhFrameLen - 1, 0xcf}, {kFhFlags - 1, 0xa4},
      {kFhNbytes - 1, 0xd3},    {kFhCbytes - 1, 0xd3},    {kFhTypesize - 1, 0xd2}, {kFhBlocksize - 1, 0xd2},
      {kFhChunksize - 1, 0xd2}, {kFhNthreadsC - 1, 0xd1}, {kFhNthreadsD - 1, 0xd1}, {kFhFilterCount - 1, 0xd8}};
  const uint8_t* const hp = h.data();
  bool pinned = (hp[0] & 0xf0) == 0x90 && (hp[kFhHasVlmeta] == 0xc2 || hp[kFhHasVlmeta] == 0xc3);
  for (const auto& k : kPinned) pinned &= hp[k[0]] == k[1];
  if (!pinned) return make_error(errc::malformed, TESSERA_MSG("frame: a header field in another encoding than the format pins"));
  if (memcmp(hp + kFhMagic, kMagic, sizeof kMagic) != 0) return make_error(errc::malformed, TESSERA_MSG("frame: no b2frame magic"));
  const int32_t hl = static_cast<int32_t>(be_at<uint32_t>(hp + kFhHeaderLen));
  const uint64_t frame_len = be_at<uint64_t>(hp + kFhFrameLen);
  const int64_t nbytes = static_cast<int64_t>(be_at<uint64_t>(hp + kFhNbytes));
  const int64_t cbytes = static_cast<int64_t>(be_at<uint64_t>(hp + kFhCbytes));
  const int32_t typesize = static_cast<int32_t>(be_at<uint32_t>(hp + kFhTypesize));
  const int32_t blocksize = static_cast<int32_t>(be_at<uint32_t>(hp + kFhBlocksize));
  const int32_t chunksize = static_cast<int32_t>(be_at<uint32_t>(hp + kFhChunksize));
  const int16_t nthreads_comp = static_cast<int16_t>(be_at<uint16_t>(hp + kFhNthreadsC));
  const int16_t nthreads_decomp = static_cast<int16_t>(be_at<uint16_t>(hp + kFhNthreadsD));
  const bool has_vlmetalayers = hp[kFhHasVlmeta] == 0xc3;
  const uint8_t* p = hp + kFhFlags;
  const uint8_t* fp = hp + kFhFilters;  // kFiltersLen bytes
  info = frame_info{};
  const uint8_t flags = p[0];
  info.version = flags & 0x0f;
  if (info.version > kFrameVersionVlBlocks) return make_error(errc::unsupported, TESSERA_MSG("frame: a newer frame format version"));
  if (((flags >> 4) & 0x3) != 1) return make_error(errc::unsupported, TESSERA_MSG("frame: chunk offsets other than 64-bit"));
  info.variable_chunks = (flags & kFrameFlagVariableChunks) != 0;
  info.vl_blocks = (flags & kFrameFlagVlBlocks) != 0;
  const uint8_t type = p[kFhType - kFhFlags] & 0x0f;
  if (type > 1) return make_error(errc::unsupported, TESSERA_MSG("frame: unknown frame type"));
  info.kind = static_cast<frame_kind>(type);
  if (hl < static_cast<int32_t>(kFrameHeaderMinLen)) return make_error(errc::malformed, TESSERA_MSG("frame: header length too small"));
  info.header_len = static_cast<uint32_t>(hl);
  info.frame_len = frame_len;
  if (info.frame_len > static_cast<uint64_t>(INT64_MAX)) return make_error(errc::malformed, TESSERA_MSG("frame: frame length too large"));
  if (info.header_len > info.frame_len) return make_error(errc::malformed, TESSERA_MSG("frame: header longer than the frame"));
  info.nbytes = nbytes;
  info.cbytes = cbytes;
  if (info.nbytes < 0 || info.cbytes < 0) return make_error(errc::malformed, TESSERA_MSG("frame: negative sizes in the header"));
  info.typesize = typesize;
  info.blocksize = blocksize;
  info.chunksize = chunksize;
  if (info.typesize <= 0) return make_error(errc::malformed, TESSERA_MSG("frame: typesize zero or negative"));
  info.nthreads_comp = nthreads_comp;
  info.nthreads_decomp = nthreads_decomp;
  info.has_vlmetalayers = has_vlmetalayers;
  const uint8_t codecs = p[kFhCodecs - kFhFlags];
  info.clevel = codecs >> 4;
  info.compcode = codecs & 0x0f;
  info.udcodec = fp[kFhUdcodec - kFhFilters];
  info.compcode_meta = fp[kFhCodecMeta - kFhFilters];
  if (info.compcode == kFrameUdcodecFormat) info.compcode = info.udcodec;
  info.splitmode = static_cast<uint8_t>((p[kFhOtherFlags - kFhFlags] & 0x3) + 1);
  info.use_dict = (fp[kFhOtherFlags2 - kFhFilters] & 0x1) != 0;
  const uint8_t nfilters = hp[kFhFilterCount];  // the fixext16's type byte
  if (nfilters > kChunkMaxFilters) return make_error(errc::malformed, TESSERA_MSG("frame: more filters than the 6 slots"));
  for (int i = 0; i < nfilters; ++i) {
    info.filters[i] = fp[i];
    info.filters_meta[i] = fp[kFhFiltersMeta - kFhFilters + i];
  }
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

detail::code_status header_metas_read(bytes_view h, frame_meta_entry (&out)[kFrameMaxMetalayers], uint32_t* count) noexcept {
  *count = 0;
  if (h.size() < kFhMetalayers + 6) return make_error(errc::truncated, TESSERA_MSG("frame: header ends before its metalayers"));
  msgpack_reader r(h);
  (void)r.read_raw(kFhMetalayers);
  uint32_t n = 0;
  uint32_t got = 0;
  detail::code_status e = metas_count_read(r, kFrameMaxMetalayers, &n);
  if (e.ok()) e = metas_parse(h, r, n, out, &got, nullptr);
  *count = e.ok() ? got : 0;
  return e;
}

detail::code_status header_meta_find(bytes_view h, span<const char> name, span<const char> alt, bool* found, uint32_t* off,
                        uint32_t* len) noexcept {
  *found = false;
  if (h.size() < kFhMetalayers + 6) return make_error(errc::truncated, TESSERA_MSG("frame: header ends before its metalayers"));
  msgpack_reader r(h);
  (void)r.read_raw(kFhMetalayers);
  uint32_t n = 0;
  TESSERA_TRY(metas_count_read(r, kFrameMaxMetalayers, &n));
  const msgpack_reader entries = r;  // the earlier names are read again from here: no table of them
  for (uint32_t i = 0; i < n; ++i) {  // the checks and their order of metas_parse
    const span<const char> entry_name = r.read_fixstr();
    const int32_t entry_off = r.read_int32_fixed();
    if (!r.ok()) return r.err();
    if (entry_off < 0 || static_cast<uint64_t>(entry_off) + kBin32Head > h.size())
      return make_error(errc::malformed, TESSERA_MSG("frame: metalayer offset outside its section"));
    msgpack_reader c(h.subspan(static_cast<size_t>(entry_off)));
    const bytes_view content = c.read_bin32();
    if (!c.ok()) return c.err();
    msgpack_reader earlier = entries;
    for (uint32_t k = 0; k < i; ++k) {
      const span<const char> earlier_name = earlier.read_fixstr();
      (void)earlier.read_int32_fixed();
      if (spans_equal(earlier_name, entry_name))
        return make_error(errc::malformed, TESSERA_MSG("frame: two metalayers with the same name"));
    }
    if (!*found && (spans_equal(entry_name, name) || spans_equal(entry_name, alt))) {
      *found = true;
      *off = static_cast<uint32_t>(entry_off) + kBin32Head;
      *len = static_cast<uint32_t>(content.size());
    }
  }
  return ok_status();
}

detail::code_status header_metas_parse(frame_state& s) noexcept {
  const detail::code_status e = header_metas_read(bytes_view(s.header, s.info.header_len), s.metas, &s.nmetas);
  s.info.nmetalayers = s.nmetas;
  return e;
}

void header_fixed_encode(const frame_info& info, int32_t chunksize, bool sparse, bool has_vlmetalayers,
                         uint8_t* p) noexcept {
  const header_sizes s{info.header_len, info.frame_len, info.nbytes, info.cbytes, info.vl_blocks};
  header_fields_put(p, info, s, chunksize, sparse, has_vlmetalayers);
}

void header_fixed_write(const frame_state& s, uint8_t* p) noexcept {
  header_fixed_encode(s.info, s.schunk_chunksize, s.sparse, s.nvlmetas > 0, p);
}

detail::code_status params_check(const frame_create_params& p) noexcept {
  // Above 255 bytes the frame keeps the real typesize and chunk headers say 1 (the reference's wide types).
  if (p.typesize <= 0 || p.typesize > kChunkMaxBlocksize)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: typesize must be 1..BLOSC2_MAXTYPESIZE"));
  if (p.blocksize < 0 || p.chunksize < -1) return make_error(errc::invalid_argument, TESSERA_MSG("frame: negative block or chunk size"));
  if (p.clevel > 15 || p.splitmode < 1 || p.splitmode > 4) return make_error(errc::invalid_argument, TESSERA_MSG("frame: clevel or splitmode out of range"));
  if (p.nmetalayers > kFrameMaxMetalayers) return make_error(errc::invalid_argument, TESSERA_MSG("frame: more than 16 metalayers"));
  if (p.nmetalayers > 0 && p.metalayers == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: metalayers missing"));
  return ok_status();  // the metalayers: metas_size checks them (header_size_of, this function's caller)
}

void info_from_params(const frame_create_params& p, frame_info& i) noexcept {
  shared_fields_copy(p, i);
  i.udcodec = p.compcode;
  i.version = kFrameVersionRc1;
  i.nmetalayers = p.nmetalayers;
}

result<uint32_t> header_size_of(const frame_create_params& p, uint64_t* idx_size) noexcept {
  TESSERA_TRY(params_check(p));
  auto size = metas_size(init_entries{p.metalayers, p.nmetalayers}, kFrameMaxMetalayers, idx_size);
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
  const header_sizes s{*hl, fields.frame_len, fields.nbytes, fields.cbytes, fields.vl_blocks};
  header_fields_put(out.data(), p, s, fields.chunksize, fields.kind == frame_kind::sparse, fields.has_vlmetalayers);
  // The header's index size counts its fixarray marker too (the trailer's does not): the reference measures
  // them from different starts.
  (void)metas_write(init_entries{p.metalayers, p.nmetalayers}, idx, static_cast<uint16_t>(idx + 1),
                    out.data() + kFhMetalayers, kFhMetalayers, offsets_out);
  return *hl;
}

detail::code_status header_build(frame_state& s, const frame_create_params& prm) noexcept {
  uint64_t idx = 0;
  auto hl = header_size_of(prm, &idx);
  if (!hl.ok()) return hl.err();
  for (uint32_t i = 0; i < prm.nmetalayers; ++i) {
    frame_meta_entry& e = s.metas[i];
    e = frame_meta_entry{};
    memcpy(e.name, prm.metalayers[i].name.data(), prm.metalayers[i].name.size());
    e.name_len = static_cast<uint8_t>(prm.metalayers[i].name.size());
    e.content_len = static_cast<uint32_t>(prm.metalayers[i].content.size());
  }
  s.nmetas = prm.nmetalayers;
  TESSERA_TRY(state_buffer_reserve(s, &s.header, &s.header_cap, *hl));
  memset(s.header, 0, *hl);
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

result<uint32_t> trailer_len_parse(bytes_view tail) noexcept {
  // The uint32 field, 22 bytes from the frame's end (its marker one byte before).
  if (tail.size() <= kTrailerLenFromEnd) return make_error(errc::truncated, TESSERA_MSG("frame: trailer too short"));
  msgpack_reader r(tail.subspan(tail.size() - kTrailerLenFromEnd - 1));
  const uint32_t len = r.read_uint32_fixed();
  if (!r.ok()) return make_error(errc::malformed, TESSERA_MSG("frame: trailer length is not a uint32"));
  return len;
}

void header_sizes_patch(uint8_t* header, uint64_t frame_len, int64_t cbytes) noexcept {
  // Both fields keep their encodings, so rewriting one leaves every other byte in place.
  header[kFhFrameLen - 1] = 0xcf;
  be_store64(header + kFhFrameLen, frame_len);
  header[kFhCbytes - 1] = 0xd3;
  be_store64(header + kFhCbytes, static_cast<uint64_t>(cbytes));
}

detail::code_status trailer_parse(frame_state& s, bytes_view t) noexcept {
  if (t.size() < kFrameTrailerMinLen) return make_error(errc::truncated, TESSERA_MSG("frame: trailer too short"));
  msgpack_reader r(t);
  if (r.read_fixarray() != kTrailerFields)
    return make_error(errc::malformed, TESSERA_MSG("frame: trailer is not a 4-element fixarray"));
  (void)r.read_raw(1);  // the trailer's version
  // The count of vlmetalayers comes first, to size the table.
  uint32_t n = 0;
  TESSERA_TRY(metas_count_read(r, kFrameMaxVlmetalayers, &n));
  // Each index entry takes at least 7 bytes (a name of 1 byte and an int32 offset): the count is a claim the
  // trailer's length must back before it sizes the table.
  if (uint64_t{n} * 7 > t.size()) return make_error(errc::malformed, TESSERA_MSG("frame: more vlmetalayers than the trailer holds"));
  if (n > s.vlcap) {
    void* p = allocator_allocate(s.alloc, sizeof(frame_meta_entry) * n, alignof(frame_meta_entry));
    if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused the vlmetalayer table"));
    if (s.vlmetas != nullptr) allocator_deallocate(s.alloc, s.vlmetas, sizeof(frame_meta_entry) * s.vlcap, alignof(frame_meta_entry));
    s.vlmetas = static_cast<frame_meta_entry*>(p);
    s.vlcap = n;
    for (uint32_t i = 0; i < n; ++i) new (tessera::cxx::place, &s.vlmetas[i]) frame_meta_entry;
  }
  uint32_t got = 0;
  detail::code_status e = metas_parse(t, r, n, s.vlmetas, &got, &s);
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
  memset(out, 0, kChunkStoredOverhead);
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
  memcpy(out + kChunkStoredOverhead, entries.data(), nbytes);
}


// The index chunk's bound for entries, checked against out.
result<uint32_t> index_bound_check(bytes_view entries, bytes_mut out) noexcept {
  if (entries.empty() || entries.size() % 8 != 0)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame: index entries are whole int64s, at least one"));
  auto bound = frame_index_bound(static_cast<int64_t>(entries.size() / 8));
  if (!bound.ok()) return bound.err();
  if (out.size() < *bound) return make_error(errc::buffer_too_small, TESSERA_MSG("frame: buffer shorter than the index bound"));
  return bound;
}
}  // namespace

result<size_t> index_encode_stored(bytes_view entries, bytes_mut out) noexcept {
  auto bound = index_bound_check(entries, out);
  if (!bound.ok()) return bound.err();
  index_stored_write(entries, out.data());
  return size_t{*bound};
}

result<size_t> index_encode(chunk_encoder* encoder, bytes_view entries, bytes_mut out) noexcept {
  if (encoder == nullptr) return index_encode_stored(entries, out);
  auto bound = index_bound_check(entries, out);
  if (!bound.ok()) return bound.err();
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
  memset(out, 0, kChunkStoredOverhead);
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
  detail::shared_fields_copy(i, p);
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

result<size_t> frame_index_encode_stored(bytes_view entries_le, bytes_mut out) noexcept {
  return detail::index_encode_stored(entries_le, out);
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
  return detail::trailer_size_of(e);
}

result<size_t> frame_trailer_encode(span<const frame_vlmetalayer> vlmetas, bytes_mut out) noexcept {
  auto size = frame_trailer_size(vlmetas);
  if (!size.ok()) return size.err();
  if (out.size() < *size) return make_error(errc::buffer_too_small, TESSERA_MSG("frame: buffer shorter than the trailer"));
  detail::trailer_write_of(detail::vl_entries{vlmetas.data(), static_cast<uint32_t>(vlmetas.size())}, out.data(), *size);
  return size_t{*size};
}

bytes_view frame_trailer_empty() noexcept {
  // 0x94, version 1, the empty vlmetalayer section (fixarray 3, cd index size 6, map16 0, array16 0),
  // ce trailer_len 35, d8 00 and the 16-byte empty fingerprint (tests check it against frame_trailer_encode).
  static constexpr uint8_t kEmpty[35] = {0x94, 0x01, 0x93, 0xcd, 0x00, 0x06, 0xde, 0x00, 0x00, 0xdc, 0x00, 0x00,
                                         0xce, 0x00, 0x00, 0x00, 35,   0xd8, 0x00};
  return bytes_view(kEmpty, sizeof kEmpty);
}

chunk_encoder_options frame_encoder_options() noexcept {
  chunk_encoder_options o;
  o.max_blocksize = kFrameIndexBlocksize;
  o.estimate_codec = codec::blosclz;
  o.estimate_clevel = 5;
  return o;
}

}  // namespace tessera
