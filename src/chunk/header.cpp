// SPDX-License-Identifier: BSD-3-Clause
// Reading and validating chunk headers (16-byte Blosc1 and 32-byte Blosc2), and locating a chunk's sections.
#include <string.h>

#include "chunk/chunk_internal.hpp"
#include "codecs/codec.hpp"
#include "codecs/ndlz.hpp"
#include "codecs/zfp.hpp"

namespace tessera {

using detail::chunk_load_i32;

const char* codec_name(codec c) noexcept {
  switch (c) {
    case codec::blosclz: return "blosclz";
    case codec::lz4: return "lz4";
    case codec::lz4hc: return "lz4hc";
    case codec::zlib: return "zlib";
    case codec::zstd: return "zstd";
    case codec::ndlz: return "ndlz";
    case codec::zfp_acc: return "zfp_acc";
    case codec::zfp_prec: return "zfp_prec";
    case codec::zfp_rate: return "zfp_rate";
  }
  return "unknown";
}

bool codec_available(codec c) noexcept {
  switch (c) {
    case codec::blosclz: return true;
    case codec::lz4:
    case codec::lz4hc:
    case codec::zlib:
    case codec::zstd: {
      const codec_format f = c == codec::zlib ? codec_format::zlib : c == codec::zstd ? codec_format::zstd : codec_format::lz4;
      const detail::codec_decoder_impl* impl = detail::codec_decoder_find(f);
      return impl != nullptr && impl->available;
    }
    case codec::ndlz: return detail::ndlz_decoder_linked();
    case codec::zfp_acc:
    case codec::zfp_prec:
    case codec::zfp_rate: return detail::zfp_built();
  }
  return false;
}

// Into h by reference rather than building a result: a 32-bit target would otherwise hold every field in
// registers and the stack, and store them all again.
detail::code_status detail::chunk_header_parse(bytes_view chunk, chunk_header& h) noexcept {
  h = chunk_header{};
  if (chunk.size() < kChunkHeaderMinSize) return make_error(errc::truncated, TESSERA_MSG("chunk: shorter than its 16-byte header"));
  const uint8_t* p = chunk.data();
  h.version = p[0];
  h.versionlz = p[1];
  h.flags = p[2];
  h.typesize = p[3];
  h.nbytes = chunk_load_i32(p + 4);
  h.blocksize = chunk_load_i32(p + 8);
  h.cbytes = chunk_load_i32(p + 12);
  if (h.cbytes < static_cast<int32_t>(kChunkHeaderMinSize))
    return make_error(errc::malformed, TESSERA_MSG("chunk: cbytes smaller than the header"));
  if (h.nbytes < 0) return make_error(errc::malformed, TESSERA_MSG("chunk: negative nbytes"));
  if (h.blocksize <= 0) return make_error(errc::malformed, TESSERA_MSG("chunk: blocksize is zero or negative"));
  if (h.blocksize > kChunkMaxBlocksize) return make_error(errc::malformed, TESSERA_MSG("chunk: blocksize above the maximum"));
  if (h.typesize == 0) return make_error(errc::malformed, TESSERA_MSG("chunk: typesize is zero"));
  if (h.version == 0) return make_error(errc::malformed, TESSERA_MSG("chunk: format version 0"));

  h.extended = (h.flags & kChunkFlagShuffle) != 0 && (h.flags & kChunkFlagBitshuffle) != 0;
  if (h.extended) {
    if (h.cbytes < static_cast<int32_t>(kChunkHeaderExtendedSize))
      return make_error(errc::malformed, TESSERA_MSG("chunk: cbytes smaller than the extended header"));
    if (chunk.size() < kChunkHeaderExtendedSize)
      return make_error(errc::truncated, TESSERA_MSG("chunk: shorter than its 32-byte extended header"));
    memcpy(h.filters, p + 16, kChunkMaxFilters);
    h.udcodec = p[22];
    h.compcode_meta = p[23];
    memcpy(h.filters_meta, p + 24, kChunkMaxFilters);
    h.blosc2_flags2 = p[30];
    h.blosc2_flags = p[31];
    const uint8_t special = (h.blosc2_flags >> 4) & 0x7;
    if (special > static_cast<uint8_t>(chunk_special::uninit))
      return make_error(errc::malformed, TESSERA_MSG("chunk: unknown special-value kind"));
    h.special = static_cast<chunk_special>(special);
    h.vlblocks = (h.blosc2_flags2 & kChunkBlosc2VlBlocks) != 0;
    if (h.vlblocks && h.special != chunk_special::none)
      return make_error(errc::malformed, TESSERA_MSG("chunk: VL-block chunks cannot be special-value chunks"));
    if (h.special == chunk_special::value) {
      h.value_size = h.cbytes - static_cast<int32_t>(kChunkHeaderExtendedSize);
      if (h.value_size <= 0) return make_error(errc::malformed, TESSERA_MSG("chunk: special value chunk without its value"));
      if (h.value_size > h.nbytes) return make_error(errc::malformed, TESSERA_MSG("chunk: special value larger than nbytes"));
      if (h.nbytes % h.value_size != 0)
        return make_error(errc::malformed, TESSERA_MSG("chunk: nbytes not a multiple of the special value's size"));
    } else if (h.special != chunk_special::none && h.special != chunk_special::zeros) {
      if (h.nbytes % h.typesize != 0) return make_error(errc::malformed, TESSERA_MSG("chunk: nbytes not a multiple of typesize"));
    }
    // The Blosc2 alpha format left the sixth slot uninitialized.
    if (h.version == kChunkVersionAlpha) {
      h.filters[5] = 0;
      h.filters_meta[5] = 0;
    }
    h.dict = (h.blosc2_flags & kChunkBlosc2Dict) != 0;
    h.lazy = (h.blosc2_flags & kChunkBlosc2Lazy) != 0 && h.special == chunk_special::none;
    h.header_size = kChunkHeaderExtendedSize;
  } else {
    // Blosc1: the filters come from the flags (shuffle or bitshuffle in the last slot, delta before it).
    if (h.flags & kChunkFlagShuffle) h.filters[kChunkMaxFilters - 1] = static_cast<uint8_t>(filter_id::shuffle);
    if (h.flags & kChunkFlagBitshuffle) h.filters[kChunkMaxFilters - 1] = static_cast<uint8_t>(filter_id::bitshuffle);
    if (h.flags & kChunkFlagDelta) h.filters[kChunkMaxFilters - 2] = static_cast<uint8_t>(filter_id::delta);
    h.header_size = kChunkHeaderMinSize;
  }
  if (h.version > kChunkVersionVlBlocks && (h.blosc2_flags2 & ~kChunkBlosc2VlBlocks) != 0)
    return make_error(errc::unsupported, TESSERA_MSG("chunk: a newer format version with features this library lacks"));
  h.memcpyed = (h.flags & kChunkFlagMemcpyed) != 0;
  if (h.vlblocks && h.memcpyed) return make_error(errc::malformed, TESSERA_MSG("chunk: VL-block chunks cannot be memcpyed"));
  if (h.memcpyed && static_cast<int64_t>(h.cbytes) != static_cast<int64_t>(h.nbytes) + h.header_size)
    return make_error(errc::malformed, TESSERA_MSG("chunk: memcpyed chunk whose cbytes is not nbytes plus the header"));
  h.split = (h.flags & kChunkFlagNoSplit) == 0;
  h.format = static_cast<codec_format>(h.flags >> 5);
  if (h.vlblocks) {
    h.nblocks = static_cast<uint32_t>(h.blocksize);
    h.leftover = 0;
    // Blocks without bytes, or bytes without blocks, cannot add up (found by fuzz_chunk_decode_block).
    if ((h.nbytes == 0) != (h.nblocks == 0))
      return make_error(errc::malformed, TESSERA_MSG("chunk: VL-block chunk whose block count and nbytes disagree"));
  } else {
    if (h.nbytes > 0 && h.blocksize > h.nbytes) h.blocksize = h.nbytes;
    h.nblocks = static_cast<uint32_t>(h.nbytes / h.blocksize);
    h.leftover = h.nbytes % h.blocksize;
    if (h.leftover > 0) ++h.nblocks;
  }
  return ok_status();
}

result<chunk_header> chunk_header_read(bytes_view chunk) noexcept {
  chunk_header h;
  TESSERA_TRY(detail::chunk_header_parse(chunk, h));
  return h;
}

namespace detail {

bool block_streams_within(const uint8_t* c, uint64_t start, uint64_t end, size_t nstreams) noexcept {
  uint64_t pos = start;
  for (size_t s = 0; s < nstreams; ++s) {
    if (end < pos || end - pos < 4) return false;
    const int32_t csize = chunk_load_i32(c + pos);
    pos += 4;
    const uint64_t n = csize < 0 ? 1 : static_cast<uint64_t>(csize);
    if (end - pos < n) return false;
    pos += n;
  }
  return true;
}

detail::code_status chunk_layout_get(const chunk_header& h, bytes_view chunk, chunk_layout& l) noexcept {
  if (h.lazy) return make_error(errc::unsupported, TESSERA_MSG("chunk: lazy chunk, its blocks live in the frame"));
  if (chunk.size() < static_cast<size_t>(h.cbytes)) return make_error(errc::truncated, TESSERA_MSG("chunk: shorter than its cbytes"));
  l = chunk_layout{};
  l.chunk = chunk.subspan(0, static_cast<size_t>(h.cbytes));
  l.bstarts = h.header_size;
  l.data_start = h.header_size;
  if (h.special != chunk_special::none || h.memcpyed) return ok_status();
  if (h.nblocks == 0 && static_cast<uint32_t>(h.cbytes) == h.header_size) return ok_status();  // an empty chunk
  const uint64_t bstarts_end = h.header_size + uint64_t{4} * h.nblocks;
  if (bstarts_end > l.chunk.size()) return make_error(errc::truncated, TESSERA_MSG("chunk: bstarts run past cbytes"));
  l.data_start = static_cast<size_t>(bstarts_end);
  if (h.dict) {  // every offset below stays within cbytes (< 2^31) plus a checked dictionary size: no wrap
    if (l.chunk.size() - l.data_start < 4) return make_error(errc::truncated, TESSERA_MSG("chunk: dictionary size past cbytes"));
    const int32_t dsize = chunk_load_i32(l.chunk.data() + l.data_start);
    if (dsize <= 0 || dsize > kChunkMaxDictSize) return make_error(errc::malformed, TESSERA_MSG("chunk: invalid dictionary size"));
    l.data_start += 4;
    if (static_cast<size_t>(dsize) > l.chunk.size() - l.data_start)
      return make_error(errc::truncated, TESSERA_MSG("chunk: dictionary runs past cbytes"));
    l.dict = l.chunk.subspan(l.data_start, static_cast<size_t>(dsize));
    l.data_start += static_cast<size_t>(dsize);
  }
  return ok_status();
}

result<vl_block> vl_block_get(const chunk_header& h, const chunk_layout& l, size_t nblock) noexcept {
  const uint8_t* c = l.chunk.data();
  const uint64_t cbytes = l.chunk.size();
  const int32_t start = chunk_load_i32(c + l.bstarts + 4 * nblock);
  const int64_t next = nblock + 1 < h.nblocks ? chunk_load_i32(c + l.bstarts + 4 * (nblock + 1))
                                              : static_cast<int64_t>(cbytes);
  if (start < 0 || static_cast<uint64_t>(start) < l.data_start || next <= static_cast<int64_t>(start) + 4 ||
      static_cast<uint64_t>(next) > cbytes)
    return make_error(errc::corrupt, TESSERA_MSG("chunk: VL block start out of order or out of bounds"));
  const int32_t size = chunk_load_i32(c + start);
  if (size <= 0) return make_error(errc::corrupt, TESSERA_MSG("chunk: VL block with a zero or negative size"));
  vl_block b;
  b.stream = static_cast<uint64_t>(start) + 4;
  b.stream_size = static_cast<uint64_t>(next - start - 4);
  b.size = static_cast<uint32_t>(size);
  return b;
}

result<uint32_t> vl_blocks_scan(const chunk_header& h, const chunk_layout& l, size_t offsets_of,
                                uint64_t* offset_out) noexcept {
  uint64_t total = 0;
  uint32_t largest = 0;
  for (size_t i = 0; i < h.nblocks; ++i) {
    auto b = vl_block_get(h, l, i);
    if (!b.ok()) return b.err();
    if (i == offsets_of && offset_out != nullptr) *offset_out = total;
    total += b->size;
    if (total > static_cast<uint64_t>(h.nbytes)) return make_error(errc::corrupt, TESSERA_MSG("chunk: VL block sizes exceed nbytes"));
    if (b->size > largest) largest = b->size;
  }
  if (total != static_cast<uint64_t>(h.nbytes)) return make_error(errc::corrupt, TESSERA_MSG("chunk: VL block sizes do not add up to nbytes"));
  return largest;
}

}  // namespace detail

result<chunk_block_extent> chunk_block_extent_get(const chunk_header& h, bytes_view chunk, size_t nblock) noexcept {
  if (nblock >= h.nblocks) return make_error(errc::out_of_range, TESSERA_MSG("chunk: block index past the chunk's blocks"));
  chunk_block_extent e;
  if (!h.vlblocks) {
    e.offset = nblock * static_cast<size_t>(h.blocksize);
    e.size = (nblock + 1 == h.nblocks && h.leftover > 0) ? static_cast<size_t>(h.leftover)
                                                          : static_cast<size_t>(h.blocksize);
    return e;
  }
  detail::chunk_layout l;
  TESSERA_TRY(detail::chunk_layout_get(h, chunk, l));
  uint64_t offset = 0;
  auto scan = detail::vl_blocks_scan(h, l, nblock, &offset);
  if (!scan.ok()) return scan.err();
  auto b = detail::vl_block_get(h, l, nblock);
  if (!b.ok()) return b.err();
  e.offset = static_cast<size_t>(offset);
  e.size = b->size;
  return e;
}

result<chunk_lazy_trailer> chunk_lazy_trailer_read(const chunk_header& h, bytes_view chunk) noexcept {
  if (!h.lazy) return make_error(errc::invalid_argument, TESSERA_MSG("chunk: not a lazy chunk"));
  const uint64_t trailer = h.header_size + uint64_t{4} * h.nblocks;
  const uint64_t end = trailer + 4 + 8 + uint64_t{4} * h.nblocks;
  if (end > chunk.size()) return make_error(errc::truncated, TESSERA_MSG("chunk: lazy trailer runs past the bytes given"));
  const uint8_t* p = chunk.data() + trailer;
  chunk_lazy_trailer t;
  t.nchunk = chunk_load_i32(p);
  const uint64_t lo = detail::chunk_load_u32(p + 4);
  const uint64_t hi = detail::chunk_load_u32(p + 8);
  const uint64_t off = lo | hi << 32;
  if (off > static_cast<uint64_t>(INT64_MAX)) return make_error(errc::malformed, TESSERA_MSG("chunk: negative lazy chunk offset"));
  t.offset = static_cast<int64_t>(off);
  t.block_csizes = chunk.subspan(static_cast<size_t>(trailer + 12), size_t{4} * h.nblocks);
  return t;
}

}  // namespace tessera
