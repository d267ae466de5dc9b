// SPDX-License-Identifier: BSD-3-Clause
// The in-house LZ4 block reader (src/codecs/lz4_block.hpp) against liblz4, the decoder c-blosc2 uses: the same bytes
// for every stream liblz4's encoders write (fast at several accelerations, HC at several levels) over data of every
// kind and size, partial decodes included; on damaged streams, never a read or write outside the buffers, refusals only
// where the format says a stream is broken, and the same bytes wherever both accept. Chunks of shuffled numbers decode
// the same with the in-house decoder as with liblz4 (simd_level_force).
#include <lz4.h>
#include <lz4hc.h>

#include <cstring>
#include <memory>
#include <vector>

#include "../../src/codecs/lz4_block.hpp"  // internal header: the core keeps src/ private
#include "../support/check.hpp"
#include "../support/lz4_reference.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "tessera/allocator.hpp"
#include "tessera/chunk.hpp"
#include "tessera/shuffle.hpp"

using namespace tessera;
using detail::lz4_block_decode;
using detail::lz4_block_decode_available;
using detail::lz4_block_position;
using detail::lz4_block_walk;

namespace {

constexpr size_t kGuard = 64;

// An output of exactly n bytes followed by guard bytes that must survive every decode.
struct guarded {
  explicit guarded(size_t n) : size(n), bytes(new uint8_t[n + kGuard]) { std::memset(bytes.get(), 0xa5, n + kGuard); }
  bytes_mut mut() { return bytes_mut(bytes.get(), size); }
  const uint8_t* data() const { return bytes.get(); }
  bool guard_intact() const {
    for (size_t k = 0; k < kGuard; ++k)
      if (bytes[size + k] != 0xa5) return false;
    return true;
  }
  size_t size;
  std::unique_ptr<uint8_t[]> bytes;
};

// A stream in a heap block of exactly its size, so that AddressSanitizer sees a read past it.
struct exact {
  explicit exact(const std::vector<uint8_t>& v) : size(v.size()), bytes(new uint8_t[v.size() ? v.size() : 1]) {
    if (size) std::memcpy(bytes.get(), v.data(), size);
  }
  bytes_view view() const { return bytes_view(bytes.get(), size); }
  size_t size;
  std::unique_ptr<uint8_t[]> bytes;
};

// Data like what Blosc hands LZ4: byte planes of shuffled numbers, runs, and for contrast text and noise. Integer-only,
// so every target makes the same bytes.
enum class kind { planes_smooth, planes_ramp, runs, periodic, text, noise, zeros, mixed };
constexpr kind kKinds[] = {kind::planes_smooth, kind::planes_ramp, kind::runs,  kind::periodic,
                           kind::text,          kind::noise,       kind::zeros, kind::mixed};

std::vector<uint8_t> make(kind k, size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  test::rng r(seed);
  switch (k) {
    case kind::planes_smooth: {  // int32 of a slow wave plus a ramp, byte-shuffled: planes of close offsets
      const size_t count = n / 4;
      for (size_t i = 0; i < count; ++i) {
        const int64_t t = static_cast<int64_t>(i % 400) - 200;
        const uint32_t x = static_cast<uint32_t>(100000 + t * t / 3 + static_cast<int64_t>(i / 13));
        for (size_t b = 0; b < 4; ++b) v[b * count + i] = static_cast<uint8_t>(x >> (8 * b));
      }
      break;
    }
    case kind::planes_ramp: {
      const size_t count = n / 8;
      for (size_t i = 0; i < count; ++i) {
        const uint64_t x = i * 3 + (i % 7 == 0 ? 1 : 0);
        for (size_t b = 0; b < 8; ++b) v[b * count + i] = static_cast<uint8_t>(x >> (8 * b));
      }
      break;
    }
    case kind::runs:
      for (size_t i = 0; i < n;) {
        const size_t len = static_cast<size_t>(r.range(1, 300));
        const uint8_t b = static_cast<uint8_t>(r.next());
        for (size_t e = i + len; i < e && i < n; ++i) v[i] = b;
      }
      break;
    case kind::periodic:  // patterns of every period 1..40, each for a while
      for (size_t i = 0; i < n;) {
        const size_t period = static_cast<size_t>(r.range(1, 40)), len = static_cast<size_t>(r.range(20, 500));
        uint8_t pat[40];
        for (size_t p = 0; p < period; ++p) pat[p] = static_cast<uint8_t>(r.next());
        for (size_t j = 0; j < len && i < n; ++j, ++i) v[i] = pat[j % period];
      }
      break;
    case kind::text: {
      static const char* const words[] = {"blosc", "chunk", "array", "the",    "of", "data",
                                          "frame", "shape", "block", "stream", "a",  "decoder"};
      for (size_t i = 0; i < n;) {
        const char* w = words[r.next() % 12];
        for (size_t c = 0; w[c] != 0 && i < n; ++c) v[i++] = static_cast<uint8_t>(w[c]);
        if (i < n) v[i++] = ' ';
      }
      break;
    }
    case kind::noise:
      for (auto& b : v) b = static_cast<uint8_t>(r.next());
      break;
    case kind::zeros:
      break;
    case kind::mixed:  // noise with copies of earlier bytes at every distance up to 70 KiB
      for (size_t i = 0; i < n; ++i) {
        if (i > 64 && r.chance(70)) {
          const size_t back = static_cast<size_t>(r.range(1, static_cast<int64_t>(i < 70000 ? i : 70000)));
          v[i] = v[i - back];
        } else {
          v[i] = static_cast<uint8_t>(r.next());
        }
      }
      break;
  }
  return v;
}

// liblz4's encoders: fast at accelerations 1, 5 (Blosc's clevel 5) and 9, HC at levels 4, 9 and 12.
constexpr int kEncoders = 6;
std::vector<uint8_t> compress(const std::vector<uint8_t>& src, int encoder) {
  std::vector<uint8_t> out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(src.size()))));
  const auto* s = reinterpret_cast<const char*>(src.data());
  auto* d = reinterpret_cast<char*>(out.data());
  const int n = static_cast<int>(src.size()), cap = static_cast<int>(out.size());
  static const int accel[] = {1, 5, 9};
  static const int hc[] = {4, 9, 12};
  const int c =
      encoder < 3 ? LZ4_compress_fast(s, d, n, cap, accel[encoder]) : LZ4_compress_HC(s, d, n, cap, hc[encoder - 3]);
  out.resize(c > 0 ? static_cast<size_t>(c) : 0);
  return out;
}

