// SPDX-License-Identifier: BSD-3-Clause
// The chunk encoder: round trips through the decoder over codecs, filter pipelines, typesizes, split modes,
// levels and sizes; the chunk structure the reference writes (memcpyed, runs, the zeros chunk, the memcpy
// fallback, special-value chunks); the reference's automatic block sizes; executor independence; allocation
// failures. Byte-for-byte identity with the reference is checked by an oracle against libblosc2 (outside the
// repository) and, on Linux, by test_chunk_encode_golden.cpp.
#include <cstring>
#include <initializer_list>

#include "../../src/filters/filters.hpp"
#include "tessera/chunk.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "chunk_builder.hpp"

using namespace tessera;

namespace {

// Little-endian int32 at p (test-side, independent of the library's helpers).
int32_t detail_load(const uint8_t* p) {
  return static_cast<int32_t>(static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                              static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
}

constexpr size_t kMaxN = 70000;
uint8_t g_src[kMaxN];
uint8_t g_out[kMaxN + 64];
uint8_t g_out2[kMaxN + 64];
uint8_t g_dec[kMaxN + 64];
uint8_t g_expect[kMaxN];

// Floats stored little-endian, as the reference's data (measured on x86-64) was: the same bytes on every host.
void store_f32_le(uint8_t* p, float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  for (int b = 0; b < 4; ++b) p[b] = static_cast<uint8_t>(u >> (8 * b));
}
void store_f64_le(uint8_t* p, double f) {
  uint64_t u;
  std::memcpy(&u, &f, 8);
  for (int b = 0; b < 8; ++b) p[b] = static_cast<uint8_t>(u >> (8 * b));
}

const codec kCodecs[] = {codec::blosclz, codec::lz4, codec::lz4hc, codec::zlib, codec::zstd};
const split_mode kSplits[] = {split_mode::always, split_mode::never, split_mode::automatic, split_mode::forward_compat};

// Data kinds: float32 smooth (a rotation recurrence standing in for sin), int32 ramp, float64 random walk,
// random bytes, zeros, a repeated 12-byte value, runs of zeros and noise, small integers.
void data_fill(test::rng& r, int kind, uint8_t* d, size_t n) {
  switch (kind) {
    case 0: {
      double c = 1.0, s = 0.0;
      const double ca = 0.99994686, sa = 0.01030910;  // cos/sin of 1/97
      for (size_t i = 0; i + 4 <= n; i += 4) {
        store_f32_le(d + i, static_cast<float>(s * 1000.0 + static_cast<double>(i / 4) * 0.01));
        const double c2 = c * ca - s * sa;
        s = s * ca + c * sa;
        c = c2;
      }
      for (size_t i = n / 4 * 4; i < n; ++i) d[i] = static_cast<uint8_t>(i);
      break;
    }
    case 1:
      for (size_t i = 0; i < n; ++i) {
        const uint32_t v = static_cast<uint32_t>(i / 4) * 3u;
        d[i] = static_cast<uint8_t>(v >> (8 * (i % 4)));
      }
      break;
    case 2: {
      double x = 0;
      for (size_t i = 0; i + 8 <= n; i += 8) {
        x += static_cast<double>(r.range(-1000, 1000)) / 1000.0;
        store_f64_le(d + i, x);
      }
      for (size_t i = n / 8 * 8; i < n; ++i) d[i] = static_cast<uint8_t>(r.next());
      break;
    }
    case 3: for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(r.next()); break;
    case 4: std::memset(d, 0, n); break;
    case 5: {
      uint8_t v[12];
      for (auto& b : v) b = static_cast<uint8_t>(r.next() | 1);
      for (size_t i = 0; i < n; ++i) d[i] = v[i % 12];
      break;
    }
    case 6: for (size_t i = 0; i < n; ++i) d[i] = ((i / 3000) % 2) ? static_cast<uint8_t>(r.next()) : 0; break;
    default: for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(r.next() % 4); break;
  }
}

// Pipelines: 0 none, 1 shuffle, 2 bitshuffle, 3 delta+shuffle, 4 shuffle+bytedelta, 5 trunc_prec+shuffle,
// 6 int_trunc+bitshuffle, 7 delta alone, 8 bitshuffle+delta. A lossy filter the typesize does not allow is
// left out.
void pipeline_set(chunk_encode_params& p, int pipe) {
  std::memset(p.filters, 0, sizeof p.filters);
  std::memset(p.filters_meta, 0, sizeof p.filters_meta);
  const uint8_t ts = p.typesize;
  switch (pipe) {
    case 1: p.filters[5] = 1; break;
    case 2: p.filters[5] = 2; break;
    case 3: p.filters[4] = 3; p.filters[5] = 1; break;
    case 4: p.filters[0] = 1; p.filters[1] = 35; p.filters_meta[1] = ts; break;
    case 5:
      if (ts == 4 || ts == 8) {
        p.filters[0] = 4;
        p.filters_meta[0] = ts == 4 ? 10 : 20;
      }
      p.filters[5] = 1;
      break;
    case 6:
      if (ts == 1 || ts == 2 || ts == 4 || ts == 8) {
        p.filters[0] = 36;
        p.filters_meta[0] = static_cast<uint8_t>(-3);
      }
      p.filters[5] = 2;
      break;
    case 7: p.filters[0] = 3; break;
    case 8: p.filters[2] = 2; p.filters[3] = 3; break;
    default: break;
  }
}

// What decoding must give: the data, with the lossy filters' truncation applied (from their definitions).
void expected_make(const chunk_encode_params& p, const uint8_t* src, size_t n, uint8_t* exp) {
  std::memcpy(exp, src, n);
  const size_t ts = p.typesize;
  for (int k = 0; k < 6; ++k) {
    if (p.filters[k] != 4 && p.filters[k] != 36) continue;
    const int bits = static_cast<int8_t>(p.filters_meta[k]);
    int zeroed;
    if (p.filters[k] == 4) zeroed = bits >= 0 ? (ts == 4 ? 23 : 52) - bits : -bits;
    else zeroed = bits >= 0 ? static_cast<int>(ts * 8) - bits : -bits;
    for (size_t e = 0; e + ts <= n; e += ts)
      for (size_t b = 0; b < ts; ++b) {
        const int lo = static_cast<int>(b * 8);
        if (zeroed >= lo + 8) exp[e + b] = 0;
        else if (zeroed > lo) exp[e + b] = static_cast<uint8_t>(exp[e + b] & (0xFFu << (zeroed - lo)));
      }
  }
}

// Encodes, checks the header's fixed fields, decodes and compares.
void roundtrip(test::context& t, chunk_encoder& e, chunk_decoder& d, const chunk_encode_params& p,
                 const uint8_t* src, size_t n) {
  auto r = chunk_encode(e, p, bytes_view(src, n), bytes_mut(g_out, n + kChunkMaxOverhead));
  if (!codec_available(p.compressor)) {
    CHECK_ERR(r, errc::codec_unavailable);
    return;
  }
  REQUIRE_OK(r);
  const size_t cbytes = *r;
  CHECK_LE(cbytes, chunk_encode_bound(n));
  CHECK_EQ(g_out[0], 5);                 // the stable format version
  CHECK_EQ(g_out[2] & 0x05, 0x05);       // extended header marker
  CHECK_EQ(g_out[3], p.typesize);
  CHECK_EQ(static_cast<size_t>(detail_load(g_out + 4)), n);
  CHECK_EQ(static_cast<size_t>(detail_load(g_out + 12)), cbytes);
  auto h = chunk_header_read(bytes_view(g_out, cbytes));
  REQUIRE_OK(h);
  if (h->special == chunk_special::none) {
    CHECK_EQ(g_out[22], static_cast<uint8_t>(p.compressor));
    CHECK(std::memcmp(g_out + 16, p.filters, 6) == 0);
    CHECK(std::memcmp(g_out + 24, p.filters_meta, 6) == 0);
  }
  std::memset(g_dec, 0xEE, n + 1);
  auto dr = chunk_decode(d, bytes_view(g_out, cbytes), bytes_mut(g_dec, n + 1));
  REQUIRE_OK(dr);
  CHECK_EQ(*dr, n);
  // Lossy filters only act on blocks that are filtered: a memcpyed chunk keeps the data as it was.
  if (h->memcpyed) std::memcpy(g_expect, src, n);
  else expected_make(p, src, n, g_expect);
  CHECK(std::memcmp(g_dec, g_expect, n) == 0);
  CHECK_EQ(g_dec[n], 0xEE);
}

}  // namespace

TESSERA_TEST(chunk_encode, every_codec_pipeline_typesize_split_level) {
  test::counting_allocator counter;
  {
    chunk_encoder e;
    chunk_decoder d;
    REQUIRE_OK(chunk_encoder_init(e, counter.get()));
    REQUIRE_OK(chunk_decoder_init(d, counter.get()));
    test::rng r(101);
    const uint8_t typesizes[] = {1, 2, 3, 4, 7, 8, 16, 255};
    const int clevels[] = {0, 1, 5, 9};
    const size_t n = 2999;
    size_t cases = 0;
    for (codec c : kCodecs)
      for (int pipe = 0; pipe < 9; ++pipe)
        for (uint8_t ts : typesizes)
          for (split_mode sm : kSplits) {
            if (sm == split_mode::automatic && pipe % 2 == 1) continue;  // automatic behaves as forward_compat
            for (int cl : clevels) {
              chunk_encode_params p;
              p.typesize = ts;
              p.clevel = cl;
              p.compressor = c;
              p.split = sm;
              pipeline_set(p, pipe);
              data_fill(r, (pipe + cl + ts) % 8, g_src, n);
              roundtrip(t, e, d, p, g_src, n);
              ++cases;
            }
          }
    CHECK_LE(size_t{2500}, cases);
  }
  CHECK(!counter.leaked());
}

TESSERA_TEST(chunk_encode, random_sizes_blocksizes_and_data) {
  chunk_encoder e;
  chunk_decoder d;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  test::rng r(202);
  const uint8_t typesizes[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 24, 32, 255};
  const size_t sizes[] = {0, 1, 2, 31, 32, 33, 100, 255, 256, 1000, 4099, 8192, 30001, 65537};
  for (int i = 0; i < 1500; ++i) {
    chunk_encode_params p;
    p.typesize = typesizes[r.range(0, 11)];
    p.clevel = static_cast<int>(r.range(0, 9));
    p.compressor = kCodecs[r.range(0, 4)];
    p.split = kSplits[r.range(0, 3)];
    pipeline_set(p, static_cast<int>(r.range(0, 8)));
    size_t n = sizes[r.range(0, 13)];
    if (n > 8 && r.chance(30)) n -= static_cast<size_t>(r.range(1, 7));
    switch (r.range(0, 3)) {
      case 0: p.blocksize = static_cast<int32_t>(r.range(1, 5000)); break;  // any size, also not whole elements
      case 1: p.blocksize = static_cast<int32_t>(p.typesize * r.range(1, 600)); break;
      default: break;  // automatic
    }
    data_fill(r, static_cast<int>(r.range(0, 7)), g_src, n);
    roundtrip(t, e, d, p, g_src, n);
  }
}

TESSERA_TEST(chunk_encode, memcpyed_chunks) {
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  test::rng r(7);
  const size_t sizes[] = {0, 1, 17, 31, 32, 1000, 20000};
  for (size_t n : sizes) {
    data_fill(r, 0, g_src, n);
    chunk_encode_params p;
    p.typesize = 4;
    p.clevel = n < 32 ? 5 : 0;  // clevel 0, or a chunk under 32 bytes, is stored verbatim
    auto c = chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_out, n + 32));
    REQUIRE_OK(c);
    CHECK_EQ(*c, n + 32);
    CHECK_EQ(g_out[2], 0x07);  // extended marker + memcpyed, no codec nor split bits
    CHECK_EQ(detail_load(g_out + 12), static_cast<int32_t>(n + 32));
    CHECK(n == 0 || std::memcmp(g_out + 32, g_src, n) == 0);
    CHECK_EQ(g_out[21], 1);  // the pipeline is recorded anyway
  }
  // Buffer too small for a verbatim copy.
  chunk_encode_params p;
  p.clevel = 0;
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, 100), bytes_mut(g_out, 131)), errc::buffer_too_small);
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, 0), bytes_mut(g_out, 31)), errc::buffer_too_small);
}

