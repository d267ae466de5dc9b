// SPDX-License-Identifier: BSD-3-Clause
// The automatic block size (params.blocksize 0), as the reference's tuner chooses it: its own object file, which
// a bare-metal program links only by calling partition_link_auto (tessera/codecs.hpp); its checks and clamps are
// chunk_blocksize_of's (blocksize.cpp).
#include "chunk/chunk_internal.hpp"
#include "tessera/chunk.hpp"

namespace tessera::detail {

namespace {

constexpr int32_t kL1 = 32 * 1024;

// Codecs meant for high compression ratios get blocks twice as large.
bool codec_high_ratio(codec c) noexcept { return c == codec::lz4hc || c == codec::zlib || c == codec::zstd; }

}  // namespace

void blocksize_link_auto() noexcept {}

int32_t chunk_blocksize_auto(const chunk_encode_params& p, int32_t nbytes) noexcept {
  // The split decision the tuner makes is taken for one block as large as the chunk.
  const bool split = chunk_split_decide(p, nbytes);
  int32_t bs = nbytes;
  if (nbytes >= kL1) {
    bs = kL1;
    if (codec_high_ratio(p.compressor)) bs *= 2;
    switch (p.clevel) {
      case 0: bs /= 4; break;
      case 1: bs /= 2; break;
      case 2: break;
      case 3: bs *= 2; break;
      case 4:
      case 5: bs *= 4; break;
      case 6:
      case 7:
      case 8: bs *= 8; break;
      default: bs *= codec_high_ratio(p.compressor) ? 16 : 8; break;  // 9
    }
  }
  if (p.clevel > 0 && split) {
    // Split blocks: a fixed number of elements per level, so every stream has a useful length.
    switch (p.clevel) {
      case 1:
      case 2:
      case 3: bs = 32 * 1024; break;
      case 4:
      case 5:
      case 6: bs = 64 * 1024; break;
      case 7: bs = 128 * 1024; break;
      case 8: bs = 256 * 1024; break;
      default: bs = 512 * 1024; break;
    }
    bs *= p.typesize;
    if (bs > 4 * 1024 * 1024) bs = 4 * 1024 * 1024;
    if (bs < 32 * 1024) bs = 32 * 1024;
  }
  return bs;
}

}  // namespace tessera::detail