int liblz4_decode(bytes_view in, uint8_t* out, size_t cap) {
  return LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out),
                             static_cast<int>(in.size()), static_cast<int>(cap));
}

const size_t kSizes[] = {1,  5,   12,  13,  16,  17,  31,   32,   33,    63,    64,     65,    66,
                         97, 100, 127, 128, 129, 200, 1000, 4096, 15625, 65536, 100000, 262144};

}  // namespace

TESSERA_TEST(lz4_block, decodes_what_liblz4_writes_as_liblz4_does) {
  if (!lz4_block_decode_available()) {  // a CPU or build without the AVX2 decoder: it says so, runs nothing
    uint8_t out[16];
    CHECK_ERR(lz4_block_decode(bytes_view(), bytes_mut(out, sizeof out), sizeof out), errc::unsupported);
    return;
  }
  {  // forced below AVX2, as on a CPU without it: refused, not run
    REQUIRE_OK(simd_level_force(simd_level::sse2));
    uint8_t out[16];
    const uint8_t block[] = {0x10, 'a'};
    const status s = lz4_block_decode(bytes_view(block, sizeof block), bytes_mut(out, 1), 1);
    simd_level_unforce();
    CHECK_ERR(s, errc::unsupported);
  }
  size_t streams = 0;
  for (kind k : kKinds) {
    for (size_t n : kSizes) {
      const std::vector<uint8_t> src = make(k, n, n * 31 + static_cast<size_t>(k));
      for (int enc = 0; enc < kEncoders; ++enc) {
        const std::vector<uint8_t> c = compress(src, enc);
        REQUIRE(!c.empty());
        const exact in(c);
        guarded ref(n);
        REQUIRE_EQ(liblz4_decode(in.view(), ref.mut().data(), n), static_cast<int>(n));
        REQUIRE(std::memcmp(ref.data(), src.data(), n) == 0);
        guarded out(n);
        CHECK_OK(lz4_block_decode(in.view(), out.mut(), n));
        CHECK(std::memcmp(out.data(), src.data(), n) == 0);
        CHECK(out.guard_intact());
        CHECK(lz4_block_walk(in.view(), lz4_block_position{}, n));
        // Partial decodes: at least the first `want` bytes, the tail walked.
        const size_t wants[] = {0, 1, n / 3, n / 2, n - 1};
        for (size_t want : wants) {
          guarded part(n);
          CHECK_OK(lz4_block_decode(in.view(), part.mut(), want));
          CHECK(std::memcmp(part.data(), src.data(), want) == 0);
          CHECK(part.guard_intact());
        }
        // One byte of room less or more: a wrong size, refused.
        guarded small(n - 1), big(n + 1);
        CHECK_ERR(lz4_block_decode(in.view(), small.mut(), n - 1), errc::corrupt);
        CHECK_ERR(lz4_block_decode(in.view(), big.mut(), n + 1), errc::corrupt);
        CHECK(small.guard_intact() && big.guard_intact());
        ++streams;
      }
    }
  }
  CHECK_EQ(streams, sizeof kKinds / sizeof kKinds[0] * (sizeof kSizes / sizeof kSizes[0]) * kEncoders);
}

