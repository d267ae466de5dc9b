// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// The library's version and build limits at run time: what the library was built as, which a program compiled
/// against other headers (another TESSERA_MAX_DIMS, an older release) can compare with its own constants.
#pragma once

#include "tessera/config.hpp"

namespace tessera {

/// The library's version, "MAJOR.MINOR.PATCH" (kVersionMajor, kVersionMinor, kVersionPatch as it was built).
[[nodiscard]] const char* version_string() noexcept;

/// The library's kMaxDims (TESSERA_MAX_DIMS as it was built).
[[nodiscard]] int version_max_dims() noexcept;

/// True when the caller's kMaxDims (as its compiler saw config.hpp) is the library's: array_layout, array_params
/// and the C structs then have the library's layout.
[[nodiscard]] inline bool version_layout_matches() noexcept { return version_max_dims() == kMaxDims; }

}  // namespace tessera
