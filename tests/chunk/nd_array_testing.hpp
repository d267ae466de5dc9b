// SPDX-License-Identifier: BSD-3-Clause
// What the golden-array tests of the n-d plugins (test_nd_plugins_array.cpp) and of ZFP (test_zfp_array.cpp)
// share: the plugins' data folder, an executor that runs tasks out of order, and the slice and item reads of an
// open array checked against its whole decode.
#pragma once

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tessera/array.hpp"

#include "../support/check.hpp"

namespace nd_array_testing {

inline const std::string& plugins_dir() {
  static const std::string dir = std::string(TESSERA_TEST_DATA_DIR) + "/plugins/";
  return dir;
}

// The bytes of tests/data/plugins/NAME; false when the file is missing (the caller's REQUIRE fails).
inline bool load(const std::string& name, std::vector<uint8_t>& out) {
  std::ifstream f(plugins_dir() + name, std::ios::binary);
  if (!f) return false;
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

// Tasks run in a scrambled order on worker indexes 0..2 (one thread: the per-worker paths, no races).
inline void scramble_run(void*, size_t ntasks, tessera::executor_task task, void* ctx) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(ctx, i, static_cast<uint32_t>((i * 5) % 3));
}
inline tessera::executor scrambled() {
  tessera::executor e;
  e.run = scramble_run;
  e.workers = 3;
  return e;
}

// The items of box [start, stop) of a C-order array of the layout's shape, item by item.
inline std::vector<uint8_t> box_of(const std::vector<uint8_t>& all, const tessera::array_layout& l,
                                   int64_t itemsize, const int64_t* start, const int64_t* stop) {
  std::vector<uint8_t> out;
  int64_t idx[tessera::kMaxDims];
  for (int d = 0; d < l.ndim; ++d) idx[d] = start[d];
  for (;;) {
    int64_t at = 0;
    for (int d = 0; d < l.ndim; ++d) at = at * l.shape[d] + idx[d];
    out.insert(out.end(), all.begin() + at * itemsize, all.begin() + (at + 1) * itemsize);
    int d = l.ndim - 1;
    while (d >= 0 && ++idx[d] == stop[d]) {
      idx[d] = start[d];
      --d;
    }
    if (d < 0) break;
  }
  return out;
}

// Six slices that cut blocks, and the item at each slice's start, read from `a` equal the same items of `raw`
// (the array's whole decode).
inline void check_slices(tessera::test::context& t, tessera::array& a, const std::vector<uint8_t>& raw) {
  using namespace tessera;
  const array_layout& l = array_layout_get(a);
  const int64_t itemsize = array_itemsize(a);
  for (int k = 0; k < 6; ++k) {
    int64_t start[kMaxDims], stop[kMaxDims];
    for (int d = 0; d < l.ndim; ++d) {
      start[d] = (l.shape[d] * (k + 1)) / 9;
      stop[d] = start[d] + 1 + (l.shape[d] - start[d] - 1) * (k % 3) / 3;
    }
    const std::vector<uint8_t> want = box_of(raw, l, itemsize, start, stop);
    std::vector<uint8_t> part(want.size());
    CHECK_OK(array_slice_read(a, start, stop, bytes_mut(part.data(), part.size())));
    CHECK(part == want);
    CHECK_OK(array_element_read(a, start, bytes_mut(part.data(), static_cast<size_t>(itemsize))));
    CHECK(std::memcmp(part.data(), want.data(), static_cast<size_t>(itemsize)) == 0);
  }
}

// The frame's chunks equal, one by one, the reference's chunks `captured` (each a 4-byte little-endian length, then
// the chunk), and there are as many.
inline void check_chunks_match(tessera::test::context& t, tessera::frame& f, const std::vector<uint8_t>& captured) {
  using namespace tessera;
  const frame_info* fi = frame_info_get(f);
  REQUIRE(fi != nullptr);
  size_t at = 0;
  owned_array<uint8_t> buffer;
  for (int64_t k = 0; k < fi->nchunks; ++k) {
    auto mine = frame_chunk_read(f, k, buffer);
    REQUIRE_OK(mine);
    REQUIRE(at + 4 <= captured.size());
    const size_t len = static_cast<size_t>(captured[at]) | static_cast<size_t>(captured[at + 1]) << 8 |
                       static_cast<size_t>(captured[at + 2]) << 16 | static_cast<size_t>(captured[at + 3]) << 24;
    at += 4;
    REQUIRE(at + len <= captured.size());
    CHECK_EQ(mine->size(), len);
    CHECK(mine->size() == len && std::memcmp(mine->data(), captured.data() + at, len) == 0);
    at += len;
  }
  CHECK_EQ(at, captured.size());
}

}  // namespace nd_array_testing
