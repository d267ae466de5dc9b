// SPDX-License-Identifier: BSD-3-Clause
// ZFP through libzfp (zfp.hpp says what a stream is). Hosted: this file is the library tessera_zfp, outside the
// freestanding core. Per call, libzfp allocates one bitstream (stream_open, freed by stream_close before the
// call returns) and this file one buffer (malloc, freed before it returns): on decode the stream padded with
// zeros to what any stream of the block's geometry may read, on encode the most a stream may take. The zfp
// stream and field are on the stack.
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <zfp.h>

#include "codecs/zfp.hpp"

namespace tessera::detail {
namespace {

constexpr int kZfpMaxDims = 4;

// One block's geometry and mode, checked.
struct zfp_setup {
  zfp_stream stream;
  zfp_field field;
  size_t buffer_bytes;  // the most bytes any stream of this geometry and mode writes or reads, word-rounded
};

// The number of items of the block's shape, or 0 when a dimension is not positive or the product passes
// `cap` items.
size_t zfp_items(const chunk_nd_geometry& g, size_t cap) noexcept {
  size_t n = 1;
  for (int d = 0; d < g.ndim; ++d) {
    if (g.blockshape[d] <= 0) return 0;
    const size_t e = static_cast<size_t>(g.blockshape[d]);
    if (n > cap / e) return 0;
    n *= e;
  }
  return n;
}

// The stream's mode from the codec id and meta, as the reference sets it (zfp_stream_set_accuracy,
// _precision, _rate on a fresh stream).
void zfp_mode_set(zfp_stream& zs, uint8_t id, uint8_t meta, zfp_type type, int ndim, size_t typesize) noexcept {
  memset(&zs, 0, sizeof zs);
  zfp_stream_set_execution(&zs, zfp_exec_serial);
  zfp_stream_set_params(&zs, ZFP_MIN_BITS, ZFP_MAX_BITS, ZFP_MAX_PREC, ZFP_MIN_EXP);
  if (id == kZfpAccuracyId) {
    zfp_stream_set_accuracy(&zs, pow(10.0, static_cast<double>(static_cast<int8_t>(meta))));
  } else if (id == kZfpPrecisionId) {
    unsigned prec = static_cast<unsigned>(meta) + 2u * static_cast<unsigned>(ndim) + 3u;
    if (prec > ZFP_MAX_PREC) prec = ZFP_MAX_PREC;
    zfp_stream_set_precision(&zs, prec);
  } else {
    const double rate = static_cast<double>(meta) / 100.0 * static_cast<double>(typesize) * 8.0;
    zfp_stream_set_rate(&zs, rate, type, static_cast<unsigned>(ndim), zfp_false);
  }
}

// Fills s for a block of g's shape holding `data`; the field's x is the block's last dimension.
void zfp_setup_make(zfp_setup& s, uint8_t id, uint8_t meta, size_t typesize, const chunk_nd_geometry& g,
                    void* data) noexcept {
  const zfp_type type = typesize == 4 ? zfp_type_float : zfp_type_double;
  zfp_mode_set(s.stream, id, meta, type, g.ndim, typesize);
  memset(&s.field, 0, sizeof s.field);
  zfp_field_set_type(&s.field, type);
  zfp_field_set_pointer(&s.field, data);
  size_t n[kZfpMaxDims] = {0, 0, 0, 0};  // x, y, z, w
  for (int d = 0; d < g.ndim; ++d) n[d] = static_cast<size_t>(g.blockshape[g.ndim - 1 - d]);
  switch (g.ndim) {
    case 1: zfp_field_set_size_1d(&s.field, n[0]); break;
    case 2: zfp_field_set_size_2d(&s.field, n[0], n[1]); break;
    case 3: zfp_field_set_size_3d(&s.field, n[0], n[1], n[2]); break;
    default: zfp_field_set_size_4d(&s.field, n[0], n[1], n[2], n[3]); break;
  }
  // What a stream may read: libzfp's reader checks nothing, so the bound is worked out from its decoder
  // (1.0.0, src/template/decode.c): a block reads its zero flag and exponent, then per bit plane at most the
  // values found so far plus one bit per value found and one stop bit (or at most maxbits with a rate), and
  // skips to minbits. libzfp's own maximum (zfp_stream_maximum_size) bounds the encoder; the larger of the two.
  uint64_t blocks = 1;
  for (int d = 0; d < g.ndim; ++d) blocks *= (n[d] + 3) / 4;
  const uint64_t values = uint64_t{1} << (2 * g.ndim);
  const uint64_t intprec = typesize * 8;
  const uint64_t prec = s.stream.maxprec < intprec ? s.stream.maxprec : intprec;
  uint64_t block_bits = 1 + (typesize == 4 ? 8 : 11) + prec * (values + 1) + values;
  if (block_bits < s.stream.minbits) block_bits = s.stream.minbits;
  const uint64_t words = (blocks * block_bits + 63) / 64 + 2;  // and a word either side of any read-ahead
  uint64_t bytes = words * 8;
  const uint64_t zfp_max = zfp_stream_maximum_size(&s.stream, &s.field);
  if (zfp_max > bytes) bytes = (zfp_max + 7) / 8 * 8;
  s.buffer_bytes = bytes > SIZE_MAX ? 0 : static_cast<size_t>(bytes);
}

// The bit stream over buf, attached to zs and rewound.
bitstream* zfp_bitstream_attach(zfp_stream& zs, void* buf, size_t bytes) noexcept {
  bitstream* bs = stream_open(buf, bytes);
  if (bs == nullptr) return nullptr;
  zfp_stream_set_bit_stream(&zs, bs);
  zfp_stream_rewind(&zs);
  return bs;
}

status zfp_types_check(uint8_t id, size_t typesize) noexcept {
  if (!zfp_id(id)) return make_error(errc::unsupported, TESSERA_MSG("zfp: not a ZFP codec id (33, 34, 35)"));
  if (typesize != 4 && typesize != 8)
    return make_error(errc::unsupported, TESSERA_MSG("zfp: items of 4 (float32) or 8 (float64) bytes only"));
  return ok_status();
}

}  // namespace

status zfp_decompress(uint8_t id, uint8_t meta, size_t typesize, const chunk_nd_geometry& g, bytes_view in,
                      bytes_mut out) noexcept {
  if (g.ndim == 0)
    return make_error(errc::unsupported, TESSERA_MSG("zfp: the chunk needs the array's block shape (chunk_nd_geometry)"));
  if (g.ndim < 0 || g.ndim > kZfpMaxDims)
    return make_error(errc::unsupported, TESSERA_MSG("zfp: blocks of 1 to 4 dimensions only"));
  TESSERA_TRY(zfp_types_check(id, typesize));
  const size_t items = zfp_items(g, out.size() / typesize);
  if (items == 0 || items * typesize != out.size())
    return make_error(errc::corrupt, TESSERA_MSG("zfp: the block shape does not make the chunk's block size"));
  zfp_setup s;
  zfp_setup_make(s, id, meta, typesize, g, out.data());
  if (s.buffer_bytes == 0) return make_error(errc::out_of_memory, TESSERA_MSG("zfp: stream buffer too large"));
  auto* buf = static_cast<uint8_t*>(malloc(s.buffer_bytes));
  if (buf == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("zfp: malloc refused the stream's buffer"));
  const size_t n = in.size() < s.buffer_bytes ? in.size() : s.buffer_bytes;
  if (n > 0) memcpy(buf, in.data(), n);
  memset(buf + n, 0, s.buffer_bytes - n);
  status st = ok_status();
  bitstream* bs = zfp_bitstream_attach(s.stream, buf, s.buffer_bytes);
  if (bs == nullptr) {
    st = make_error(errc::out_of_memory, TESSERA_MSG("zfp: libzfp could not open a bit stream"));
  } else {
    const size_t used = ::zfp_decompress(&s.stream, &s.field);
    stream_close(bs);
    if (used == 0) st = make_error(errc::corrupt, TESSERA_MSG("zfp: libzfp refused the stream"));
    else if (used > in.size()) st = make_error(errc::corrupt, TESSERA_MSG("zfp: the stream reads past its end"));
  }
  free(buf);
  return st;
}

result<size_t> zfp_compress(uint8_t id, uint8_t meta, size_t typesize, const chunk_nd_geometry& g, bytes_view in,
                            bytes_mut out) noexcept {
  // The reference's checks, in its order.
  if (g.ndim == 0)
    return make_error(errc::unsupported, TESSERA_MSG("zfp: writing needs the array's block shape (chunk_nd_geometry)"));
  if (g.ndim < 0 || g.ndim > kZfpMaxDims)
    return make_error(errc::unsupported, TESSERA_MSG("zfp: blocks of 1 to 4 dimensions only"));
  for (int d = 0; d < g.ndim; ++d)
    if (g.blockshape[d] < 4)
      return make_error(errc::unsupported, TESSERA_MSG("zfp: every block edge must be at least 4 (ZFP's cell)"));
  const size_t items = zfp_items(g, SIZE_MAX / 8);
  if (items == 0 || in.size() / items != typesize || in.size() % items != 0) return size_t{0};  // not a whole block
  TESSERA_TRY(zfp_types_check(id, typesize));
  zfp_setup s;
  zfp_setup_make(s, id, meta, typesize, g, const_cast<uint8_t*>(in.data()));
  if (s.buffer_bytes == 0) return make_error(errc::out_of_memory, TESSERA_MSG("zfp: stream buffer too large"));
  auto* buf = static_cast<uint8_t*>(malloc(s.buffer_bytes));
  if (buf == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("zfp: malloc refused the stream's buffer"));
  bitstream* bs = zfp_bitstream_attach(s.stream, buf, s.buffer_bytes);
  if (bs == nullptr) {
    free(buf);
    return make_error(errc::out_of_memory, TESSERA_MSG("zfp: libzfp could not open a bit stream"));
  }
  size_t size = ::zfp_compress(&s.stream, &s.field);
  stream_close(bs);
  // Stored verbatim when libzfp fails or the stream does not shrink (the reference), or does not fit out.
  if (size == 0 || size >= in.size() || size > out.size()) size = 0;
  else memcpy(out.data(), buf, size);
  free(buf);
  return size;
}

}  // namespace tessera::detail
