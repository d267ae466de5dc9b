// SPDX-License-Identifier: BSD-3-Clause
// Integer truncation (Blosc2 filter 36): zeroes low bits of unsigned integers (lossy; decode is a copy).
#include "filters/filters.hpp"

namespace tessera::detail {

status int_trunc_encode(int8_t prec_bits, size_t typesize, const uint8_t* src, uint8_t* dst, size_t size) noexcept {
  if (typesize != 1 && typesize != 2 && typesize != 4 && typesize != 8)
    return make_error(errc::invalid_argument, TESSERA_MSG("int_trunc: typesize must be 1, 2, 4 or 8"));
  const int max_bits = static_cast<int>(typesize * 8);
  const int bits = prec_bits;
  const int zeroed = bits >= 0 ? max_bits - bits : -bits;
  if (zeroed < 0 || zeroed >= max_bits)
    return make_error(errc::invalid_argument, TESSERA_MSG("int_trunc: precision out of range for the typesize"));
  filter_zero_low_bits(zeroed, typesize, src, dst, size);
  return ok_status();
}

}  // namespace tessera::detail

namespace tessera::detail {
void int_trunc_link() noexcept {}
}  // namespace tessera::detail
