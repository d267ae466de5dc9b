// SPDX-License-Identifier: BSD-3-Clause
// The public encoders of a frame's parts (header, index chunk, trailer, vlmetalayer chunks): what they write
// parses back (through the reader's parser and by walking the msgpack by hand), the index and vlmetalayer
// chunks decode to their input, the index is compressed the reference's way or stored when that does not
// gain, and a frame assembled from the parts is byte for byte the frame the writer makes, and opens.
#include <cstring>
#include <initializer_list>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../../src/frame/frame_internal.hpp"  // the reader's header parser (internal: the core keeps src/ private)
#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr int kMaxEntries = 5000;
constexpr int32_t kChunk = 2048;
constexpr int32_t kBlock = 512;
constexpr int kChunks = 7;

struct buffers {
  uint8_t header[4096];
  uint8_t entries[kMaxEntries * 8];
  uint8_t index[kMaxEntries * 8 + kChunkMaxOverhead];
  uint8_t stored[kMaxEntries * 8 + kChunkMaxOverhead];
  uint8_t decoded[70000 + 64];  // index entries or vlmetalayer content
  uint8_t content[70000];
  uint8_t vchunk[70000 + kChunkMaxOverhead];
  uint8_t trailer[2048];
  uint8_t src[kChunk];
  uint8_t work[3 * kBlock];
  uint8_t chunks[kChunks][2 * kChunk + 64];
  size_t chunk_size[kChunks];
  uint8_t assembled[64 * 1024];
  uint8_t out[kChunk];
  uint8_t expect[kChunk];
};
buffers g;  // static: too big for the bare-metal stack

span<const char> nm(const char* s) { return span<const char>(s, std::strlen(s)); }

uint64_t be(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

void entry_store(uint8_t* p, int64_t v) {
  for (int k = 0; k < 8; ++k) p[k] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * k));
}

// Walks a metalayer section (0x93 cd idx de n {name d2 off}... dc n {c6 len bytes}...) at `at` of `base` and
// checks it holds exactly these names and contents; `idx_extra` is what the index size counts beyond its
// entries (the header counts its 0x93 marker, the trailer does not).
template <class Name, class Content>
void section_check(tessera::test::context& t, const uint8_t* base, size_t len, size_t at, uint32_t n, Name name,
                   Content content, uint32_t idx_extra) {
  REQUIRE(at + 7 <= len);
  CHECK_EQ(base[at], 0x93);
  CHECK_EQ(base[at + 1], 0xcd);
  uint64_t want_idx = 6 + idx_extra;
  for (uint32_t i = 0; i < n; ++i) want_idx += 1 + name(i).size() + 1 + 4;
  CHECK_EQ(be(base + at + 2, 2), want_idx);
  CHECK_EQ(base[at + 4], 0xde);
  REQUIRE_EQ(be(base + at + 5, 2), n);
  size_t pos = at + 7;
  for (uint32_t i = 0; i < n; ++i) {
    const span<const char> nmi = name(i);
    REQUIRE(pos + 1 + nmi.size() + 5 <= len);
    CHECK_EQ(base[pos], 0xa0 | nmi.size());
    CHECK(std::memcmp(base + pos + 1, nmi.data(), nmi.size()) == 0);
    pos += 1 + nmi.size();
    CHECK_EQ(base[pos], 0xd2);
    const size_t off = static_cast<size_t>(be(base + pos + 1, 4));
    pos += 5;
    const bytes_view c = content(i);
    REQUIRE(off + 5 + c.size() <= len);
    CHECK_EQ(base[off], 0xc6);
    CHECK_EQ(be(base + off + 1, 4), c.size());
    CHECK(c.empty() || std::memcmp(base + off + 5, c.data(), c.size()) == 0);
  }
  CHECK_EQ(base[pos], 0xdc);
  CHECK_EQ(be(base + pos + 1, 2), n);
}

