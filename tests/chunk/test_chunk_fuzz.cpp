// SPDX-License-Identifier: BSD-3-Clause
// Truncated and mutated chunks: the decoder returns data or an error, never reads or writes out of bounds
// (run under ASan/UBSan; guard bytes around every output).
#include <cstring>

#include "tessera/chunk.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "chunk_builder.hpp"
#include "reference_chunks.hpp"

using namespace tessera;
using namespace chunk_test;

namespace {

constexpr size_t kOut = 320 * 1024;
uint8_t g_src[8192];
uint8_t g_work[3 * 8192];
uint8_t g_chunk[20000];
uint8_t g_mut[20000];
uint8_t g_out[kOut + 64];

void decode_guarded(test::context& t, chunk_decoder& d, bytes_view c, size_t out_size, test::rng& r) {
  if (out_size > kOut) out_size = kOut;
  std::memset(g_out, 0xcc, out_size + 64);
  (void)chunk_decode(d, c, bytes_mut(g_out + 32, out_size));
  for (size_t i = 0; i < 32; ++i) {
    CHECK_EQ(g_out[i], 0xcc);
    CHECK_EQ(g_out[32 + out_size + i], 0xcc);
  }
  const size_t nblock = static_cast<size_t>(r.range(0, 8));
  const size_t bsize = static_cast<size_t>(r.range(0, 9000));
  std::memset(g_out, 0xcc, bsize + 64);
  (void)chunk_decode_block(d, c, nblock, bytes_mut(g_out + 32, bsize));
  for (size_t i = 0; i < 32; ++i) {
    CHECK_EQ(g_out[i], 0xcc);
    CHECK_EQ(g_out[32 + bsize + i], 0xcc);
  }
}

}  // namespace

TESSERA_TEST(chunk_fuzz, truncations_and_mutations_are_safe) {
  test::counting_allocator counter;
  {
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, counter.get()));
    test::rng r(99);
    // Sources: hand-built chunks of every kind and the reference's chunks.
    for (int round = 0; round < 40; ++round) {
      bytes_view base;
      size_t nbytes;
      if (round % 2 == 0) {
        build_spec s;
        s.typesize = static_cast<uint8_t>(r.range(1, 9));
        s.blocksize = static_cast<int32_t>(r.range(1, 3000));
        s.split = r.chance(50);
        s.extended = r.chance(70);
        if (s.extended && r.chance(50)) { s.filters[4] = 3; s.filters[5] = 1; }
        if (s.extended && r.chance(30)) s.filters[3] = 35;
        nbytes = static_cast<size_t>(r.range(0, 8000));
        for (size_t i = 0; i < nbytes; ++i) g_src[i] = r.chance(30) ? static_cast<uint8_t>(r.next()) : 0;
        const size_t n = chunk_build(s, g_src, nbytes, g_chunk, sizeof g_chunk, g_work);
        REQUIRE(n > 0);
        base = bytes_view(g_chunk, n);
      } else {
        const auto& rc = reference_chunks::kChunks[r.range(0, sizeof reference_chunks::kChunks /
                                                                  sizeof reference_chunks::kChunks[0] - 1)];
        base = rc.data == nullptr ? bytes_view() : bytes_view(rc.data, rc.size);
        nbytes = rc.nbytes;
      }
      // Every truncation (sampled for long chunks).
      const size_t step = base.size() > 400 ? base.size() / 200 : 1;
      for (size_t len = 0; len < base.size(); len += step) decode_guarded(t, d, base.subspan(0, len), nbytes, r);
      // Random mutations: bytes, int32 fields set to extreme values, and header fields.
      for (int m = 0; m < 150; ++m) {
        std::memcpy(g_mut, base.data(), base.size());
        const int edits = static_cast<int>(r.range(1, 4));
        for (int e = 0; e < edits; ++e) {
          const size_t at = static_cast<size_t>(r.range(0, static_cast<int64_t>(base.size()) - 1));
          switch (r.range(0, 3)) {
            case 0: g_mut[at] = static_cast<uint8_t>(r.next()); break;
            case 1: g_mut[at] ^= static_cast<uint8_t>(1u << r.range(0, 7)); break;
            case 2:
              if (at + 4 <= base.size()) {
                const int32_t vals[] = {0, -1, 1, 0x7fffffff, static_cast<int32_t>(0x80000000u), 32, -255, -256};
                put_i32(g_mut + at, vals[r.range(0, 7)]);
              }
              break;
            default: {
              const size_t h = static_cast<size_t>(r.range(0, base.size() < 32 ? 15 : 31));
              g_mut[h] = static_cast<uint8_t>(r.next());
            } break;
          }
        }
        const size_t out_size = r.chance(80) ? nbytes : static_cast<size_t>(r.range(0, 9000));
        decode_guarded(t, d, bytes_view(g_mut, base.size()), out_size, r);
      }
    }
  }
  CHECK(!counter.leaked());
}
