// SPDX-License-Identifier: BSD-3-Clause
// chunk_encode_spliced (the speed path of slice writes that touch a few blocks of a chunk): for random codecs,
// pipelines, typesizes, split modes, levels, block sizes and data, the chunk it builds from an old chunk and the
// changed blocks is chunk_encode's of the new content byte for byte, and it never reads the unchanged blocks of
// its source. Old chunks it cannot splice (another header, a dictionary, the delta filter, verbatim or special
// chunks, damaged block starts or stream sizes) make it return 0, never a different chunk.
#include <cstring>

#include "../../src/chunk/chunk_internal.hpp"
#include "tessera/chunk.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

#if TESSERA_SPEED_PATHS
namespace {

constexpr size_t kMaxN = 24000;
uint8_t g_old_src[kMaxN];
uint8_t g_new_src[kMaxN];
uint8_t g_masked[kMaxN];  // the new content with every unchanged block overwritten: splice must not read them
uint8_t g_old[kMaxN + kChunkMaxOverhead];
uint8_t g_expect[kMaxN + kChunkMaxOverhead];
uint8_t g_spliced[kMaxN + kChunkMaxOverhead];
uint8_t g_changed[kMaxN / 8 + 1];

const codec kCodecs[] = {codec::blosclz, codec::lz4, codec::lz4hc, codec::zlib, codec::zstd};
const split_mode kSplits[] = {split_mode::always, split_mode::never, split_mode::forward_compat};

// Smooth numbers, small integers, zeros and noise: blocks that compress, runs, and blocks that do not.
void data_fill(test::rng& r, int kind, uint8_t* d, size_t n) {
  switch (kind) {
    case 0:
      for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>((i / 4) * 3 >> (8 * (i % 4)));
      break;
    case 1: for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(r.next() % 4); break;
    case 2: std::memset(d, 0, n); break;
    case 3: for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(r.next()); break;
    default: for (size_t i = 0; i < n; ++i) d[i] = ((i / 700) % 2) ? static_cast<uint8_t>(r.next()) : 7; break;
  }
}

// Pipelines that splice (no delta): none, shuffle, bitshuffle, shuffle + bytedelta, trunc_prec + shuffle.
void pipeline_set(chunk_encode_params& p, int pipe) {
  std::memset(p.filters, 0, sizeof p.filters);
  std::memset(p.filters_meta, 0, sizeof p.filters_meta);
  switch (pipe) {
    case 1: p.filters[5] = 1; break;
    case 2: p.filters[5] = 2; break;
    case 3: p.filters[0] = 1; p.filters[1] = 35; p.filters_meta[1] = p.typesize; break;
    case 4:
      if (p.typesize == 4) {
        p.filters[0] = 4;
        p.filters_meta[0] = 10;
      }
      p.filters[5] = 1;
      break;
    default: break;
  }
}

}  // namespace

