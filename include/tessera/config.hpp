// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Compile-time limits shared by the whole library.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifndef TESSERA_MAX_DIMS
/// The most dimensions an array may have: c-blosc2's B2ND_MAX_DIM, 16. The build sets it (CMake cache variable
/// TESSERA_MAX_DIMS, passed to every consumer; bare metal defaults to 8): it sizes fixed arrays in every handle
/// and in stack frames (docs/firmware.md gives the bytes per dimension).
#define TESSERA_MAX_DIMS 16
#endif

#ifndef TESSERA_ERROR_MESSAGES
/// 1: every error carries its message ("frame: header_len exceeds the file"). 0 (CMake TESSERA_ERROR_MESSAGES=OFF,
/// for small firmware): the messages are compiled out and an error's message is its code's name (errc_name).
#define TESSERA_ERROR_MESSAGES 1
#endif

// Filters a small firmware can compile out (CMake TESSERA_WITH_*=OFF): encoding or decoding a chunk that uses
// one fails with unsupported (see chunk_filter_available). TRUNC covers trunc_prec and int_trunc (encode only:
// they have nothing to undo).
#ifndef TESSERA_WITH_BITSHUFFLE
/// 1: the bitshuffle filter is built (0: chunks that use it fail with unsupported).
#define TESSERA_WITH_BITSHUFFLE 1
#endif
#ifndef TESSERA_WITH_DELTA
/// 1: the delta filter is built (0: chunks that use it fail with unsupported).
#define TESSERA_WITH_DELTA 1
#endif
#ifndef TESSERA_WITH_BYTEDELTA
/// 1: the bytedelta filter is built (0: chunks that use it fail with unsupported).
#define TESSERA_WITH_BYTEDELTA 1
#endif
#ifndef TESSERA_WITH_TRUNC
/// 1: the trunc_prec and int_trunc filters are built (0: encoding a chunk with one fails with unsupported).
#define TESSERA_WITH_TRUNC 1
#endif

/// 1 on bare metal (CMake): the codec libraries are linked only into programs that call their codec_link_*
/// function (tessera/codecs.hpp). 0 on hosts: every codec of the build is linked.
#ifndef TESSERA_CODECS_ON_DEMAND
#define TESSERA_CODECS_ON_DEMAND 0
#endif

/// Tessera's C++ API: B2ND arrays (tessera/array.hpp) over Blosc2 frames (tessera/frame.hpp) and chunks
/// (tessera/chunk.hpp), on storages the caller provides (tessera/storage.hpp, the ports). Errors are values
/// (tessera/error.hpp); memory comes from the caller's allocator (tessera/allocator.hpp).
namespace tessera {

/// The most dimensions an array may have (TESSERA_MAX_DIMS).
inline constexpr int kMaxDims = TESSERA_MAX_DIMS;
static_assert(kMaxDims >= 1 && kMaxDims <= 16, "ndim is 1..16 (c-blosc2's B2ND_MAX_DIM; the C API's layout tag has 8 bits)");

inline constexpr int kVersionMajor = 0;  ///< the library's version: major
inline constexpr int kVersionMinor = 1;  ///< the library's version: minor
inline constexpr int kVersionPatch = 0;  ///< the library's version: patch

}  // namespace tessera