void random_name(tessera::test::rng& r, char* out, size_t len, uint32_t unique) {
  for (size_t k = 0; k < len; ++k) out[k] = static_cast<char>('a' + r.range(0, 25));
  out[0] = static_cast<char>('A' + unique);  // distinct first letters: distinct names
}

}  // namespace

// Random params and fields: the reader's parser finds every field, the metalayers sit where their offsets say,
// the size is the one announced; bad params, fields and buffers are refused.
TESSERA_TEST(frame_encode, header_fields_round_trip) {
  tessera::test::rng r(2024);
  static char names[4][32];
  static uint8_t contents[4][40];
  for (int iter = 0; iter < 2000; ++iter) {
    frame_metalayer_init ml[4];
    frame_create_params p;
    p.typesize = static_cast<int32_t>(r.range(1, 255));
    p.blocksize = static_cast<int32_t>(r.range(0, 1 << 20));
    p.chunksize = static_cast<int32_t>(r.range(-1, 1 << 22));
    const uint8_t codecs[] = {0, 1, 2, 4, 5, 6, 32, 160, 255};
    p.compcode = codecs[r.range(0, 8)];
    p.clevel = static_cast<uint8_t>(r.range(0, 9));
    p.splitmode = static_cast<uint8_t>(r.range(1, 4));
    p.use_dict = r.chance(30);
    for (int k = 0; k < kChunkMaxFilters; ++k) {
      p.filters[k] = static_cast<uint8_t>(r.chance(50) ? r.range(0, 4) : r.range(0, 255));
      p.filters_meta[k] = static_cast<uint8_t>(r.next());
    }
    p.compcode_meta = static_cast<uint8_t>(r.next());
    p.nthreads_comp = static_cast<int16_t>(r.range(1, 64));
    p.nthreads_decomp = static_cast<int16_t>(r.range(1, 64));
    p.nmetalayers = static_cast<uint32_t>(r.range(0, 4));
    for (uint32_t i = 0; i < p.nmetalayers; ++i) {
      const size_t nl = static_cast<size_t>(r.range(1, 31));
      random_name(r, names[i], nl, i);
      const size_t cl = static_cast<size_t>(r.range(0, 40));
      for (size_t k = 0; k < cl; ++k) contents[i][k] = static_cast<uint8_t>(r.next());
      ml[i] = frame_metalayer_init{span<const char>(names[i], nl), bytes_view(contents[i], cl)};
    }
    p.metalayers = p.nmetalayers > 0 ? ml : nullptr;
    frame_header_fields hf;
    hf.kind = r.chance(50) ? frame_kind::sparse : frame_kind::contiguous;
    hf.chunksize = r.chance(20) ? -1 : (r.chance(20) ? 0 : static_cast<int32_t>(r.range(1, 1 << 24)));
    hf.nbytes = hf.chunksize == -1 ? 0 : r.range(0, int64_t{1} << 40);
    hf.cbytes = r.range(0, int64_t{1} << 40);
    hf.frame_len = static_cast<uint64_t>(r.range(4096, int64_t{1} << 50));
    hf.vl_blocks = r.chance(20);
    hf.has_vlmetalayers = r.chance(50);

    auto size = frame_header_size(p);
    REQUIRE_OK(size);
    auto n = frame_header_encode(p, hf, bytes_mut(g.header, sizeof g.header));
    REQUIRE_OK(n);
    REQUIRE_EQ(*n, *size);
    CHECK_ERR(frame_header_encode(p, hf, bytes_mut(g.header, *size - 1)), errc::buffer_too_small);
    (void)frame_header_encode(p, hf, bytes_mut(g.header, sizeof g.header));

    frame_info info;
    REQUIRE_OK(detail::header_fixed_parse(bytes_view(g.header, *n), info));
    CHECK(info.kind == hf.kind);
    CHECK_EQ(info.version, (hf.chunksize == 0 || hf.vl_blocks) ? 3 : 2);
    CHECK_EQ(info.variable_chunks, hf.chunksize == 0);
    CHECK_EQ(info.vl_blocks, hf.vl_blocks);
    CHECK_EQ(info.header_len, *size);
    CHECK_EQ(info.frame_len, hf.frame_len);
    CHECK_EQ(info.nbytes, hf.nbytes);
    CHECK_EQ(info.cbytes, hf.cbytes);
    CHECK_EQ(info.typesize, p.typesize);
    CHECK_EQ(info.blocksize, p.blocksize);
    CHECK_EQ(info.chunksize, hf.chunksize);
    CHECK_EQ(info.nthreads_comp, p.nthreads_comp);
    CHECK_EQ(info.nthreads_decomp, p.nthreads_decomp);
    CHECK_EQ(info.has_vlmetalayers, hf.has_vlmetalayers);
    CHECK_EQ(info.compcode, p.compcode);
    CHECK_EQ(info.udcodec, p.compcode);
    CHECK_EQ(info.clevel, p.clevel);
    CHECK_EQ(info.splitmode, p.splitmode);
    CHECK_EQ(info.use_dict, p.use_dict);
    CHECK_EQ(info.compcode_meta, p.compcode_meta);
    for (int k = 0; k < kChunkMaxFilters; ++k) {
      CHECK_EQ(info.filters[k], p.filters[k]);
      CHECK_EQ(info.filters_meta[k], p.filters_meta[k]);
    }
    section_check(
        t, g.header, *n, kFrameHeaderMinLen, p.nmetalayers, [&](uint32_t i) { return ml[i].name; },
        [&](uint32_t i) { return ml[i].content; }, 1);
    if (t.failures > 0) return;
  }
  // Refused params, fields and metalayers.
  frame_create_params p;
  frame_header_fields hf;
  p.typesize = 0;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  p.typesize = 4;
  p.splitmode = 0;
  CHECK_ERR(frame_header_encode(p, hf, bytes_mut(g.header, sizeof g.header)), errc::invalid_argument);
  p.splitmode = 4;
  hf.nbytes = -1;
  CHECK_ERR(frame_header_encode(p, hf, bytes_mut(g.header, sizeof g.header)), errc::invalid_argument);
  hf.nbytes = 0;
  hf.chunksize = -2;
  CHECK_ERR(frame_header_encode(p, hf, bytes_mut(g.header, sizeof g.header)), errc::invalid_argument);
  hf.chunksize = -1;
  frame_metalayer_init two[2] = {{nm("same"), bytes_view()}, {nm("same"), bytes_view()}};
  p.metalayers = two;
  p.nmetalayers = 2;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  two[1].name = nm("0123456789012345678901234567890123");  // 34 bytes
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  two[1].name = span<const char>();
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  p.nmetalayers = kFrameMaxMetalayers + 1;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  p.metalayers = nullptr;
  p.nmetalayers = 1;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
}

