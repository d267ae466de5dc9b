// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// The subset of msgpack the Blosc2 formats use: a bounded reader over a byte span and a writer into a caller
/// buffer. Multi-byte values are big-endian on every host.
///
/// Both keep a sticky error (as mpack does): after the first failure every call is a no-op that returns a neutral
/// value (0, false, an empty view), position() stops where the failure happened and err() keeps the first error.
/// Read or write a whole structure, then check err() once.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera {

/// What the next object is, from its first byte alone.
enum class msgpack_type : uint8_t {
  none = 0,   ///< the input is exhausted, or the reader holds an error
  invalid,    ///< the reserved marker 0xc1
  nil,        ///< nil (0xc0)
  boolean,    ///< false or true
  integer,    ///< every int encoding: positive/negative fixint, int8..int64, uint8..uint64
  float32,    ///< float 32 (0xca)
  float64,    ///< float 64 (0xcb)
  str,        ///< fixstr, str8/16/32
  bin,        ///< bin8/16/32
  array,      ///< fixarray, array16/32
  map,        ///< fixmap, map16/32
  ext,        ///< fixext 1/2/4/8/16, ext8/16/32
};

/// Deeper structures than this are refused by msgpack_reader::skip (errc::unsupported).
inline constexpr int kMsgpackMaxDepth = 32;

/// An ext object: its application-defined type and its payload.
struct msgpack_ext {
  int8_t type = 0;   ///< the ext type (the application's)
  bytes_view data;   ///< the payload, viewing the reader's input
};

/// Reads msgpack objects from a byte span, in order, never past its end (sticky errors: see above).
class msgpack_reader {
 public:
  /// Reads `in` (not copied: it must outlive the reader and every view it returns).
  explicit msgpack_reader(bytes_view in) noexcept : in_(in) {}

  [[nodiscard]] size_t position() const noexcept { return pos_; }  ///< bytes consumed so far
  [[nodiscard]] size_t remaining() const noexcept { return in_.size() - pos_; }  ///< bytes left after position()
  [[nodiscard]] bool ok() const noexcept { return err_.ok(); }  ///< true while no error happened
  [[nodiscard]] error err() const noexcept { return err_; }     ///< the first error (ok when none)
  /// Records an error found by the caller (e.g. a value out of the range the format allows); the first one sticks.
  /// Inline: with a constant code the error's name (messages compiled out) is a constant too, and no reader
  /// links the table of every code's name.
  [[gnu::always_inline]] void fail(errc code, const char* message) noexcept {
    if (err_.ok()) err_ = error{code, message};
  }

  /// The type of the next object; none at the end of the input or after an error. Consumes nothing.
  [[nodiscard]] msgpack_type peek_type() const noexcept;
  /// The next byte (the marker of the next object), or -1 at the end of the input or after an error.
  [[nodiscard]] int peek_marker() const noexcept;

  /// Integers in any encoding. A value outside the requested type gives errc::overflow.
  int64_t read_int() noexcept;
  uint64_t read_uint() noexcept;    ///< an integer as uint64 (a negative one gives errc::overflow)
  int32_t read_int32() noexcept;    ///< an integer as int32 (errc::overflow outside its range)
  uint32_t read_uint32() noexcept;  ///< an integer as uint32 (errc::overflow outside its range)

  void read_nil() noexcept;         ///< consumes a nil
  bool read_bool() noexcept;        ///< false or true
  float read_float32() noexcept;    ///< float32 only
  double read_float64() noexcept;   ///< float32 or float64

  /// Headers: the number of elements (a map counts its pairs).
  uint32_t read_array() noexcept;
  uint32_t read_map() noexcept;  ///< a map's header: its number of pairs

