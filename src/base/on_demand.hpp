// SPDX-License-Identifier: BSD-3-Clause
// Parts of the core a bare-metal program links only when it calls their link function (tessera/codecs.hpp):
// there (TESSERA_CODECS_ON_DEMAND) the core refers to them weakly, and a reference is null unless the program
// linked them. Hosts refer to them strongly: everything is there.
#pragma once

#include "tessera/config.hpp"

#if TESSERA_CODECS_ON_DEMAND
#define TESSERA_ON_DEMAND __attribute__((weak))
#else
#define TESSERA_ON_DEMAND
#endif
