// SPDX-License-Identifier: BSD-3-Clause
// libzstd with its static-context API (ZSTD_initStatic*Ctx and their size estimates), which both zstd directions
// use so that zstd works in a workspace from the caller's allocator and never allocates itself.
#pragma once

#ifdef TESSERA_HAVE_ZSTD
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>
#endif
