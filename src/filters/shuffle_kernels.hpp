// SPDX-License-Identifier: BSD-3-Clause
// The kernel tables each instruction-set file defines. A table exists only when its file is compiled for it
// (TESSERA_HAVE_<LEVEL> is then defined by src/filters/sources.cmake).
#pragma once

#include "tessera/shuffle.hpp"

namespace tessera::detail {

extern const shuffle_kernels kShuffleScalar;
#if defined(TESSERA_HAVE_SSE2)
extern const shuffle_kernels kShuffleSse2;
#endif
#if defined(TESSERA_HAVE_AVX2)
extern const shuffle_kernels kShuffleAvx2;
#endif
#if defined(TESSERA_HAVE_NEON)
extern const shuffle_kernels kShuffleNeon;
#endif
#if defined(TESSERA_HAVE_ALTIVEC)
extern const shuffle_kernels kShuffleAltivec;
#endif

}  // namespace tessera::detail