TESSERA_TEST(chunk_encode, zeros_become_a_special_chunk) {
  chunk_encoder e;
  chunk_decoder d;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  for (codec c : kCodecs) {
    if (!codec_available(c)) continue;
    for (int pipe : {0, 1, 2}) {
      chunk_encode_params p;
      p.typesize = 4;
      p.compressor = c;
      pipeline_set(p, pipe);
      std::memset(g_src, 0, 65536);
      auto r = chunk_encode(e, p, bytes_view(g_src, 65536), bytes_mut(g_out, 65536 + 32));
      REQUIRE_OK(r);
      CHECK_EQ(*r, size_t{32});
      CHECK_EQ(g_out[31], 0x10);  // special zeros in blosc2_flags bits 4..6
      CHECK_EQ(detail_load(g_out + 12), 32);
      std::memset(g_dec, 1, 65536);
      REQUIRE_OK(chunk_decode(d, bytes_view(g_out, 32), bytes_mut(g_dec, 65536)));
      CHECK(std::memcmp(g_dec, g_src, 65536) == 0);
    }
  }
}

TESSERA_TEST(chunk_encode, runs_of_a_byte_are_coded_without_data) {
  chunk_encoder e;
  chunk_decoder d;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  const size_t n = 40000;
  std::memset(g_src, 0x5A, n);
  chunk_encode_params p;
  p.typesize = 1;
  p.blocksize = 4096;
  pipeline_set(p, 0);
  auto r = chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_out, n + 32));
  REQUIRE_OK(r);
  const size_t nblocks = (n + 4095) / 4096;
  CHECK_EQ(*r, 32 + 4 * nblocks + 5 * nblocks);  // bstarts, then per block a csize of -0x5A and a token
  const int32_t first = detail_load(g_out + 32);
  CHECK_EQ(first, static_cast<int32_t>(32 + 4 * nblocks));
  CHECK_EQ(detail_load(g_out + first), -0x5A);
  CHECK_EQ(g_out[first + 4], 0x01);
  REQUIRE_OK(chunk_decode(d, bytes_view(g_out, *r), bytes_mut(g_dec, n)));
  CHECK(std::memcmp(g_dec, g_src, n) == 0);
}

