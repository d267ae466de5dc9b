// SPDX-License-Identifier: BSD-3-Clause
// The scalar bit kernels: the table's bitshuffle entries (shuffle_scalar.cpp), in their own object file so that
// bare metal links them only when the program calls filter_link_bitshuffle.
#include "filters/filters.hpp"
#include "filters/shuffle_common.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera {

void filter_link_bitshuffle() noexcept {}

namespace detail {

#if TESSERA_WITH_BITSHUFFLE  // config.hpp: small firmware compiles the bit kernels out
void bitshuffle_scalar(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  bit_shuffle_run<bit_planes_scalar<false>>(typesize, size, src, dst, scratch);
}
void bitunshuffle_scalar(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  bit_shuffle_run<bit_planes_scalar<true>>(typesize, size, src, dst, scratch);
}
#endif

}  // namespace detail
}  // namespace tessera

extern "C" void tessera_filter_link_bitshuffle(void) { tessera::filter_link_bitshuffle(); }
