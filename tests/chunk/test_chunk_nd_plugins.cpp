// SPDX-License-Identifier: BSD-3-Clause
// c-blosc2's n-d plugins as the library's own, chosen by the chunk header's ids with nothing registered: the
// NDLZ codec (32, cells of 4x4 or 8x8 bytes), the NDCELL (32) and NDMEAN (33) filters. Round trips over random
// 2-D block shapes (edge cells in both directions), typesizes (NDLZ with split streams), 1- to 8-D blocks for
// the filters; NDCELL's order and NDMEAN's means against plain item-by-item models; the reference's refusals
// (NDLZ off 2-D, a cell larger than the block, NDMEAN on integers or on the geometries whose chunks the
// reference cannot read); decoding without the geometry; an application's codec or filter with the same id
// taking precedence; hand-made NDLZ streams with the tokens the encoder never writes but the reference's
// decoder reads (the 16-bit wrap of 4x4 offsets included); and damaged streams (every byte flipped, every
// length cut) that give an error or data, never a read outside the stream (run under AddressSanitizer).
// Byte identity with the reference's chunks is in test_nd_plugins_array.cpp (its captured output).
#include <cstring>
#include <initializer_list>

#include "tessera/chunk.hpp"

#include "../../src/codecs/ndlz.hpp"  // internal headers: the core keeps src/ private
#include "../../src/filters/filters.hpp"
#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "plugins_testing.hpp"

using namespace tessera;

