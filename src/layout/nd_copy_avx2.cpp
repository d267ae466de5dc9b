// SPDX-License-Identifier: BSD-3-Clause
// nd_copy's runs of 33 - 128 bytes in 32-byte AVX2 moves (compiled with -mavx2; nd_copy calls it only where the
// CPU runs AVX2): a run's first and last 32 or 64 bytes, overlapping, per run.
#include <immintrin.h>

#include "nd_copy_rows.hpp"

namespace tessera::detail {

void nd_copy_runs_avx2(uint8_t* d, const uint8_t* s, size_t dof, size_t so, size_t n, size_t ds, size_t ss,
                       size_t run) noexcept {
  if (run > 64) {
    for (size_t k = 0; k < n; ++k, so += ss, dof += ds) {
      const uint8_t* a = s + so;
      uint8_t* b = d + dof;
      const __m256i h0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
      const __m256i h1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32));
      const __m256i t0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + run - 64));
      const __m256i t1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + run - 32));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(b), h0);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + 32), h1);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + run - 64), t0);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + run - 32), t1);
    }
    return;
  }
  for (size_t k = 0; k < n; ++k, so += ss, dof += ds) {
    const uint8_t* a = s + so;
    uint8_t* b = d + dof;
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
    const __m256i t = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + run - 32));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b), h);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + run - 32), t);
  }
}

}  // namespace tessera::detail
