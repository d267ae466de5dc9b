// The encoder's block size and split decisions, made as the reference's tuner (stune) makes them so that our
// chunks have the reference's blocks and therefore its compression ratios.
#include "tessera/chunk.hpp"

namespace tessera {

namespace {

constexpr int32_t kL1 = 32 * 1024;
constexpr int32_t kMinBufferSize = 32;     // below it chunks are memcpyed; also the least elements per split
constexpr int32_t kMaxSplitTypesize = 16;  // the reference's MAX_STREAMS

// Codecs meant for high compression ratios get blocks twice as large.
bool codec_high_ratio(codec c) noexcept { return c == codec::lz4hc || c == codec::zlib || c == codec::zstd; }

bool pipeline_has_shuffle(const chunk_encode_params& p) noexcept {
  for (uint8_t f : p.filters)
    if (f == static_cast<uint8_t>(filter_id::shuffle)) return true;
  return false;
}

}  // namespace

bool chunk_split_decide(const chunk_encode_params& p, int32_t blocksize) noexcept {
  switch (p.split) {
    case split_mode::always: return true;
    case split_mode::never: return false;
    default: break;
  }
  const bool fast_codec = p.compressor == codec::blosclz || p.compressor == codec::lz4 ||
                          (p.compressor == codec::zstd && p.clevel <= 5);
  return fast_codec && pipeline_has_shuffle(p) && p.typesize <= kMaxSplitTypesize &&
         blocksize / static_cast<int32_t>(p.typesize) >= kMinBufferSize;
}

result<int32_t> chunk_blocksize_compute(const chunk_encode_params& p, size_t nbytes_in) noexcept {
  if (p.typesize == 0) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: typesize is zero"));
  if (p.clevel < 0 || p.clevel > kChunkMaxClevel)
    return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: clevel outside 0..9"));
  if (p.blocksize < 0) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: negative blocksize"));
  if (nbytes_in > static_cast<size_t>(INT32_MAX) - kChunkMaxOverhead)
    return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: more than INT32_MAX - 32 bytes of data"));
  const int32_t nbytes = static_cast<int32_t>(nbytes_in);
  const int32_t typesize = p.typesize;
  if (nbytes < typesize) return int32_t{1};  // a chunk shorter than one element: 1-byte blocks, as the reference

  // The split decision the tuner makes is taken for one block as large as the chunk.
  const bool split = chunk_split_decide(p, nbytes);
  int32_t bs = nbytes;
  if (p.blocksize != 0) {
    bs = p.blocksize;
  } else {
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
      bs *= typesize;
      if (bs > 4 * 1024 * 1024) bs = 4 * 1024 * 1024;
      if (bs < 32 * 1024) bs = 32 * 1024;
    }
  }
  if (bs > nbytes) bs = nbytes;
  if (bs > typesize) bs = bs / typesize * typesize;  // whole elements per block
  if (bs > kChunkMaxBlocksize) bs = kChunkMaxBlocksize / typesize * typesize;
  return bs;
}

}  // namespace tessera