TESSERA_TEST(chunk_encode, incompressible_data_falls_back_to_memcpy) {
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  test::rng r(9);
  const size_t n = 50000;
  data_fill(r, 3, g_src, n);
  for (codec c : kCodecs) {
    if (!codec_available(c)) continue;
    chunk_encode_params p;
    p.typesize = 4;
    p.compressor = c;
    auto res = chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_out, n + 32));
    REQUIRE_OK(res);
    CHECK_EQ(*res, n + 32);
    CHECK_EQ(g_out[2] & 0x07, 0x07);                              // memcpyed, after the codec bits were written
    CHECK_EQ(g_out[2] >> 5, c == codec::lz4hc ? 1 : (c == codec::zlib ? 3 : (c == codec::zstd ? 4 : static_cast<int>(c))));
    CHECK(std::memcmp(g_out + 32, g_src, n) == 0);
    // One byte less than nbytes + 32 cannot hold it.
    CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_out, n + 31)), errc::buffer_too_small);
  }
}

TESSERA_TEST(chunk_encode, small_output_buffers) {
  chunk_encoder e;
  chunk_decoder d;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  test::rng r(11);
  const size_t n = 60000;
  data_fill(r, 6, g_src, n);  // half zeros, half noise
  chunk_encode_params p;
  p.typesize = 2;
  auto full = chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_out2, n + 32));
  REQUIRE_OK(full);
  CHECK_LT(*full, n);
  // Near the chunk's size the codecs get less room than a stream (the reference's maxout): they may give up,
  // then the chunk does not fit; whatever comes out is valid.
  for (size_t cap = *full - 40; cap <= *full + 40; ++cap) {
    auto c = chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_out, cap));
    if (c.ok()) {
      CHECK_LE(*c, cap);
      REQUIRE_OK(chunk_decode(d, bytes_view(g_out, *c), bytes_mut(g_dec, n)));
      CHECK(std::memcmp(g_dec, g_src, n) == 0);
    } else {
      CHECK_EQ(c.err().code, errc::buffer_too_small);
    }
  }
  // With room for one more stream (one block of 60000 bytes split in 2 streams) nothing changes.
  auto roomy = chunk_encode(e, p, bytes_view(g_src, n), bytes_mut(g_out, *full + 30000 + 8));
  REQUIRE_OK(roomy);
  CHECK_EQ(*roomy, *full);
  CHECK(std::memcmp(g_out, g_out2, *full) == 0);
}

TESSERA_TEST(chunk_encode, special_value_chunks) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  chunk_encode_params p;
  p.typesize = 8;
  const size_t n = 8 * 1000;
  auto z = chunk_encode_special(p, chunk_special::zeros, n, bytes_view(), bytes_mut(g_out, 32));
  REQUIRE_OK(z);
  CHECK_EQ(*z, size_t{32});
  CHECK_EQ(g_out[2], 0x05);
  CHECK_EQ(g_out[31], 0x10);
  CHECK_EQ(g_out[21], 0);  // no filters named
  CHECK_EQ(detail_load(g_out + 8), 8000);  // the automatic blocksize: the whole chunk when under 32 KiB
  std::memset(g_dec, 1, n);
  REQUIRE_OK(chunk_decode(d, bytes_view(g_out, 32), bytes_mut(g_dec, n)));
  for (size_t i = 0; i < n; ++i) CHECK_EQ(g_dec[i], 0);

  REQUIRE_OK(chunk_encode_special(p, chunk_special::nan, n, bytes_view(), bytes_mut(g_out, 32)));
  CHECK_EQ(g_out[31], 0x20);
  REQUIRE_OK(chunk_decode(d, bytes_view(g_out, 32), bytes_mut(g_dec, n)));
  CHECK_EQ(g_dec[7], 0x7f);
  CHECK_EQ(g_dec[6], 0xf8);
  CHECK_EQ(g_dec[8 * 999 + 7], 0x7f);

  REQUIRE_OK(chunk_encode_special(p, chunk_special::uninit, n, bytes_view(), bytes_mut(g_out, 32)));
  CHECK_EQ(g_out[31], 0x40);
  REQUIRE_OK(chunk_decode(d, bytes_view(g_out, 32), bytes_mut(g_dec, n)));

  const uint8_t value[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto v = chunk_encode_special(p, chunk_special::value, n, bytes_view(value, 8), bytes_mut(g_out, 40));
  REQUIRE_OK(v);
  CHECK_EQ(*v, size_t{40});
  CHECK_EQ(g_out[31], 0x30);
  CHECK_EQ(detail_load(g_out + 12), 40);
  REQUIRE_OK(chunk_decode(d, bytes_view(g_out, 40), bytes_mut(g_dec, n)));
  for (size_t i = 0; i < n; ++i) CHECK_EQ(g_dec[i], value[i % 8]);

  CHECK_ERR(chunk_encode_special(p, chunk_special::value, n, bytes_view(value, 8), bytes_mut(g_out, 39)),
            errc::buffer_too_small);
  CHECK_ERR(chunk_encode_special(p, chunk_special::value, n, bytes_view(value, 4), bytes_mut(g_out, 40)),
            errc::invalid_argument);
  CHECK_ERR(chunk_encode_special(p, chunk_special::zeros, n + 1, bytes_view(), bytes_mut(g_out, 32)),
            errc::invalid_argument);
  p.typesize = 2;
  CHECK_ERR(chunk_encode_special(p, chunk_special::nan, 100, bytes_view(), bytes_mut(g_out, 32)),
            errc::invalid_argument);
  CHECK_ERR(chunk_encode_special(p, chunk_special::none, 100, bytes_view(), bytes_mut(g_out, 32)),
            errc::invalid_argument);
}

namespace {
// Runs tasks backwards on three worker indices: a schedule no serial loop would produce.
void run_backwards(void*, size_t ntasks, executor_task task, void* ctx) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(ctx, i, static_cast<uint32_t>((i * 7) % 3));
}
}  // namespace