// Index chunks of 1 to 5000 entries: compressible offsets, incompressible int64s and offsets mixed with
// special values. They decode to the entries; the header says typesize 8, 16 KiB blocks (or fewer bytes),
// shuffle, no split; incompressible entries are the stored form (the one written without an encoder).
TESSERA_TEST(frame_encode, index_round_trip_and_compression) {
  tessera::test::counting_allocator ca;
  {
    chunk_encoder enc;
    REQUIRE_OK(chunk_encoder_init(enc, ca.get(), frame_encoder_options()));
    chunk_decoder dec;
    REQUIRE_OK(chunk_decoder_init(dec, ca.get()));
    tessera::test::rng r(77);
    const int sizes[] = {1, 2, 3, 4, 5, 8, 100, 2047, 2048, 2049, 4096, kMaxEntries};
    for (int n : sizes) {
      for (int kind = 0; kind < 3; ++kind) {
        int64_t off = 0;
        for (int i = 0; i < n; ++i) {
          int64_t v = off;
          off += 1000 + r.range(0, 299);
          if (kind == 1) v = static_cast<int64_t>(r.next());
          if (kind == 2 && i % 5 == 2) v = frame_index_special(i % 2 ? chunk_special::zeros : chunk_special::nan);
          entry_store(g.entries + 8 * i, v);
        }
        const size_t nb = static_cast<size_t>(n) * 8;
        auto bound = frame_index_bound(n);
        REQUIRE_OK(bound);
        REQUIRE_EQ(*bound, nb + kChunkMaxOverhead);
        auto c = frame_index_encode(&enc, bytes_view(g.entries, nb), bytes_mut(g.index, *bound));
        REQUIRE_OK(c);
        CHECK_LE(*c, size_t{*bound});
        auto s = frame_index_encode(nullptr, bytes_view(g.entries, nb), bytes_mut(g.stored, *bound));
        REQUIRE_OK(s);
        CHECK_EQ(*s, size_t{*bound});
        for (const uint8_t* chunk : {g.index, g.stored}) {
          const size_t len = chunk == g.index ? *c : *s;
          auto h = chunk_header_read(bytes_view(chunk, len));
          REQUIRE_OK(h);
          CHECK_EQ(h->typesize, 8);
          CHECK_EQ(h->nbytes, static_cast<int32_t>(nb));
          CHECK_EQ(h->cbytes, static_cast<int32_t>(len));
          CHECK_EQ(h->blocksize, static_cast<int32_t>(nb < 16384 ? nb : 16384));
          CHECK_EQ(h->filters[5], static_cast<uint8_t>(filter_id::shuffle));
          CHECK_EQ((h->flags & kChunkFlagNoSplit) != 0, nb >= 32);  // the reference marks it from 32 bytes on
          std::memset(g.decoded, 0xa5, nb);
          auto d = chunk_decode(dec, bytes_view(chunk, len), bytes_mut(g.decoded, sizeof g.decoded));
          REQUIRE_OK(d);
          CHECK_EQ(*d, nb);
          CHECK(std::memcmp(g.decoded, g.entries, nb) == 0);
        }
        auto h = chunk_header_read(bytes_view(g.index, *c));
        REQUIRE_OK(h);
        if (kind == 1 || nb < 32) {
          // Nothing to gain: the reference's memcpyed fallback, which is the stored form.
          CHECK(h->memcpyed);
          CHECK(*c == *s && std::memcmp(g.index, g.stored, *c) == 0);
        } else if (n >= 100) {
          CHECK(!h->memcpyed);
          CHECK_LT(*c, nb / 2);
        }
        if (t.failures > 0) return;
      }
    }
    // Refused: no entries, a partial entry, a short buffer, impossible counts.
    CHECK_ERR(frame_index_encode(&enc, bytes_view(g.entries, 0), bytes_mut(g.index, 64)), errc::invalid_argument);
    CHECK_ERR(frame_index_encode(nullptr, bytes_view(g.entries, 12), bytes_mut(g.index, 64)), errc::invalid_argument);
    CHECK_ERR(frame_index_encode(&enc, bytes_view(g.entries, 16), bytes_mut(g.index, 47)), errc::buffer_too_small);
    CHECK_ERR(frame_index_encode(nullptr, bytes_view(g.entries, 16), bytes_mut(g.index, 47)), errc::buffer_too_small);
    CHECK_ERR(frame_index_bound(-1), errc::overflow);
    CHECK_ERR(frame_index_bound(int64_t{1} << 28), errc::overflow);
    CHECK(frame_index_special(chunk_special::zeros) < 0);
    CHECK(frame_index_special(chunk_special::nan) != frame_index_special(chunk_special::uninit));
  }
  CHECK(!ca.leaked());
}

