// SPDX-License-Identifier: BSD-3-Clause
// Whole chunks over a 2-worker thread pool: encoding gives the same bytes as encoding serially, and decoding gives
// the data back, for big chunks (many blocks on both workers) and chunks of only 2-4 blocks (one or two tasks
// each). The speed of it is measured by tessera_bench_pool (bench/bench_pool.cpp), never asserted here.
#include <algorithm>
#include <cstring>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/chunk.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/thread_pool.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"

using namespace tessera;

namespace {

// Smooth int32 series with noise: compresses about 2-4x after shuffle, like typical numeric data.
std::vector<uint8_t> make_data(size_t nbytes, uint64_t seed) {
  std::vector<uint8_t> v(nbytes);
  test::rng r(seed);
  for (size_t i = 0; i + 4 <= nbytes; i += 4) {
    const uint32_t x = static_cast<uint32_t>(i / 4 * 3 + r.range(0, 63));
    std::memcpy(v.data() + i, &x, 4);
  }
  return v;
}

// Encodes `src` serially and over `pool`, checks both chunks are the same bytes, then decodes the chunk serially
// and over the pool (twice: the pool's runs follow each other) and checks both give `src`.
void check_roundtrip(test::context& t, thread_pool& pool, const std::vector<uint8_t>& src, codec c,
                     size_t blocksize) {
  chunk_encoder_options eo1;
  chunk_encoder_options eo2;
  eo2.exec = thread_pool_executor(pool);
  chunk_encoder serial_enc, parallel_enc;
  REQUIRE_OK(chunk_encoder_init(serial_enc, posix_allocator(), eo1));
  REQUIRE_OK(chunk_encoder_init(parallel_enc, posix_allocator(), eo2));
  chunk_encode_params p;
  p.typesize = 4;
  p.compressor = c;
  p.clevel = 5;
  p.blocksize = static_cast<int32_t>(blocksize);
  const bytes_view sv(src.data(), src.size());
  std::vector<uint8_t> c1(chunk_encode_bound(src.size())), c2(c1.size());
  auto n1 = chunk_encode(serial_enc, p, sv, bytes_mut(c1.data(), c1.size()));
  auto n2 = chunk_encode(parallel_enc, p, sv, bytes_mut(c2.data(), c2.size()));
  REQUIRE_OK(n1);
  REQUIRE_OK(n2);
  REQUIRE_EQ(*n1, *n2);
  CHECK(std::memcmp(c1.data(), c2.data(), *n1) == 0);
  // The data is chosen to compress: a verbatim chunk would not exercise the codec's blocks.
  CHECK_LT(*n1, src.size());

  chunk_decoder_options do1;
  chunk_decoder_options do2;
  do2.exec = thread_pool_executor(pool);
  chunk_decoder serial_dec, parallel_dec;
  REQUIRE_OK(chunk_decoder_init(serial_dec, posix_allocator(), do1));
  REQUIRE_OK(chunk_decoder_init(parallel_dec, posix_allocator(), do2));
  const bytes_view cv(c1.data(), *n1);
  std::vector<uint8_t> out1(src.size()), out2(src.size());
  REQUIRE_OK(chunk_decode(serial_dec, cv, bytes_mut(out1.data(), out1.size())));
  CHECK(out1 == src);
  for (int round = 0; round < 2; ++round) {
    std::fill(out2.begin(), out2.end(), uint8_t{0});
    REQUIRE_OK(chunk_decode(parallel_dec, cv, bytes_mut(out2.data(), out2.size())));
    CHECK(out2 == src);
  }
}

}  // namespace

TESSERA_TEST(parallel_chunks, two_mib_over_two_workers) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  const auto src = make_data(2 * 1024 * 1024, 1);  // 64 or 8 blocks
  for (codec c : {codec::blosclz, codec::lz4}) {
    if (!codec_available(c)) continue;
    for (size_t blocksize : {size_t{32} * 1024, size_t{256} * 1024}) check_roundtrip(t, pool, src, c, blocksize);
  }
}

TESSERA_TEST(parallel_chunks, a_few_small_blocks_over_two_workers) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  for (size_t nblocks : {size_t{2}, size_t{3}, size_t{4}}) {
    for (size_t blocksize : {size_t{8} * 1024, size_t{32} * 1024}) {
      const auto src = make_data(nblocks * blocksize, 2);
      for (codec c : {codec::blosclz, codec::lz4}) {
        if (codec_available(c)) check_roundtrip(t, pool, src, c, blocksize);
      }
    }
  }
}