TESSERA_TEST(chunk_encode, executor_does_not_change_the_chunk) {
  chunk_encoder serial, parallel;
  chunk_encoder_options o;
  // Scratch grows on demand, and with it the Zstd contexts, sized for the blocks (<= 18 KB) instead of 256 KiB:
  // at level 22 that is 1 MB instead of 5.5 MB each, which the Cortex-M4's 16 MiB of RAM hold four times.
  o.max_blocksize = 2048;
  REQUIRE_OK(chunk_encoder_init(serial, test::system_allocator(), o));
  o.exec.run = run_backwards;
  o.exec.workers = 3;
  REQUIRE_OK(chunk_encoder_init(parallel, test::system_allocator(), o));
  test::rng r(33);
  for (int i = 0; i < 160; ++i) {
    chunk_encode_params p;
    p.typesize = static_cast<uint8_t>(r.range(1, 9));
    p.clevel = static_cast<int>(r.range(1, 9));
    p.compressor = kCodecs[r.range(0, 4)];
    if (!codec_available(p.compressor)) continue;
    p.split = kSplits[r.range(0, 3)];
    pipeline_set(p, static_cast<int>(r.range(0, 8)));
    p.blocksize = static_cast<int32_t>(p.typesize * r.range(64, 2000));
    const size_t n = static_cast<size_t>(r.range(1000, 40000));
    data_fill(r, static_cast<int>(r.range(0, 7)), g_src, n);
    // Also buffers that end inside the last blocks, where the codecs get less room than a stream.
    size_t cap = n + 32;
    auto first = chunk_encode(serial, p, bytes_view(g_src, n), bytes_mut(g_out, cap));
    REQUIRE_OK(first);
    if (r.chance(50) && *first > 200) cap = *first - static_cast<size_t>(r.range(0, 100));
    auto a = chunk_encode(serial, p, bytes_view(g_src, n), bytes_mut(g_out, cap));
    auto b = chunk_encode(parallel, p, bytes_view(g_src, n), bytes_mut(g_out2, cap));
    CHECK_EQ(a.ok(), b.ok());
    if (a.ok() && b.ok()) {
      CHECK_EQ(*a, *b);
      CHECK(std::memcmp(g_out, g_out2, *a) == 0);
    }
  }
}

