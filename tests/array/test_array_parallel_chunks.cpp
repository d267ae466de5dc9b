// SPDX-License-Identifier: BSD-3-Clause
// Large chunks on a two-worker pool. Made: an array of one large chunk that cannot be gathered block by block
// into the encoder (delta filter) has its chunk packed by the workers, block by block; a copy into such an array
// packs the items it read from the source the same way. The chunks must be the serial ones byte for byte (output
// never depends on the thread count) and read back as the items. Read: a chunk stored with other blocks than the
// array's is decoded whole and copied out by the workers (in slabs of a block when there are fewer blocks than
// tasks).
#include <cstring>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/chunk.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/thread_pool.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

constexpr int64_t kRows = 128;
constexpr int64_t kCols = 512;  // 256 KiB of int32: one chunk, at least 64 KiB per worker of two

array_params one_chunk_params() {
  array_params p;
  p.ndim = 2;
  p.shape[0] = kRows;
  p.shape[1] = kCols;
  p.chunkshape[0] = static_cast<int32_t>(kRows);
  p.chunkshape[1] = static_cast<int32_t>(kCols);
  p.blockshape[0] = 16;  // 8 blocks of 32 KiB
  p.blockshape[1] = static_cast<int32_t>(kCols);
  p.itemsize = 4;
  p.compressor = codec::blosclz;
  p.filters[4] = static_cast<uint8_t>(filter_id::delta);  // no gathering: the chunk is packed first
  return p;
}

std::vector<uint32_t> items_make() {
  std::vector<uint32_t> items(static_cast<size_t>(kRows * kCols));
  for (size_t i = 0; i < items.size(); ++i) items[i] = static_cast<uint32_t>(i / 3) ^ static_cast<uint32_t>(i % 7 << 20);
  return items;
}

bytes_view bytes_of(const std::vector<uint32_t>& v) {
  return bytes_view(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4);
}

// The array's items read back serially.
std::vector<uint32_t> items_read(test::context& t, growable_buffer& g) {
  std::vector<uint32_t> out(static_cast<size_t>(kRows * kCols), 0xdeadbeef);
  array a;
  CHECK_OK(array_open(a, growable_buffer_storage(g), test::system_allocator()));
  CHECK_OK(array_read(a, bytes_mut(reinterpret_cast<uint8_t*>(out.data()), out.size() * 4)));
  CHECK_OK(array_close(a));
  return out;
}

// The two arrays' chunks are the same bytes (their frames differ only in the writer's thread count they record).
bool same_chunks(test::context& t, growable_buffer& x, growable_buffer& y) {
  array a, b;
  CHECK_OK(array_open(a, growable_buffer_storage(x), test::system_allocator()));
  CHECK_OK(array_open(b, growable_buffer_storage(y), test::system_allocator()));
  const frame_info* ia = frame_info_get(array_frame(a));
  const frame_info* ib = frame_info_get(array_frame(b));
  bool same = ia != nullptr && ib != nullptr && ia->nchunks == ib->nchunks && ia->nchunks > 0;
  CHECK(ib != nullptr && ib->nthreads_comp == 2);
  owned_array<uint8_t> ba, bb;
  for (int64_t i = 0; same && i < ia->nchunks; ++i) {
    auto ca = frame_chunk_read(array_frame(a), i, ba);
    auto cb = frame_chunk_read(array_frame(b), i, bb);
    same = ca.ok() && cb.ok() && ca->size() == cb->size() && std::memcmp(ca->data(), cb->data(), ca->size()) == 0;
  }
  CHECK_OK(array_close(a));
  CHECK_OK(array_close(b));
  return same;
}

}  // namespace

TESSERA_TEST(array_parallel_chunks, one_large_chunk_packed_by_the_workers_is_the_serial_frame) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  const std::vector<uint32_t> items = items_make();
  growable_buffer serial, parallel;
  growable_buffer_init(serial, test::system_allocator());
  growable_buffer_init(parallel, test::system_allocator());
  array_params p = one_chunk_params();
  array a;
  REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(serial)), test::system_allocator(), p,
                          array_fill_buffer(bytes_of(items))));
  REQUIRE_OK(array_close(a));
  p.exec = thread_pool_executor(pool);
  REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(parallel)), test::system_allocator(), p,
                          array_fill_buffer(bytes_of(items))));
  REQUIRE_OK(array_close(a));
  CHECK(same_chunks(t, serial, parallel));
  CHECK(items_read(t, parallel) == items);
  thread_pool_release(pool);
}