TESSERA_TEST(chunk_splice, equals_a_whole_encode_and_reads_only_the_changed_blocks) {
  test::counting_allocator counter;
  {
    chunk_encoder e;
    REQUIRE_OK(chunk_encoder_init(e, counter.get()));
    test::rng r(2718);
    const uint8_t typesizes[] = {1, 2, 4, 8, 3, 16};
    size_t spliced = 0, eligible = 0;
    for (int round = 0; round < 400; ++round) {
      chunk_encode_params p;
      p.typesize = typesizes[r.range(0, 5)];
      p.clevel = static_cast<int>(r.range(1, 9));
      p.compressor = kCodecs[r.range(0, 4)];
      if (!codec_available(p.compressor)) continue;
      p.split = kSplits[r.range(0, 2)];
      pipeline_set(p, static_cast<int>(r.range(0, 4)));
      const size_t n = static_cast<size_t>(r.range(64, static_cast<int64_t>(kMaxN)));
      p.blocksize = static_cast<int32_t>(p.typesize * r.range(8, 1200));
      data_fill(r, static_cast<int>(r.range(0, 4)), g_old_src, n);
      auto old = chunk_encode(e, p, bytes_view(g_old_src, n), bytes_mut(g_old, n + kChunkMaxOverhead));
      REQUIRE_OK(old);
      auto bs = detail::chunk_blocksize_of(p, n);
      REQUIRE_OK(bs);
      const size_t blocksize = static_cast<size_t>(*bs);
      const size_t nblocks = (n + blocksize - 1) / blocksize;
      // The new content: a few blocks (or all, or none) changed, some of them only in part.
      std::memcpy(g_new_src, g_old_src, n);
      std::memset(g_changed, 0, nblocks / 8 + 1);
      const int share = static_cast<int>(r.range(0, 100));
      for (size_t j = 0; j < nblocks; ++j) {
        if (r.range(0, 99) >= share) continue;
        g_changed[j / 8] = static_cast<uint8_t>(g_changed[j / 8] | 1u << (j % 8));
        const size_t first = j * blocksize, size = first + blocksize <= n ? blocksize : n - first;
        const size_t from = static_cast<size_t>(r.range(0, static_cast<int64_t>(size - 1)));
        data_fill(r, static_cast<int>(r.range(0, 4)), g_new_src + first + from, size - from);
      }
      std::memcpy(g_masked, g_new_src, n);
      for (size_t j = 0; j < nblocks; ++j)
        if ((g_changed[j / 8] >> (j % 8) & 1) == 0) {
          const size_t first = j * blocksize, size = first + blocksize <= n ? blocksize : n - first;
          std::memset(g_masked + first, 0xA5, size);
        }
      auto expect = chunk_encode(e, p, bytes_view(g_new_src, n), bytes_mut(g_expect, n + kChunkMaxOverhead));
      REQUIRE_OK(expect);
      auto h = chunk_header_read(bytes_view(g_old, *old));
      REQUIRE_OK(h);
      auto s = detail::chunk_encode_spliced(e, p, bytes_view(g_old, *old), g_changed, bytes_view(g_masked, n),
                                            bytes_mut(g_spliced, n + kChunkMaxOverhead));
      REQUIRE_OK(s);
      auto he = chunk_header_read(bytes_view(g_expect, *expect));
      REQUIRE_OK(he);
      // Splices whenever both chunks hold blocks and no block comes within a block of the output's end.
      const bool can = h->special == chunk_special::none && !h->memcpyed && !he->memcpyed &&
                       *old + blocksize <= n + kChunkMaxOverhead && *expect + blocksize <= n + kChunkMaxOverhead;
      if (can) {
        ++eligible;
        CHECK_NE(*s, size_t{0});
      }
      if (*s == 0) continue;
      ++spliced;
      CHECK_EQ(*s, *expect);
      CHECK(std::memcmp(g_spliced, g_expect, *expect) == 0);
    }
    CHECK_LE(eligible, spliced);
    CHECK_LE(size_t{100}, eligible);
  }
  CHECK(!counter.leaked());
}