TESSERA_TEST(lz4_block, damaged_streams_are_refused_where_broken_and_never_overrun) {
  if (!lz4_block_decode_available()) return;  // the walk is checked below and by the chunk tests everywhere
  test::rng r(2026);
  size_t refused = 0, accepted_same = 0, zero_offsets = 0, lenient = 0;
  for (int round = 0; round < 6000; ++round) {
    const kind k = kKinds[r.next() % (sizeof kKinds / sizeof kKinds[0])];
    const size_t n = static_cast<size_t>(r.range(1, round % 10 == 0 ? 70000 : 2000));
    std::vector<uint8_t> c = compress(make(k, n, r.next()), static_cast<int>(r.next() % kEncoders));
    // Damage: flipped bytes, a cut, bytes added, or a token or offset rewritten.
    const int how = static_cast<int>(r.next() % 4);
    if (how == 0 || c.size() < 4) {
      const int flips = static_cast<int>(r.range(1, 4));
      for (int f = 0; f < flips && !c.empty(); ++f)
        c[r.next() % c.size()] ^= static_cast<uint8_t>(1u << (r.next() % 8));
    } else if (how == 1) {
      c.resize(r.next() % c.size());
    } else if (how == 2) {
      const size_t add = static_cast<size_t>(r.range(1, 40));
      for (size_t a = 0; a < add; ++a) c.push_back(static_cast<uint8_t>(r.next()));
    } else {
      const size_t at = r.next() % (c.size() - 2);
      c[at] = static_cast<uint8_t>(r.next());
      c[at + 1] = static_cast<uint8_t>(r.chance(30) ? 0 : r.next());
    }
    const size_t cap = r.chance(80) ? n : static_cast<size_t>(r.range(0, static_cast<int64_t>(n) + 50));
    const exact in(c);
    guarded ours(cap), ref(cap);
    const status s = lz4_block_decode(in.view(), ours.mut(), cap);
    const bool theirs = liblz4_decode(in.view(), ref.mut().data(), cap) == static_cast<int>(cap);
    REQUIRE(ours.guard_intact());
    if (!s.ok()) {
      CHECK_EQ(s.code, errc::corrupt);
      CHECK(!lz4_block_walk(in.view(), lz4_block_position{}, cap));
      if (theirs) {  // only a match at offset 0, which the format calls invalid and liblz4 decodes as zeros
        CHECK(test::lz4_has_zero_offset(in.view()));
        ++zero_offsets;
      }
      ++refused;
    } else {
      CHECK(lz4_block_walk(in.view(), lz4_block_position{}, cap));
      if (theirs) {
        CHECK(cap == 0 || std::memcmp(ours.data(), ref.data(), cap) == 0);
        ++accepted_same;
      } else {
        ++lenient;  // the format's end-of-block conditions broken: liblz4 refuses, as it may
      }
    }
    // A partial decode never overruns either, and succeeds only on a well-formed stream.
    if (cap > 0) {
      guarded part(cap);
      const size_t want = r.next() % cap;
      const status sp = lz4_block_decode(in.view(), part.mut(), want);
      REQUIRE(part.guard_intact());
      CHECK_EQ(sp.ok(), s.ok());
      if (sp.ok()) CHECK(std::memcmp(part.data(), ours.data(), want) == 0);
    }
  }
  // Every outcome was seen (the damage is varied enough to test each rule).
  CHECK_LT(size_t{1000}, refused);
  CHECK_LT(size_t{100}, accepted_same);
  CHECK_LT(size_t{0}, zero_offsets);
  (void)lenient;  // rare in damage at random: the_walk_checks_structure_size_and_offsets has one for certain
}