// Trailers for random vlmetalayer sets: the layout walks back to the names and chunks, the length sits where
// readers look for it (22 bytes from the end), the fingerprint is empty; bad sets and buffers are refused.
TESSERA_TEST(frame_encode, trailer_layout) {
  tessera::test::rng r(31);
  static char names[6][32];
  static uint8_t chunks[6][50];
  for (int iter = 0; iter < 500; ++iter) {
    frame_vlmetalayer vl[6];
    const uint32_t n = static_cast<uint32_t>(r.range(0, 6));
    for (uint32_t i = 0; i < n; ++i) {
      const size_t nl = static_cast<size_t>(r.range(1, 31));
      random_name(r, names[i], nl, i);
      const size_t cl = static_cast<size_t>(r.range(0, 50));
      for (size_t k = 0; k < cl; ++k) chunks[i][k] = static_cast<uint8_t>(r.next());
      vl[i] = frame_vlmetalayer{span<const char>(names[i], nl), bytes_view(chunks[i], cl)};
    }
    const span<const frame_vlmetalayer> set(vl, n);
    auto size = frame_trailer_size(set);
    REQUIRE_OK(size);
    auto w = frame_trailer_encode(set, bytes_mut(g.trailer, sizeof g.trailer));
    REQUIRE_OK(w);
    REQUIRE_EQ(*w, *size);
    CHECK_LE(kFrameTrailerMinLen, *size);
    const uint8_t* p = g.trailer;
    CHECK_EQ(p[0], 0x94);
    CHECK_EQ(p[1], 1);
    section_check(
        t, p, *w, 2, n, [&](uint32_t i) { return vl[i].name; }, [&](uint32_t i) { return vl[i].chunk; }, 0);
    CHECK_EQ(p[*w - 23], 0xce);
    CHECK_EQ(be(p + *w - 22, 4), *w);
    CHECK_EQ(p[*w - 18], 0xd8);
    CHECK_EQ(p[*w - 17], 0);
    for (size_t k = *w - 16; k < *w; ++k) CHECK_EQ(p[k], 0);
    CHECK_ERR(frame_trailer_encode(set, bytes_mut(g.trailer, *size - 1)), errc::buffer_too_small);
    if (t.failures > 0) return;
  }
  auto empty = frame_trailer_size(span<const frame_vlmetalayer>());
  REQUIRE_OK(empty);
  CHECK_EQ(*empty, kFrameTrailerMinLen + 7 + 3);
  {  // the constant form the flash port writes: the encoder's bytes for no vlmetalayers
    const bytes_view fixed = frame_trailer_empty();
    REQUIRE_EQ(fixed.size(), size_t{*empty});
    uint8_t enc[64] = {};
    auto n = frame_trailer_encode(span<const frame_vlmetalayer>(), bytes_mut(enc, sizeof enc));
    REQUIRE_OK(n);
    REQUIRE_EQ(*n, fixed.size());
    CHECK(std::memcmp(enc, fixed.data(), fixed.size()) == 0);
  }
  frame_vlmetalayer dup[2] = {{nm("x"), bytes_view()}, {nm("x"), bytes_view()}};
  CHECK_ERR(frame_trailer_size(span<const frame_vlmetalayer>(dup, 2)), errc::invalid_argument);
  dup[1].name = nm("0123456789abcdef0123456789abcdef");  // 32 bytes
  CHECK_ERR(frame_trailer_encode(span<const frame_vlmetalayer>(dup, 2), bytes_mut(g.trailer, sizeof g.trailer)),
            errc::invalid_argument);
  dup[1].name = span<const char>();
  CHECK_ERR(frame_trailer_size(span<const frame_vlmetalayer>(dup, 2)), errc::invalid_argument);
}