  /// Views into the input: no copy. Any str encoding (fixstr, str8/16/32); any bin encoding (bin8/16/32).
  span<const char> read_str() noexcept;
  bytes_view read_bin() noexcept;  ///< any bin encoding, viewing the input
  /// fixext 1/2/4/8/16 or ext8/16/32.
  msgpack_ext read_ext() noexcept;
  /// The next n raw bytes, whatever they are.
  bytes_view read_raw(size_t n) noexcept;

  /// Exactly one encoding, for formats that pin it (the Blosc2 frame, whose fields sit at fixed offsets): another
  /// marker gives errc::malformed, even one that would hold the value. read_map16's count is returned as written,
  /// not checked against the bytes left as read_map does: such formats cap their counts themselves.
  int16_t read_int16_fixed() noexcept;      ///< d1
  int32_t read_int32_fixed() noexcept;      ///< d2
  int64_t read_int64_fixed() noexcept;      ///< d3
  uint16_t read_uint16_fixed() noexcept;    ///< cd
  uint32_t read_uint32_fixed() noexcept;    ///< ce
  uint64_t read_uint64_fixed() noexcept;    ///< cf
  uint32_t read_fixarray() noexcept;        ///< 90..9f: the count
  uint16_t read_map16() noexcept;           ///< de: the count of pairs
  span<const char> read_fixstr() noexcept;  ///< a0..bf
  bytes_view read_bin32() noexcept;         ///< c6
  msgpack_ext read_fixext16() noexcept;     ///< d8

  /// Skips one complete object (arrays and maps with all their contents), iteratively. Nesting deeper than
  /// max_depth gives errc::unsupported.
  void skip(int max_depth = kMsgpackMaxDepth) noexcept;

 private:
  const uint8_t* take(size_t n) noexcept;  ///< nullptr (and a sticky error) when fewer than n bytes remain
  bool read_be(size_t n, uint64_t* value) noexcept;
  /// An integer of any encoding: its two's-complement bits, and whether it is negative.
  bool read_integer(uint64_t* bits, bool* negative) noexcept;
  /// Records the error for a marker m (-1: the input ended) that is not the expected one.
  void fail_expected(int m, const char* ends, const char* expected) noexcept;
  /// The count of an array or a map (any encoding), checked against the bytes left.
  uint32_t read_container(bool map) noexcept;
  /// A marker and the `width` big-endian bytes after it; false (nothing consumed) for any other marker.
  bool read_marked(uint8_t marker, size_t width, uint64_t* value) noexcept;
  /// Whether the next marker is one of first..last; else a sticky error (malformed; truncated at the end).
  bool form_check(int first, int last) noexcept;
  /// read_marked for the exact-form readers: the value, or 0 and a sticky error.
  uint64_t read_fixed(uint8_t marker, size_t width) noexcept;
  /// The length of a str or bin (its marker already consumed), checked against the bytes left.
  bool read_payload_length(size_t width, uint64_t* len) noexcept;
  /// The header of any object: scalars are consumed whole, containers report their number of children.
  bool skip_header(uint64_t* children) noexcept;

  bytes_view in_;
  size_t pos_ = 0;
  error err_;
};

/// Writes msgpack objects into a caller's buffer, or counts their bytes (sticky errors: see above).
class msgpack_writer {
 public:
  /// Counting mode: writes nothing, only adds up the bytes (estimate, then write into a buffer of that size).
  msgpack_writer() noexcept = default;
  /// Writes into out; a buffer whose data() is nullptr means counting mode. An object that does not fit is not
  /// written at all and gives errc::buffer_too_small.
  explicit msgpack_writer(bytes_mut out) noexcept : out_(out) {}

  [[nodiscard]] bool counting() const noexcept { return out_.data() == nullptr; }  ///< true in counting mode
  /// The bytes written (or counted) so far.
  [[nodiscard]] size_t position() const noexcept { return pos_; }
  [[nodiscard]] bool ok() const noexcept { return err_.ok(); }  ///< true while no error happened
  [[nodiscard]] error err() const noexcept { return err_; }     ///< the first error (ok when none)
  /// Records an error found by the caller; the first one sticks.
  void fail(errc code, const char* message) noexcept;