namespace {

constexpr size_t kMax = 48 * 1024;
uint8_t g_src[kMax];
uint8_t g_chunk[kMax + 64];
uint8_t g_dec[kMax];

chunk_nd_geometry geometry_of(int ndim, const int32_t* bs) {
  chunk_nd_geometry g;
  g.ndim = static_cast<int8_t>(ndim);
  for (int d = 0; d < ndim; ++d) g.blockshape[d] = bs[d];
  return g;
}

// Bytes with every kind of NDLZ match: runs of `run` bytes (a cell's row when run is the cell edge and the
// block's rows are whole runs) drawn from a few patterns, some constant runs, a little noise. The runs start
// again at each multiple of `width` (a 2-D block's row; 0: n).
void rows_fill(uint8_t* d, size_t n, size_t run, uint64_t seed, size_t width = 0) {
  test::rng r(seed);
  uint8_t pats[4][16];
  for (auto& p : pats)
    for (uint8_t& b : p) b = static_cast<uint8_t>(r.next());
  if (width == 0) width = n;
  for (size_t i = 0; i < n;) {
    const size_t row_end = (i / width + 1) * width < n ? (i / width + 1) * width : n;
    const size_t k = r.next() % 20;
    const size_t m = row_end - i < run ? row_end - i : run;
    if (k < 16) std::memcpy(d + i, pats[k % 4], m);
    else if (k < 19) std::memset(d + i, k == 18 ? 0xff : 0, m);
    else
      for (size_t j = 0; j < m; ++j) d[i + j] = static_cast<uint8_t>(r.next());
    i += m;
  }
}

chunk_encode_params ndlz_params(uint8_t meta, uint8_t typesize, int32_t bs0, int32_t bs1) {
  chunk_encode_params p;
  p.typesize = typesize;
  p.clevel = 5;
  p.compressor = codec::ndlz;
  p.compcode_meta = meta;
  p.filters[5] = 0;
  p.blocksize = bs0 * bs1 * typesize;
  const int32_t bs[2] = {bs0, bs1};
  p.geometry = geometry_of(2, bs);
  return p;
}

struct coders {
  chunk_encoder e;
  chunk_decoder d;
  bool ok = false;
  explicit coders(const chunk_decoder_options& o = chunk_decoder_options{}) {
    ok = chunk_encoder_init(e, test::system_allocator()).ok() && chunk_decoder_init(d, test::system_allocator(), o).ok();
  }
};

TESSERA_TEST(NdPlugins, NdlzRoundTripsEdgeCellsAndTypesizes) {
  coders c;
  REQUIRE(c.ok);
  test::rng r(0x4e444c5a);
  int compressed = 0;
  for (int iter = 0; iter < 120; ++iter) {
    const uint8_t meta = r.chance(50) ? 4 : 8;
    const int32_t bs0 = static_cast<int32_t>(r.range(1, 70));
    const int32_t bs1 = static_cast<int32_t>(r.range(1, 70));
    const uint8_t typesize = r.chance(75) ? 1 : static_cast<uint8_t>(r.chance(50) ? 2 : 4);
    chunk_encode_params p = ndlz_params(meta, typesize, bs0, bs1);
    // NDLZ codes one 2-D block of bytes per stream: typesize > 1 needs one stream per byte of the item.
    if (typesize > 1) p.split = split_mode::always;
    const size_t block = static_cast<size_t>(p.blocksize);
    const size_t nblocks = static_cast<size_t>(r.range(1, 3));
    const size_t n = block * nblocks;
    if (n > kMax) continue;
    rows_fill(g_src, n, meta, r.next(), static_cast<size_t>(bs1));
    auto enc = chunk_encode(c.e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
    REQUIRE_OK(enc);
    auto h = chunk_header_read(bytes_view(g_chunk, *enc));
    REQUIRE_OK(h);
    CHECK(chunk_plugins_missing(*h, nullptr).kind == chunk_missing_kind::none);  // the library's own
    if (!h->memcpyed && h->special == chunk_special::none) {
      CHECK(h->format == codec_format::user);
      CHECK_EQ(h->udcodec, 32);
      CHECK_EQ(h->compcode_meta, meta);
    }
    if (*enc < n * 3 / 4) ++compressed;
    std::memset(g_dec, 0xee, n);
    auto dec = chunk_decode(c.d, bytes_view(g_chunk, *enc), bytes_mut(g_dec, n));  // no geometry: NDLZ needs none
    REQUIRE_OK(dec);
    CHECK_EQ(*dec, n);
    CHECK(std::memcmp(g_dec, g_src, n) == 0);
    // Block by block too.
    for (size_t b = 0; b < nblocks; ++b) {
      auto one = chunk_decode_block(c.d, bytes_view(g_chunk, *enc), b, bytes_mut(g_dec, block));
      REQUIRE_OK(one);
      CHECK(std::memcmp(g_dec, g_src + b * block, block) == 0);
    }
  }
  CHECK(compressed > 25);  // the codec ran (and won) on many of them (small blocks are edge cells: literals)
}

TESSERA_TEST(NdPlugins, NdlzRefusesWhatTheReferenceRefuses) {
  coders c;
  REQUIRE(c.ok);
  const size_t n = 24 * 24;
  rows_fill(g_src, n, 4, 3);
  // Not 2-D, no geometry, a cell edge other than 4 and 8.
  for (int ndim : {0, 1, 3}) {
    chunk_encode_params p = ndlz_params(4, 1, 24, 24);
    const int32_t bs[3] = {ndim == 1 ? 576 : 24, 24, 1};
    p.geometry = geometry_of(ndim, bs);
    CHECK_ERR(chunk_encode(c.e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk)), errc::unsupported);
  }
  chunk_encode_params p = ndlz_params(5, 1, 24, 24);
  CHECK_ERR(chunk_encode(c.e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk)), errc::unsupported);
  // Items of two bytes in one stream: not a block of bytes (the reference fails such chunks too)...
  p = ndlz_params(4, 2, 12, 24);
  CHECK_ERR(chunk_encode(c.e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk)), errc::unsupported);
  // ...unless every stream is a run, where the codec never runs (as in the reference).
  std::memset(g_src, 7, n);
  auto runs = chunk_encode(c.e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(runs);
  // A verbatim chunk (clevel 0) runs no codec either, whatever the geometry.
  p = ndlz_params(4, 1, 24, 24);
  p.clevel = 0;
  p.geometry = chunk_nd_geometry{};
  CHECK_OK(chunk_encode(c.e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk)));
  // A stored chunk whose meta says 5: unsupported.
  rows_fill(g_src, n, 4, 4);
  p = ndlz_params(4, 1, 24, 24);
  auto enc = chunk_encode(c.e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(enc);
  REQUIRE(*enc < n);  // compressed: the codec runs on decode
  g_chunk[23] = 5;
  CHECK_ERR(chunk_decode(c.d, bytes_view(g_chunk, *enc), bytes_mut(g_dec, n)), errc::unsupported);
}

// An NDLZ stream from its bytes, decoded into out of n bytes.
status stream_decode(std::initializer_list<int> bytes, uint8_t meta, uint8_t* out, size_t n) {
  uint8_t in[128];
  size_t k = 0;
  for (int b : bytes) in[k++] = static_cast<uint8_t>(b);
  return detail::ndlz_decompress(bytes_view(in, k), bytes_mut(out, n), meta);
}