// Vlmetalayer contents of 0 to 70000 bytes, text and noise: the chunk decodes to the content, says typesize 8
// (the reference's default cparams), and compresses text.
TESSERA_TEST(frame_encode, vlmeta_chunks) {
  tessera::test::counting_allocator ca;
  {
    chunk_encoder enc;
    REQUIRE_OK(chunk_encoder_init(enc, ca.get(), frame_encoder_options()));
    chunk_decoder dec;
    REQUIRE_OK(chunk_decoder_init(dec, ca.get()));
    tessera::test::rng r(5);
    const size_t sizes[] = {0, 1, 7, 8, 31, 32, 100, 5000, 70000};
    for (size_t n : sizes) {
      for (int noise = 0; noise < 2; ++noise) {
        for (size_t i = 0; i < n; ++i)
          g.content[i] = noise ? static_cast<uint8_t>(r.next()) : static_cast<uint8_t>("{\"unit\": \"mV\"}, "[i % 16]);
        auto c = frame_vlmeta_encode(enc, bytes_view(g.content, n), bytes_mut(g.vchunk, sizeof g.vchunk));
        REQUIRE_OK(c);
        CHECK_LE(*c, chunk_encode_bound(n));
        auto h = chunk_header_read(bytes_view(g.vchunk, *c));
        REQUIRE_OK(h);
        CHECK_EQ(h->typesize, 8);
        CHECK_EQ(h->nbytes, static_cast<int32_t>(n));
        auto d = chunk_decode(dec, bytes_view(g.vchunk, *c), bytes_mut(g.decoded, sizeof g.decoded));
        REQUIRE_OK(d);
        CHECK_EQ(*d, n);
        CHECK(n == 0 || std::memcmp(g.decoded, g.content, n) == 0);
        if (!noise && n >= 5000) CHECK_LT(*c, n / 4);
        CHECK_ERR(frame_vlmeta_encode(enc, bytes_view(g.content, n), bytes_mut(g.vchunk, chunk_encode_bound(n) - 1)),
                  errc::buffer_too_small);
      }
    }
  }
  CHECK(!ca.leaked());
}

