// SPDX-License-Identifier: BSD-3-Clause
// Chunk headers: fields, derived layout, the Blosc1 flags-to-filters mapping and every inconsistency rejected.
#include <cstring>

#include "tessera/chunk.hpp"

#include "../support/check.hpp"
#include "chunk_builder.hpp"

using namespace tessera;
using namespace chunk_test;

TESSERA_TEST(chunk_header, blosc1_header_maps_flags_to_filters) {
  uint8_t b[16];
  header_spec s;
  s.extended = false;
  s.version = 2;
  s.flags = 0x01 | 0x08 | (3 << 5);  // shuffle + delta, zlib, split
  s.typesize = 4;
  s.nbytes = 1000;
  s.blocksize = 256;
  s.cbytes = 600;
  header_write(b, s);
  auto h = chunk_header_read(bytes_view(b, 16));
  REQUIRE_OK(h);
  CHECK(!h->extended);
  CHECK_EQ(h->header_size, 16u);
  CHECK_EQ(h->filters[5], 1);
  CHECK_EQ(h->filters[4], 3);
  CHECK_EQ(h->filters[0], 0);
  CHECK(h->format == codec_format::zlib);
  CHECK(h->split);
  CHECK_EQ(h->nblocks, 4u);
  CHECK_EQ(h->leftover, 1000 - 3 * 256);
  CHECK_EQ(h->cbytes, 600);
  // Bit shuffle takes the last slot.
  b[2] = 0x04 | 0x10;
  auto h2 = chunk_header_read(bytes_view(b, 16));
  REQUIRE_OK(h2);
  CHECK_EQ(h2->filters[5], 2);
  CHECK(!h2->split);
  CHECK(!h2->extended);
}

TESSERA_TEST(chunk_header, extended_header_fields) {
  uint8_t b[40] = {};
  header_spec s;
  s.version = 3;  // the alpha format: the sixth slot is ignored
  s.flags = 0x05 | 0x10 | (4 << 5);
  s.typesize = 8;
  s.nbytes = 100;
  s.blocksize = 4096;  // clamped to nbytes
  s.cbytes = 200;
  const uint8_t filters[6] = {3, 0, 35, 0, 1, 2};
  std::memcpy(s.filters, filters, 6);
  s.metas[2] = 8;
  s.metas[5] = 9;
  s.blosc2_flags = 0x01;
  header_write(b, s);
  auto h = chunk_header_read(bytes_view(b, 32));
  REQUIRE_OK(h);
  CHECK(h->extended);
  CHECK_EQ(h->header_size, 32u);
  CHECK_EQ(h->blocksize, 100);
  CHECK_EQ(h->nblocks, 1u);
  CHECK_EQ(h->leftover, 0);
  CHECK_EQ(h->filters[0], 3);
  CHECK_EQ(h->filters[2], 35);
  CHECK_EQ(h->filters_meta[2], 8);
  CHECK_EQ(h->filters[5], 0);
  CHECK_EQ(h->filters_meta[5], 0);
  CHECK(h->dict);
  CHECK(h->format == codec_format::zstd);
  CHECK(!h->split);
  b[0] = 5;
  auto h2 = chunk_header_read(bytes_view(b, 32));
  REQUIRE_OK(h2);
  CHECK_EQ(h2->filters[5], 2);
  CHECK_EQ(h2->filters_meta[5], 9);
}

