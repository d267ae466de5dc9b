// SPDX-License-Identifier: BSD-3-Clause
// The encoder's block size and split decisions, made as the reference's tuner (stune) makes them so that our
// chunks have the reference's blocks and therefore its compression ratios. The automatic block size (params.
// blocksize 0) is in blocksize_auto.cpp: on bare metal only programs that call partition_link_auto link it.
#include "chunk/chunk_internal.hpp"
#include "tessera/chunk.hpp"

namespace tessera {

namespace {

constexpr int32_t kMinBufferSize = 32;     // below it chunks are memcpyed; also the least elements per split
constexpr int32_t kMaxSplitTypesize = 16;  // the reference's MAX_STREAMS

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

namespace detail {

result<int32_t> chunk_blocksize_of(const chunk_encode_params& p, size_t nbytes_in) noexcept {
  if (p.blocksize < 0) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: negative blocksize"));
  if (nbytes_in > static_cast<size_t>(INT32_MAX) - kChunkMaxOverhead)
    return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: more than INT32_MAX - 32 bytes of data"));
  const int32_t nbytes = static_cast<int32_t>(nbytes_in);
  const int32_t typesize = p.typesize;
  if (nbytes < typesize) return int32_t{1};  // a chunk shorter than one element: 1-byte blocks, as the reference
  int32_t bs = p.blocksize;
  if (bs == 0) {
#if TESSERA_CODECS_ON_DEMAND
    if (&chunk_blocksize_auto == nullptr)
      return make_error(errc::unsupported, TESSERA_MSG("chunk_encode: the automatic block size is not linked into this "
                                                       "program (give params.blocksize, or call tessera::partition_link_auto)"));
#endif
    bs = chunk_blocksize_auto(p, nbytes);
  }
  if (bs > nbytes) bs = nbytes;
  if (bs > typesize) bs = bs / typesize * typesize;  // whole elements per block
  if (bs > kChunkMaxBlocksize) bs = kChunkMaxBlocksize / typesize * typesize;
  return bs;
}

}  // namespace detail

result<int32_t> chunk_blocksize_compute(const chunk_encode_params& p, size_t nbytes) noexcept {
  if (p.typesize == 0) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: typesize is zero"));
  if (p.clevel < 0 || p.clevel > kChunkMaxClevel)
    return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: clevel outside 0..9"));
  return detail::chunk_blocksize_of(p, nbytes);
}

}  // namespace tessera