namespace {

// A frame assembled from the parts: header, chunks back to back (zeros chunks in the index only), index,
// trailer, as the reference lays out an in-memory frame. With `compress`, the index is the reference's;
// without, the stored form. Returns the frame's length.
size_t assemble(tessera::test::context& t, chunk_encoder* enc, const frame_create_params& p,
                const frame_vlmetalayer* vl, uint32_t nvl) {
  auto hl = frame_header_size(p);
  if (!hl.ok()) return 0;
  size_t pos = *hl;
  int64_t nbytes = 0;
  for (int i = 0; i < kChunks; ++i) {
    const bool special = i % 3 == 1;
    entry_store(g.entries + 8 * i, special ? frame_index_special(chunk_special::zeros) : static_cast<int64_t>(pos - *hl));
    nbytes += kChunk;
    if (special) continue;
    std::memcpy(g.assembled + pos, g.chunks[i], g.chunk_size[i]);
    pos += g.chunk_size[i];
  }
  const size_t cbytes = pos - *hl;
  auto in = frame_index_encode(enc, bytes_view(g.entries, 8 * kChunks), bytes_mut(g.assembled + pos, sizeof g.assembled - pos));
  CHECK_OK(in);
  if (!in.ok()) return 0;
  pos += *in;
  auto tn = frame_trailer_encode(span<const frame_vlmetalayer>(vl, nvl), bytes_mut(g.assembled + pos, sizeof g.assembled - pos));
  CHECK_OK(tn);
  if (!tn.ok()) return 0;
  pos += *tn;
  frame_header_fields hf;
  hf.frame_len = pos;
  hf.nbytes = nbytes;
  hf.cbytes = static_cast<int64_t>(cbytes);
  hf.chunksize = kChunk;  // set by the first chunk, as the reference's fresh super-chunk
  hf.has_vlmetalayers = nvl > 0;
  auto hn = frame_header_encode(p, hf, bytes_mut(g.assembled, *hl));
  CHECK_OK(hn);
  return hn.ok() ? pos : 0;
}

}  // namespace

