// SPDX-License-Identifier: BSD-3-Clause
// Dictionary chunks written by the encoder (chunk_encode_params::use_dict): the dictionary is the chunk's first
// min(32 KiB, nbytes / 20) filtered bytes, stored after bstarts as the reference stores it, flagged in the
// header; every block decodes against it, whole or alone, and the chunk is the same bytes whatever the
// executor. Codecs without dictionaries refuse use_dict; chunks too small for a useful one, and Zstd data that
// would read as a trained dictionary, go without. (The reference's own dictionary chunks, re-encoded byte for
// byte: test_chunk_encode_golden.cpp.)
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "tessera/chunk.hpp"
#include "tessera/shuffle.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

constexpr size_t kN = 65536;    // 8192 int64: 16 blocks of 4 KiB
constexpr size_t kBlock = 4096;
uint8_t g_src[kN];
uint8_t g_chunk[kN + kChunkMaxOverhead];
uint8_t g_again[kN + kChunkMaxOverhead];
uint8_t g_dec[kN];
uint8_t g_shuffled[kBlock];

// Slowly varying int64 with a repeating texture: what a dictionary helps small blocks with.
void data_make(uint8_t* d, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8) {
    const int64_t k = static_cast<int64_t>(i / 8);
    const int64_t v = 1000000 + k / 3 + (k % 17) * 5;
    std::memcpy(d + i, &v, 8);
  }
}

// Tasks in a scrambled order with worker ids 0..2 (one thread: the per-worker paths without races).
void scramble_run(void*, size_t ntasks, executor_task task, void* ctx) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(ctx, i, static_cast<uint32_t>((i * 5) % 3));
}

chunk_encode_params dict_params(codec c) {
  chunk_encode_params p;
  p.typesize = 8;
  p.clevel = 5;
  p.compressor = c;
  p.blocksize = static_cast<int32_t>(kBlock);
  p.use_dict = true;
  return p;
}

// Scratch for this file's 4 KiB blocks only (the default 256 KiB per worker is a lot on the Cortex-M4).
chunk_encoder_options small_encoder() {
  chunk_encoder_options o;
  o.max_blocksize = kBlock;
  return o;
}

int32_t load_i32(const uint8_t* p) {
  return static_cast<int32_t>(static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                              static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
}

}  // namespace