// The automatic block size, as the reference (c-blosc2 3.3.2) chose it: measured with blosc2_compress_ctx
// (one thread, destsize nbytes + 32, random data) and read from the header's blocksize field. Columns:
// compcode (0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd), clevel, typesize, shuffle, splitmode, nbytes, blocksize.
TESSERA_TEST(chunk_encode, automatic_blocksize_matches_the_reference) {
  static const int32_t table[][7] = {
    {0, 0, 1, 1, 4, 5000, 5000},
    {0, 0, 1, 1, 2, 1048576, 8192},
    {0, 0, 4, 1, 4, 5000, 5000},
    {0, 0, 4, 1, 2, 1048576, 8192},
    {0, 0, 8, 0, 4, 5000, 5000},
    {0, 0, 8, 0, 2, 1048576, 8192},
    {0, 0, 16, 1, 4, 5000, 4992},
    {0, 0, 16, 1, 2, 1048576, 8192},
    {0, 0, 17, 1, 4, 5000, 4998},
    {0, 0, 17, 1, 2, 1048576, 8177},
    {0, 1, 1, 1, 4, 5000, 5000},
    {0, 1, 1, 1, 2, 1048576, 16384},
    {0, 1, 4, 0, 4, 5000, 5000},
    {0, 1, 4, 0, 2, 1048576, 16384},
    {0, 1, 8, 1, 4, 5000, 5000},
    {0, 1, 8, 1, 2, 1048576, 16384},
    {0, 1, 16, 1, 4, 5000, 4992},
    {0, 1, 16, 1, 2, 1048576, 16384},
    {0, 1, 17, 0, 4, 5000, 4998},
    {0, 1, 17, 0, 2, 1048576, 16371},
    {0, 3, 1, 1, 4, 5000, 5000},
    {0, 3, 1, 1, 2, 1048576, 65536},
    {0, 3, 4, 1, 4, 5000, 5000},
    {0, 3, 4, 1, 2, 1048576, 65536},
    {0, 3, 8, 0, 4, 5000, 5000},
    {0, 3, 8, 0, 2, 1048576, 65536},
    {0, 3, 16, 1, 4, 5000, 4992},
    {0, 3, 16, 1, 2, 1048576, 65536},
    {0, 3, 17, 1, 4, 5000, 4998},
    {0, 3, 17, 1, 2, 1048576, 65535},
    {0, 5, 1, 0, 4, 5000, 5000},
    {0, 5, 1, 0, 2, 1048576, 131072},
    {0, 5, 4, 1, 4, 5000, 5000},
    {0, 5, 4, 1, 2, 1048576, 131072},
    {0, 5, 8, 1, 4, 5000, 5000},
    {0, 5, 8, 1, 2, 1048576, 131072},
    {0, 5, 16, 0, 4, 5000, 4992},
    {0, 5, 16, 0, 2, 1048576, 131072},
    {0, 5, 17, 1, 4, 5000, 4998},
    {0, 5, 17, 1, 2, 1048576, 131070},
    {0, 7, 1, 1, 4, 5000, 5000},
    {0, 7, 1, 1, 2, 1048576, 262144},
    {0, 7, 4, 0, 4, 5000, 5000},
    {0, 7, 4, 0, 2, 1048576, 262144},
    {0, 7, 8, 1, 4, 5000, 5000},
    {0, 7, 8, 1, 2, 1048576, 262144},
    {0, 7, 16, 1, 4, 5000, 4992},
    {0, 7, 16, 1, 2, 1048576, 262144},
    {0, 7, 17, 0, 4, 5000, 4998},
    {0, 7, 17, 0, 2, 1048576, 262140},
    {0, 9, 1, 1, 4, 5000, 5000},
    {0, 9, 1, 1, 2, 1048576, 262144},
    {0, 9, 4, 1, 4, 5000, 5000},
    {0, 9, 4, 1, 2, 1048576, 262144},
    {0, 9, 8, 0, 4, 5000, 5000},
    {0, 9, 8, 0, 2, 1048576, 262144},
    {0, 9, 16, 1, 4, 5000, 4992},
    {0, 9, 16, 1, 2, 1048576, 262144},
    {0, 9, 17, 1, 1, 5000, 4998},
    {0, 9, 17, 1, 1, 1048576, 1048560},
    {1, 0, 1, 1, 2, 5000, 5000},
    {1, 0, 1, 1, 4, 1048576, 8192},
    {1, 0, 4, 1, 2, 5000, 5000},
    {1, 0, 4, 1, 4, 1048576, 8192},
    {1, 0, 8, 0, 2, 5000, 5000},
    {1, 0, 8, 0, 4, 1048576, 8192},
    {1, 0, 16, 1, 2, 5000, 4992},
    {1, 0, 16, 1, 4, 1048576, 8192},
    {1, 0, 17, 1, 2, 5000, 4998},
    {1, 0, 17, 1, 4, 1048576, 8177},
    {1, 1, 1, 1, 2, 5000, 5000},
    {1, 1, 1, 1, 4, 1048576, 32768},
    {1, 1, 4, 0, 2, 5000, 5000},
    {1, 1, 4, 0, 4, 1048576, 16384},
    {1, 1, 8, 1, 2, 5000, 5000},
    {1, 1, 8, 1, 4, 1048576, 262144},
    {1, 1, 16, 1, 2, 5000, 4992},
    {1, 1, 16, 1, 4, 1048576, 524288},
    {1, 1, 17, 0, 2, 5000, 4998},
    {1, 1, 17, 0, 4, 1048576, 16371},
    {1, 3, 1, 1, 2, 5000, 5000},
    {1, 3, 1, 1, 4, 1048576, 32768},
    {1, 3, 4, 1, 2, 5000, 5000},
    {1, 3, 4, 1, 4, 1048576, 131072},
    {1, 3, 8, 0, 2, 5000, 5000},
    {1, 3, 8, 0, 4, 1048576, 65536},
    {1, 3, 16, 1, 2, 5000, 4992},
    {1, 3, 16, 1, 4, 1048576, 524288},
    {1, 3, 17, 1, 2, 5000, 4998},
    {1, 3, 17, 1, 4, 1048576, 65535},
    {1, 5, 1, 0, 2, 5000, 5000},
    {1, 5, 1, 0, 4, 1048576, 131072},
    {1, 5, 4, 1, 2, 5000, 5000},
    {1, 5, 4, 1, 4, 1048576, 262144},
    {1, 5, 8, 1, 2, 5000, 5000},
    {1, 5, 8, 1, 4, 1048576, 524288},
    {1, 5, 16, 0, 2, 5000, 4992},
    {1, 5, 16, 0, 4, 1048576, 131072},
    {1, 5, 17, 1, 2, 5000, 4998},
    {1, 5, 17, 1, 4, 1048576, 131070},
    {1, 7, 1, 1, 2, 5000, 5000},
    {1, 7, 1, 1, 4, 1048576, 131072},
    {1, 7, 4, 0, 2, 5000, 5000},
    {1, 7, 4, 0, 4, 1048576, 262144},
    {1, 7, 8, 1, 2, 5000, 5000},
    {1, 7, 8, 1, 4, 1048576, 1048576},
    {1, 7, 16, 1, 2, 5000, 4992},
    {1, 7, 16, 1, 4, 1048576, 1048576},
    {1, 7, 17, 0, 2, 5000, 4998},
    {1, 7, 17, 0, 4, 1048576, 262140},
    {1, 9, 1, 1, 2, 5000, 5000},
    {1, 9, 1, 1, 4, 1048576, 524288},
    {1, 9, 4, 1, 2, 5000, 5000},
    {1, 9, 4, 1, 4, 1048576, 1048576},
    {1, 9, 8, 0, 2, 5000, 5000},
    {1, 9, 8, 0, 4, 1048576, 262144},
    {1, 9, 16, 1, 2, 5000, 4992},
    {1, 9, 16, 1, 4, 1048576, 1048576},
    {1, 9, 17, 1, 1, 5000, 4998},
    {1, 9, 17, 1, 1, 1048576, 1048560},
    {2, 0, 1, 1, 4, 5000, 5000},
    {2, 0, 1, 1, 2, 1048576, 16384},
    {2, 0, 4, 1, 4, 5000, 5000},
    {2, 0, 4, 1, 2, 1048576, 16384},
    {2, 0, 8, 0, 4, 5000, 5000},
    {2, 0, 8, 0, 2, 1048576, 16384},
    {2, 0, 16, 1, 4, 5000, 4992},
    {2, 0, 16, 1, 2, 1048576, 16384},
    {2, 0, 17, 1, 4, 5000, 4998},
    {2, 0, 17, 1, 2, 1048576, 16371},
    {2, 1, 1, 1, 4, 5000, 5000},
    {2, 1, 1, 1, 2, 1048576, 32768},
    {2, 1, 4, 0, 4, 5000, 5000},
    {2, 1, 4, 0, 2, 1048576, 32768},
    {2, 1, 8, 1, 4, 5000, 5000},
    {2, 1, 8, 1, 2, 1048576, 32768},
    {2, 1, 16, 1, 4, 5000, 4992},
    {2, 1, 16, 1, 2, 1048576, 32768},
    {2, 1, 17, 0, 4, 5000, 4998},
    {2, 1, 17, 0, 2, 1048576, 32759},
    {2, 3, 1, 1, 4, 5000, 5000},
    {2, 3, 1, 1, 2, 1048576, 131072},
    {2, 3, 4, 1, 4, 5000, 5000},
    {2, 3, 4, 1, 2, 1048576, 131072},
    {2, 3, 8, 0, 4, 5000, 5000},
    {2, 3, 8, 0, 2, 1048576, 131072},
    {2, 3, 16, 1, 4, 5000, 4992},
    {2, 3, 16, 1, 2, 1048576, 131072},
    {2, 3, 17, 1, 4, 5000, 4998},
    {2, 3, 17, 1, 2, 1048576, 131070},
    {2, 5, 1, 0, 4, 5000, 5000},
    {2, 5, 1, 0, 2, 1048576, 262144},
    {2, 5, 4, 1, 4, 5000, 5000},
    {2, 5, 4, 1, 2, 1048576, 262144},
    {2, 5, 8, 1, 4, 5000, 5000},
    {2, 5, 8, 1, 2, 1048576, 262144},
    {2, 5, 16, 0, 4, 5000, 4992},
    {2, 5, 16, 0, 2, 1048576, 262144},
    {2, 5, 17, 1, 4, 5000, 4998},
    {2, 5, 17, 1, 2, 1048576, 262140},
    {2, 7, 1, 1, 4, 5000, 5000},
    {2, 7, 1, 1, 2, 1048576, 524288},
    {2, 7, 4, 0, 4, 5000, 5000},
    {2, 7, 4, 0, 2, 1048576, 524288},
    {2, 7, 8, 1, 4, 5000, 5000},
    {2, 7, 8, 1, 2, 1048576, 524288},
    {2, 7, 16, 1, 4, 5000, 4992},
    {2, 7, 16, 1, 2, 1048576, 524288},
    {2, 7, 17, 0, 4, 5000, 4998},
    {2, 7, 17, 0, 2, 1048576, 524280},
    {2, 9, 1, 1, 4, 5000, 5000},
    {2, 9, 1, 1, 2, 1048576, 1048576},
    {2, 9, 4, 1, 4, 5000, 5000},
    {2, 9, 4, 1, 2, 1048576, 1048576},
    {2, 9, 8, 0, 4, 5000, 5000},
    {2, 9, 8, 0, 2, 1048576, 1048576},
    {2, 9, 16, 1, 4, 5000, 4992},
    {2, 9, 16, 1, 2, 1048576, 1048576},
    {2, 9, 17, 1, 1, 5000, 4998},
    {2, 9, 17, 1, 1, 1048576, 1048560},
    {4, 0, 1, 1, 2, 5000, 5000},
    {4, 0, 1, 1, 4, 1048576, 16384},
    {4, 0, 4, 1, 2, 5000, 5000},
    {4, 0, 4, 1, 4, 1048576, 16384},
    {4, 0, 8, 0, 2, 5000, 5000},
    {4, 0, 8, 0, 4, 1048576, 16384},
    {4, 0, 16, 1, 2, 5000, 4992},
    {4, 0, 16, 1, 4, 1048576, 16384},
    {4, 0, 17, 1, 2, 5000, 4998},
    {4, 0, 17, 1, 4, 1048576, 16371},
    {4, 1, 1, 1, 2, 5000, 5000},
    {4, 1, 1, 1, 4, 1048576, 32768},
    {4, 1, 4, 0, 2, 5000, 5000},
    {4, 1, 4, 0, 4, 1048576, 32768},
    {4, 1, 8, 1, 2, 5000, 5000},
    {4, 1, 8, 1, 4, 1048576, 32768},
    {4, 1, 16, 1, 2, 5000, 4992},
    {4, 1, 16, 1, 4, 1048576, 32768},
    {4, 1, 17, 0, 2, 5000, 4998},
    {4, 1, 17, 0, 4, 1048576, 32759},
    {4, 3, 1, 1, 2, 5000, 5000},
    {4, 3, 1, 1, 4, 1048576, 131072},
    {4, 3, 4, 1, 2, 5000, 5000},
    {4, 3, 4, 1, 4, 1048576, 131072},
    {4, 3, 8, 0, 2, 5000, 5000},
    {4, 3, 8, 0, 4, 1048576, 131072},
    {4, 3, 16, 1, 2, 5000, 4992},
    {4, 3, 16, 1, 4, 1048576, 131072},
    {4, 3, 17, 1, 2, 5000, 4998},
    {4, 3, 17, 1, 4, 1048576, 131070},
    {4, 5, 1, 0, 2, 5000, 5000},
    {4, 5, 1, 0, 4, 1048576, 262144},
    {4, 5, 4, 1, 2, 5000, 5000},
    {4, 5, 4, 1, 4, 1048576, 262144},
    {4, 5, 8, 1, 2, 5000, 5000},
    {4, 5, 8, 1, 4, 1048576, 262144},
    {4, 5, 16, 0, 2, 5000, 4992},
    {4, 5, 16, 0, 4, 1048576, 262144},
    {4, 5, 17, 1, 2, 5000, 4998},
    {4, 5, 17, 1, 4, 1048576, 262140},
    {4, 7, 1, 1, 2, 5000, 5000},
    {4, 7, 1, 1, 4, 1048576, 524288},
    {4, 7, 4, 0, 2, 5000, 5000},
    {4, 7, 4, 0, 4, 1048576, 524288},
    {4, 7, 8, 1, 2, 5000, 5000},
    {4, 7, 8, 1, 4, 1048576, 524288},
    {4, 7, 16, 1, 2, 5000, 4992},
    {4, 7, 16, 1, 4, 1048576, 524288},
    {4, 7, 17, 0, 2, 5000, 4998},
    {4, 7, 17, 0, 4, 1048576, 524280},
    {4, 9, 1, 1, 2, 5000, 5000},
    {4, 9, 1, 1, 4, 1048576, 1048576},
    {4, 9, 4, 1, 2, 5000, 5000},
    {4, 9, 4, 1, 4, 1048576, 1048576},
    {4, 9, 8, 0, 2, 5000, 5000},
    {4, 9, 8, 0, 4, 1048576, 1048576},
    {4, 9, 16, 1, 2, 5000, 4992},
    {4, 9, 16, 1, 4, 1048576, 1048576},
    {4, 9, 17, 1, 1, 5000, 4998},
    {4, 9, 17, 1, 1, 1048576, 1048560},
    {5, 0, 1, 1, 4, 5000, 5000},
    {5, 0, 1, 1, 2, 1048576, 16384},
    {5, 0, 4, 1, 4, 5000, 5000},
    {5, 0, 4, 1, 2, 1048576, 16384},
    {5, 0, 8, 0, 4, 5000, 5000},
    {5, 0, 8, 0, 2, 1048576, 16384},
    {5, 0, 16, 1, 4, 5000, 4992},
    {5, 0, 16, 1, 2, 1048576, 16384},
    {5, 0, 17, 1, 4, 5000, 4998},
    {5, 0, 17, 1, 2, 1048576, 16371},
    {5, 1, 1, 1, 4, 5000, 5000},
    {5, 1, 1, 1, 2, 1048576, 32768},
    {5, 1, 4, 0, 4, 5000, 5000},
    {5, 1, 4, 0, 2, 1048576, 32768},
    {5, 1, 8, 1, 4, 5000, 5000},
    {5, 1, 8, 1, 2, 1048576, 32768},
    {5, 1, 16, 1, 4, 5000, 4992},
    {5, 1, 16, 1, 2, 1048576, 32768},
    {5, 1, 17, 0, 4, 5000, 4998},
    {5, 1, 17, 0, 2, 1048576, 32759},
    {5, 3, 1, 1, 4, 5000, 5000},
    {5, 3, 1, 1, 2, 1048576, 131072},
    {5, 3, 4, 1, 4, 5000, 5000},
    {5, 3, 4, 1, 2, 1048576, 131072},
    {5, 3, 8, 0, 4, 5000, 5000},
    {5, 3, 8, 0, 2, 1048576, 131072},
    {5, 3, 16, 1, 4, 5000, 4992},
    {5, 3, 16, 1, 2, 1048576, 131072},
    {5, 3, 17, 1, 4, 5000, 4998},
    {5, 3, 17, 1, 2, 1048576, 131070},
    {5, 5, 1, 0, 4, 5000, 5000},
    {5, 5, 1, 0, 2, 1048576, 262144},
    {5, 5, 4, 1, 4, 5000, 5000},
    {5, 5, 4, 1, 2, 1048576, 262144},
    {5, 5, 8, 1, 4, 5000, 5000},
    {5, 5, 8, 1, 2, 1048576, 262144},
    {5, 5, 16, 0, 4, 5000, 4992},
    {5, 5, 16, 0, 2, 1048576, 262144},
    {5, 5, 17, 1, 4, 5000, 4998},
    {5, 5, 17, 1, 2, 1048576, 262140},
    {5, 7, 1, 1, 4, 5000, 5000},
    {5, 7, 1, 1, 2, 1048576, 524288},
    {5, 7, 4, 0, 4, 5000, 5000},
    {5, 7, 4, 0, 2, 1048576, 524288},
    {5, 7, 8, 1, 4, 5000, 5000},
    {5, 7, 8, 1, 2, 1048576, 524288},
    {5, 7, 16, 1, 4, 5000, 4992},
    {5, 7, 16, 1, 2, 1048576, 524288},
    {5, 7, 17, 0, 4, 5000, 4998},
    {5, 7, 17, 0, 2, 1048576, 524280},
    {5, 9, 1, 1, 4, 5000, 5000},
    {5, 9, 1, 1, 2, 1048576, 1048576},
    {5, 9, 4, 1, 4, 5000, 5000},
    {5, 9, 4, 1, 2, 1048576, 1048576},
    {5, 9, 8, 0, 4, 5000, 5000},
    {5, 9, 8, 0, 2, 1048576, 1048576},
    {5, 9, 16, 1, 4, 5000, 4992},
    {5, 9, 16, 1, 2, 1048576, 1048576},
    {5, 9, 17, 1, 1, 5000, 4998},
    {5, 9, 17, 1, 1, 1048576, 1048560},
  };
  for (const auto& row : table) {
    chunk_encode_params p;
    p.compressor = static_cast<codec>(row[0]);
    p.clevel = row[1];
    p.typesize = static_cast<uint8_t>(row[2]);
    std::memset(p.filters, 0, sizeof p.filters);
    if (row[3]) p.filters[5] = 1;
    p.split = static_cast<split_mode>(row[4]);
    auto bs = chunk_blocksize_compute(p, static_cast<size_t>(row[5]));
    REQUIRE_OK(bs);
    CHECK_EQ(*bs, row[6]);
  }
}

