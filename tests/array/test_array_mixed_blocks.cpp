// SPDX-License-Identifier: BSD-3-Clause
// Arrays whose chunks were written with different Blosc block sizes (a writer that chose its own, or a chunk
// replaced through the frame): every read decides per chunk, from its header, whether to decode single blocks
// or the whole chunk, so the data read never depends on which chunk a read touches first.
#include <cstring>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

namespace {

constexpr int64_t kShape[2] = {40, 36};
constexpr int64_t kChunks[2] = {20, 18};
constexpr int64_t kBlocks[2] = {10, 6};
constexpr int64_t kItems = kShape[0] * kShape[1];

int32_t item_at(int64_t i) { return static_cast<int32_t>(i * 2654435761u % 100003); }

// Re-encodes chunk nchunk of the open (writable) array with Blosc blocks of `blocksize` bytes: the decoded bytes,
// and so the items, stay the same.
bool chunk_reblock(array& a, int64_t nchunk, int32_t blocksize) {
  frame& f = array_frame(a);
  chunk_decoder d;
  if (!chunk_decoder_init(d, test::system_allocator()).ok()) return false;
  auto ref = frame_chunk_locate(f, nchunk);
  if (!ref.ok()) return false;
  buf decoded, encoded;
  if (!decoded.make(static_cast<size_t>(ref->nbytes)) || !encoded.make(chunk_encode_bound(decoded.n))) return false;
  if (!frame_chunk_decode(f, d, nchunk, decoded.mut()).ok()) return false;
  chunk_encoder e;
  chunk_encoder_options eo;
  if (!chunk_encoder_init(e, test::system_allocator(), eo).ok()) return false;
  chunk_encode_params p;
  p.typesize = 4;
  p.blocksize = blocksize;
  auto n = chunk_encode(e, p, decoded.view(), encoded.mut());
  if (!n.ok()) return false;
  return frame_chunk_update(f, nchunk, bytes_view(encoded.data(), *n)).ok() && frame_commit(f).ok();
}

// The test array: kShape of int32 item_at(i), chunks kChunks, blocks kBlocks, in `storage_buf`.
status array_make(array& a, growable_buffer& storage_buf, const int32_t* model) {
  growable_buffer_init(storage_buf, test::system_allocator());
  array_params p;
  p.ndim = 2;
  for (int d = 0; d < 2; ++d) {
    p.shape[d] = kShape[d];
    p.chunkshape[d] = kChunks[d];
    p.blockshape[d] = kBlocks[d];
  }
  p.dtype = span<const char>("<i4", 3);
  return array_create(a, array_target_contiguous(growable_buffer_storage(storage_buf)), test::system_allocator(), p,
                      array_fill_buffer(bytes_view(reinterpret_cast<const uint8_t*>(model), kItems * 4)));
}

void check_slice(test::context& t, array& a, const int32_t* model, const int64_t* start, const int64_t* stop) {
  const int64_t rows = stop[0] - start[0], cols = stop[1] - start[1];
  buf out;
  REQUIRE(out.make(static_cast<size_t>(rows * cols * 4)));
  REQUIRE_OK(array_slice_read(a, start, stop, out.mut()));
  int mismatches = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int32_t v;
      std::memcpy(&v, out.data() + (r * cols + c) * 4, 4);
      mismatches += v != model[(start[0] + r) * kShape[1] + start[1] + c] ? 1 : 0;
    }
  CHECK_EQ(mismatches, 0);
}

}  // namespace

TESSERA_TEST(array_mixed_blocks, reads_do_not_depend_on_which_chunk_comes_first) {
  int32_t model[kItems];
  for (int64_t i = 0; i < kItems; ++i) model[i] = item_at(i);
  growable_buffer storage_buf;
  {
    array a;
    REQUIRE_OK(array_make(a, storage_buf, model));
    // Chunk 1: one Blosc block for the whole chunk; chunk 2: blocks smaller than the array's.
    REQUIRE(chunk_reblock(a, 1, 0x7fffffff));
    REQUIRE(chunk_reblock(a, 2, 64));
    auto r1 = frame_chunk_locate(array_frame(a), 1);
    REQUIRE_OK(r1);
    CHECK_EQ(r1->blocksize, r1->nbytes);
    auto r2 = frame_chunk_locate(array_frame(a), 2);
    REQUIRE_OK(r2);
    CHECK_EQ(r2->blocksize, 64);
  }
  // Each order of first touches, on a fresh open every time: regular chunk first, re-blocked first, element.
  const int64_t cases[][4] = {{0, 0, 20, 36}, {0, 18, 20, 36}, {20, 0, 40, 18}, {5, 10, 35, 30}, {0, 0, 40, 36},
                              {19, 17, 21, 19}};
  for (const auto& c : cases) {
    const_buffer in{storage_buf.bytes().data(), storage_buf.bytes().size()};
    array a;
    REQUIRE_OK(array_open(a, const_buffer_storage(in), test::system_allocator()));
    const int64_t start[2] = {c[0], c[1]}, stop[2] = {c[2], c[3]};
    check_slice(t, a, model, start, stop);
    // Then every element, chunk by chunk in both directions.
    for (int64_t i = kItems - 1; i >= 0; i -= 7) {
      const int64_t coords[2] = {i / kShape[1], i % kShape[1]};
      int32_t v = 0;
      REQUIRE_OK(array_element_read(a, coords, bytes_mut(reinterpret_cast<uint8_t*>(&v), 4)));
      CHECK_EQ(v, model[i]);
    }
    check_slice(t, a, model, start, stop);
  }
}

TESSERA_TEST(array_mixed_blocks, a_chunk_that_disagrees_with_the_chunk_shape_is_an_error) {
  int32_t model[kItems];
  for (int64_t i = 0; i < kItems; ++i) model[i] = item_at(i);
  growable_buffer storage_buf;
  array a;
  REQUIRE_OK(array_make(a, storage_buf, model));
  // The last chunk replaced by a shorter one: the frame accepts it (chunks may differ), the array refuses to
  // read it as a chunk of its shape.
  uint8_t small[400];
  std::memset(small, 7, sizeof small);
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator(), chunk_encoder_options()));
  chunk_encode_params cp;
  cp.typesize = 4;
  uint8_t enc[sizeof small + 64];
  auto n = chunk_encode(e, cp, bytes_view(small, sizeof small), bytes_mut(enc, sizeof enc));
  REQUIRE_OK(n);
  REQUIRE_OK(frame_chunk_update(array_frame(a), 3, bytes_view(enc, *n)));
  const int64_t start[2] = {30, 30}, stop[2] = {31, 31};
  int32_t v = 0;
  CHECK_ERR(array_slice_read(a, start, stop, bytes_mut(reinterpret_cast<uint8_t*>(&v), 4)), errc::corrupt);
  const int64_t coords[2] = {39, 35};
  CHECK_ERR(array_element_read(a, coords, bytes_mut(reinterpret_cast<uint8_t*>(&v), 4)), errc::corrupt);
  // The other chunks still read.
  const int64_t s0[2] = {0, 0}, e0[2] = {20, 36};
  check_slice(t, a, model, s0, e0);
}