TESSERA_TEST(chunk_dict, dictionary_chunks_round_trip) {
  data_make(g_src, kN);
  shuffle(8, kBlock, g_src, g_shuffled);  // the first filtered block: the dictionary's source
  const codec codecs[] = {codec::lz4, codec::lz4hc, codec::zstd};
  size_t tried = 0;
  for (const codec c : codecs) {
    if (!codec_available(c)) continue;
    ++tried;
    chunk_encoder enc;
    REQUIRE_OK(chunk_encoder_init(enc, test::system_allocator(), small_encoder()));
    auto n = chunk_encode(enc, dict_params(c), bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk));
    REQUIRE_OK(n);
    auto h = chunk_header_read(bytes_view(g_chunk, *n));
    REQUIRE_OK(h);
    CHECK(h->dict);
    CHECK(!h->memcpyed);
    CHECK_EQ(g_chunk[31] & kChunkBlosc2Dict, kChunkBlosc2Dict);
    // 16 blocks split in 8 streams: 128 samples of 65536 / 128 / 16 = 32 bytes, capped at nbytes / 20.
    const size_t nblocks = kN / kBlock;
    const int32_t dsize = load_i32(g_chunk + kChunkHeaderExtendedSize + 4 * nblocks);
    CHECK_EQ(dsize, static_cast<int32_t>(kN / 20));
    const uint8_t* dict = g_chunk + kChunkHeaderExtendedSize + 4 * nblocks + 4;
    // The first filtered bytes; LZ4's, as the reference's, hold their own size where bstarts end (4 * nblocks).
    uint8_t want[kBlock];
    std::memcpy(want, g_shuffled, static_cast<size_t>(dsize));
    const uint8_t size_le[4] = {static_cast<uint8_t>(dsize), static_cast<uint8_t>(dsize >> 8), 0, 0};
    if (c != codec::zstd) std::memcpy(want + 4 * nblocks, size_le, 4);
    CHECK(std::memcmp(dict, want, static_cast<size_t>(dsize)) == 0);
    CHECK_EQ(load_i32(g_chunk + kChunkHeaderExtendedSize), static_cast<int32_t>(kChunkHeaderExtendedSize + 4 * nblocks + 4 + dsize));

    // The same bytes over three workers.
    executor scrambled;
    scrambled.run = scramble_run;
    scrambled.workers = 3;
    chunk_encoder_options eo = small_encoder();
    eo.exec = scrambled;
    chunk_encoder par;
    REQUIRE_OK(chunk_encoder_init(par, test::system_allocator(), eo));
    auto m = chunk_encode(par, dict_params(c), bytes_view(g_src, kN), bytes_mut(g_again, sizeof g_again));
    REQUIRE_OK(m);
    CHECK_EQ(*m, *n);
    CHECK(std::memcmp(g_again, g_chunk, *n) == 0);

    // Whole, serially and over three workers; one block alone (against the dictionary too).
    const executor execs[] = {executor_serial(), scrambled};
    for (const executor& ex : execs) {
      chunk_decoder_options o;
      o.exec = ex;
      chunk_decoder dec;
      REQUIRE_OK(chunk_decoder_init(dec, test::system_allocator(), o));
      std::memset(g_dec, 0xee, kN);
      auto d = chunk_decode(dec, bytes_view(g_chunk, *n), bytes_mut(g_dec, kN));
      REQUIRE_OK(d);
      CHECK_EQ(*d, kN);
      CHECK(std::memcmp(g_dec, g_src, kN) == 0);
      std::memset(g_dec, 0xee, kN);
      auto b = chunk_decode_block(dec, bytes_view(g_chunk, *n), 11, bytes_mut(g_dec, kBlock));
      REQUIRE_OK(b);
      CHECK_EQ(*b, kBlock);
      CHECK(std::memcmp(g_dec, g_src + 11 * kBlock, kBlock) == 0);
    }
  }
  std::printf("dictionary chunks: %zu codecs tried\n", tried);
}

TESSERA_TEST(chunk_dict, codecs_without_dictionaries_refuse) {
  data_make(g_src, kN);
  chunk_encoder enc;
  REQUIRE_OK(chunk_encoder_init(enc, test::system_allocator(), small_encoder()));
  for (const codec c : {codec::blosclz, codec::zlib}) {  // zlib: refused for the dictionary even where not built
    auto n = chunk_encode(enc, dict_params(c), bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk));
    CHECK_ERR(n, errc::invalid_argument);
  }
}

TESSERA_TEST(chunk_dict, small_chunks_and_magic_bytes_go_without) {
  chunk_encoder enc;
  chunk_decoder dec;
  REQUIRE_OK(chunk_encoder_init(enc, test::system_allocator(), small_encoder()));
  REQUIRE_OK(chunk_decoder_init(dec, test::system_allocator()));
  for (const codec c : {codec::lz4, codec::zstd}) {
    if (!codec_available(c)) continue;
    // 4000 bytes: a dictionary would be 200 bytes, under the 256 worth having.
    data_make(g_src, 4000);
    auto n = chunk_encode(enc, dict_params(c), bytes_view(g_src, 4000), bytes_mut(g_chunk, sizeof g_chunk));
    REQUIRE_OK(n);
    auto h = chunk_header_read(bytes_view(g_chunk, *n));
    REQUIRE_OK(h);
    CHECK(!h->dict);
    auto d = chunk_decode(dec, bytes_view(g_chunk, *n), bytes_mut(g_dec, 4000));
    REQUIRE_OK(d);
    CHECK(std::memcmp(g_dec, g_src, 4000) == 0);
  }
  if (codec_available(codec::zstd)) {
    // Unfiltered bytes that start with Zstd's dictionary magic: as a dictionary they would read as a trained
    // one, so Zstd takes none; LZ4 has no such format and keeps it.
    data_make(g_src, kN);
    const uint8_t magic[4] = {0x37, 0xa4, 0x30, 0xec};
    std::memcpy(g_src, magic, 4);
    chunk_encode_params p = dict_params(codec::zstd);
    p.filters[5] = 0;
    auto n = chunk_encode(enc, p, bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk));
    REQUIRE_OK(n);
    auto h = chunk_header_read(bytes_view(g_chunk, *n));
    REQUIRE_OK(h);
    CHECK(!h->dict);
    auto d = chunk_decode(dec, bytes_view(g_chunk, *n), bytes_mut(g_dec, kN));
    REQUIRE_OK(d);
    CHECK(std::memcmp(g_dec, g_src, kN) == 0);
    if (codec_available(codec::lz4)) {
      p.compressor = codec::lz4;
      auto m = chunk_encode(enc, p, bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk));
      REQUIRE_OK(m);
      auto hm = chunk_header_read(bytes_view(g_chunk, *m));
      REQUIRE_OK(hm);
      CHECK(hm->dict);
    }
  }
}

