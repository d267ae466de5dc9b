// SPDX-License-Identifier: BSD-3-Clause
// Chunks corrupted field by field from a valid one (each cut length, each header field and block start set to
// what it can never be): the decoder returns the error the field calls for, never success, and writes nothing
// past its output (run under ASan).
#include <cstdio>
#include <cstring>

#include "tessera/chunk.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "chunk_builder.hpp"

using namespace tessera;
using namespace chunk_test;

namespace {

uint8_t g_src[1000];
uint8_t g_work[3 * 1024];
uint8_t g_chunk[2048];
uint8_t g_bad[2048];
uint8_t g_out[1000];

// One corruption: a 32-bit field (or a byte when byte is true) at offset set to value, and the error it must give.
struct field_case {
  const char* what;
  size_t offset;
  int64_t value;
  bool byte;
  errc want;
};

}  // namespace

TESSERA_TEST(chunk_corrupt, every_cut_is_truncated) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  build_spec s;
  s.typesize = 4;
  s.blocksize = 256;
  for (size_t i = 0; i < sizeof g_src; ++i) g_src[i] = static_cast<uint8_t>(i / 5);
  const size_t csize = chunk_build(s, g_src, sizeof g_src, g_chunk, sizeof g_chunk, g_work);
  REQUIRE(csize > 48);
  REQUIRE_OK(chunk_decode(d, bytes_view(g_chunk, csize), bytes_mut(g_out, sizeof g_out)));
  REQUIRE(std::memcmp(g_out, g_src, sizeof g_src) == 0);
  for (size_t n = 0; n < csize; ++n) {
    CHECK_ERR(chunk_decode(d, bytes_view(g_chunk, n), bytes_mut(g_out, sizeof g_out)), errc::truncated);
    CHECK_ERR(chunk_decode_block(d, bytes_view(g_chunk, n), 0, bytes_mut(g_out, sizeof g_out)), errc::truncated);
  }
}

TESSERA_TEST(chunk_corrupt, each_field_set_to_what_it_cannot_be) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  build_spec s;
  s.typesize = 4;
  s.blocksize = 256;  // 4 blocks: bstarts at 32, 36, 40, 44; streams from 48
  for (size_t i = 0; i < sizeof g_src; ++i) g_src[i] = static_cast<uint8_t>(i / 5);
  const size_t csize = chunk_build(s, g_src, sizeof g_src, g_chunk, sizeof g_chunk, g_work);
  REQUIRE(csize > 48);
  const int64_t cb = static_cast<int64_t>(csize);
  const field_case cases[] = {
      {"version 0", 0, 0, true, errc::malformed},
      {"typesize 0", 3, 0, true, errc::malformed},
      {"nbytes negative", 4, -1, false, errc::malformed},
      {"blocksize 0", 8, 0, false, errc::malformed},
      {"blocksize negative", 8, -256, false, errc::malformed},
      {"blocksize above the maximum", 8, int64_t{kChunkMaxBlocksize} + 1, false, errc::malformed},
      {"cbytes below the 16-byte header", 12, 15, false, errc::malformed},
      {"cbytes below the 32-byte header", 12, 31, false, errc::malformed},
      {"cbytes past the bytes given", 12, cb + 1, false, errc::truncated},
      {"cbytes cutting the block starts", 12, 40, false, errc::truncated},
      {"block 0 starts before the streams", 32, 0, false, errc::corrupt},
      {"block 1 starts at a negative offset", 36, -1, false, errc::corrupt},
      {"block 2 starts inside the block starts", 40, 44, false, errc::corrupt},
      {"block 3 starts at cbytes", 44, cb, false, errc::corrupt},
      {"block 0's stream past cbytes", 48, 0x7fffffff, false, errc::truncated},
  };
  for (const field_case& c : cases) {
    std::memcpy(g_bad, g_chunk, csize);
    if (c.byte) g_bad[c.offset] = static_cast<uint8_t>(c.value);
    else put_i32(g_bad + c.offset, static_cast<int32_t>(c.value));
    const bytes_view bad(g_bad, csize);
    const error whole = chunk_decode(d, bad, bytes_mut(g_out, sizeof g_out)).err();
    if (whole.code != c.want) {
      char text[160];
      std::snprintf(text, sizeof text, "%s: chunk_decode gave errc %d, expected %d", c.what,
                    static_cast<int>(whole.code), static_cast<int>(c.want));
      test::report_failure(t, __FILE__, __LINE__, text);
    }
    // The block the corruption is in (block 0 for the header), decoded alone: an error too.
    const size_t nblock = c.offset >= 32 && c.offset < 48 ? (c.offset - 32) / 4 : 0;
    CHECK(!chunk_decode_block(d, bad, nblock, bytes_mut(g_out, sizeof g_out)).ok());
  }
}
