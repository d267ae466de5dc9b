// SPDX-License-Identifier: BSD-3-Clause
// The codes' names (tessera/error.hpp): in the core, whichever program uses them.
#include "tessera/error.hpp"

namespace tessera::detail {

const char kErrcNames[sizeof TESSERA_ERRC_NAMES] = TESSERA_ERRC_NAMES;

#if !TESSERA_ERROR_MESSAGES
error error_of_code(errc code) noexcept { return error{code, nullptr}; }
#endif

}  // namespace tessera::detail