// Chunk sizes the reference wrote for the same data (measured once with c-blosc2 3.3.2 blosc2_compress_ctx,
// one thread, destsize nbytes + 32): 256 KiB of float32 sin(i/97)*1000 + i*0.01, shuffle or bitshuffle,
// BloscLZ. The data here comes from a rotation recurrence, so only the Linux golden test (std::sin) can ask
// for identical sizes; here BloscLZ must come within 5% of the reference's ratio.
TESSERA_TEST(chunk_encode, blosclz_ratio_near_the_reference) {
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  static uint8_t big[256 * 1024];
  static uint8_t out[256 * 1024 + 32];
  {
    double c = 1.0, s = 0.0;
    const double ca = 0.99994686, sa = 0.01030910;
    for (size_t i = 0; i < sizeof big / 4; ++i) {
      store_f32_le(big + 4 * i, static_cast<float>(s * 1000.0 + static_cast<double>(i) * 0.01));
      const double c2 = c * ca - s * sa;
      s = s * ca + c * sa;
      c = c2;
    }
  }
  struct {
    int clevel;
    uint8_t filter;
    int32_t reference;
  } const cases[] = {{1, 1, 199402}, {5, 1, 180122}, {9, 1, 180176}, {1, 2, 203978}};
  for (const auto& k : cases) {
    chunk_encode_params p;
    p.typesize = 4;
    p.clevel = k.clevel;
    p.filters[5] = k.filter;
    auto c = chunk_encode(e, p, bytes_view(big, sizeof big), bytes_mut(out, sizeof out));
    REQUIRE_OK(c);
    const double ratio_ours = static_cast<double>(sizeof big) / static_cast<double>(*c);
    const double ratio_ref = static_cast<double>(sizeof big) / static_cast<double>(k.reference);
    CHECK(ratio_ours >= ratio_ref * 0.95);
  }
}

