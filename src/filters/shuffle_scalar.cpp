// SPDX-License-Identifier: BSD-3-Clause
// The scalar shuffle kernels: the plain loops that state the format (shuffle_common.hpp), always built, and the
// reference every SIMD kernel is tested against. Endian-neutral: bytes are assembled into words explicitly, never
// type-punned.
#include "filters/filters.hpp"
#include "filters/shuffle_common.hpp"

namespace tessera::detail {

const shuffle_kernels kShuffleScalar = {
    simd_level::scalar, byte_shuffle_run<false, no_vector_elements>, byte_shuffle_run<true, no_vector_elements>,
#if TESSERA_WITH_BITSHUFFLE  // config.hpp: small firmware compiles the bit kernels out; bare metal links them on
                             // demand (bitshuffle_scalar.cpp: these are weak references there)
    bitshuffle_scalar, bitunshuffle_scalar};
#else
    nullptr, nullptr};
#endif

}  // namespace tessera::detail