namespace {

// The compressed chunks, back to back, of a new array (in a growable buffer) from `items`, made on an executor
// with `workers` workers (1: serial). The frame header differs only in nthreads, which records the executor.
void chunks_of(test::context& t, array& a, std::vector<uint8_t>& all, int64_t nchunks = 4 * 3) {
  all.clear();
  const frame_info* info = frame_info_get(array_frame(a));
  REQUIRE(info != nullptr);
  for (int64_t n = 0; n < info->nchunks; ++n) {
    owned_array<uint8_t> buf;
    auto c = frame_chunk_read(array_frame(a), n, buf);
    REQUIRE(c.ok());
    all.insert(all.end(), c->begin(), c->end());
  }
  CHECK(info->nchunks == nchunks);
}

void array_chunks(test::context& t, const std::vector<uint8_t>& items, codec c, uint32_t workers, bool via_copy,
                  std::vector<uint8_t>& out) {
  thread_pool pool;
  REQUIRE(thread_pool_init(pool, workers).ok());
  growable_buffer g, g2;
  growable_buffer_init(g, posix_allocator());
  growable_buffer_init(g2, posix_allocator());
  array_params p;
  p.ndim = 3;
  const int64_t shape[3] = {70, 45, 33};
  const int32_t chunks[3] = {20, 20, 33};
  const int32_t blocks[3] = {10, 5, 33};
  for (int d = 0; d < 3; ++d) {
    p.shape[d] = shape[d];
    p.chunkshape[d] = chunks[d];
    p.blockshape[d] = blocks[d];
  }
  p.dtype = "<i4";
  p.compressor = c;
  p.exec = thread_pool_executor(pool);
  array a;
  REQUIRE(array_create(a, array_target_contiguous(growable_buffer_storage(g)), posix_allocator(), p,
                       array_fill_buffer(bytes_view(items.data(), items.size())))
              .ok());
  if (via_copy) {  // a copy reads its source through a callback: packed on the caller, encoded on the workers
    array b;
    array_params q = array_params_get(a);
    q.exec = thread_pool_executor(pool);
    REQUIRE(array_copy(b, array_target_contiguous(growable_buffer_storage(g2)), posix_allocator(), a, &q).ok());
    chunks_of(t, b, out);
    REQUIRE(array_close(b).ok());
    REQUIRE(array_close(a).ok());
    return;
  }
  chunks_of(t, a, out);
  REQUIRE(array_close(a).ok());
}

}  // namespace

// Creating an array encodes whole chunks on every worker at once; the frame is the serial one, byte for byte,
// whatever the number of workers, from a buffer and from another array.
TESSERA_TEST(posix_parallel_chunks, array_create_writes_the_serial_frame_on_any_workers) {
  const std::vector<uint8_t> items = make_data(70 * 45 * 33 * 4, 77);
  for (codec c : {codec::blosclz, codec::lz4, codec::zstd}) {
    if (!codec_available(c)) continue;
    for (bool via_copy : {false, true}) {
      std::vector<uint8_t> serial, parallel;
      array_chunks(t, items, c, 1, via_copy, serial);
      REQUIRE(!serial.empty());
      for (uint32_t w : {2u, 3u}) {
        array_chunks(t, items, c, w, via_copy, parallel);
        CHECK(parallel == serial);
      }
    }
  }
}

// A create from a C-order buffer in rounds whose workers claim their chunks, taking one more when another
// worker's chunk is less than half gathered (extra chunks: how many depends on the timing): 20 chunks of 16
// blocks on 2-4 workers, several times, give the serial chunks byte for byte.
TESSERA_TEST(posix_parallel_chunks, claimed_rounds_write_the_serial_chunks) {
  const std::vector<uint8_t> items = make_data(320 * 64 * 32 * 4, 31);
  array_params p;
  p.ndim = 3;
  const int64_t shape[3] = {320, 64, 32};
  const int32_t chunks[3] = {32, 32, 32};
  const int32_t blocks[3] = {8, 8, 32};
  for (int d = 0; d < 3; ++d) {
    p.shape[d] = shape[d];
    p.chunkshape[d] = chunks[d];
    p.blockshape[d] = blocks[d];
  }
  p.dtype = "<i4";
  p.compressor = codec::lz4;
  auto create = [&](uint32_t workers, std::vector<uint8_t>& out) {
    thread_pool pool;
    REQUIRE_OK(thread_pool_init(pool, workers));
    growable_buffer g;
    growable_buffer_init(g, posix_allocator());
    array_params q = p;
    q.exec = thread_pool_executor(pool);
    array a;
    REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(g)), posix_allocator(), q,
                            array_fill_buffer(bytes_view(items.data(), items.size()))));
    chunks_of(t, a, out, 10 * 2);
    std::vector<uint8_t> back(items.size());
    REQUIRE_OK(array_read(a, bytes_mut(back.data(), back.size())));
    CHECK(back == items);
    REQUIRE_OK(array_close(a));
  };
  std::vector<uint8_t> serial, parallel;
  create(1, serial);
  REQUIRE(!serial.empty());
  for (uint32_t w : {2u, 3u, 4u})
    for (int again = 0; again < 4; ++again) {
      create(w, parallel);
      CHECK(parallel == serial);
    }
}