TESSERA_TEST(NdPlugins, NdlzTokensTheReferenceDecoderReads) {
  uint8_t out[64];
  // One 4x4 cell of a repeated byte.
  const status same = stream_decode({2, 4, 0, 0, 0, 4, 0, 0, 0, 64, 7}, 4, out, 16);
  REQUIRE_OK(same);
  for (int i = 0; i < 16; ++i) CHECK_EQ(out[i], 7);
  // A 4x8 block: a literal cell, then a pair token naming row 0 twice (129: the encoder never writes it), its
  // offset back from the token (26) to the literal's bytes (10): row 0 takes the literal's rows 0 then 1 (the
  // second wins), rows 1..3 are literal.
  const status pair = stream_decode({2, 4, 0, 0, 0, 8, 0, 0, 0, 0, 10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33, 40,
                                     41, 42, 43, 129, 16, 0, 50, 51, 52, 53, 60, 61, 62, 63, 70, 71, 72, 73},
                                    4, out, 32);
  REQUIRE_OK(pair);
  const uint8_t want[32] = {10, 11, 12, 13, 20, 21, 22, 23, 20, 21, 22, 23, 50, 51, 52, 53,
                            30, 31, 32, 33, 60, 61, 62, 63, 40, 41, 42, 43, 70, 71, 72, 73};
  CHECK(std::memcmp(out, want, 32) == 0);
  // The 16-bit wrap: a triple token (224: rows 1..3) whose stored offset 65533 becomes 0 after the reference's
  // + 3, so the rows come from the 12 bytes right after the offset, the literal row 0 from the first 4 of them.
  const status wrap = stream_decode({2, 4, 0, 0, 0, 4, 0, 0, 0, 224, 0xfd, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
                                    4, out, 16);
  REQUIRE_OK(wrap);
  const uint8_t want_w[16] = {1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  CHECK(std::memcmp(out, want_w, 16) == 0);
  // Refusals: ndim 3, a negative dimension, a shape that is not the block's size, an unknown token, an offset
  // before the stream, a stream cut inside a literal, 8x8 rows past the cell, a meta of 6, a cut header.
  const status refused[] = {
      stream_decode({3, 4, 0, 0, 0, 4, 0, 0, 0, 64, 7}, 4, out, 16),
      stream_decode({2, 0xff, 0xff, 0xff, 0xff, 4, 0, 0, 0, 64, 7}, 4, out, 16),
      stream_decode({2, 4, 0, 0, 0, 4, 0, 0, 0, 64, 7}, 4, out, 15),
      stream_decode({2, 4, 0, 0, 0, 4, 0, 0, 0, 1, 7}, 4, out, 16),
      stream_decode({2, 4, 0, 0, 0, 4, 0, 0, 0, 192, 20, 0}, 4, out, 16),
      stream_decode({2, 4, 0, 0, 0, 4, 0, 0, 0, 0, 1, 2, 3}, 4, out, 16),
      stream_decode({2, 8, 0, 0, 0, 8, 0, 0, 0, 21 << 3 | 6, 0, 0}, 8, out, 64),
      stream_decode({2, 4, 0, 0, 0, 4, 0, 0, 0, 64, 7}, 6, out, 16),
      stream_decode({2, 4, 0, 0}, 4, out, 16)};
  const errc codes[] = {errc::unsupported, errc::corrupt, errc::corrupt, errc::corrupt, errc::corrupt,
                        errc::corrupt,     errc::corrupt, errc::unsupported, errc::corrupt};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; ++i) CHECK_ERR(refused[i], codes[i]);
  // An empty block (a dimension of 0) is an empty stream of cells.
  const status empty = stream_decode({2, 0, 0, 0, 0, 5, 0, 0, 0}, 8, out, 0);
  CHECK_OK(empty);
}

TESSERA_TEST(NdPlugins, NdlzEncoderLimits) {
  static uint8_t ws[detail::kNdlzWorkspace];
  const int32_t bs[2] = {8, 8};
  const chunk_nd_geometry g = geometry_of(2, bs);
  uint8_t in[64], out[64];
  for (int i = 0; i < 64; ++i) in[i] = static_cast<uint8_t>(i * 7);
  // A workspace short of the three tables; an output shorter than the stream's header (stored raw, where the
  // reference fails the chunk); room for the header but not the cells' tokens.
  CHECK_ERR(detail::ndlz_compress(bytes_view(in, 64), bytes_mut(out, 64), 4, g, bytes_mut(ws, 1000)),
            errc::invalid_argument);
  auto tiny = detail::ndlz_compress(bytes_view(in, 64), bytes_mut(out, 5), 4, g, bytes_mut(ws, sizeof ws));
  REQUIRE_OK(tiny);
  CHECK_EQ(*tiny, size_t{0});
  auto small = detail::ndlz_compress(bytes_view(in, 64), bytes_mut(out, 20), 4, g, bytes_mut(ws, sizeof ws));
  REQUIRE_OK(small);
  CHECK_EQ(*small, size_t{0});
  // A block of one repeated byte: four 2-byte cells.
  std::memset(in, 9, sizeof in);
  auto same = detail::ndlz_compress(bytes_view(in, 64), bytes_mut(out, 64), 4, g, bytes_mut(ws, sizeof ws));
  REQUIRE_OK(same);
  CHECK_EQ(*same, size_t{9 + 4 * 2});
}

uint32_t le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

// The stream of block 0 of an NDLZ chunk (its bytes and its decoded size).
bool first_stream(const uint8_t* chunk, size_t cbytes, bytes_view* stream, size_t* nbytes) {
  auto h = chunk_header_read(bytes_view(chunk, cbytes));
  if (!h.ok() || h->memcpyed || h->special != chunk_special::none || h->nblocks < 1) return false;
  const uint32_t start = le32(chunk + 32);
  const int32_t csize = static_cast<int32_t>(le32(chunk + start));
  if (csize <= 0 || csize == h->blocksize) return false;
  *stream = bytes_view(chunk + start + 4, static_cast<size_t>(csize));
  *nbytes = static_cast<size_t>(h->blocksize);
  return true;
}

TESSERA_TEST(NdPlugins, NdlzDamagedStreamsNeverReadOutside) {
  coders c;
  REQUIRE(c.ok);
  allocator heap = test::system_allocator();
  int errors = 0, decoded = 0;
  for (uint8_t meta : {uint8_t{4}, uint8_t{8}}) {
    const int32_t bs0 = 37, bs1 = 45;  // edge cells both ways
    const size_t n = static_cast<size_t>(bs0 * bs1);
    rows_fill(g_src, n, meta, meta, static_cast<size_t>(bs1));
    auto enc = chunk_encode(c.e, ndlz_params(meta, 1, bs0, bs1), bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
    REQUIRE_OK(enc);
    bytes_view stream;
    size_t nbytes = 0;
    REQUIRE(first_stream(g_chunk, *enc, &stream, &nbytes));
    REQUIRE_EQ(nbytes, n);
    // Exact-size buffers: a read past the stream or a write past the block is caught by AddressSanitizer.
    const size_t len = stream.size();
    auto* in = static_cast<uint8_t*>(allocator_allocate(heap, len, 1));
    auto* out = static_cast<uint8_t*>(allocator_allocate(heap, n, 1));
    REQUIRE(in != nullptr && out != nullptr);
    const auto judge = [&](status s) {
      if (s.ok()) ++decoded;
      else if (s.code == errc::corrupt || s.code == errc::unsupported) ++errors;
      else CHECK(false);
    };
    for (size_t i = 0; i < len; ++i) {
      for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
        std::memcpy(in, stream.data(), len);
        in[i] ^= flip;
        judge(detail::ndlz_decompress(bytes_view(in, len), bytes_mut(out, n), meta));
      }
    }
    for (size_t cut = 0; cut < len; ++cut) {
      auto* part = static_cast<uint8_t*>(allocator_allocate(heap, cut == 0 ? 1 : cut, 1));
      REQUIRE(part != nullptr);
      std::memcpy(part, stream.data(), cut);
      const status s = detail::ndlz_decompress(bytes_view(part, cut), bytes_mut(out, n), meta);
      CHECK(!s.ok());  // every cell needs its bytes: a cut stream never decodes
      allocator_deallocate(heap, part, cut == 0 ? 1 : cut, 1);
    }
    // The untouched stream still decodes to the block.
    CHECK_OK(detail::ndlz_decompress(stream, bytes_mut(out, n), meta));
    CHECK(std::memcmp(out, g_src, n) == 0);
    allocator_deallocate(heap, in, len, 1);
    allocator_deallocate(heap, out, n, 1);
    // Random garbage after a valid header, whole chunks with a flipped stream byte.
    test::rng r(meta);
    for (int k = 0; k < 300; ++k) {
      std::memcpy(g_dec, stream.data(), 9);
      const size_t m = 9 + static_cast<size_t>(r.range(0, 400));
      for (size_t j = 9; j < m; ++j) g_dec[j] = static_cast<uint8_t>(r.next() % 4 == 0 ? r.next() % 3 * 64 : r.next());
      judge(detail::ndlz_decompress(bytes_view(g_dec, m), bytes_mut(g_src + kMax / 2, n), meta));
    }
  }
  CHECK(errors > 100);
}

// ---- NDCELL and NDMEAN -----------------------------------------------------------------------------------

// The cells of a block in the filters' order (cells in C order, each cell's items in C order), item by item:
// calls item(cell, index of the item in the block) for each.
template <typename F>
void cells_model(int ndim, const int32_t* bs, const int32_t* cs, F&& item) {
  int64_t ncell[8], cell[8] = {}, in[8];
  int64_t ncells = 1;
  for (int d = 0; d < ndim; ++d) {
    ncell[d] = (bs[d] + cs[d] - 1) / cs[d];
    ncells *= ncell[d];
  }
  for (int64_t k = 0; k < ncells; ++k) {
    int64_t rest = k;
    for (int d = ndim - 1; d >= 0; --d) {
      cell[d] = rest % ncell[d];
      rest /= ncell[d];
    }
    int64_t ext[8], n = 1;
    for (int d = 0; d < ndim; ++d) {
      const int64_t left = bs[d] - cell[d] * cs[d];
      ext[d] = left < cs[d] ? left : cs[d];
      n *= ext[d];
    }
    for (int64_t j = 0; j < n; ++j) {
      int64_t r = j;
      for (int d = ndim - 1; d >= 0; --d) {
        in[d] = r % ext[d];
        r /= ext[d];
      }
      int64_t at = 0;
      for (int d = 0; d < ndim; ++d) at = at * bs[d] + cell[d] * cs[d] + in[d];
      item(k, at);
    }
  }
}

chunk_encode_params filter_params(uint8_t id, uint8_t meta, uint8_t typesize, int ndim, const int32_t* bs) {
  chunk_encode_params p;
  p.typesize = typesize;
  p.clevel = 5;
  p.compressor = codec::blosclz;
  p.filters[4] = id;
  p.filters_meta[4] = meta;
  p.filters[5] = static_cast<uint8_t>(filter_id::shuffle);
  size_t n = typesize;
  for (int d = 0; d < ndim; ++d) n *= static_cast<size_t>(bs[d]);
  p.blocksize = static_cast<int32_t>(n);
  p.geometry = geometry_of(ndim, bs);
  return p;
}

// A random block shape of ndim dimensions of at most `items` items.
size_t random_block(test::rng& r, int ndim, size_t items, int32_t* bs) {
  size_t n = 1;
  for (int d = 0; d < ndim; ++d) {
    const int64_t hi = ndim <= 2 ? 40 : (ndim <= 4 ? 9 : 3);
    bs[d] = static_cast<int32_t>(r.range(1, hi));
    n *= static_cast<size_t>(bs[d]);
  }
  return n <= items ? n : 0;
}

TESSERA_TEST(NdPlugins, NdcellRegroupsCellsAndRoundTrips) {
  chunk_decoder_options o;
  coders plain;  // a decoder without geometry
  REQUIRE(plain.ok);
  test::rng r(0x4e4443);
  int checked = 0;
  for (int iter = 0; iter < 150; ++iter) {
    const int ndim = static_cast<int>(r.range(1, 8));
    int32_t bs[8];
    const uint8_t typesize = static_cast<uint8_t>(1u << r.range(0, 4));  // 1..16
    const size_t items = random_block(r, ndim, kMax / 2 / typesize, bs);
    if (items == 0) continue;
    uint8_t meta = static_cast<uint8_t>(r.range(1, 6));
    // The reference refuses cells of more items than the block: so does this (before anything is written).
    uint64_t cell = 1;
    for (int d = 0; d < ndim; ++d) cell *= meta;
    const size_t block = items * typesize;
    rows_fill(g_src, 2 * block, typesize, r.next());
    const chunk_encode_params p = filter_params(32, meta, typesize, ndim, bs);
    o.geometry = p.geometry;
    coders c(o);
    REQUIRE(c.ok);
    auto enc = chunk_encode(c.e, p, bytes_view(g_src, 2 * block), bytes_mut(g_chunk, sizeof g_chunk));
    if (cell > items && 2 * block >= 32) {
      CHECK_ERR(enc, errc::unsupported);
      continue;
    }
    REQUIRE_OK(enc);
    auto dec = chunk_decode(c.d, bytes_view(g_chunk, *enc), bytes_mut(g_dec, 2 * block));
    REQUIRE_OK(dec);
    CHECK(std::memcmp(g_dec, g_src, 2 * block) == 0);
    if (cell > items) continue;  // a verbatim chunk (under 32 bytes) ran no filter
    // The forward pass against the model: the cells one after another.
    int32_t cs[8];
    for (int d = 0; d < ndim; ++d) cs[d] = bs[d] < meta ? bs[d] : meta;
    REQUIRE_OK(detail::ndcell_forward(p.geometry, meta, typesize, g_src, g_dec, block));
    size_t o_at = 0;
    bool same = true;
    cells_model(ndim, bs, cs, [&](int64_t, int64_t at) {
      same = same && std::memcmp(g_dec + o_at, g_src + static_cast<size_t>(at) * typesize, typesize) == 0;
      o_at += typesize;
    });
    CHECK(same);
    // A decoder without the geometry cannot undo it.
    auto h = chunk_header_read(bytes_view(g_chunk, *enc));
    REQUIRE_OK(h);
    if (!h->memcpyed && h->special == chunk_special::none)
      CHECK_ERR(chunk_decode(plain.d, bytes_view(g_chunk, *enc), bytes_mut(g_dec, 2 * block)), errc::unsupported);
    ++checked;
  }
  CHECK(checked > 60);
}

// Items as NDMEAN reads them: little-endian floats (the file's "<f4" and "<f8"), whatever the host's order.
void le_put(uint8_t* p, float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(u >> (8 * k));
}
void le_put(uint8_t* p, double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  for (int k = 0; k < 8; ++k) p[k] = static_cast<uint8_t>(u >> (8 * k));
}
void le_get(const uint8_t* p, float* v) {
  uint32_t u = 0;
  for (int k = 0; k < 4; ++k) u |= static_cast<uint32_t>(p[k]) << (8 * k);
  std::memcpy(v, &u, 4);
}
void le_get(const uint8_t* p, double* v) {
  uint64_t u = 0;
  for (int k = 0; k < 8; ++k) u |= static_cast<uint64_t>(p[k]) << (8 * k);
  std::memcpy(v, &u, 8);
}

// NDMEAN's means by the model: each cell's items summed in C order in T, divided by their count.
template <typename T>
bool means_match(int ndim, const int32_t* bs, const int32_t* cs, const uint8_t* src, const uint8_t* dec) {
  static T sums[kMax / 4];
  static int64_t counts[kMax / 4];
  std::memset(sums, 0, sizeof sums);
  std::memset(counts, 0, sizeof counts);
  cells_model(ndim, bs, cs, [&](int64_t cell, int64_t at) {
    T v;
    le_get(src + static_cast<size_t>(at) * sizeof(T), &v);
    sums[cell] += v;
    ++counts[cell];
  });
  bool ok = true;
  cells_model(ndim, bs, cs, [&](int64_t cell, int64_t at) {
    uint8_t mean[sizeof(T)];
    le_put(mean, sums[cell] / static_cast<T>(counts[cell]));
    ok = ok && std::memcmp(dec + static_cast<size_t>(at) * sizeof(T), mean, sizeof(T)) == 0;
  });
  return ok;
}

TESSERA_TEST(NdPlugins, NdmeanWritesTheReferenceMeans) {
  test::rng r(0x4e444d);
  int checked = 0, refused = 0;
  for (int iter = 0; iter < 150; ++iter) {
    const int ndim = static_cast<int>(r.range(1, 8));
    int32_t bs[8];
    const uint8_t typesize = r.chance(50) ? 4 : 8;
    const size_t items = random_block(r, ndim, kMax / typesize, bs);
    if (items == 0 || items * typesize < 32) continue;
    const uint8_t meta = static_cast<uint8_t>(r.range(1, 7));
    for (size_t i = 0; i < items; ++i) {
      const double v = static_cast<double>(static_cast<int64_t>(r.next() % 20000) - 10000) / 7.0;
      if (typesize == 4) le_put(g_src + i * 4, static_cast<float>(v));
      else le_put(g_src + i * 8, v);
    }
    const chunk_encode_params p = filter_params(33, meta, typesize, ndim, bs);
    chunk_decoder_options o;
    o.geometry = p.geometry;
    coders c(o);
    REQUIRE(c.ok);
    const size_t block = items * typesize;
    auto enc = chunk_encode(c.e, p, bytes_view(g_src, block), bytes_mut(g_chunk, sizeof g_chunk));
    // The reference places NDMEAN's cells with the first dimension's edge: a first dimension shorter than the
    // edge and another longer overlap its cells, and it cannot read back what it writes. Refused here.
    bool misplaced = false;
    for (int d = 1; d < ndim; ++d) misplaced = misplaced || (bs[0] < meta && bs[d] > meta);
    if (misplaced) {
      CHECK_ERR(enc, errc::unsupported);
      ++refused;
      continue;
    }
    REQUIRE_OK(enc);
    auto dec = chunk_decode(c.d, bytes_view(g_chunk, *enc), bytes_mut(g_dec, block));
    REQUIRE_OK(dec);
    int32_t cs[8];
    for (int d = 0; d < ndim; ++d) cs[d] = bs[d] < meta ? bs[d] : meta;
    CHECK(typesize == 4 ? means_match<float>(ndim, bs, cs, g_src, g_dec) : means_match<double>(ndim, bs, cs, g_src, g_dec));
    ++checked;
  }
  CHECK(checked > 40);
  CHECK(refused > 0);
  // Items that are not float32 or float64, an edge outside 1..127, no geometry.
  coders c;
  REQUIRE(c.ok);
  const int32_t bs[2] = {8, 8};
  chunk_encode_params p = filter_params(33, 4, 2, 2, bs);
  CHECK_ERR(chunk_encode(c.e, p, bytes_view(g_src, 128), bytes_mut(g_chunk, sizeof g_chunk)), errc::unsupported);
  p = filter_params(33, 200, 4, 2, bs);
  CHECK_ERR(chunk_encode(c.e, p, bytes_view(g_src, 256), bytes_mut(g_chunk, sizeof g_chunk)), errc::malformed);
  p = filter_params(33, 4, 4, 2, bs);
  p.geometry = chunk_nd_geometry{};
  CHECK_ERR(chunk_encode(c.e, p, bytes_view(g_src, 256), bytes_mut(g_chunk, sizeof g_chunk)), errc::unsupported);
  // A block that is not the geometry's (a chunk written with other blocks).
  p = filter_params(33, 4, 4, 2, bs);
  p.blocksize = 128;
  CHECK_ERR(chunk_encode(c.e, p, bytes_view(g_src, 256), bytes_mut(g_chunk, sizeof g_chunk)), errc::malformed);
}

TESSERA_TEST(NdPlugins, NdlzAtTheEndOfTheOutput) {
  // Noise does not shrink: each stream is stored raw until the last blocks meet the end of a buffer of
  // nbytes + 32, where NDLZ has less room than its tokens need (and under 9 bytes, where the reference fails the
  // chunk, it gives up as well): the chunk falls back to a verbatim one.
  coders c;
  REQUIRE(c.ok);
  test::rng r(99);
  for (int k = 0; k < 40; ++k) {
    const int32_t bs0 = static_cast<int32_t>(r.range(4, 20)), bs1 = static_cast<int32_t>(r.range(4, 20));
    const uint8_t meta = r.chance(50) ? 4 : 8;
    const chunk_encode_params p = ndlz_params(meta, 1, bs0, bs1);
    const size_t n = static_cast<size_t>(bs0 * bs1) * static_cast<size_t>(r.range(2, 9));
    for (size_t i = 0; i < n; ++i) g_src[i] = static_cast<uint8_t>(r.next());
    for (size_t extra : {size_t{32}, size_t{40}, size_t{0}}) {
      auto enc = chunk_encode(c.e, p, bytes_view(g_src, n), bytes_mut(g_chunk, n + extra));
      if (extra == 0) {
        CHECK_ERR(enc, errc::buffer_too_small);
        continue;
      }
      REQUIRE_OK(enc);
      REQUIRE_OK(chunk_decode(c.d, bytes_view(g_chunk, *enc), bytes_mut(g_dec, n)));
      CHECK(std::memcmp(g_dec, g_src, n) == 0);
    }
  }
}

TESSERA_TEST(NdPlugins, NdlzGrowsTheEncodersWorkspace) {
  // A firmware's small BloscLZ table (2^10 entries): NDLZ's three tables of 2^12 need more, grown at the first
  // NDLZ chunk (not with fixed scratch, and not when the allocator refuses); BloscLZ keeps its own table size.
  chunk_encoder_options small;
  small.blosclz_hash_log = 10;
  small.estimate_codec = codec::ndlz;
  chunk_encoder_options def = small;
  def.estimate_codec = codec::blosclz;
  CHECK(chunk_encoder_estimate(small) > chunk_encoder_estimate(def) + detail::kNdlzWorkspace);
  const size_t n = 32 * 32;
  rows_fill(g_src, n, 4, 12, 32);
  const chunk_encode_params p = ndlz_params(4, 1, 32, 32);
  test::counting_allocator counter;
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, counter.get(), small));
  counter.fail_at = counter.requests + 1;
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk)), errc::out_of_memory);
  counter.fail_at = SIZE_MAX;
  auto enc = chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(enc);
  CHECK(*enc < n);
  chunk_encode_params b = p;
  b.compressor = codec::blosclz;
  auto other = chunk_encode(e, b, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
  CHECK_OK(other);
  chunk_encoder_release(e);
  CHECK(!counter.leaked());
  chunk_encoder_options fixed = small;
  fixed.fixed_scratch = true;
  fixed.max_blocksize = n;
  chunk_encoder f;
  REQUIRE_OK(chunk_encoder_init(f, test::system_allocator(), fixed));
  CHECK_ERR(chunk_encode(f, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk)), errc::buffer_too_small);
  CHECK(std::strcmp(codec_name(codec::ndlz), "ndlz") == 0);
  CHECK(codec_available(codec::ndlz));
}

