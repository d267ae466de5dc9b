// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/msgpack.hpp"

#include <string.h>

namespace tessera {

namespace {

// Markers (msgpack specification).
constexpr uint8_t kNil = 0xc0, kReserved = 0xc1, kFalse = 0xc2, kTrue = 0xc3;
constexpr uint8_t kBin8 = 0xc4, kBin16 = 0xc5, kBin32 = 0xc6;
constexpr uint8_t kExt8 = 0xc7, kExt16 = 0xc8, kExt32 = 0xc9;
constexpr uint8_t kFloat32 = 0xca, kFloat64 = 0xcb;
constexpr uint8_t kUint8 = 0xcc, kUint16 = 0xcd, kUint32 = 0xce, kUint64 = 0xcf;
constexpr uint8_t kInt8 = 0xd0, kInt16 = 0xd1, kInt32 = 0xd2, kInt64 = 0xd3;
constexpr uint8_t kFixext1 = 0xd4, kFixext16 = 0xd8;
constexpr uint8_t kStr8 = 0xd9, kStr16 = 0xda, kStr32 = 0xdb;
constexpr uint8_t kArray16 = 0xdc, kArray32 = 0xdd, kMap16 = 0xde, kMap32 = 0xdf;
constexpr uint8_t kFixmap = 0x80, kFixarray = 0x90, kFixstr = 0xa0;

msgpack_type type_of(uint8_t m) noexcept {
  if (m <= 0x7f || m >= 0xe0) return msgpack_type::integer;
  if (m <= 0x8f) return msgpack_type::map;
  if (m <= 0x9f) return msgpack_type::array;
  if (m <= 0xbf) return msgpack_type::str;
  switch (m) {
    case kNil: return msgpack_type::nil;
    case kReserved: return msgpack_type::invalid;
    case kFalse:
    case kTrue: return msgpack_type::boolean;
    case kBin8:
    case kBin16:
    case kBin32: return msgpack_type::bin;
    case kExt8:
    case kExt16:
    case kExt32: return msgpack_type::ext;
    case kFloat32: return msgpack_type::float32;
    case kFloat64: return msgpack_type::float64;
    case kStr8:
    case kStr16:
    case kStr32: return msgpack_type::str;
    case kArray16:
    case kArray32: return msgpack_type::array;
    case kMap16:
    case kMap32: return msgpack_type::map;
    default: break;
  }
  if (m <= kInt64) return msgpack_type::integer;  // the markers left are 0xcc..0xd3 (integers) and the fixexts
  return msgpack_type::ext;  // fixext 0xd4..0xd8
}

// Whether n needs more than 32 bits, written so that 32-bit targets (size_t of 32 bits) see no constant compare.
constexpr bool above_u32(size_t n) noexcept { return ((n >> 16) >> 16) != 0; }

// Width in bytes of the length field after a marker of the 8/16/32-bit family starting at first.
size_t width_of(uint8_t m, uint8_t first) noexcept { return size_t{1} << (m - first); }

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Reader

void msgpack_reader::fail_expected(int m, const char* ends, const char* expected) noexcept {
  if (m < 0) fail(errc::truncated, ends);
  else fail(errc::malformed, expected);
}

msgpack_type msgpack_reader::peek_type() const noexcept {
  if (!err_.ok() || pos_ >= in_.size()) return msgpack_type::none;
  return type_of(in_[pos_]);
}

int msgpack_reader::peek_marker() const noexcept {
  if (!err_.ok() || pos_ >= in_.size()) return -1;
  return in_[pos_];
}

const uint8_t* msgpack_reader::take(size_t n) noexcept {
  if (!err_.ok()) return nullptr;
  if (n > in_.size() - pos_) {
    fail(errc::truncated, TESSERA_MSG("msgpack: the input ends inside an object"));
    return nullptr;
  }
  const uint8_t* p = in_.data() + pos_;
  pos_ += n;
  return p;
}

bool msgpack_reader::read_be(size_t n, uint64_t* value) noexcept {
  const uint8_t* p = take(n);
  if (p == nullptr) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  *value = v;
  return true;
}

bool msgpack_reader::read_marked(uint8_t marker, size_t width, uint64_t* value) noexcept {
  if (peek_marker() != marker) return false;
  // Inline, not through take(): a frame header is a dozen of these, read on every open.
  if (width >= in_.size() - pos_) {  // the error stays where the object starts
    fail(errc::truncated, TESSERA_MSG("msgpack: the input ends inside an object"));
    return false;
  }
  const uint8_t* p = in_.data() + pos_ + 1;
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v = (v << 8) | p[i];
  pos_ += 1 + width;
  *value = v;
  return true;
}

bool msgpack_reader::read_integer(uint64_t* bits, bool* negative) noexcept {
  // The integer markers by range, not through peek_type: a reader of integers links no type table.
  const int mk = peek_marker();
  if (mk < 0 || !(mk <= 0x7f || mk >= 0xe0 || (mk >= kUint8 && mk <= kInt64))) {
    fail_expected(mk, TESSERA_MSG("msgpack: the input ends before an integer"), TESSERA_MSG("msgpack: expected an integer"));
    return false;
  }
  const uint8_t m = *take(1);
  if (m <= 0x7f) {
    *bits = m;
    *negative = false;
    return true;
  }
  if (m >= 0xe0) {  // negative fixint: -32..-1
    *bits = (~uint64_t{0} << 5) | (m & 0x1fu);
    *negative = true;
    return true;
  }
  const bool is_signed = m >= kInt8;
  const size_t n = width_of(m, is_signed ? kInt8 : kUint8);
  uint64_t v = 0;
  if (!read_be(n, &v)) return false;
  *negative = false;
  // n is 1, 2, 4 or 8 (width_of a marker checked above); the analyzer does not follow width_of's shift.
  if (is_signed && (v >> (8 * n - 1)) != 0) {  // NOLINT(clang-analyzer-core.UndefinedBinaryOperatorResult)
    if (n < 8) v |= ~uint64_t{0} << (8 * n);  // sign-extend
    *negative = true;
  }
  *bits = v;
  return true;
}

int64_t msgpack_reader::read_int() noexcept {
  uint64_t bits = 0;
  bool negative = false;
  if (!read_integer(&bits, &negative)) return 0;
  if (!negative && bits > uint64_t{INT64_MAX}) {
    fail(errc::overflow, TESSERA_MSG("msgpack: the integer does not fit int64"));
    return 0;
  }
  // Two's complement bits to int64 without implementation-defined conversions.
  if (negative) return -static_cast<int64_t>(~bits) - 1;
  return static_cast<int64_t>(bits);
}

uint64_t msgpack_reader::read_uint() noexcept {
  uint64_t bits = 0;
  bool negative = false;
  if (!read_integer(&bits, &negative)) return 0;
  if (negative) {
    fail(errc::overflow, TESSERA_MSG("msgpack: a negative integer where an unsigned one was expected"));
    return 0;
  }
  return bits;
}

int32_t msgpack_reader::read_int32() noexcept {
  const int64_t v = read_int();
  if (v < INT32_MIN || v > INT32_MAX) {
    fail(errc::overflow, TESSERA_MSG("msgpack: the integer does not fit int32"));
    return 0;
  }
  return static_cast<int32_t>(v);
}

uint32_t msgpack_reader::read_uint32() noexcept {
  const uint64_t v = read_uint();
  if (v > UINT32_MAX) {
    fail(errc::overflow, TESSERA_MSG("msgpack: the integer does not fit uint32"));
    return 0;
  }
  return static_cast<uint32_t>(v);
}

void msgpack_reader::read_nil() noexcept {
  const int m = peek_marker();
  if (m == kNil) {
    ++pos_;
  } else {
    fail_expected(m, TESSERA_MSG("msgpack: the input ends before nil"), TESSERA_MSG("msgpack: expected nil"));
  }
}

bool msgpack_reader::read_bool() noexcept {
  const int m = peek_marker();
  if (m == kFalse || m == kTrue) {
    ++pos_;
    return m == kTrue;
  }
  fail_expected(m, TESSERA_MSG("msgpack: the input ends before a bool"), TESSERA_MSG("msgpack: expected a bool"));
  return false;
}

float msgpack_reader::read_float32() noexcept {
  const int m = peek_marker();
  uint64_t v = 0;
  if (!read_marked(kFloat32, 4, &v)) {
    fail_expected(m, TESSERA_MSG("msgpack: the input ends before a float32"), TESSERA_MSG("msgpack: expected a float32"));
    return 0.0f;
  }
  const uint32_t bits = static_cast<uint32_t>(v);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

double msgpack_reader::read_float64() noexcept {
  const int m = peek_marker();
  if (m == kFloat32) return static_cast<double>(read_float32());
  uint64_t bits = 0;
  if (!read_marked(kFloat64, 8, &bits)) {
    fail_expected(m, TESSERA_MSG("msgpack: the input ends before a float"), TESSERA_MSG("msgpack: expected a float"));
    return 0.0;
  }
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

uint32_t msgpack_reader::read_container(bool map) noexcept {
  const int m = peek_marker();
  const int fix = map ? kFixmap : kFixarray;
  const int form16 = map ? kMap16 : kArray16;  // form16 + 1 is the 32-bit form
  uint64_t count = 0;
  if (m >= fix && m <= fix + 15) {
    ++pos_;
    count = static_cast<uint64_t>(m) & 0x0fu;
  } else if (m == form16 || m == form16 + 1) {
    ++pos_;
    if (!read_be(m == form16 ? 2 : 4, &count)) return 0;
  } else {
    fail_expected(m,
                  map ? TESSERA_MSG("msgpack: the input ends before a map")
                      : TESSERA_MSG("msgpack: the input ends before an array"),
                  map ? TESSERA_MSG("msgpack: expected a map") : TESSERA_MSG("msgpack: expected an array"));
    return 0;
  }
  // Every element takes at least one byte (a pair two): an impossible count is caught before a caller loops on it.
  if (count * (map ? 2 : 1) > remaining()) {
    fail(errc::truncated, map ? TESSERA_MSG("msgpack: the map announces more entries than bytes remain")
                              : TESSERA_MSG("msgpack: the array announces more elements than bytes remain"));
    return 0;
  }
  return static_cast<uint32_t>(count);
}

uint32_t msgpack_reader::read_array() noexcept { return read_container(false); }
uint32_t msgpack_reader::read_map() noexcept { return read_container(true); }

bool msgpack_reader::read_payload_length(size_t width, uint64_t* len) noexcept {
  if (width > 0 && !read_be(width, len)) return false;
  if (*len > remaining()) {
    fail(errc::truncated, TESSERA_MSG("msgpack: a str, bin or ext is longer than the bytes that remain"));
    return false;
  }
  return true;
}

span<const char> msgpack_reader::read_str() noexcept {
  const int m = peek_marker();
  const bool fix = m >= kFixstr && m <= kFixstr + 31;  // the length in the marker, else in 1, 2 or 4 bytes after it
  if (!fix && (m < kStr8 || m > kStr32)) {
    fail_expected(m, TESSERA_MSG("msgpack: the input ends before a str"), TESSERA_MSG("msgpack: expected a str"));
    return {};
  }
  ++pos_;
  uint64_t len = fix ? static_cast<uint64_t>(m) & 0x1fu : 0;
  if (!read_payload_length(fix ? 0 : width_of(static_cast<uint8_t>(m), kStr8), &len)) return {};
  const uint8_t* p = take(static_cast<size_t>(len));
  return span<const char>(reinterpret_cast<const char*>(p), static_cast<size_t>(len));
}

bytes_view msgpack_reader::read_bin() noexcept {
  const int m = peek_marker();
  if (m < kBin8 || m > kBin32) {
    fail_expected(m, TESSERA_MSG("msgpack: the input ends before a bin"), TESSERA_MSG("msgpack: expected a bin"));
    return {};
  }
  ++pos_;
  uint64_t len = 0;
  if (!read_payload_length(width_of(static_cast<uint8_t>(m), kBin8), &len)) return {};
  const uint8_t* p = take(static_cast<size_t>(len));
  return bytes_view(p, static_cast<size_t>(len));
}

msgpack_ext msgpack_reader::read_ext() noexcept {
  const int m = peek_marker();
  uint64_t len = 0;
  size_t width = 0;
  if (m >= kFixext1 && m <= kFixext16) {
    len = uint64_t{1} << (m - kFixext1);
  } else if (m >= kExt8 && m <= kExt32) {
    width = width_of(static_cast<uint8_t>(m), kExt8);
  } else {
    fail_expected(m, TESSERA_MSG("msgpack: the input ends before an ext"), TESSERA_MSG("msgpack: expected an ext"));
    return {};
  }
  ++pos_;
  if (width > 0 && !read_be(width, &len)) return {};
  const uint8_t* type = take(1);
  if (type == nullptr) return {};
  if (!read_payload_length(0, &len)) return {};
  msgpack_ext ext;
  ext.type = static_cast<int8_t>(*type >= 0x80 ? static_cast<int>(*type) - 256 : static_cast<int>(*type));
  ext.data = bytes_view(take(static_cast<size_t>(len)), static_cast<size_t>(len));
  return ext;
}

bytes_view msgpack_reader::read_raw(size_t n) noexcept {
  const uint8_t* p = take(n);
  if (p == nullptr) return {};
  return bytes_view(p, n);
}

namespace {

// The errors of the exact-form readers.
const char* const kEndsFixed = TESSERA_MSG("msgpack: the input ends before a fixed-width object");
const char* const kOtherForm = TESSERA_MSG("msgpack: another encoding where the format pins one");

// Two's complement of `width` bytes to int64, without implementation-defined conversions.
int64_t signed_of(uint64_t v, size_t width) noexcept {
  const uint64_t sign = uint64_t{1} << (8 * width - 1);
  if ((v & sign) == 0) return static_cast<int64_t>(v);
  if (width < 8) v |= ~uint64_t{0} << (8 * width);
  return -static_cast<int64_t>(~v) - 1;
}

}  // namespace

uint64_t msgpack_reader::read_fixed(uint8_t marker, size_t width) noexcept {
  const int m = peek_marker();
  uint64_t v = 0;
  if (!read_marked(marker, width, &v)) fail_expected(m, kEndsFixed, kOtherForm);  // a short input failed already
  return v;
}

int16_t msgpack_reader::read_int16_fixed() noexcept {
  return static_cast<int16_t>(signed_of(read_fixed(kInt16, 2), 2));
}
int32_t msgpack_reader::read_int32_fixed() noexcept {
  return static_cast<int32_t>(signed_of(read_fixed(kInt32, 4), 4));
}
int64_t msgpack_reader::read_int64_fixed() noexcept { return signed_of(read_fixed(kInt64, 8), 8); }
uint16_t msgpack_reader::read_uint16_fixed() noexcept { return static_cast<uint16_t>(read_fixed(kUint16, 2)); }
uint32_t msgpack_reader::read_uint32_fixed() noexcept { return static_cast<uint32_t>(read_fixed(kUint32, 4)); }
uint64_t msgpack_reader::read_uint64_fixed() noexcept { return read_fixed(kUint64, 8); }
uint16_t msgpack_reader::read_map16() noexcept { return static_cast<uint16_t>(read_fixed(kMap16, 2)); }

bool msgpack_reader::form_check(int first, int last) noexcept {
  const int m = peek_marker();
  if (m >= first && m <= last) return true;
  fail_expected(m, kEndsFixed, kOtherForm);
  return false;
}

// The exact forms below are the general readers behind a check of the marker.
uint32_t msgpack_reader::read_fixarray() noexcept { return form_check(kFixarray, kFixarray + 15) ? read_array() : 0; }
span<const char> msgpack_reader::read_fixstr() noexcept {
  return form_check(kFixstr, kFixstr + 31) ? read_str() : span<const char>{};
}
// bin32 and fixext16 read directly, not through read_bin and read_ext: a frame reader needs only these forms.
bytes_view msgpack_reader::read_bin32() noexcept {
  if (!form_check(kBin32, kBin32)) return {};
  ++pos_;
  uint64_t len = 0;
  if (!read_payload_length(4, &len)) return {};
  return bytes_view(take(static_cast<size_t>(len)), static_cast<size_t>(len));
}
msgpack_ext msgpack_reader::read_fixext16() noexcept {
  if (!form_check(kFixext16, kFixext16)) return {};
  ++pos_;
  uint64_t len = 16;
  const uint8_t* type = take(1);
  if (type == nullptr || !read_payload_length(0, &len)) return {};
  msgpack_ext ext;
  ext.type = static_cast<int8_t>(*type >= 0x80 ? static_cast<int>(*type) - 256 : static_cast<int>(*type));
  ext.data = bytes_view(take(16), 16);
  return ext;
}

bool msgpack_reader::skip_header(uint64_t* children) noexcept {
  *children = 0;
  switch (peek_type()) {
    case msgpack_type::none:
      if (err_.ok()) fail(errc::truncated, TESSERA_MSG("msgpack: the input ends before an object"));
      return false;
    case msgpack_type::invalid:
      fail(errc::malformed, TESSERA_MSG("msgpack: the reserved marker 0xc1"));
      return false;
    case msgpack_type::nil: read_nil(); break;
    case msgpack_type::boolean: (void)read_bool(); break;
    case msgpack_type::integer: {
      uint64_t bits = 0;
      bool negative = false;
      (void)read_integer(&bits, &negative);
      break;
    }
    case msgpack_type::float32:
    case msgpack_type::float64: (void)read_float64(); break;
    case msgpack_type::str: (void)read_str(); break;
    case msgpack_type::bin: (void)read_bin(); break;
    case msgpack_type::ext: (void)read_ext(); break;
    case msgpack_type::array: *children = read_array(); break;
    case msgpack_type::map: *children = uint64_t{read_map()} * 2; break;
  }
  return err_.ok();
}

void msgpack_reader::skip(int max_depth) noexcept {
  if (max_depth > kMsgpackMaxDepth) max_depth = kMsgpackMaxDepth;
  // Iterative, so hostile nesting costs no stack: the elements still to skip in each open container.
  uint64_t pending[kMsgpackMaxDepth];
  int depth = 0;
  do {
    uint64_t children = 0;
    if (!skip_header(&children)) return;
    if (children > 0) {
      if (depth >= max_depth) {
        fail(errc::unsupported, TESSERA_MSG("msgpack: nesting deeper than the skip limit"));
        return;
      }
      pending[depth++] = children;
      continue;
    }
    // One object is complete: count it in its container, and close every container it completes.
    while (depth > 0 && --pending[depth - 1] == 0) --depth;
  } while (depth > 0);
}

// ---------------------------------------------------------------------------------------------------------------
// Writer

void msgpack_writer::fail(errc code, const char* message) noexcept {
  if (err_.ok()) err_ = error{code, message};
}

void msgpack_writer::emit(uint8_t marker, uint64_t value, size_t width, const void* body, size_t body_len) noexcept {
  if (!err_.ok()) return;
  const size_t head = 1 + width;
  // GCOVR_EXCL_START: only a 32-bit size_t overflows here (a u32 length plus its head; armhf and Cortex-M4 run
  // msgpack.lengths_past_what_the_format_or_size_t_holds_are_refused_unread through it).
  if (body_len > SIZE_MAX - head || pos_ > SIZE_MAX - head - body_len) {
    fail(errc::overflow, TESSERA_MSG("msgpack: the output size overflows size_t"));
    return;
  }
  // GCOVR_EXCL_STOP
  const size_t n = head + body_len;
  if (counting()) {
    pos_ += n;
    return;
  }
  if (n > out_.size() - pos_) {
    fail(errc::buffer_too_small, TESSERA_MSG("msgpack: the output buffer is too small"));
    return;
  }
  uint8_t* p = out_.data() + pos_;
  p[0] = marker;
  // Big-endian, from the last byte: a shift by a constant 8 (a variable 64-bit shift is long on 32-bit targets).
  for (size_t i = width; i > 0; --i, value >>= 8) p[i] = static_cast<uint8_t>(value);
  if (body_len > 0) memcpy(p + head, body, body_len);
  pos_ += n;
}

void msgpack_writer::emit_if(bool fits, const char* message, uint8_t marker, uint64_t value, size_t width,
                             const void* body, size_t body_len) noexcept {
  if (fits) emit(marker, value, width, body, body_len);
  else fail(errc::invalid_argument, message);
}

void msgpack_writer::write_nil() noexcept { emit(kNil, 0, 0, nullptr, 0); }
void msgpack_writer::write_bool(bool value) noexcept { emit(value ? kTrue : kFalse, 0, 0, nullptr, 0); }

void msgpack_writer::write_uint(uint64_t value) noexcept {
  if (value <= 0x7f) emit(static_cast<uint8_t>(value), 0, 0, nullptr, 0);
  else if (value <= UINT8_MAX) emit(kUint8, value, 1, nullptr, 0);
  else if (value <= UINT16_MAX) emit(kUint16, value, 2, nullptr, 0);
  else if (value <= UINT32_MAX) emit(kUint32, value, 4, nullptr, 0);
  else emit(kUint64, value, 8, nullptr, 0);
}

void msgpack_writer::write_int(int64_t value) noexcept {
  if (value >= 0) {
    write_uint(static_cast<uint64_t>(value));
    return;
  }
  const uint64_t bits = static_cast<uint64_t>(value);  // two's complement, well defined
  if (value >= -32) emit(static_cast<uint8_t>(bits), 0, 0, nullptr, 0);
  else if (value >= INT8_MIN) emit(kInt8, bits & 0xffu, 1, nullptr, 0);
  else if (value >= INT16_MIN) emit(kInt16, bits & 0xffffu, 2, nullptr, 0);
  else if (value >= INT32_MIN) emit(kInt32, bits & 0xffffffffu, 4, nullptr, 0);
  else emit(kInt64, bits, 8, nullptr, 0);
}

void msgpack_writer::write_float32(float value) noexcept {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  emit(kFloat32, bits, 4, nullptr, 0);
}

void msgpack_writer::write_float64(double value) noexcept {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  emit(kFloat64, bits, 8, nullptr, 0);
}

void msgpack_writer::write_array(uint32_t count) noexcept {
  if (count <= 15) emit(static_cast<uint8_t>(kFixarray | count), 0, 0, nullptr, 0);
  else if (count <= UINT16_MAX) emit(kArray16, count, 2, nullptr, 0);
  else emit(kArray32, count, 4, nullptr, 0);
}

void msgpack_writer::write_map(uint32_t pairs) noexcept {
  if (pairs <= 15) emit(static_cast<uint8_t>(kFixmap | pairs), 0, 0, nullptr, 0);
  else if (pairs <= UINT16_MAX) emit(kMap16, pairs, 2, nullptr, 0);
  else emit(kMap32, pairs, 4, nullptr, 0);
}

void msgpack_writer::write_str(span<const char> text) noexcept {
  const size_t n = text.size();
  if (n <= 31) write_fixstr(text);
  else if (n <= UINT8_MAX) write_str8(text);
  else if (n <= UINT16_MAX) write_str16(text);
  else write_str32(text);
}

void msgpack_writer::write_bin(bytes_view data) noexcept {
  const size_t n = data.size();
  if (n <= UINT8_MAX) write_bin8(data);
  else if (n <= UINT16_MAX) write_bin16(data);
  else write_bin32(data);
}

void msgpack_writer::write_ext(int8_t type, bytes_view data) noexcept {
  const size_t n = data.size();
  const uint8_t type_byte = static_cast<uint8_t>(type);
  if (!err_.ok()) return;
  if (above_u32(n)) {
    fail(errc::invalid_argument, TESSERA_MSG("msgpack: an ext payload longer than 2^32-1 bytes"));
    return;
  }
  // The type byte sits between the length and the payload: fold it into the fixed-width field.
  switch (n) {
    case 1: emit(kFixext1, type_byte, 1, data.data(), n); return;
    case 2: emit(kFixext1 + 1, type_byte, 1, data.data(), n); return;
    case 4: emit(kFixext1 + 2, type_byte, 1, data.data(), n); return;
    case 8: emit(kFixext1 + 3, type_byte, 1, data.data(), n); return;
    case 16: emit(kFixext16, type_byte, 1, data.data(), n); return;
    default: break;
  }
  if (n <= UINT8_MAX) emit(kExt8, (uint64_t{n} << 8) | type_byte, 2, data.data(), n);
  else if (n <= UINT16_MAX) emit(kExt16, (uint64_t{n} << 8) | type_byte, 3, data.data(), n);
  else emit(kExt32, (uint64_t{n} << 8) | type_byte, 5, data.data(), n);
}

void msgpack_writer::write_fixint(int8_t value) noexcept {
  emit_if(value >= -32, TESSERA_MSG("msgpack: a fixint holds -32..127"),
          static_cast<uint8_t>(value), 0, 0, nullptr, 0);
}

void msgpack_writer::write_int8(int8_t value) noexcept { emit(kInt8, static_cast<uint8_t>(value), 1, nullptr, 0); }
void msgpack_writer::write_int16(int16_t value) noexcept {
  emit(kInt16, static_cast<uint16_t>(value), 2, nullptr, 0);
}
void msgpack_writer::write_int32(int32_t value) noexcept {
  emit(kInt32, static_cast<uint32_t>(value), 4, nullptr, 0);
}
void msgpack_writer::write_int64(int64_t value) noexcept {
  emit(kInt64, static_cast<uint64_t>(value), 8, nullptr, 0);
}
void msgpack_writer::write_uint8(uint8_t value) noexcept { emit(kUint8, value, 1, nullptr, 0); }
void msgpack_writer::write_uint16(uint16_t value) noexcept { emit(kUint16, value, 2, nullptr, 0); }
void msgpack_writer::write_uint32(uint32_t value) noexcept { emit(kUint32, value, 4, nullptr, 0); }
void msgpack_writer::write_uint64(uint64_t value) noexcept { emit(kUint64, value, 8, nullptr, 0); }

void msgpack_writer::write_fixarray(uint32_t count) noexcept {
  emit_if(count <= 15, TESSERA_MSG("msgpack: a fixarray holds at most 15 elements"),
          static_cast<uint8_t>(kFixarray | count), 0, 0, nullptr, 0);
}
void msgpack_writer::write_array16(uint16_t count) noexcept { emit(kArray16, count, 2, nullptr, 0); }
void msgpack_writer::write_array32(uint32_t count) noexcept { emit(kArray32, count, 4, nullptr, 0); }

void msgpack_writer::write_fixmap(uint32_t pairs) noexcept {
  emit_if(pairs <= 15, TESSERA_MSG("msgpack: a fixmap holds at most 15 pairs"),
          static_cast<uint8_t>(kFixmap | pairs), 0, 0, nullptr, 0);
}
void msgpack_writer::write_map16(uint16_t pairs) noexcept { emit(kMap16, pairs, 2, nullptr, 0); }
void msgpack_writer::write_map32(uint32_t pairs) noexcept { emit(kMap32, pairs, 4, nullptr, 0); }

void msgpack_writer::write_fixstr(span<const char> text) noexcept {
  emit_if(text.size() <= 31, TESSERA_MSG("msgpack: a fixstr holds at most 31 bytes"),
          static_cast<uint8_t>(kFixstr | text.size()), 0, 0, text.data(), text.size());
}

void msgpack_writer::write_str8(span<const char> text) noexcept {
  emit_if(text.size() <= UINT8_MAX, TESSERA_MSG("msgpack: a str8 holds at most 255 bytes"),
          kStr8, text.size(), 1, text.data(), text.size());
}

void msgpack_writer::write_str16(span<const char> text) noexcept {
  emit_if(text.size() <= UINT16_MAX, TESSERA_MSG("msgpack: a str16 holds at most 65535 bytes"),
          kStr16, text.size(), 2, text.data(), text.size());
}

void msgpack_writer::write_str32(span<const char> text) noexcept {
  emit_if(!above_u32(text.size()), TESSERA_MSG("msgpack: a str32 holds at most 2^32-1 bytes"),
          kStr32, text.size(), 4, text.data(), text.size());
}

void msgpack_writer::write_bin8(bytes_view data) noexcept {
  emit_if(data.size() <= UINT8_MAX, TESSERA_MSG("msgpack: a bin8 holds at most 255 bytes"),
          kBin8, data.size(), 1, data.data(), data.size());
}

void msgpack_writer::write_bin16(bytes_view data) noexcept {
  emit_if(data.size() <= UINT16_MAX, TESSERA_MSG("msgpack: a bin16 holds at most 65535 bytes"),
          kBin16, data.size(), 2, data.data(), data.size());
}

void msgpack_writer::write_bin32(bytes_view data) noexcept {
  emit_if(!above_u32(data.size()), TESSERA_MSG("msgpack: a bin32 holds at most 2^32-1 bytes"),
          kBin32, data.size(), 4, data.data(), data.size());
}

void msgpack_writer::write_fixext16(int8_t type, bytes_view data) noexcept {
  emit_if(data.size() == 16, TESSERA_MSG("msgpack: a fixext16 holds exactly 16 bytes"), kFixext16,
          static_cast<uint8_t>(type), 1, data.data(), 16);
}

void msgpack_writer::write_raw(bytes_view data) noexcept {
  if (!err_.ok() || data.empty()) return;
  // emit always writes a marker: write the first byte as the "marker" and the rest as the body.
  emit(data[0], 0, 0, data.data() + 1, data.size() - 1);
}

}  // namespace tessera