namespace {

// The chunks of an array made from a C-order buffer (each block gathered straight into the encoder) and of its
// copy (the copy reads its source through a callback: whole chunks packed first, then encoded), on `workers`.
void gathered_and_packed(test::context& t, const std::vector<uint8_t>& items, const array_params& base,
                         uint32_t workers, std::vector<uint8_t>& gathered, std::vector<uint8_t>& packed) {
  thread_pool pool;
  REQUIRE(thread_pool_init(pool, workers).ok());
  growable_buffer g, g2;
  growable_buffer_init(g, posix_allocator());
  growable_buffer_init(g2, posix_allocator());
  array_params p = base;
  p.exec = thread_pool_executor(pool);
  array a, b;
  REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(g)), posix_allocator(), p,
                          array_fill_buffer(bytes_view(items.data(), items.size()))));
  array_params q = array_params_get(a);
  q.exec = thread_pool_executor(pool);
  REQUIRE_OK(array_copy(b, array_target_contiguous(growable_buffer_storage(g2)), posix_allocator(), a, &q));
  chunks_of(t, a, gathered);
  chunks_of(t, b, packed);
  std::vector<uint8_t> back(items.size());
  REQUIRE_OK(array_read(a, bytes_mut(back.data(), back.size())));
  CHECK(back == items);
  REQUIRE_OK(array_close(b));
  REQUIRE_OK(array_close(a));
}

}  // namespace

// Blocks gathered from the caller's buffer give the chunks that packing the whole chunk first gives, byte for
// byte: edge chunks with padding, verbatim chunks (clevel 0, incompressible data), dictionaries, bitshuffle,
// and delta (which the gathering path leaves to packing).
TESSERA_TEST(posix_parallel_chunks, gathered_blocks_encode_as_packed_chunks) {
  const std::vector<uint8_t> smooth = make_data(70 * 45 * 33 * 4, 91);
  std::vector<uint8_t> noise(smooth.size());
  test::rng r(5);
  for (auto& x : noise) x = static_cast<uint8_t>(r.range(0, 255));
  array_params base;
  base.ndim = 3;
  const int64_t shape[3] = {70, 45, 33};
  const int32_t chunks[3] = {20, 20, 33};
  const int32_t blocks[3] = {10, 5, 33};
  for (int d = 0; d < 3; ++d) {
    base.shape[d] = shape[d];
    base.chunkshape[d] = chunks[d];
    base.blockshape[d] = blocks[d];
  }
  base.dtype = "<i4";
  base.compressor = codec::lz4;
  struct variant {
    const std::vector<uint8_t>* data;
    int clevel;
    filter_id filter;
    bool dict;
  };
  const variant variants[] = {{&smooth, 5, filter_id::shuffle, false}, {&smooth, 0, filter_id::shuffle, false},
                              {&noise, 5, filter_id::shuffle, false},  {&smooth, 5, filter_id::shuffle, true},
                              {&smooth, 5, filter_id::bitshuffle, false}, {&smooth, 5, filter_id::delta, false},
                              {&smooth, 5, filter_id::none, false}};
  for (const variant& v : variants) {
    array_params p = base;
    p.clevel = v.clevel;
    p.filters[kChunkMaxFilters - 1] = static_cast<uint8_t>(v.filter);
    p.use_dict = v.dict;
    for (uint32_t w : {1u, 2u}) {
      std::vector<uint8_t> gathered, packed;
      gathered_and_packed(t, *v.data, p, w, gathered, packed);
      REQUIRE(!gathered.empty());
      CHECK(gathered == packed);
    }
  }
}