  /// The smallest encoding of the value.
  void write_nil() noexcept;
  void write_bool(bool value) noexcept;      ///< false or true
  void write_int(int64_t value) noexcept;    ///< non-negative values use the unsigned forms, as msgpack advises
  void write_uint(uint64_t value) noexcept;  ///< positive fixint or uint8..uint64
  void write_float32(float value) noexcept;  ///< float 32 (ca)
  void write_float64(double value) noexcept;  ///< float 64 (cb)
  void write_array(uint32_t count) noexcept;  ///< an array's header: then write its `count` elements
  void write_map(uint32_t pairs) noexcept;    ///< a map's header: then write its `pairs` keys and values
  void write_str(span<const char> text) noexcept;  ///< fixstr or str8/16/32
  void write_bin(bytes_view data) noexcept;        ///< bin8/16/32
  void write_ext(int8_t type, bytes_view data) noexcept;  ///< fixext when the size allows, else ext8/16/32

  /// Fixed encodings, for formats that pin them (B2ND: d3 shape, d2 chunk and block shapes, db dtype).
  void write_fixint(int8_t value) noexcept;  ///< -32..127 only, else errc::invalid_argument
  void write_int8(int8_t value) noexcept;    ///< d0
  void write_int16(int16_t value) noexcept;  ///< d1
  void write_int32(int32_t value) noexcept;  ///< d2
  void write_int64(int64_t value) noexcept;  ///< d3
  void write_uint8(uint8_t value) noexcept;  ///< cc
  void write_uint16(uint16_t value) noexcept;  ///< cd
  void write_uint32(uint32_t value) noexcept;  ///< ce
  void write_uint64(uint64_t value) noexcept;  ///< cf
  void write_fixarray(uint32_t count) noexcept;  ///< count <= 15, else errc::invalid_argument
  void write_array16(uint16_t count) noexcept;  ///< dc
  void write_array32(uint32_t count) noexcept;  ///< dd
  void write_fixmap(uint32_t pairs) noexcept;  ///< pairs <= 15, else errc::invalid_argument
  void write_map16(uint16_t pairs) noexcept;  ///< de
  void write_map32(uint32_t pairs) noexcept;  ///< df
  /// String and bin forms whose length does not fit give errc::invalid_argument.
  void write_fixstr(span<const char> text) noexcept;  ///< up to 31 bytes
  void write_str8(span<const char> text) noexcept;   ///< d9: up to 255 bytes
  void write_str16(span<const char> text) noexcept;  ///< da: up to 65535 bytes
  void write_str32(span<const char> text) noexcept;  ///< db
  void write_bin8(bytes_view data) noexcept;         ///< c4: up to 255 bytes
  void write_bin16(bytes_view data) noexcept;        ///< c5: up to 65535 bytes
  void write_bin32(bytes_view data) noexcept;        ///< c6
  /// d8: an ext of exactly 16 bytes (the frame's filters and fingerprint); another size gives
  /// errc::invalid_argument. Small beside write_ext, for writers that know the form.
  void write_fixext16(int8_t type, bytes_view data) noexcept;
  /// Raw bytes, e.g. a payload written after a header.
  void write_raw(bytes_view data) noexcept;

 private:
  /// Writes a marker followed by `width` big-endian bytes of value, then body_len bytes of body, all or nothing.
  void emit(uint8_t marker, uint64_t value, size_t width, const void* body, size_t body_len) noexcept;
  /// emit when the value fits the encoding; else errc::invalid_argument with message.
  void emit_if(bool fits, const char* message, uint8_t marker, uint64_t value, size_t width, const void* body,
               size_t body_len) noexcept;

  bytes_mut out_;
  size_t pos_ = 0;
  error err_;
};

}  // namespace tessera
