// SPDX-License-Identifier: BSD-3-Clause
// nd_copy's runs in SIMD moves, where the build has them (TESSERA_HAVE_AVX2: x86 hosts).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace tessera::detail {

// n runs of 33 - 128 bytes (`run`), at d + dof and s + so, stepping by ds and ss; the CPU must run AVX2.
void nd_copy_runs_avx2(uint8_t* d, const uint8_t* s, size_t dof, size_t so, size_t n, size_t ds, size_t ss,
                       size_t run) noexcept;

}  // namespace tessera::detail
