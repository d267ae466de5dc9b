// SPDX-License-Identifier: BSD-3-Clause
// The codes' names (tessera/error.hpp): in the core, whichever program uses them.
#include "tessera/error.hpp"

namespace tessera::detail {

const char kErrcNames[sizeof TESSERA_ERRC_NAMES] = TESSERA_ERRC_NAMES;

#if !TESSERA_ERROR_MESSAGES
const char* errc_message(errc code) noexcept { return errc_name(code); }
#endif

}  // namespace tessera::detail
