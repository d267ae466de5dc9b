// SPDX-License-Identifier: BSD-3-Clause
// User codecs and filters passed on the context (chunk_plugins): chunks written with a user codec (id 200) and a
// user filter (id 170) carry them as the reference stores them (codec format 6, udcodec, compcode_meta, the
// filter slot) and read back exactly, whole or block by block, serially or over several workers; without the
// registration encoding and decoding fail with codec_unavailable / unsupported and chunk_plugins_missing names
// the id.
#include <cstring>

#include "tessera/chunk.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "plugins_testing.hpp"

using namespace tessera;
using namespace plugins_test;

namespace {

constexpr size_t kN = 24000;  // 6000 int32: several blocks of 4 KiB
uint8_t g_src[kN];
uint8_t g_chunk[kN + 64];
uint8_t g_dec[kN];

// Runs tasks in a scrambled order with worker ids 0..2 (one thread: the decoder's per-worker paths, no races).
void scramble_run(void*, size_t ntasks, executor_task task, void* ctx) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(ctx, i, static_cast<uint32_t>((i * 5) % 3));
}

// Runs of small integers (the RLE codec shrinks them) with a noisy stretch (stored raw).
void data_make(uint8_t* d, size_t n) {
  test::rng r(17);
  for (size_t i = 0; i + 4 <= n; i += 4) {
    const uint32_t v = (i / 4 / 300) % 7;
    std::memcpy(d + i, &v, 4);
  }
  for (size_t i = n / 2; i < n / 2 + 3000; ++i) d[i] = static_cast<uint8_t>(r.next());
}

chunk_encode_params params_with(const chunk_plugins* plugins) {
  chunk_encode_params p;
  p.typesize = 4;
  p.clevel = 5;
  p.compressor = chunk_user_codec_id(kRleId);
  p.compcode_meta = 0x5a;
  p.filters[4] = kAddId;
  p.filters_meta[4] = 3;
  p.filters[5] = static_cast<uint8_t>(filter_id::shuffle);
  p.blocksize = 4096;
  p.plugins = plugins;
  return p;
}

bool message_names(const error& e, const char* what) {
#if TESSERA_ERROR_MESSAGES
  return std::strstr(e.message, what) != nullptr;
#else
  (void)e;
  (void)what;
  return true;
#endif
}

}  // namespace

