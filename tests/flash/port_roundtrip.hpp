// SPDX-License-Identifier: BSD-3-Clause
// What the driver tests (test_flash_cfi.cpp, test_flash_spinor.cpp) check last on their model of a part: an
// array written through the flash port on the driver's device, mounted again as after a reset, one more chunk
// appended, finalized, scrubbed, and every chunk read back as written. Items: int32, kItems a chunk.
#pragma once

#include <cstring>

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "tessera/chunk.hpp"
#include "tessera/port/flash_frame.hpp"

namespace tessera::test {

template <int kItems>
void check_array_through_port(context& t, const flash_log_config& lc) {
  constexpr size_t kBytes = kItems * sizeof(int32_t);
  counting_allocator counting;
  frame_create_params fp;
  fp.typesize = 4;
  fp.blocksize = kBytes;
  fp.chunksize = kBytes;
  static int32_t items[kItems];
  static uint8_t chunks[3][kBytes + kChunkMaxOverhead];
  size_t sizes[3] = {};
  chunk_encoder enc;
  REQUIRE_OK(chunk_encoder_init(enc, counting.get()));
  chunk_encode_params cp;  // BloscLZ, clevel 5, shuffle
  cp.typesize = 4;
  cp.blocksize = kBytes;
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < kItems; ++i) items[i] = c * 1000 + i * (c + 1);
    auto n = chunk_encode(enc, cp, bytes_view(reinterpret_cast<const uint8_t*>(items), sizeof items),
                          bytes_mut(chunks[c], sizeof chunks[c]));
    REQUIRE_OK(n);
    sizes[c] = *n;
  }
  chunk_encoder_release(enc);
  {
    flash_frame ff;
    REQUIRE_OK(flash_frame_create(ff, lc, counting.get(), fp));
    CHECK_OK(flash_frame_append(ff, bytes_view(chunks[0], sizes[0])));
    CHECK_OK(flash_frame_append(ff, bytes_view(chunks[1], sizes[1])));
    flash_frame_close(ff);
  }
  {
    flash_frame ff;  // after a reset: mount, one more chunk, finalize
    REQUIRE_OK(flash_frame_mount(ff, lc, counting.get(), fp));
    CHECK_EQ(ff.nchunks, 2);
    CHECK_OK(flash_frame_append(ff, bytes_view(chunks[2], sizes[2])));
    CHECK_OK(flash_frame_finalize(ff));
    CHECK_OK(flash_frame_scrub(ff));
    static uint8_t back[kBytes + kChunkMaxOverhead];
    for (int c = 0; c < 3; ++c) {
      auto n = flash_frame_chunk_read(ff, c, bytes_mut(back, sizeof back));
      CHECK_OK(n);
      if (n.ok()) CHECK(*n == sizes[c] && std::memcmp(back, chunks[c], sizes[c]) == 0);
    }
    flash_frame_close(ff);
  }
  CHECK(!counting.leaked());
}

}  // namespace tessera::test