// The same chunks, metalayers and vlmetalayers written by the frame writer (in-memory layout) and assembled
// from the public encoders: the same bytes; both open and decode. The stored-index variant opens too.
TESSERA_TEST(frame_encode, assembled_frame_is_the_writers_frame) {
  tessera::test::counting_allocator ca;
  {
    const allocator a = ca.get();
    for (int i = 0; i < kChunks; ++i) {
      if (i % 3 == 1) {
        special_make(1, kChunk, g.chunks[i]);
        g.chunk_size[i] = 32;
      } else {
        g.chunk_size[i] = chunk_make(900 + static_cast<uint64_t>(i), kChunk, kBlock, g.src, g.chunks[i],
                                     sizeof g.chunks[i], g.work);
        REQUIRE(g.chunk_size[i] > 0);
      }
    }
    const uint8_t meta[6] = {0x95, 1, 2, 3, 4, 5};
    const uint8_t other[2] = {0xc3, 0xc2};
    frame_metalayer_init ml[2] = {{nm("b2nd"), bytes_view(meta, sizeof meta)}, {nm("other"), bytes_view(other, 2)}};
    frame_create_params p;
    p.typesize = 4;
    p.blocksize = kBlock;
    p.metalayers = ml;
    p.nmetalayers = 2;
    const char* vnames[2] = {"attrs", "description"};
    static uint8_t vcontent[2][3000];
    const size_t vsize[2] = {13, 3000};
    for (size_t k = 0; k < vsize[0]; ++k) vcontent[0][k] = static_cast<uint8_t>(0x80 + k);
    for (size_t k = 0; k < vsize[1]; ++k) vcontent[1][k] = static_cast<uint8_t>("a frame of parts "[k % 17]);

    // The writer.
    growable_buffer gb;
    growable_buffer_init(gb, a);
    {
      frame f;
      frame_open_options o;
      o.durable = false;
      REQUIRE_OK(frame_create(f, growable_buffer_storage(gb), a, p, o));
      for (int i = 0; i < kChunks; ++i) REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunks[i], g.chunk_size[i])));
      for (int k = 0; k < 2; ++k) REQUIRE_OK(frame_vlmeta_set(f, nm(vnames[k]), bytes_view(vcontent[k], vsize[k])));
      REQUIRE_OK(frame_commit(f));
      REQUIRE_OK(frame_close(f));
    }

    // The parts.
    chunk_encoder enc;
    REQUIRE_OK(chunk_encoder_init(enc, a, frame_encoder_options()));
    static uint8_t vchunks[2][3000 + kChunkMaxOverhead];
    frame_vlmetalayer vl[2];
    for (int k = 0; k < 2; ++k) {
      auto c = frame_vlmeta_encode(enc, bytes_view(vcontent[k], vsize[k]), bytes_mut(vchunks[k], sizeof vchunks[k]));
      REQUIRE_OK(c);
      vl[k] = frame_vlmetalayer{nm(vnames[k]), bytes_view(vchunks[k], *c)};
    }
    CHECK_LT(vl[1].chunk.size(), vsize[1] / 4);  // the description is compressed
    for (int stored = 0; stored < 2; ++stored) {
      const size_t len = assemble(t, stored ? nullptr : &enc, p, vl, 2);
      REQUIRE(len > 0);
      if (!stored) {
        CHECK_EQ(len, gb.size());
        CHECK(len == gb.size() && std::memcmp(g.assembled, gb.bytes().data(), len) == 0);
      }
      const_buffer cb{g.assembled, len};
      frame f;
      REQUIRE_OK(frame_open(f, const_buffer_storage(cb), a));
      const frame_info* info = frame_info_get(f);
      REQUIRE(info != nullptr);
      CHECK_EQ(info->nchunks, kChunks);
      CHECK_EQ(info->nbytes, int64_t{kChunks} * kChunk);
      CHECK_EQ(info->chunksize, kChunk);
      CHECK_EQ(info->frame_len, len);
      CHECK_EQ(info->nvlmetalayers, 2u);
      auto m = frame_meta_find(f, nm("other"));
      REQUIRE_OK(m);
      CHECK(m->size() == 2 && std::memcmp(m->data(), other, 2) == 0);
      chunk_decoder d;
      REQUIRE_OK(chunk_decoder_init(d, a));
      for (int i = 0; i < kChunks; ++i) {
        auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
        REQUIRE_OK(n);
        CHECK_EQ(*n, static_cast<size_t>(kChunk));
        if (i % 3 == 1) std::memset(g.expect, 0, kChunk);
        else content_fill(900 + static_cast<uint64_t>(i), g.expect, kChunk);
        CHECK(std::memcmp(g.out, g.expect, kChunk) == 0);
      }
      for (int k = 0; k < 2; ++k) {
        auto n = frame_vlmeta_decode(f, d, nm(vnames[k]), bytes_mut(g.decoded, sizeof g.decoded));
        REQUIRE_OK(n);
        CHECK(*n == vsize[k] && std::memcmp(g.decoded, vcontent[k], vsize[k]) == 0);
      }
      CHECK_OK(frame_close(f));
    }
    chunk_encoder_release(enc);
    growable_buffer_release(gb);
  }
  CHECK(!ca.leaked());
}

