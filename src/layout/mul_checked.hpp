// SPDX-License-Identifier: BSD-3-Clause
// One checked int64 product for the geometry code (layout, nd_copy). Inline in the header so that every object
// file shares one copy; out of line when optimizing for size: each inline expansion of a checked 64-bit multiply
// costs a 32-bit target about 100 bytes.
#pragma once

#include <stdint.h>

#ifdef __OPTIMIZE_SIZE__
#define TESSERA_SIZE_NOINLINE [[gnu::noinline]]
#else
#define TESSERA_SIZE_NOINLINE
#endif

namespace tessera::detail {

/// acc *= x, for acc and x >= 0; false (acc unspecified) when the product leaves int64.
TESSERA_SIZE_NOINLINE inline bool mul_checked(int64_t& acc, int64_t x) noexcept {
  uint64_t r = 0;  // unsigned: its overflow check is the cheaper one
  if (__builtin_mul_overflow(static_cast<uint64_t>(acc), static_cast<uint64_t>(x), &r) || r > uint64_t{INT64_MAX})
    return false;
  acc = static_cast<int64_t>(r);
  return true;
}

}  // namespace tessera::detail