TESSERA_TEST(chunk_header, inconsistencies_are_errors) {
  uint8_t b[64] = {};
  header_spec s;
  s.typesize = 4;
  s.nbytes = 1000;
  s.blocksize = 100;
  s.cbytes = 100;
  header_write(b, s);
  REQUIRE_OK(chunk_header_read(bytes_view(b, 32)));
  CHECK_ERR(chunk_header_read(bytes_view(b, 15)), errc::truncated);
  CHECK_ERR(chunk_header_read(bytes_view(b, 31)), errc::truncated);  // extended header cut
  auto with = [&](auto&& change) {
    header_spec x = s;
    change(x);
    header_write(b, x);
    return chunk_header_read(bytes_view(b, 64));
  };
  CHECK_ERR(with([](header_spec& x) { x.cbytes = 15; }), errc::malformed);
  CHECK_ERR(with([](header_spec& x) { x.cbytes = 20; }), errc::malformed);  // extended needs 32
  CHECK_ERR(with([](header_spec& x) { x.blocksize = 0; }), errc::malformed);
  CHECK_ERR(with([](header_spec& x) { x.blocksize = -5; }), errc::malformed);
  CHECK_ERR(with([](header_spec& x) { x.blocksize = kChunkMaxBlocksize + 1; }), errc::malformed);
  CHECK_ERR(with([](header_spec& x) { x.typesize = 0; }), errc::malformed);
  CHECK_ERR(with([](header_spec& x) { x.nbytes = -1; }), errc::malformed);
  CHECK_ERR(with([](header_spec& x) { x.blosc2_flags = 5 << 4; }), errc::malformed);  // unknown special
  CHECK_ERR(with([](header_spec& x) { x.blosc2_flags = 3 << 4; x.cbytes = 32; }), errc::malformed);  // no value
  CHECK_ERR(with([](header_spec& x) { x.blosc2_flags = 3 << 4; x.cbytes = 35; }), errc::malformed);  // 1000 % 3
  CHECK_OK(with([](header_spec& x) { x.blosc2_flags = 3 << 4; x.cbytes = 36; }));
  CHECK_ERR(with([](header_spec& x) { x.blosc2_flags = 2 << 4; x.nbytes = 1001; }), errc::malformed);
  CHECK_OK(with([](header_spec& x) { x.blosc2_flags = 1 << 4; x.nbytes = 1001; }));  // zeros need no alignment
  CHECK_ERR(with([](header_spec& x) { x.blosc2_flags2 = 1; x.blosc2_flags = 1 << 4; }), errc::malformed);
  CHECK_ERR(with([](header_spec& x) { x.blosc2_flags2 = 1; x.flags |= 0x02; }), errc::malformed);
  CHECK_ERR(with([](header_spec& x) { x.flags |= 0x02; }), errc::malformed);  // memcpyed, cbytes != nbytes + 32
  CHECK_OK(with([](header_spec& x) { x.flags |= 0x02; x.cbytes = 1032; }));
  CHECK_ERR(with([](header_spec& x) { x.version = 7; x.blosc2_flags2 = 0x02; }), errc::unsupported);
  // Lazy chunks: header and trailer readable, decoding refused.
  auto lazy = with([](header_spec& x) { x.blosc2_flags = kChunkBlosc2Lazy; x.nbytes = 300; });
  REQUIRE_OK(lazy);
  CHECK(lazy->lazy);
  CHECK_EQ(lazy->nblocks, 3u);
}

TESSERA_TEST(chunk_header, lazy_trailer) {
  uint8_t b[32 + 12 + 12 + 12] = {};
  header_spec s;
  s.typesize = 1;
  s.nbytes = 30;
  s.blocksize = 10;
  s.cbytes = 500;
  s.blosc2_flags = kChunkBlosc2Lazy;
  header_write(b, s);
  put_i32(b + 44, 7);                 // nchunk
  put_u32(b + 48, 0x89abcdefu);       // offset, low half
  put_u32(b + 52, 0x01);              // offset, high half
  put_i32(b + 56, 11);
  put_i32(b + 60, 12);
  put_i32(b + 64, 13);
  auto h = chunk_header_read(bytes_view(b, sizeof b));
  REQUIRE_OK(h);
  auto tr = chunk_lazy_trailer_read(*h, bytes_view(b, sizeof b));
  REQUIRE_OK(tr);
  CHECK_EQ(tr->nchunk, 7);
  CHECK_EQ(tr->offset, 0x189abcdefll);
  CHECK_EQ(tr->block_csizes.size(), 12u);
  CHECK_ERR(chunk_lazy_trailer_read(*h, bytes_view(b, sizeof b - 1)), errc::truncated);
}