TESSERA_TEST(NdPlugins, FilterGeometriesRefused) {
  uint8_t a[256], b[256];
  std::memset(a, 1, sizeof a);
  chunk_nd_geometry g;
  // More dimensions than the reference's 8, a dimension of 0, a product that overflows, meta 0 for NDCELL.
  if (kMaxDims > 8) {  // (bare metal's geometries hold 8)
    g.ndim = 9;
    for (int d = 0; d < 9 && d < kMaxDims; ++d) g.blockshape[d] = 1;
    CHECK_ERR(detail::ndcell_forward(g, 1, 1, a, b, 1), errc::unsupported);
    CHECK_ERR(detail::ndmean_backward(g, 1, 4, a, b, 4), errc::unsupported);
  }
  g.ndim = 2;
  g.blockshape[0] = 0;
  g.blockshape[1] = 8;
  CHECK_ERR(detail::ndcell_backward(g, 1, 1, a, b, 8), errc::malformed);
  g.blockshape[0] = INT32_MAX;
  g.blockshape[1] = INT32_MAX;
  CHECK_ERR(detail::ndcell_backward(g, 1, 4, a, b, 256), errc::malformed);
  g.blockshape[0] = 8;
  g.blockshape[1] = 8;
  CHECK_ERR(detail::ndcell_forward(g, 0, 4, a, b, 256), errc::malformed);
  CHECK_OK(detail::ndcell_forward(g, 3, 4, a, b, 256));
  CHECK_OK(detail::ndmean_backward(g, 3, 4, a, b, 256));
  CHECK_ERR(detail::ndmean_backward(g, 0x80, 4, a, b, 256), errc::malformed);
}