// The writer's index chunk: one entry is stored (too small to compress, as the reference); 3000 entries (two
// 16 KiB blocks) are compressed, and the frame reopens with them.
TESSERA_TEST(frame_encode, writer_compresses_the_index) {
  tessera::test::counting_allocator ca;
  {
    const allocator a = ca.get();
    for (int n : {1, 3000}) {
      growable_buffer gb;
      growable_buffer_init(gb, a);
      frame_create_params p;
      p.typesize = 4;
      p.expected_nchunks = n;
      frame_open_options o;
      o.durable = false;
      {
        frame f;
        REQUIRE_OK(frame_create(f, growable_buffer_storage(gb), a, p, o));
        for (int i = 0; i < n; ++i) {
          special_make(i % 7 == 3 ? 2 : 1, 256, g.chunks[0]);
          REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunks[0], 32)));
        }
        REQUIRE_OK(frame_commit(f));
        const frame_info* info = frame_info_get(f);
        REQUIRE(info != nullptr);
        const uint64_t ipos = info->header_len + static_cast<uint64_t>(info->cbytes);
        const uint64_t ilen = info->frame_len - info->trailer_len - ipos;
        auto h = chunk_header_read(bytes_view(gb.bytes().data() + ipos, static_cast<size_t>(ilen)));
        REQUIRE_OK(h);
        CHECK_EQ(h->nbytes, n * 8);
        CHECK_EQ(static_cast<uint64_t>(h->cbytes), ilen);
        if (n == 1) {
          CHECK(h->memcpyed);
          CHECK_EQ(h->flags & kChunkFlagNoSplit, 0);
        } else {
          CHECK(!h->memcpyed);
          CHECK_LT(ilen, static_cast<uint64_t>(n));
        }
        REQUIRE_OK(frame_close(f));
      }
      frame f;
      REQUIRE_OK(frame_open(f, growable_buffer_storage(gb), a));
      CHECK_EQ(frame_info_get(f)->nchunks, n);
      for (int i = 0; i < n; i += 97) {
        auto ref = frame_chunk_locate(f, i);
        REQUIRE_OK(ref);
        CHECK(ref->special == (i % 7 == 3 ? chunk_special::nan : chunk_special::zeros));
      }
      CHECK_OK(frame_close(f));
      growable_buffer_release(gb);
    }
  }
  CHECK(!ca.leaked());
}

TESSERA_TEST(frame_encode, special_chunks_read_back_with_a_block_no_larger_than_the_chunk) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = 1024;  // larger than the chunks below
  frame f;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), test::system_allocator(), p));
  uint8_t c[32];
  special_make(1, 512, c);
  REQUIRE_OK(frame_chunk_append(f, bytes_view(c, sizeof c)));
  owned_array<uint8_t> buffer;
  auto raw = frame_chunk_read(f, 0, buffer);
  REQUIRE_OK(raw);
  auto h = chunk_header_read(*raw);
  REQUIRE_OK(h);
  CHECK(h->special == chunk_special::zeros);
  CHECK_EQ(h->nbytes, 512);
  const uint8_t* b = raw->data() + 8;  // the stored blocksize field: the frame's 1024, cut to the chunk
  CHECK_EQ(static_cast<uint32_t>(b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24), 512u);
}