TESSERA_TEST(chunk_splice, refuses_chunks_it_cannot_splice) {
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  const size_t n = 16000;
  for (size_t i = 0; i < n; ++i) g_old_src[i] = static_cast<uint8_t>((i / 4) * 7 >> (8 * (i % 4)));
  chunk_encode_params p;
  p.typesize = 4;
  p.clevel = 5;
  p.compressor = codec::blosclz;
  p.blocksize = 2000;
  auto old = chunk_encode(e, p, bytes_view(g_old_src, n), bytes_mut(g_old, n + kChunkMaxOverhead));
  REQUIRE_OK(old);
  std::memset(g_changed, 0, sizeof g_changed);
  g_changed[0] = 0x02;  // block 1
  const bytes_view src(g_old_src, n);
  const bytes_mut out(g_spliced, n + kChunkMaxOverhead);
  // The spliced size; SIZE_MAX for an error (there is none to expect here).
  auto splice = [&](const chunk_encode_params& q, size_t len) -> size_t {
    auto s = detail::chunk_encode_spliced(e, q, bytes_view(g_old, len), g_changed, src, out);
    return s.ok() ? *s : SIZE_MAX;
  };
  CHECK_EQ(splice(p, *old), *old);  // the same content: the same chunk
  // Another level: no header field tells, so the old blocks are copied as they are; the chunk still holds the
  // content (the same bytes as a whole encode only when the old chunk was written with the same parameters).
  chunk_encode_params other = p;
  other.clevel = 9;
  {
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
    const size_t len = splice(other, *old);
    CHECK_LT(size_t{0}, len);
    CHECK_LE(len, n + kChunkMaxOverhead);
    if (len > 0 && len != SIZE_MAX) {
      auto dr = chunk_decode(d, bytes_view(g_spliced, len), bytes_mut(g_expect, n));
      REQUIRE_OK(dr);
      CHECK(std::memcmp(g_expect, g_old_src, n) == 0);
    }
  }
  other = p;
  other.compressor = codec::lz4;  // another codec: the header tells
  CHECK_EQ(splice(other, *old), size_t{0});
  other = p;
  other.typesize = 8;
  CHECK_EQ(splice(other, *old), size_t{0});
  other = p;
  other.filters[5] = 2;
  CHECK_EQ(splice(other, *old), size_t{0});
  other = p;
  other.filters[0] = 3;  // delta: every block depends on block 0
  CHECK_EQ(splice(other, *old), size_t{0});
  other = p;
  other.compressor = codec::lz4;
  other.use_dict = true;
  CHECK_EQ(splice(other, *old), size_t{0});
  other = p;
  other.clevel = 0;
  CHECK_EQ(splice(other, *old), size_t{0});
  CHECK_EQ(splice(p, *old - 1), size_t{0});  // cbytes disagrees with the bytes at hand
  // A block start out of order, then a stream size that overruns its block: refused, not copied.
  uint8_t saved[8];
  std::memcpy(saved, g_old + kChunkHeaderExtendedSize + 8, 8);
  std::memcpy(g_old + kChunkHeaderExtendedSize + 8, saved + 4, 4);
  std::memcpy(g_old + kChunkHeaderExtendedSize + 12, saved, 4);
  CHECK_EQ(splice(p, *old), size_t{0});
  std::memcpy(g_old + kChunkHeaderExtendedSize + 8, saved, 8);
  const int32_t start3 = detail::chunk_load_i32(g_old + kChunkHeaderExtendedSize + 12);
  detail::chunk_store_i32(g_old + start3, detail::chunk_load_i32(g_old + start3) + 1);
  CHECK_EQ(splice(p, *old), size_t{0});
  detail::chunk_store_i32(g_old + start3, detail::chunk_load_i32(g_old + start3) - 1);
  CHECK_EQ(splice(p, *old), *old);
  // Verbatim and special chunks have no blocks to copy.
  chunk_encode_params stored = p;
  stored.clevel = 0;
  auto verbatim = chunk_encode(e, stored, src, bytes_mut(g_old, n + kChunkMaxOverhead));
  REQUIRE_OK(verbatim);
  CHECK_EQ(splice(p, *verbatim), size_t{0});
  std::memset(g_masked, 0, n);
  auto zeros = chunk_encode(e, p, bytes_view(g_masked, n), bytes_mut(g_old, n + kChunkMaxOverhead));
  REQUIRE_OK(zeros);
  CHECK_EQ(*zeros, kChunkHeaderExtendedSize);
  CHECK_EQ(splice(p, *zeros), size_t{0});
}

TESSERA_TEST(chunk_splice, zeroed_blocks_make_the_zeros_chunk) {
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  const size_t n = 8000;
  std::memset(g_old_src, 0, n);
  g_old_src[5000] = 9;  // block 2 of 4 holds the only non-zero byte
  chunk_encode_params p;
  p.typesize = 8;
  p.clevel = 3;
  p.compressor = codec::blosclz;
  p.blocksize = 2000;
  auto old = chunk_encode(e, p, bytes_view(g_old_src, n), bytes_mut(g_old, n + kChunkMaxOverhead));
  REQUIRE_OK(old);
  CHECK_LT(size_t{kChunkHeaderExtendedSize}, *old);
  std::memset(g_new_src, 0, n);
  std::memset(g_changed, 0, sizeof g_changed);
  g_changed[0] = 0x04;
  auto expect = chunk_encode(e, p, bytes_view(g_new_src, n), bytes_mut(g_expect, n + kChunkMaxOverhead));
  REQUIRE_OK(expect);
  auto s = detail::chunk_encode_spliced(e, p, bytes_view(g_old, *old), g_changed, bytes_view(g_new_src, n),
                                        bytes_mut(g_spliced, n + kChunkMaxOverhead));
  REQUIRE_OK(s);
  CHECK_EQ(*s, size_t{kChunkHeaderExtendedSize});
  CHECK_EQ(*s, *expect);
  CHECK(std::memcmp(g_spliced, g_expect, *s) == 0);
}
#endif