TESSERA_TEST(NdPlugins, AnApplicationsPluginWithTheSameIdWins) {
  using namespace plugins_test;
  registry reg;
  chunk_user_codec codec = reg.codec;
  codec.id = 32;
  chunk_user_filter filter = reg.filter;
  filter.id = 33;
  const chunk_plugins mine{&codec, 1, &filter, 1};
  chunk_decoder_options o;
  o.plugins = &mine;
  coders c(o);
  coders plain;
  REQUIRE(c.ok && plain.ok);
  const size_t n = 4096;
  for (size_t i = 0; i < n; ++i) g_src[i] = static_cast<uint8_t>(i / 300);
  chunk_encode_params p;
  p.typesize = 4;
  p.compressor = codec::ndlz;  // 32: the application's RLE here, no geometry needed
  p.compcode_meta = 0x21;
  p.filters[4] = 33;  // the application's add filter, not NDMEAN (which would refuse the missing geometry)
  p.filters_meta[4] = 5;
  p.blocksize = 1024;
  p.plugins = &mine;
  auto enc = chunk_encode(c.e, p, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(enc);
  CHECK(reg.codec_calls.encodes > 0);
  CHECK(reg.filter_calls.encodes > 0);
  auto dec = chunk_decode(c.d, bytes_view(g_chunk, *enc), bytes_mut(g_dec, n));
  REQUIRE_OK(dec);
  CHECK(std::memcmp(g_dec, g_src, n) == 0);
  CHECK(reg.codec_calls.decodes > 0);
  CHECK(reg.filter_calls.decodes > 0);
  // Without them the library's own run, and fail on what is not theirs (no geometry for NDMEAN here).
  CHECK(!chunk_decode(plain.d, bytes_view(g_chunk, *enc), bytes_mut(g_dec, n)).ok());
  // An application's filter 32 that only writes: reading runs the library's NDCELL, which undoes a regrouping
  // written by the same library's forward pass through the application's.
  chunk_user_filter writes_only{32, nullptr, nullptr, nullptr};
  writes_only.forward = [](void*, bytes_view in, bytes_mut out, uint8_t meta, uint8_t typesize) noexcept {
    const int32_t bs[2] = {16, 16};
    chunk_nd_geometry g;
    g.ndim = 2;
    g.blockshape[0] = bs[0];
    g.blockshape[1] = bs[1];
    return detail::ndcell_forward(g, meta, typesize, in.data(), out.data(), in.size());
  };
  const chunk_plugins wo{nullptr, 0, &writes_only, 1};
  const int32_t bs[2] = {16, 16};
  chunk_encode_params q = filter_params(32, 4, 4, 2, bs);
  q.plugins = &wo;
  auto enc2 = chunk_encode(plain.e, q, bytes_view(g_src, n), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(enc2);
  chunk_decoder_options go;
  go.geometry = q.geometry;
  go.plugins = &wo;
  coders reader(go);
  REQUIRE(reader.ok);
  auto dec2 = chunk_decode(reader.d, bytes_view(g_chunk, *enc2), bytes_mut(g_dec, n));
  REQUIRE_OK(dec2);
  CHECK(std::memcmp(g_dec, g_src, n) == 0);
}

}  // namespace
