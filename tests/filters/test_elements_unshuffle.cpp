// SPDX-License-Identifier: BSD-3-Clause
// The row unshuffle that thin slice reads use (src/filters/elements_unshuffle.hpp: vector paths for elements of
// 2, 4 and 8 bytes on SSE2 and NEON, 2 and 4 on NEON, the scalar loop otherwise) against a byte-by-byte model:
// every count around the 16-element vector width, every typesize up to 9, planes at odd strides and offsets, and
// nothing written past the run.
#include <cstring>

#include "filters/elements_unshuffle.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"

using namespace tessera;

namespace {

constexpr size_t kMaxN = 70;
constexpr size_t kMaxStride = 97;
uint8_t g_planes[9 * kMaxStride + 16];  // static: the bare-metal target has a small stack
uint8_t g_out[9 * kMaxN + 64];

}  // namespace

TESSERA_TEST(elements_unshuffle, equals_the_byte_model_for_every_count_and_typesize) {
  test::rng r(99);
  for (auto& b : g_planes) b = static_cast<uint8_t>(r.next());
  for (size_t ts = 1; ts <= 9; ++ts)
    for (size_t n = 0; n <= kMaxN; ++n) {
      const size_t stride = n + static_cast<size_t>(r.range(0, static_cast<int64_t>(kMaxStride - kMaxN)));
      const size_t first = static_cast<size_t>(r.range(0, static_cast<int64_t>(stride - n)));
      std::memset(g_out, 0xA5, sizeof g_out);
      detail::elements_unshuffle(ts, g_planes + first, stride, n, g_out);
      bool same = true;
      for (size_t k = 0; k < n; ++k)
        for (size_t b = 0; b < ts; ++b) same &= g_out[k * ts + b] == g_planes[b * stride + first + k];
      for (size_t x = n * ts; x < sizeof g_out; ++x) same &= g_out[x] == 0xA5;
      CHECK(same);
    }
}
