// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// NumPy dtype strings as B2ND stores them ("<f8", "|u1", "<U10", "<M8[ns]"). A string this module does not
/// understand (structured dtypes, objects, anything new) is never an error: callers keep it verbatim so it
/// round-trips through the metalayer unchanged, and fall back to the frame's typesize.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera {

/// A parsed dtype string (dtype_parse).
struct dtype_info {
  char byte_order = 0;  ///< '<' '>' '|' '='; '=' when the string gives none (NumPy's native order)
  char kind = 0;        ///< b i u f c m M S U V
  uint32_t itemsize = 0;  ///< bytes per item (for U: 4 per character)
  /// m and M only: the unit inside the brackets ("ns", "25s"), empty for a generic datetime. Views the input.
  span<const char> unit;
  bool known = false;  ///< false: the other fields are zero and the string should be kept as it is
};

/// Parses a simple dtype string: [byte order] kind itemsize [\[unit\]] with nothing after it.
/// Item sizes must be ones NumPy produces: b1; i/u 1 2 4 8; f 2 4 8 12 16; c 8 16 24 32; m/M 8; S/V any; U any
/// multiple of 4 bytes.
[[nodiscard]] dtype_info dtype_parse(span<const char> text) noexcept;

/// Writes the dtype string for a byte order, kind and itemsize in bytes (for U, a multiple of 4: "<U" then the
/// number of characters), with "[unit]" for m and M when unit is not empty. Returns the number of chars written
/// (no NUL). errc::invalid_argument for a combination dtype_parse would not call known, errc::buffer_too_small.
[[nodiscard]] result<size_t> dtype_format(char byte_order, char kind, uint32_t itemsize, span<char> out,
                                          span<const char> unit = {}) noexcept;

}  // namespace tessera