TESSERA_TEST(array_parallel_chunks, a_copy_into_one_large_chunk_packed_by_the_workers_is_the_serial_frame) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  const std::vector<uint32_t> items = items_make();
  // The source: small chunks, no delta (read chunk by chunk into the copy's one chunk).
  growable_buffer source;
  growable_buffer_init(source, test::system_allocator());
  array_params sp = one_chunk_params();
  sp.chunkshape[0] = 32;
  sp.chunkshape[1] = 128;
  sp.blockshape[0] = 8;
  sp.blockshape[1] = 128;
  sp.filters[4] = 0;
  array src;
  REQUIRE_OK(array_create(src, array_target_contiguous(growable_buffer_storage(source)), test::system_allocator(), sp,
                          array_fill_buffer(bytes_of(items))));
  growable_buffer serial, parallel;
  growable_buffer_init(serial, test::system_allocator());
  growable_buffer_init(parallel, test::system_allocator());
  array_params p = one_chunk_params();
  array a;
  REQUIRE_OK(array_copy(a, array_target_contiguous(growable_buffer_storage(serial)), test::system_allocator(), src, &p));
  REQUIRE_OK(array_close(a));
  p.exec = thread_pool_executor(pool);
  REQUIRE_OK(array_copy(a, array_target_contiguous(growable_buffer_storage(parallel)), test::system_allocator(), src, &p));
  REQUIRE_OK(array_close(a));
  REQUIRE_OK(array_close(src));
  CHECK(same_chunks(t, serial, parallel));
  CHECK(items_read(t, parallel) == items);
  thread_pool_release(pool);
}

namespace {

// Chunk 0 of the open (writable) array encoded again with Blosc blocks of 4 KiB, which are not the array's.
void chunk_reblock(test::context& t, array& a, const std::vector<uint32_t>& items) {
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  chunk_encode_params p;
  p.typesize = 4;
  p.blocksize = 4096;
  std::vector<uint8_t> out(chunk_encode_bound(items.size() * 4));
  result<size_t> n = chunk_encode(e, p, bytes_of(items), bytes_mut(out.data(), out.size()));
  chunk_encoder_release(e);
  REQUIRE_OK(n);
  REQUIRE_OK(frame_chunk_update(array_frame(a), 0, bytes_view(out.data(), *n)));
  REQUIRE_OK(frame_commit(array_frame(a)));
}

}  // namespace

TESSERA_TEST(array_parallel_chunks, a_chunk_with_other_blocks_is_copied_out_by_the_workers) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  const std::vector<uint32_t> items = items_make();
  for (int32_t block_rows : {16, 128}) {  // 8 blocks (a block per task), then 1 (four slabs of it)
    growable_buffer g;
    growable_buffer_init(g, test::system_allocator());
    array_params p = one_chunk_params();
    p.filters[4] = 0;
    p.blockshape[0] = block_rows;
    array a;
    REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(g)), test::system_allocator(), p,
                            array_fill_buffer(bytes_of(items))));
    chunk_reblock(t, a, items);
    REQUIRE_OK(array_close(a));
    array_open_options o;
    o.exec = thread_pool_executor(pool);
    REQUIRE_OK(array_open(a, growable_buffer_storage(g), test::system_allocator(), o));
    std::vector<uint32_t> out(items.size(), 0);
    REQUIRE_OK(array_read(a, bytes_mut(reinterpret_cast<uint8_t*>(out.data()), out.size() * 4)));
    CHECK(out == items);
    // A slice of most of the chunk, into a larger buffer.
    const int64_t start[2] = {3, 5}, stop[2] = {kRows - 1, kCols - 7};
    const int64_t rows = stop[0] - start[0], cols = stop[1] - start[1];
    std::vector<uint32_t> part(static_cast<size_t>(rows * cols), 0);
    REQUIRE_OK(array_slice_read(a, start, stop, bytes_mut(reinterpret_cast<uint8_t*>(part.data()), part.size() * 4)));
    int mismatches = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        mismatches += part[static_cast<size_t>(r * cols + c)] != items[static_cast<size_t>((start[0] + r) * kCols + start[1] + c)];
    CHECK_EQ(mismatches, 0);
    REQUIRE_OK(array_close(a));
  }
  thread_pool_release(pool);
}
