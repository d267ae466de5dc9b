// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/b2nd_meta.hpp"

#include <string.h>

#include "base/byte_order.hpp"
#include "tessera/msgpack.hpp"

namespace tessera {

namespace {

constexpr uint32_t kB2ndElements = 7;
constexpr uint32_t kCatervaElements = 5;

detail::code_status meta_validate(const b2nd_meta& meta) noexcept {
  if (meta.version != kB2ndMetaVersion) {
    return make_error(errc::unsupported, TESSERA_MSG("b2nd meta: only version 0 can be encoded"));
  }
  if (meta.ndim < 0 || meta.ndim > kMaxDims) {
    return make_error(errc::invalid_argument, TESSERA_MSG("b2nd meta: ndim outside 0..kMaxDims"));
  }
  for (int i = 0; i < meta.ndim; ++i) {
    if (meta.shape[i] < 0) return make_error(errc::invalid_argument, TESSERA_MSG("b2nd meta: negative shape"));
    if (meta.chunkshape[i] < 0) return make_error(errc::invalid_argument, TESSERA_MSG("b2nd meta: negative chunkshape"));
    if (meta.blockshape[i] < 0) return make_error(errc::invalid_argument, TESSERA_MSG("b2nd meta: negative blockshape"));
    if (meta.blockshape[i] == 0 && meta.chunkshape[i] != 0) {
      return make_error(errc::invalid_argument, TESSERA_MSG("b2nd meta: blockshape 0 where chunkshape is not 0"));
    }
  }
  if (meta.dtype_format < 0) return make_error(errc::invalid_argument, TESSERA_MSG("b2nd meta: negative dtype_format"));
  const span<const char> dtype = b2nd_meta_dtype_or_default(meta);
  if (dtype.data() == nullptr && !dtype.empty()) {
    return make_error(errc::invalid_argument, TESSERA_MSG("b2nd meta: dtype has a size but no data"));
  }
  // The reference stores the length as an int32.
  if (dtype.size() > size_t{INT32_MAX}) return make_error(errc::invalid_argument, TESSERA_MSG("b2nd meta: dtype too long"));
  return ok_status();
}


uint32_t dims_header_read(msgpack_reader& r, int ndim) noexcept {
  if (ndim > 15 && r.peek_marker() == ((0x90 + ndim) & 0xff)) {
    (void)r.read_raw(1);
    return static_cast<uint32_t>(ndim);
  }
  return r.read_array();
}

// The encoding's size: every field has a fixed form, so it is a sum (of a validated meta: the dtype is below
// INT32_MAX bytes, ndim at most kMaxDims).
size_t meta_size(const b2nd_meta& meta) noexcept {
  return 3 + 3 + static_cast<size_t>(meta.ndim) * (9 + 5 + 5) + 1 + 5 + b2nd_meta_dtype_or_default(meta).size();
}

// The metalayer in the forms the format pins, stored directly (meta_size bytes at p): fixarray 7, version and
// ndim as positive fixints, the shape as d3 int64s, chunk and block shapes as d2 int32s, the dtype format as a
// fixint and the dtype as str32 (always, even for short strings). The reference writes the byte 0x90 + ndim
// before each shape list whatever ndim is: a fixarray up to 15, but for 16 (its B2ND_MAX_DIM) 0xa0, a fixstr
// marker. Builds with kMaxDims >= 16 write and accept the same byte.
void meta_write(const b2nd_meta& meta, uint8_t* p) noexcept {
  const int ndim = meta.ndim;
  const uint8_t dims_marker = static_cast<uint8_t>(0x90 + ndim);
  *p++ = 0x90 | kB2ndElements;
  *p++ = static_cast<uint8_t>(kB2ndMetaVersion);
  *p++ = static_cast<uint8_t>(ndim);
  *p++ = dims_marker;
  for (int i = 0; i < ndim; ++i, p += 9) {
    p[0] = 0xd3;
    detail::be_store64(p + 1, static_cast<uint64_t>(meta.shape[i]));
  }
  const int32_t* const shapes[2] = {meta.chunkshape, meta.blockshape};
  for (const int32_t* dims : shapes) {
    *p++ = dims_marker;
    for (int i = 0; i < ndim; ++i, p += 5) {
      p[0] = 0xd2;
      detail::be_store32(p + 1, static_cast<uint32_t>(dims[i]));
    }
  }
  *p++ = static_cast<uint8_t>(meta.dtype_format);
  const span<const char> dtype = b2nd_meta_dtype_or_default(meta);
  *p++ = 0xdb;
  detail::be_store32(p, static_cast<uint32_t>(dtype.size()));
  if (!dtype.empty()) memcpy(p + 4, dtype.data(), dtype.size());
}

// The reader's error, restated with the field that failed; overflow (a value too wide for its field) is malformed.
detail::code_status field_error(const error& e, const char* truncated_message, const char* malformed_message) noexcept {
  if (e.code == errc::truncated) return make_error(errc::truncated, truncated_message);
  return make_error(errc::malformed, malformed_message);
}

// An int32 shape of ndim items (chunkshape, blockshape), none negative. With nonzero_where (the chunkshape, for
// the blockshape), an item may be 0 only where it is 0: the reference would divide by it. The messages name the
// field by a choice, not a table: with messages compiled out the choice and the texts vanish.
detail::code_status dims32_read(msgpack_reader& r, int ndim, int32_t* out, const int32_t* nonzero_where) noexcept {
  const bool block = nonzero_where != nullptr;
  const uint32_t n = dims_header_read(r, ndim);
  if (!r.ok())
    return field_error(r.err(),
                       block ? TESSERA_MSG("b2nd meta: truncated in blockshape") : TESSERA_MSG("b2nd meta: truncated in chunkshape"),
                       block ? TESSERA_MSG("b2nd meta: blockshape is not an array") : TESSERA_MSG("b2nd meta: chunkshape is not an array"));
  if (n != static_cast<uint32_t>(ndim))
    return make_error(errc::malformed, block ? TESSERA_MSG("b2nd meta: blockshape length is not ndim")
                                             : TESSERA_MSG("b2nd meta: chunkshape length is not ndim"));
  for (int i = 0; i < ndim; ++i) {
    out[i] = r.read_int32();
    if (!r.ok())
      return field_error(r.err(),
                         block ? TESSERA_MSG("b2nd meta: truncated in blockshape") : TESSERA_MSG("b2nd meta: truncated in chunkshape"),
                         block ? TESSERA_MSG("b2nd meta: blockshape item is not an int32")
                               : TESSERA_MSG("b2nd meta: chunkshape item is not an int32"));
    if (out[i] < 0)
      return make_error(errc::malformed, block ? TESSERA_MSG("b2nd meta: negative blockshape") : TESSERA_MSG("b2nd meta: negative chunkshape"));
    if (block && out[i] == 0 && nonzero_where[i] != 0)
      return make_error(errc::malformed, TESSERA_MSG("b2nd meta: blockshape 0 where chunkshape is not 0"));
  }
  return ok_status();
}

}  // namespace

span<const char> b2nd_meta_dtype_or_default(const b2nd_meta& meta) noexcept {
  if (meta.has_dtype) return meta.dtype;
  return span<const char>(kB2ndDefaultDtype, sizeof kB2ndDefaultDtype - 1);
}

size_t b2nd_meta_encoded_size(const b2nd_meta& meta) noexcept {
  if (!meta_validate(meta).ok()) return 0;
  return meta_size(meta);
}

result<size_t> b2nd_meta_encode(const b2nd_meta& meta, bytes_mut out) noexcept {
  TESSERA_TRY(meta_validate(meta));
  if (out.data() == nullptr) {
    // A null buffer would put the writer in counting mode; here it can only be a buffer too small.
    return make_error(errc::buffer_too_small, TESSERA_MSG("b2nd meta: no output buffer"));
  }
  const size_t size = meta_size(meta);
  if (out.size() < size) return make_error(errc::buffer_too_small, TESSERA_MSG("b2nd meta: the output buffer is too small"));
  meta_write(meta, out.data());
  return size;
}

// Into the caller's meta: no result<> of the 130-byte struct to build and copy.
detail::code_status detail::b2nd_meta_decode_into(bytes_view in, b2nd_meta& meta, size_t* consumed) noexcept {
  msgpack_reader r(in);
  meta = b2nd_meta{};

  const uint32_t elements = r.read_array();
  if (!r.ok()) {
    return field_error(r.err(), TESSERA_MSG("b2nd meta: truncated before the top-level array"),
                       TESSERA_MSG("b2nd meta: the metalayer is not a msgpack array"));
  }
  if (elements != kB2ndElements && elements != kCatervaElements) {
    return make_error(errc::malformed,
                      TESSERA_MSG("b2nd meta: the top-level array has neither 7 (b2nd) nor 5 (caterva) elements"));
  }

  const int64_t version = r.read_int();
  if (!r.ok()) return field_error(r.err(), TESSERA_MSG("b2nd meta: truncated in version"), TESSERA_MSG("b2nd meta: version is not an integer"));
  if (version < 0 || version > 127) return make_error(errc::malformed, TESSERA_MSG("b2nd meta: version outside 0..127"));
  meta.version = static_cast<int8_t>(version);

  const int64_t ndim = r.read_int();
  if (!r.ok()) return field_error(r.err(), TESSERA_MSG("b2nd meta: truncated in ndim"), TESSERA_MSG("b2nd meta: ndim is not an integer"));
  if (ndim < 0 || ndim > 127) return make_error(errc::malformed, TESSERA_MSG("b2nd meta: ndim outside 0..127"));
  if (ndim > kMaxDims) return make_error(errc::unsupported, TESSERA_MSG("b2nd meta: ndim above this build's limit (rebuild with -DTESSERA_MAX_DIMS=16, c-blosc2's limit)"));
  meta.ndim = static_cast<int8_t>(ndim);

  // shape
  uint32_t n = dims_header_read(r, meta.ndim);
  if (!r.ok()) return field_error(r.err(), TESSERA_MSG("b2nd meta: truncated in shape"), TESSERA_MSG("b2nd meta: shape is not an array"));
  if (n != static_cast<uint32_t>(ndim)) return make_error(errc::malformed, TESSERA_MSG("b2nd meta: shape length is not ndim"));
  for (int i = 0; i < meta.ndim; ++i) {
    meta.shape[i] = r.read_int();
    if (!r.ok()) return field_error(r.err(), TESSERA_MSG("b2nd meta: truncated in shape"), TESSERA_MSG("b2nd meta: shape item is not an int64"));
    if (meta.shape[i] < 0) return make_error(errc::malformed, TESSERA_MSG("b2nd meta: negative shape"));
  }

  TESSERA_TRY(dims32_read(r, meta.ndim, meta.chunkshape, nullptr));
  TESSERA_TRY(dims32_read(r, meta.ndim, meta.blockshape, meta.chunkshape));

  if (elements == kB2ndElements) {
    const int64_t dtype_format = r.read_int();
    if (!r.ok()) {
      return field_error(r.err(), TESSERA_MSG("b2nd meta: truncated in dtype_format"), TESSERA_MSG("b2nd meta: dtype_format is not an integer"));
    }
    if (dtype_format < 0 || dtype_format > 127) {
      return make_error(errc::malformed, TESSERA_MSG("b2nd meta: dtype_format outside 0..127"));
    }
    meta.dtype_format = static_cast<int8_t>(dtype_format);

    const span<const char> dtype = r.read_str();
    if (!r.ok()) return field_error(r.err(), TESSERA_MSG("b2nd meta: truncated in dtype"), TESSERA_MSG("b2nd meta: dtype is not a str"));
    if (dtype.size() > size_t{INT32_MAX}) return make_error(errc::malformed, TESSERA_MSG("b2nd meta: dtype longer than 2^31-1"));
    meta.dtype = dtype;
    meta.has_dtype = true;
  }

  if (consumed != nullptr) *consumed = r.position();
  return ok_status();
}

result<b2nd_meta> b2nd_meta_decode(bytes_view in, size_t* consumed) noexcept {
  b2nd_meta meta;
  TESSERA_TRY(detail::b2nd_meta_decode_into(in, meta, consumed));
  return meta;
}

}  // namespace tessera