TESSERA_TEST(chunk_plugins, user_codec_and_filter_round_trip) {
  data_make(g_src, kN);
  registry reg;
  chunk_encoder enc;
  REQUIRE_OK(chunk_encoder_init(enc, test::system_allocator()));
  auto n = chunk_encode(enc, params_with(&reg.both), bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(n);
  CHECK(reg.codec_calls.encodes > 0);
  CHECK(reg.filter_calls.encodes > 0);
  CHECK_LT(*n, kN / 2);  // the codec did the compressing (runs), not a memcpy

  // Stored as the reference stores user codecs: format 6 in the flags, the id in udcodec, the meta after it.
  auto h = chunk_header_read(bytes_view(g_chunk, *n));
  REQUIRE_OK(h);
  CHECK(h->format == codec_format::user);
  CHECK_EQ(g_chunk[2] >> 5, 6);
  CHECK_EQ(h->udcodec, kRleId);
  CHECK_EQ(h->compcode_meta, 0x5a);
  CHECK_EQ(h->filters[4], kAddId);
  CHECK_EQ(h->filters_meta[4], 3);
  CHECK(!h->memcpyed);
  CHECK(chunk_plugins_missing(*h, &reg.both).kind == chunk_missing_kind::none);

  // Whole, serially and over three workers; one block alone; the codec and filter run on decode.
  executor scrambled;
  scrambled.run = scramble_run;
  scrambled.workers = 3;
  const executor execs[] = {executor_serial(), scrambled};
  for (const executor& ex : execs) {
    chunk_decoder_options o;
    o.exec = ex;
    o.plugins = &reg.both;
    chunk_decoder dec;
    REQUIRE_OK(chunk_decoder_init(dec, test::system_allocator(), o));
    std::memset(g_dec, 0xee, kN);
    const size_t before = reg.codec_calls.decodes;
    auto d = chunk_decode(dec, bytes_view(g_chunk, *n), bytes_mut(g_dec, kN));
    REQUIRE_OK(d);
    CHECK_EQ(*d, kN);
    CHECK(std::memcmp(g_dec, g_src, kN) == 0);
    CHECK(reg.codec_calls.decodes > before);
    auto b = chunk_decode_block(dec, bytes_view(g_chunk, *n), 2, bytes_mut(g_dec, kN));
    REQUIRE_OK(b);
    CHECK_EQ(*b, size_t{4096});
    CHECK(std::memcmp(g_dec, g_src + 2 * 4096, 4096) == 0);
  }
  CHECK(reg.filter_calls.decodes > 0);
}

TESSERA_TEST(chunk_plugins, without_registration_the_missing_id_is_named) {
  data_make(g_src, kN);
  registry reg;
  chunk_encoder enc;
  REQUIRE_OK(chunk_encoder_init(enc, test::system_allocator()));
  // Encoding: the codec, then the filter, must be registered.
  CHECK_ERR(chunk_encode(enc, params_with(nullptr), bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk)),
            errc::codec_unavailable);
  CHECK_ERR(chunk_encode(enc, params_with(&reg.codec_only), bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk)),
            errc::unsupported);
  chunk_encode_params low = params_with(&reg.both);
  low.compressor = static_cast<codec>(3);  // Snappy's old number: neither a library nor a user codec id
  CHECK_ERR(chunk_encode(enc, low, bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk)), errc::invalid_argument);
  chunk_user_codec decode_only = reg.codec;
  decode_only.encode = nullptr;
  const chunk_plugins ro{&decode_only, 1, &reg.filter, 1};
  CHECK_ERR(chunk_encode(enc, params_with(&ro), bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk)),
            errc::codec_unavailable);

  auto n = chunk_encode(enc, params_with(&reg.both), bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(n);
  const bytes_view chunk(g_chunk, *n);
  auto h = chunk_header_read(chunk);
  REQUIRE_OK(h);

  // No plugins: the filter is met first (its plan precedes the streams).
  {
    chunk_decoder dec;
    REQUIRE_OK(chunk_decoder_init(dec, test::system_allocator()));
    auto d = chunk_decode(dec, chunk, bytes_mut(g_dec, kN));
    REQUIRE(!d.ok());
    CHECK_EQ(d.err().code, errc::unsupported);
    CHECK(message_names(d.err(), "user filter"));
    CHECK_ERR(chunk_decode_block(dec, chunk, 1, bytes_mut(g_dec, kN)), errc::unsupported);
    const chunk_missing m = chunk_plugins_missing(*h, nullptr);
    CHECK(m.kind == chunk_missing_kind::filter);
    CHECK_EQ(m.id, kAddId);
  }
  // The codec only: the filter is missing.
  {
    chunk_decoder_options o;
    o.plugins = &reg.codec_only;
    chunk_decoder dec;
    REQUIRE_OK(chunk_decoder_init(dec, test::system_allocator(), o));
    CHECK_ERR(chunk_decode(dec, chunk, bytes_mut(g_dec, kN)), errc::unsupported);
    const chunk_missing m = chunk_plugins_missing(*h, &reg.codec_only);
    CHECK(m.kind == chunk_missing_kind::filter);
    CHECK_EQ(m.id, kAddId);
  }
  // The filter only: the codec is missing.
  {
    const chunk_plugins filter_only{nullptr, 0, &reg.filter, 1};
    chunk_decoder_options o;
    o.plugins = &filter_only;
    chunk_decoder dec;
    REQUIRE_OK(chunk_decoder_init(dec, test::system_allocator(), o));
    auto d = chunk_decode(dec, chunk, bytes_mut(g_dec, kN));
    REQUIRE(!d.ok());
    CHECK_EQ(d.err().code, errc::codec_unavailable);
    CHECK(message_names(d.err(), "user codec"));
    CHECK_ERR(chunk_decode_block(dec, chunk, 1, bytes_mut(g_dec, kN)), errc::codec_unavailable);
    const chunk_missing m = chunk_plugins_missing(*h, &filter_only);
    CHECK(m.kind == chunk_missing_kind::codec);
    CHECK_EQ(m.id, kRleId);
  }
}

TESSERA_TEST(chunk_plugins, plugin_errors_and_wrong_sizes_are_reported) {
  data_make(g_src, kN);
  registry reg;
  chunk_encoder enc;
  REQUIRE_OK(chunk_encoder_init(enc, test::system_allocator()));
  auto n = chunk_encode(enc, params_with(&reg.both), bytes_view(g_src, kN), bytes_mut(g_chunk, sizeof g_chunk));
  REQUIRE_OK(n);
  // A decoder that yields fewer bytes than the stream holds: corrupt, never garbage.
  chunk_user_codec shorter = reg.codec;
  shorter.decode = [](void* c, bytes_view in, bytes_mut out, uint8_t meta, size_t* written) noexcept {
    status s = rle_decode(c, in, out, meta, written);
    if (s.ok() && *written > 0) --*written;
    return s;
  };
  const chunk_plugins bad{&shorter, 1, &reg.filter, 1};
  chunk_decoder_options o;
  o.plugins = &bad;
  chunk_decoder dec;
  REQUIRE_OK(chunk_decoder_init(dec, test::system_allocator(), o));
  CHECK_ERR(chunk_decode(dec, bytes_view(g_chunk, *n), bytes_mut(g_dec, kN)), errc::corrupt);
  // A filter's error is passed on as it is.
  chunk_user_filter failing = reg.filter;
  failing.backward = [](void*, bytes_view, bytes_mut, uint8_t, uint8_t) noexcept {
    return make_error(errc::io, "filter failed");
  };
  const chunk_plugins bad_filter{&reg.codec, 1, &failing, 1};
  o.plugins = &bad_filter;
  chunk_decoder dec2;
  REQUIRE_OK(chunk_decoder_init(dec2, test::system_allocator(), o));
  CHECK_ERR(chunk_decode(dec2, bytes_view(g_chunk, *n), bytes_mut(g_dec, kN)), errc::io);
}
