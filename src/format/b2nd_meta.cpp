#include "tessera/b2nd_meta.hpp"

#include "tessera/msgpack.hpp"

namespace tessera {

namespace {

constexpr uint32_t kB2ndElements = 7;
constexpr uint32_t kCatervaElements = 5;

status meta_validate(const b2nd_meta& meta) noexcept {
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

// The reference writes the byte 0x90 + ndim before each shape list whatever ndim is: a fixarray up to 15, but for
// 16 (its B2ND_MAX_DIM) 0xa0, a fixstr marker. Builds with kMaxDims >= 16 write and accept the same byte.
void dims_header_write(msgpack_writer& w, int ndim) noexcept {
  const uint8_t marker = static_cast<uint8_t>(0x90 + ndim);
  w.write_raw(bytes_view(&marker, 1));
}

uint32_t dims_header_read(msgpack_reader& r, int ndim) noexcept {
  if (ndim > 15 && r.peek_marker() == ((0x90 + ndim) & 0xff)) {
    (void)r.read_raw(1);
    return static_cast<uint32_t>(ndim);
  }
  return r.read_array();
}

void meta_write(const b2nd_meta& meta, msgpack_writer& w) noexcept {
  w.write_fixarray(kB2ndElements);
  w.write_fixint(kB2ndMetaVersion);
  w.write_fixint(meta.ndim);
  dims_header_write(w, meta.ndim);
  for (int i = 0; i < meta.ndim; ++i) w.write_int64(meta.shape[i]);
  dims_header_write(w, meta.ndim);
  for (int i = 0; i < meta.ndim; ++i) w.write_int32(meta.chunkshape[i]);
  dims_header_write(w, meta.ndim);
  for (int i = 0; i < meta.ndim; ++i) w.write_int32(meta.blockshape[i]);
  w.write_fixint(meta.dtype_format);
  w.write_str32(b2nd_meta_dtype_or_default(meta));  // always str32, even for short strings
}

// The reader's error, restated with the field that failed; overflow (a value too wide for its field) is malformed.
error field_error(const error& e, const char* truncated_message, const char* malformed_message) noexcept {
  if (e.code == errc::truncated) return make_error(errc::truncated, truncated_message);
  return make_error(errc::malformed, malformed_message);
}

// An int32 shape of ndim items (chunkshape, blockshape), none negative. With nonzero_where (the chunkshape, for
// the blockshape), an item may be 0 only where it is 0: the reference would divide by it. The messages name the
// field by a choice, not a table: with messages compiled out the choice and the texts vanish.
status dims32_read(msgpack_reader& r, int ndim, int32_t* out, const int32_t* nonzero_where) noexcept {
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
  msgpack_writer counter;
  meta_write(meta, counter);
  return counter.ok() ? counter.position() : 0;
}

result<size_t> b2nd_meta_encode(const b2nd_meta& meta, bytes_mut out) noexcept {
  TESSERA_TRY(meta_validate(meta));
  if (out.data() == nullptr) {
    // A null buffer would put the writer in counting mode; here it can only be a buffer too small.
    return make_error(errc::buffer_too_small, TESSERA_MSG("b2nd meta: no output buffer"));
  }
  msgpack_writer w(out);
  meta_write(meta, w);
  if (!w.ok()) {
    if (w.err().code == errc::buffer_too_small) {
      return make_error(errc::buffer_too_small, TESSERA_MSG("b2nd meta: the output buffer is too small"));
    }
    return w.err();
  }
  return w.position();
}

// Into the caller's meta: no result<> of the 130-byte struct to build and copy.
status detail::b2nd_meta_decode_into(bytes_view in, b2nd_meta& meta, size_t* consumed) noexcept {
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
