// SPDX-License-Identifier: BSD-3-Clause
// Slice writes re-encode only the blocks they touch (on builds with the speed paths; bare metal encodes whole
// chunks): either way every chunk they leave is byte for byte the chunk the same content gets when the array is
// written once from a buffer, over codecs and filter pipelines, chunks that start as zeros, boxes that cover
// blocks whole or in part, and pipelines that are always encoded whole (delta).
#include <cstdint>
#include <cstring>

#include "tessera/array.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

namespace {

constexpr int64_t kSide = 20;
constexpr size_t kItems = kSide * kSide * kSide;

array_params params_with(codec c, int pipe) {
  array_params p;
  p.ndim = 3;
  for (int i = 0; i < 3; ++i) {
    p.shape[i] = kSide;
    p.chunkshape[i] = 10;
    p.blockshape[i] = i == 0 ? 5 : 4;  // 5x4x4 blocks: 2x3x3 per chunk, the last ones padded
  }
  p.dtype = str("<f4");
  p.compressor = c;
  p.clevel = 5;
  std::memset(p.filters, 0, sizeof p.filters);
  switch (pipe) {
    case 0: p.filters[5] = static_cast<uint8_t>(filter_id::shuffle); break;
    case 1: p.filters[5] = chunk_filter_available(filter_id::bitshuffle) ? static_cast<uint8_t>(filter_id::bitshuffle) : 1; break;
    case 2:  // delta: always encoded whole
      if (chunk_filter_available(filter_id::delta)) p.filters[4] = static_cast<uint8_t>(filter_id::delta);
      p.filters[5] = static_cast<uint8_t>(filter_id::shuffle);
      break;
    default: break;  // no filter
  }
  return p;
}

}  // namespace

TESSERA_TEST(array_write_blocks, rewritten_chunks_equal_the_chunks_written_once) {
  test::rng r(909);
  const codec codecs[] = {codec::blosclz, codec::lz4, codec::zstd};
  buf model, data;
  REQUIRE(model.make(kItems * 4));
  for (codec c : codecs) {
    if (!codec_available(c)) continue;
    for (int pipe = 0; pipe < 4; ++pipe) {
      const array_params p = params_with(c, pipe);
      std::memset(model.data(), 0, model.n);
      growable_buffer g;
      growable_buffer_init(g, test::system_allocator());
      array a;
      REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(g)), test::system_allocator(), p,
                              array_fill_zeros()));
      a.auto_commit = false;
      for (int k = 0; k < 40; ++k) {
        int64_t start[3], stop[3], shape[3];
        for (int d = 0; d < 3; ++d) {
          // Planes, single items and boxes up to the whole array.
          const int64_t edge = k % 3 == 0 ? (d == 0 ? 1 : kSide) : r.range(1, k % 3 == 1 ? 2 : kSide);
          start[d] = r.range(0, kSide - edge);
          stop[d] = start[d] + edge;
          shape[d] = edge;
        }
        const size_t n = static_cast<size_t>(shape[0] * shape[1] * shape[2]);
        REQUIRE(data.make(n * 4));
        for (size_t i = 0; i < n; ++i) {
          const float v = static_cast<float>(r.range(0, 400)) * 0.25f;
          std::memcpy(data.data() + 4 * i, &v, 4);
        }
        REQUIRE_OK(array_slice_write(a, start, stop, data.view()));
        const int64_t whole[3] = {kSide, kSide, kSide}, origin[3] = {0, 0, 0};
        box_copy(3, 4, data.data(), shape, origin, model.data(), whole, start, shape);
      }
      REQUIRE_OK(array_commit(a));
      growable_buffer once_g;
      growable_buffer_init(once_g, test::system_allocator());
      array once;
      REQUIRE_OK(array_create(once, array_target_contiguous(growable_buffer_storage(once_g)), test::system_allocator(),
                              p, array_fill_buffer(model.view())));
      const frame_info* nchunks = frame_info_get(array_frame(a));
      REQUIRE(nchunks != nullptr);
      int64_t same = 0;
      for (int64_t i = 0; i < nchunks->nchunks; ++i) {
        owned_array<uint8_t> x, y;
        auto cx = frame_chunk_read(array_frame(a), i, x);
        auto cy = frame_chunk_read(array_frame(once), i, y);
        REQUIRE_OK(cx);
        REQUIRE_OK(cy);
        if (cx->size() == cy->size() && std::memcmp(cx->data(), cy->data(), cx->size()) == 0) ++same;
      }
      CHECK_EQ(same, nchunks->nchunks);
      CHECK_OK(array_close(once));
      CHECK_OK(array_close(a));
      growable_buffer_release(once_g);
      growable_buffer_release(g);
    }
  }
}