TESSERA_TEST(chunk_dict, a_dictionary_size_that_lies_is_refused) {
  const codec c = codec_available(codec::lz4) ? codec::lz4 : codec::blosclz;
  if (c == codec::blosclz) return;  // no dictionary codec in this build
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator(), small_encoder()));
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  data_make(g_src, kN);
  auto n = chunk_encode(e, dict_params(c), bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(n);
  auto h = chunk_header_read(bytes_view(g_chunk, *n));
  REQUIRE_OK(h);
  REQUIRE(h->dict);
  const size_t at = 32 + 4 * static_cast<size_t>(h->nblocks);  // the dictionary's size, after the block starts
  const int32_t dsize = load_i32(g_chunk + at);
  REQUIRE(dsize > 0);
  auto put = [](uint8_t* p, int32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i));
  };
  for (const int32_t lie : {int32_t{0}, int32_t{-5}, static_cast<int32_t>(kChunkMaxDictSize + 1)}) {
    std::memcpy(g_again, g_chunk, *n);
    put(g_again + at, lie);
    CHECK_ERR(chunk_decode(d, bytes_view(g_again, *n), bytes_mut(g_dec, kN)), errc::malformed);
  }
  // A dictionary past the chunk's end, and a chunk that ends inside the size itself (cbytes cut to match).
  std::memcpy(g_again, g_chunk, *n);
  put(g_again + at, static_cast<int32_t>(*n));
  CHECK_ERR(chunk_decode(d, bytes_view(g_again, *n), bytes_mut(g_dec, kN)), errc::truncated);
  std::memcpy(g_again, g_chunk, *n);
  put(g_again + 12, static_cast<int32_t>(at + 2));
  CHECK_ERR(chunk_decode(d, bytes_view(g_again, at + 2), bytes_mut(g_dec, kN)), errc::truncated);
  // The chunk as written decodes.
  auto m = chunk_decode(d, bytes_view(g_chunk, *n), bytes_mut(g_dec, kN));
  REQUIRE_OK(m);
  CHECK(std::memcmp(g_dec, g_src, kN) == 0);
}

TESSERA_TEST(chunk_dict, names_and_trailers_of_what_is_not_there) {
  CHECK(std::strcmp(codec_name(static_cast<codec>(99)), "unknown") == 0);
  CHECK(!codec_available(static_cast<codec>(99)));
  data_make(g_src, 256);
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator(), small_encoder()));
  chunk_encode_params p;
  p.typesize = 8;
  auto n = chunk_encode(e, p, bytes_view(g_src, 256), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(n);
  auto h = chunk_header_read(bytes_view(g_chunk, *n));
  REQUIRE_OK(h);
  CHECK_ERR(chunk_lazy_trailer_read(*h, bytes_view(g_chunk, *n)), errc::invalid_argument);  // not a lazy chunk
}
