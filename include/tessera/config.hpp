// Compile-time limits shared by the whole library.
#pragma once

#include <cstddef>
#include <cstdint>

#ifndef TESSERA_MAX_DIMS
// The B2ND format allows up to 8 dimensions in the readers users meet (python-blosc2, older c-blosc2);
// raising this only grows fixed-size arrays on the stack.
#define TESSERA_MAX_DIMS 8
#endif

namespace tessera {

inline constexpr int kMaxDims = TESSERA_MAX_DIMS;
static_assert(kMaxDims >= 1 && kMaxDims <= 127, "ndim is stored as a msgpack positive fixint");

inline constexpr int kVersionMajor = 0;
inline constexpr int kVersionMinor = 1;
inline constexpr int kVersionPatch = 0;

}  // namespace tessera
