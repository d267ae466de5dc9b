// SPDX-License-Identifier: BSD-3-Clause
// Chunks of variable-length blocks (the reference's VL blocks), hand-built with their blocks stored as they are:
// each decodes whole, block by block and through a block request; every field that places a block (its start,
// its size, the total against nbytes) set to what it cannot be is refused with its code, by each reader.
#include <cstdint>
#include <cstring>

#include "tessera/chunk.hpp"

#include "../../src/chunk/chunk_internal.hpp"  // chunk_decode_blocks_serial (internal)

#include "../support/check.hpp"
#include "block_request.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

constexpr uint32_t kBlocks = 3;
const uint32_t kSizes[kBlocks] = {40, 24, 36};
constexpr uint32_t kNbytes = 40 + 24 + 36;
constexpr size_t kBstarts = kChunkHeaderExtendedSize;
constexpr size_t kDataStart = kBstarts + 4 * kBlocks;
constexpr size_t kCbytes = kDataStart + 4 * kBlocks + kNbytes;

uint8_t g_items[kNbytes];
uint8_t g_chunk[kCbytes];
uint8_t g_out[kNbytes + 16];  // room for a chunk whose nbytes claims more

void store_i32(uint8_t* p, int64_t v) {
  const uint32_t u = static_cast<uint32_t>(v);
  for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(u >> (8 * k));
}

// A VL-block chunk of kBlocks blocks (typesize 1, no filter, LZ4's format), each stored as it is: a 4-byte size
// then its bytes (a stream as long as its block is a copy). delta sets the delta filter in the pipeline.
bytes_view vl_chunk(bool delta = false) {
  for (uint32_t i = 0; i < kNbytes; ++i) g_items[i] = static_cast<uint8_t>(i * 5 + 1);
  std::memset(g_chunk, 0, sizeof g_chunk);
  g_chunk[0] = kChunkVersionVlBlocks;
  g_chunk[1] = 1;
  g_chunk[2] = static_cast<uint8_t>(kChunkFlagShuffle | kChunkFlagBitshuffle | kChunkFlagNoSplit |
                                    (static_cast<uint8_t>(codec_format::lz4) << 5));
  g_chunk[3] = 1;
  store_i32(g_chunk + 4, kNbytes);
  store_i32(g_chunk + 8, kBlocks);  // VL blocks: the block count
  store_i32(g_chunk + 12, kCbytes);
  if (delta) g_chunk[16 + 4] = static_cast<uint8_t>(filter_id::delta);
  g_chunk[30] = kChunkBlosc2VlBlocks;
  size_t at = kDataStart, from = 0;
  for (uint32_t b = 0; b < kBlocks; ++b) {
    store_i32(g_chunk + kBstarts + 4 * b, static_cast<int64_t>(at));
    store_i32(g_chunk + at, kSizes[b]);
    std::memcpy(g_chunk + at + 4, g_items + from, kSizes[b]);
    at += 4 + kSizes[b];
    from += kSizes[b];
  }
  return bytes_view(g_chunk, kCbytes);
}

struct collect {
  size_t consumed = 0;
  static size_t block(void*, size_t i) noexcept { return i; }
  static status consume(void* c, size_t, bytes_view, uint32_t) noexcept {
    ++static_cast<collect*>(c)->consumed;
    return ok_status();
  }
};

chunk_block_request all_blocks(collect& c) { return chunk_test::block_request_of(c, kBlocks); }

}  // namespace

TESSERA_TEST(chunk_vlblocks, a_hand_built_chunk_decodes_whole_and_by_block) {
  const bytes_view c = vl_chunk();
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  auto n = chunk_decode(d, c, bytes_mut(g_out, sizeof g_out));
  REQUIRE_OK(n);
  CHECK_EQ(*n, size_t{kNbytes});
  CHECK(std::memcmp(g_out, g_items, kNbytes) == 0);
  auto h = chunk_header_read(c);
  REQUIRE_OK(h);
  size_t from = 0;
  for (uint32_t b = 0; b < kBlocks; ++b) {
    auto e = chunk_block_extent_get(*h, c, b);
    REQUIRE_OK(e);
    CHECK_EQ(e->offset, from);
    CHECK_EQ(e->size, size_t{kSizes[b]});
    std::memset(g_out, 0, sizeof g_out);
    auto m = chunk_decode_block(d, c, b, bytes_mut(g_out, sizeof g_out));
    REQUIRE_OK(m);
    CHECK_EQ(*m, size_t{kSizes[b]});
    CHECK(std::memcmp(g_out, g_items + from, kSizes[b]) == 0);
    from += kSizes[b];
  }
  collect got;
  REQUIRE_OK(chunk_decode_blocks(d, c, all_blocks(got)));
  CHECK_EQ(got.consumed, size_t{kBlocks});
}

TESSERA_TEST(chunk_vlblocks, delta_over_vl_blocks_is_unsupported_by_every_reader) {
  const bytes_view c = vl_chunk(true);
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  CHECK_ERR(chunk_decode(d, c, bytes_mut(g_out, sizeof g_out)), errc::unsupported);
  CHECK_ERR(chunk_decode_block(d, c, 1, bytes_mut(g_out, sizeof g_out)), errc::unsupported);
  collect got;
  CHECK_ERR(chunk_decode_blocks(d, c, all_blocks(got)), errc::unsupported);
  CHECK_EQ(got.consumed, 0u);
}

TESSERA_TEST(chunk_vlblocks, each_field_that_places_a_block_is_checked) {
  struct field_case {
    const char* what;
    size_t offset;
    int64_t value;
  };
  const field_case cases[] = {
      {"block 0 starts inside the block starts", kBstarts, kDataStart - 4},
      {"block 1 starts before block 0 ends its size", kBstarts + 4, kDataStart + 2},
      {"block 2 starts past cbytes", kBstarts + 8, kCbytes + 8},
      {"block 0 starts below 0", kBstarts, -8},
      {"block 1 has size 0", kDataStart + 4 + kSizes[0], 0},
      {"block 1 has a negative size", kDataStart + 4 + kSizes[0], -3},
      {"nbytes below the blocks' sum", 4, kNbytes - 10},
      {"nbytes above the blocks' sum", 4, kNbytes + 10},
  };
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  for (const field_case& fc : cases) {
    const bytes_view c = vl_chunk();
    store_i32(g_chunk + fc.offset, fc.value);
    const int failures_before = t.failures;
    auto h = chunk_header_read(c);
    REQUIRE_OK(h);
    CHECK_ERR(chunk_decode(d, c, bytes_mut(g_out, sizeof g_out)), errc::corrupt);
    CHECK_ERR(chunk_block_extent_get(*h, c, kBlocks - 1), errc::corrupt);
    collect got;
    CHECK_ERR(chunk_decode_blocks(d, c, all_blocks(got)), errc::corrupt);
    CHECK_EQ(got.consumed, 0u);
    if (t.failures != failures_before) test::report_failure(t, __FILE__, __LINE__, fc.what);
  }
}
