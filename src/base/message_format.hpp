// SPDX-License-Identifier: BSD-3-Clause
// Error messages that name values ("dimension 2: stop 40 outside 0..32"), formatted into a caller's fixed buffer:
// freestanding (no snprintf, no allocation). Only code built with TESSERA_ERROR_MESSAGES calls it, so a firmware
// without messages never links it.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace tessera::detail {

// Writes pattern into buf (cap >= 1 bytes, always NUL-terminated, cut to fit), each "{}" replaced by the next of
// the n values in decimal ("{}" past the n-th is written as it is). Returns buf.
const char* message_format(char* buf, size_t cap, const char* pattern, const int64_t* values, int n) noexcept;

}  // namespace tessera::detail