TESSERA_TEST(chunk_encode, parameter_errors) {
  chunk_encoder e;
  chunk_encode_params p;
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, 100), bytes_mut(g_out, 200)), errc::invalid_argument);  // no init
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  p.typesize = 0;
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, 100), bytes_mut(g_out, 200)), errc::invalid_argument);
  p.typesize = 4;
  p.clevel = 10;
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, 100), bytes_mut(g_out, 200)), errc::invalid_argument);
  p.clevel = 5;
  p.filters[0] = 34;  // the old bytedelta
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, 100), bytes_mut(g_out, 200)), errc::unsupported);
  p.filters[0] = 4;  // trunc_prec with typesize 2
  p.typesize = 2;
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, 100), bytes_mut(g_out, 200)), errc::invalid_argument);
  p.filters[0] = 0;
  p.blocksize = -1;
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, 100), bytes_mut(g_out, 200)), errc::invalid_argument);
  p.blocksize = 0;
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, 100), bytes_mut(g_out, 31)), errc::buffer_too_small);
  for (codec c : kCodecs) {
    p.compressor = c;
    auto r = chunk_encode(e, p, bytes_view(g_src, 100), bytes_mut(g_out, 200));
    if (codec_available(c)) CHECK_OK(r);
    else CHECK_ERR(r, errc::codec_unavailable);
  }
}

TESSERA_TEST(chunk_encode, fixed_scratch_and_allocation_failures) {
  chunk_encoder_options o;
  o.max_blocksize = 4096;
  o.fixed_scratch = true;
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator(), o));
  chunk_encode_params p;
  p.typesize = 4;
  p.blocksize = 8192;
  test::rng r(5);
  data_fill(r, 1, g_src, 20000);
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, 20000), bytes_mut(g_out, 20032)), errc::buffer_too_small);
  p.blocksize = 4096;
  CHECK_OK(chunk_encode(e, p, bytes_view(g_src, 20000), bytes_mut(g_out, 20032)));

  // Every allocation refused in turn, for each codec (its state, zlib's stream and deflateInit's own
  // allocations, zstd's workspace): errors only, nothing leaks, and a later success gives the same chunk.
  p.blocksize = 0;
  for (codec c : kCodecs) {
    if (!codec_available(c)) continue;
    p.compressor = c;
    chunk_encoder good;
    REQUIRE_OK(chunk_encoder_init(good, test::system_allocator()));
    auto want = chunk_encode(good, p, bytes_view(g_src, 20000), bytes_mut(g_out2, 20032));
    REQUIRE_OK(want);
    bool succeeded = false;
    for (size_t k = 1; k < 40 && !succeeded; ++k) {
      test::counting_allocator counter;
      counter.fail_at = k;
      {
        chunk_encoder f;
        status s = chunk_encoder_init(f, counter.get());
        if (s.ok()) {
          auto n = chunk_encode(f, p, bytes_view(g_src, 20000), bytes_mut(g_out, 20032));
          if (n.ok()) {
            succeeded = true;
            CHECK_EQ(*n, *want);
            CHECK(std::memcmp(g_out, g_out2, *n) == 0);
          } else {
            CHECK_EQ(n.err().code, errc::out_of_memory);
          }
        } else {
          CHECK_EQ(s.code, errc::out_of_memory);
        }
      }
      CHECK(!counter.leaked());
      CHECK_EQ(counter.mismatched_frees, size_t{0});
    }
    CHECK(succeeded);
  }
}

TESSERA_TEST(chunk_encode, estimate_is_enough_for_an_arena) {
  for (codec c : kCodecs) {
    if (!codec_available(c)) continue;
    chunk_encoder_options o;
    o.max_blocksize = 16384;
    o.estimate_codec = c;
    o.estimate_clevel = 5;
    const size_t need = chunk_encoder_estimate(o);
    static uint8_t buffer[2 << 20];
    REQUIRE(need <= sizeof buffer);
    arena a;
    arena_init(a, buffer, need);
    chunk_encoder e;
    REQUIRE_OK(chunk_encoder_init(e, arena_allocator(a), o));
    chunk_encode_params p;
    p.typesize = 4;
    p.compressor = c;
    p.clevel = 5;
    p.blocksize = 16384;
    test::rng r(3);
    data_fill(r, 0, g_src, 60000);
    CHECK_OK(chunk_encode(e, p, bytes_view(g_src, 60000), bytes_mut(g_out, 60032)));
  }
}