TESSERA_TEST(lz4_block, the_walk_checks_structure_size_and_offsets) {
  // A hand-made block of 10 bytes: 4 literals "abcd", a match of 4 at offset 4, then 2 literals "ef".
  const uint8_t good[] = {0x40, 'a', 'b', 'c', 'd', 0x04, 0x00, 0x20, 'e', 'f'};
  CHECK(lz4_block_walk(bytes_view(good, sizeof good), lz4_block_position{}, 10));
  CHECK(!lz4_block_walk(bytes_view(good, sizeof good), lz4_block_position{}, 9));
  CHECK(!lz4_block_walk(bytes_view(good, sizeof good), lz4_block_position{}, 11));
  for (size_t cut = 0; cut < sizeof good; ++cut)
    CHECK(!lz4_block_walk(bytes_view(good, cut), lz4_block_position{}, 10));
  // From the second sequence on, 8 bytes already out.
  CHECK(lz4_block_walk(bytes_view(good, sizeof good), lz4_block_position{7, 8}, 10));
  CHECK(!lz4_block_walk(bytes_view(good, sizeof good), lz4_block_position{11, 8}, 10));
  uint8_t bad[sizeof good];
  std::memcpy(bad, good, sizeof good);
  bad[5] = 0;  // offset 0
  CHECK(!lz4_block_walk(bytes_view(bad, sizeof bad), lz4_block_position{}, 10));
  bad[5] = 5;  // before the output's start
  CHECK(!lz4_block_walk(bytes_view(bad, sizeof bad), lz4_block_position{}, 10));
  if (lz4_block_decode_available()) {
    guarded out(10);
    CHECK_OK(lz4_block_decode(bytes_view(good, sizeof good), out.mut(), 10));
    CHECK(std::memcmp(out.data(), "abcdabcdef", 10) == 0);
    // Its last match starts 6 bytes before the end, not 12 as the format's end conditions say: a conformant decoder may
    // refuse it, liblz4 does, this one reads it.
    guarded ref(10);
    CHECK(liblz4_decode(bytes_view(good, sizeof good), ref.mut().data(), 10) < 0);
    CHECK_ERR(lz4_block_decode(bytes_view(bad, sizeof bad), out.mut(), 10), errc::corrupt);
    CHECK(out.guard_intact());
    // No sequence at all, or a block that ends with its match (8 bytes, no last literals): refused, as by the walk.
    guarded none(0), eight(8);
    CHECK_ERR(lz4_block_decode(bytes_view(good, 0), none.mut(), 0), errc::corrupt);
    CHECK(!lz4_block_walk(bytes_view(good, 7), lz4_block_position{}, 8));
    CHECK_ERR(lz4_block_decode(bytes_view(good, 7), eight.mut(), 8), errc::corrupt);
    CHECK_ERR(lz4_block_decode(bytes_view(good, 7), eight.mut(), 3), errc::corrupt);
    CHECK(none.guard_intact() && eight.guard_intact());
  }
}

// Chunks of shuffled and bit-shuffled numbers, decoded through the in-house decoder and, with the SIMD level forced
// below AVX2, through liblz4: the same bytes, whole and block by block.
TESSERA_TEST(lz4_block, shuffled_chunks_decode_the_same_through_either_decoder) {
  const bool have = lz4_block_decode_available();
  test::counting_allocator ca;
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, ca.get()));
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, ca.get()));
  const size_t n = 400000;
  std::vector<uint8_t> numbers(n);
  for (size_t i = 0; i < n / 4; ++i) {
    const uint32_t x = static_cast<uint32_t>(70000 + (i % 977) * (i % 977) / 5 + i / 3);
    std::memcpy(numbers.data() + 4 * i, &x, 4);
  }
  for (int f = 0; f < 3; ++f) {
    chunk_encode_params p;
    p.typesize = 4;
    p.compressor = f == 2 ? codec::lz4hc : codec::lz4;
    p.clevel = 5;
    p.blocksize = 32768;
    p.filters[kChunkMaxFilters - 1] = static_cast<uint8_t>(f == 1 ? filter_id::bitshuffle : filter_id::shuffle);
    std::vector<uint8_t> chunk(chunk_encode_bound(n));
    auto cs = chunk_encode(e, p, bytes_view(numbers.data(), n), bytes_mut(chunk.data(), chunk.size()));
    REQUIRE_OK(cs);
    std::vector<uint8_t> a(n), b(n, 1);
    REQUIRE_OK(chunk_decode(d, bytes_view(chunk.data(), *cs), bytes_mut(a.data(), n)));
    CHECK(a == numbers);
    if (!have) continue;
    REQUIRE_OK(simd_level_force(simd_level::sse2));
    CHECK(!lz4_block_decode_available());
    const auto rb = chunk_decode(d, bytes_view(chunk.data(), *cs), bytes_mut(b.data(), n));
    simd_level_unforce();
    REQUIRE_OK(rb);
    CHECK(b == numbers);
    CHECK(lz4_block_decode_available());
    // A damaged chunk: where both decoders accept it, the same bytes.
    std::vector<uint8_t> hit(chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(*cs));
    hit[hit.size() / 2] ^= 0x40;
    const auto ra = chunk_decode(d, bytes_view(hit.data(), hit.size()), bytes_mut(a.data(), n));
    REQUIRE_OK(simd_level_force(simd_level::sse2));
    const auto rb2 = chunk_decode(d, bytes_view(hit.data(), hit.size()), bytes_mut(b.data(), n));
    simd_level_unforce();
    if (ra.ok() && rb2.ok()) CHECK(a == b);
  }
}
