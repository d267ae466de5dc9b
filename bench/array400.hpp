// SPDX-License-Identifier: BSD-3-Clause
// The 400^3 float32 array of docs/performance.md, shared by the benches that time it (tessera_bench_write,
// tessera_bench_reference): 256 MB, chunks 100^3, blocks 25^3, LZ4 level 5 + shuffle, smooth data.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "tessera/array.hpp"

namespace array400 {

constexpr int64_t kN = 400;
constexpr int32_t kChunk = 100;
constexpr int32_t kBlock = 25;
constexpr int64_t kItems = kN * kN * kN;
constexpr size_t kBytes = static_cast<size_t>(kItems) * 4;

// sin(i / 97) * 1000 + i * 0.01 over the flat index.
inline std::vector<float> items() {
  std::vector<float> v(static_cast<size_t>(kItems));
  for (int64_t i = 0; i < kItems; ++i)
    v[static_cast<size_t>(i)] =
        static_cast<float>(std::sin(static_cast<double>(i) / 97.0) * 1000.0 + static_cast<double>(i) * 0.01);
  return v;
}

// The array's parameters on executor `ex`.
inline tessera::array_params params(const tessera::executor& ex) {
  tessera::array_params p;
  p.ndim = 3;
  for (int d = 0; d < 3; ++d) {
    p.shape[d] = kN;
    p.chunkshape[d] = kChunk;
    p.blockshape[d] = kBlock;
  }
  p.dtype = tessera::span<const char>("<f4", 3);
  p.compressor = tessera::codec::lz4;
  p.clevel = 5;
  p.exec = ex;
  return p;
}

}  // namespace array400