// A smaller BloscLZ table (a firmware's RAM): the estimate and the arena shrink by the table's difference, the
// chunks decode to their input, and a table of the reference's size gives the reference's chunk.
TESSERA_TEST(chunk_encode, a_smaller_blosclz_table_costs_less_and_decodes) {
  chunk_encode_params p;
  p.typesize = 4;
  p.compressor = codec::blosclz;
  p.clevel = 5;
  p.blocksize = 16384;
  test::rng r(11);
  data_fill(r, 0, g_src, 60000);
  static uint8_t reference[60032];
  size_t reference_size = 0;
  size_t estimate_default = 0;
  for (uint8_t log : {uint8_t{0}, uint8_t{14}, uint8_t{12}, uint8_t{10}, uint8_t{8}}) {
    chunk_encoder_options o;
    o.max_blocksize = 16384;
    o.blosclz_hash_log = log;
    const size_t need = chunk_encoder_estimate(o);
    if (log == 0) estimate_default = need;
    else CHECK_EQ(estimate_default - need, (size_t{1} << 14) * 4 - (size_t{1} << log) * 4);
    static uint8_t buffer[160 * 1024];
    REQUIRE(need <= sizeof buffer);
    arena a;
    arena_init(a, buffer, need);
    chunk_encoder e;
    REQUIRE_OK(chunk_encoder_init(e, arena_allocator(a), o));
    auto n = chunk_encode(e, p, bytes_view(g_src, 60000), bytes_mut(g_out, 60032));
    REQUIRE_OK(n);
    if (log == 0) {
      std::memcpy(reference, g_out, *n);
      reference_size = *n;
    } else if (log == 14) {
      CHECK(*n == reference_size && std::memcmp(reference, g_out, *n) == 0);
    }
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
    static uint8_t back[60000];
    auto m = chunk_decode(d, bytes_view(g_out, *n), bytes_mut(back, sizeof back));
    REQUIRE_OK(m);
    CHECK_EQ(*m, size_t{60000});
    CHECK(std::memcmp(back, g_src, 60000) == 0);
  }
  for (uint8_t bad : {uint8_t{7}, uint8_t{15}}) {
    chunk_encoder_options o;
    o.blosclz_hash_log = bad;
    chunk_encoder e;
    CHECK_ERR(chunk_encoder_init(e, test::system_allocator(), o), errc::invalid_argument);
  }
}

TESSERA_TEST(chunk_encode, forward_filters_match_their_definitions) {
  test::rng r(77);
  static uint8_t a[4096], b[4096], ref[4096], block0[4096];
  for (int i = 0; i < 400; ++i) {
    const size_t ts = static_cast<size_t>(r.range(1, 33));
    const size_t n = static_cast<size_t>(r.range(0, 4096));
    for (size_t k = 0; k < n; ++k) a[k] = static_cast<uint8_t>(r.next() % 5);
    for (size_t k = 0; k < n; ++k) block0[k] = static_cast<uint8_t>(r.next());
    // Delta: block 0 against itself, later blocks against block 0.
    detail::delta_encode(a, true, ts, a, b, n);
    chunk_test::delta_ref(ts, n, a, true, a, ref);
    CHECK(std::memcmp(b, ref, n) == 0);
    detail::delta_encode(block0, false, ts, a, b, n);
    chunk_test::delta_ref(ts, n, block0, false, a, ref);
    CHECK(std::memcmp(b, ref, n) == 0);
    // and back
    detail::delta_decode(block0, false, ts, b, n);
    CHECK(std::memcmp(b, a, n) == 0);
    // Bytedelta.
    detail::bytedelta_encode(ts, a, b, n);
    chunk_test::bytedelta_ref(ts, n, a, ref);
    CHECK(std::memcmp(b, ref, n) == 0);
    detail::bytedelta_decode(ts, b, ref, n);
    CHECK(std::memcmp(ref, a, n) == 0);
  }
  // trunc_prec: float32 keeping 10 mantissa bits zeroes the low 13; float64 with -20 zeroes the low 20.
  const uint8_t f32[8] = {0xff, 0xff, 0xff, 0x3f, 0x12, 0x34, 0x56, 0x78};
  uint8_t o[8];
  REQUIRE_OK(detail::trunc_prec_encode(10, 4, f32, o, 8));
  CHECK_EQ(o[0], 0x00);
  CHECK_EQ(o[1], 0xe0);
  CHECK_EQ(o[2], 0xff);
  CHECK_EQ(o[3], 0x3f);
  CHECK_EQ(o[5], 0x20);
  REQUIRE_OK(detail::trunc_prec_encode(-20, 8, f32, o, 8));
  CHECK_EQ(o[0], 0x00);
  CHECK_EQ(o[1], 0x00);
  CHECK_EQ(o[2], 0xf0);
  CHECK_EQ(o[3], 0x3f);
  CHECK_EQ(o[7], 0x78);
  CHECK_ERR(detail::trunc_prec_encode(24, 4, f32, o, 8), errc::invalid_argument);
  CHECK_ERR(detail::trunc_prec_encode(-23, 4, f32, o, 8), errc::invalid_argument);
  CHECK_ERR(detail::trunc_prec_encode(0, 4, f32, o, 8), errc::invalid_argument);
  CHECK_OK(detail::trunc_prec_encode(1, 4, f32, o, 8));
  CHECK_ERR(detail::trunc_prec_encode(5, 2, f32, o, 8), errc::invalid_argument);
  // int_trunc: uint16 keeping 4 bits zeroes the low 12; -3 zeroes the low 3; 0 bits or more than 16 fail.
  REQUIRE_OK(detail::int_trunc_encode(4, 2, f32, o, 8));
  CHECK_EQ(o[0], 0x00);
  CHECK_EQ(o[1], 0xf0);
  CHECK_EQ(o[6], 0x00);
  CHECK_EQ(o[7], 0x70);
  REQUIRE_OK(detail::int_trunc_encode(-3, 1, f32, o, 8));
  CHECK_EQ(o[0], 0xf8);
  CHECK_EQ(o[4], 0x10);
  CHECK_ERR(detail::int_trunc_encode(0, 2, f32, o, 8), errc::invalid_argument);
  CHECK_ERR(detail::int_trunc_encode(17, 2, f32, o, 8), errc::invalid_argument);
  CHECK_OK(detail::int_trunc_encode(16, 2, f32, o, 8));
  CHECK_ERR(detail::int_trunc_encode(3, 3, f32, o, 8), errc::invalid_argument);
}
