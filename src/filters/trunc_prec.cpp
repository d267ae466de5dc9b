// SPDX-License-Identifier: BSD-3-Clause
// Truncate precision (Blosc2 filter 4): zeroes low mantissa bits of float32/float64 (lossy, decode is nothing).
#include "filters/filters.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera::detail {


status trunc_prec_encode(int8_t prec_bits, size_t typesize, const uint8_t* src, uint8_t* dst,
                         size_t size) noexcept {
  int mantissa;
  if (typesize == 4) mantissa = 23;
  else if (typesize == 8) mantissa = 52;
  else return make_error(errc::invalid_argument, TESSERA_MSG("trunc_prec: typesize must be 4 or 8"));
  const int bits = prec_bits;
  if (bits > mantissa || -bits > mantissa)
    return make_error(errc::invalid_argument, TESSERA_MSG("trunc_prec: precision larger than the mantissa"));
  const int zeroed = bits >= 0 ? mantissa - bits : -bits;
  if (zeroed >= mantissa) return make_error(errc::invalid_argument, TESSERA_MSG("trunc_prec: would remove the whole mantissa"));
  filter_zero_low_bits(zeroed, typesize, src, dst, size);
  return ok_status();
}

}  // namespace tessera::detail

namespace tessera {
void filter_link_trunc() noexcept { detail::int_trunc_link(); }
}  // namespace tessera
extern "C" void tessera_filter_link_trunc(void) { tessera::filter_link_trunc(); }
