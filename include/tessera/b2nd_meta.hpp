// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// The "b2nd" metalayer: an array's shape, chunk shape, block shape and dtype, as msgpack
/// (reference/README_B2ND_METALAYER.rst). Also decodes the legacy 5-element "caterva" metalayer, which has no dtype.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/config.hpp"
#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera {

/// The only layout version written (and the one every reader since c-blosc2 2.x writes).
inline constexpr int8_t kB2ndMetaVersion = 0;
/// dtype_format 0: the dtype string follows NumPy's array-protocol convention ("<i4").
inline constexpr int8_t kB2ndDtypeNumpy = 0;
/// The dtype the reference assumes when a metalayer has none (the caterva form) or the caller gives none.
inline constexpr char kB2ndDefaultDtype[] = "|u1";

/// The decoded metalayer.
struct b2nd_meta {
  int8_t version = kB2ndMetaVersion;  ///< decoded as found; the encoder writes version 0 only
  int8_t ndim = 0;                    ///< 0..kMaxDims
  int64_t shape[kMaxDims] = {};       ///< >= 0
  int32_t chunkshape[kMaxDims] = {};  ///< >= 0
  int32_t blockshape[kMaxDims] = {};  ///< >= 0, and non-zero where chunkshape is non-zero
  int8_t dtype_format = kB2ndDtypeNumpy;  ///< 0..127
  /// Views the decoded bytes (after decode) or the caller's string (before encode); not NUL-terminated.
  span<const char> dtype;
  /// False for the caterva form; encoding then writes kB2ndDefaultDtype.
  bool has_dtype = false;
};

/// The dtype to use: the stored one, or kB2ndDefaultDtype when the metalayer has none.
[[nodiscard]] span<const char> b2nd_meta_dtype_or_default(const b2nd_meta& meta) noexcept;

/// The exact encoded size (0 if the meta cannot be encoded: b2nd_meta_encode then says why).
[[nodiscard]] size_t b2nd_meta_encoded_size(const b2nd_meta& meta) noexcept;

/// Writes the metalayer exactly as c-blosc2's b2nd_serialize_meta does: fixarray 7, version 0, ndim, shape as int64
/// (d3), chunk and block shapes as int32 (d2), dtype_format as a positive fixint, dtype as str32 (db).
/// Returns the bytes written. errc::invalid_argument for a meta outside the ranges above, errc::unsupported for a
/// version other than 0, errc::buffer_too_small when out cannot hold it.
[[nodiscard]] result<size_t> b2nd_meta_encode(const b2nd_meta& meta, bytes_mut out) noexcept;

/// Reads a b2nd (7 elements) or caterva (5 elements) metalayer. Liberal in encodings (any msgpack integer or array
/// or str form), strict in bounds and values: errc::truncated or errc::malformed with a message naming the field,
/// errc::unsupported for an ndim above kMaxDims. Bytes after the structure are ignored, as the reference does (an
/// in-place update with shorter content leaves them); *consumed, when given, receives the structure's size.
/// The result's dtype views `in`.
[[nodiscard]] result<b2nd_meta> b2nd_meta_decode(bytes_view in, size_t* consumed = nullptr) noexcept;

namespace detail {
/// b2nd_meta_decode into `meta` (reset first; unspecified after an error).
[[nodiscard]] detail::code_status b2nd_meta_decode_into(bytes_view in, b2nd_meta& meta, size_t* consumed = nullptr) noexcept;
}  // namespace detail

}  // namespace tessera
