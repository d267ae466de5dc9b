// SPDX-License-Identifier: BSD-3-Clause
// Memory of a large array on disk (Linux: POSIX port): opening a ~106 MB array file and reading one element
// takes well under 0.8 MiB from the array's allocator (its high-water mark), so memory does not grow with the
// file. The file: a 400x400x300 float32 array (192 MB of items), chunks 100^3, blocks 25^3, LZ4 level 5 with
// shuffle, smooth values with noisy low mantissa bits (so the file keeps most of its size), written chunk by
// chunk to /tmp. What an open keeps is the frame's header, metalayers and chunk index (8 bytes per chunk) and the
// codec state; an element read adds one block (62.5 KiB here) and that block's compressed streams. It scales
// with the number of chunks and the block size, not with the file's size. Reduced (long_tests.hpp): a
// 300x300x200 array (18 chunks, a file of about 40 MB) in the same limit.
//
// Also: reads through a two-worker thread pool (whole chunks decoded and copied out in parallel) return the
// same bytes as serial reads.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/posix_file.hpp"
#include "tessera/port/thread_pool.hpp"

#include "../support/check.hpp"
#include "../support/long_tests.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

constexpr int64_t kShape[3] = {400, 400, 300};
constexpr int64_t kReducedShape[3] = {300, 300, 200};
constexpr int32_t kChunk = 100;
constexpr int32_t kBlock = 25;
constexpr size_t kLimit = 800 * 1024;  // 0.8 MiB

float value_at(int64_t i, uint32_t noise) {
  float v = static_cast<float>(std::sin(static_cast<double>(i) / 97.0) * 1000.0 + static_cast<double>(i) * 0.01);
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits ^= noise & 0xFFFFu;  // the low 16 mantissa bits: noise LZ4 cannot squeeze
  std::memcpy(&v, &bits, 4);
  return v;
}

array_params params_make(const int64_t* shape) {
  array_params p;
  p.ndim = 3;
  for (int i = 0; i < 3; ++i) {
    p.shape[i] = shape[i];
    p.chunkshape[i] = kChunk;
    p.blockshape[i] = kBlock;
  }
  static const char kDtype[] = "<f4";
  p.dtype = span<const char>(kDtype, 3);
  p.compressor = codec::lz4;
  p.clevel = 5;
  return p;
}

}  // namespace

TESSERA_TEST(array_open_memory, open_and_one_element_stay_under_0_8_mib) {
  const bool reduced = test::long_tests_reduced();
  const int64_t* const shape = reduced ? kReducedShape : kShape;
  const long long min_file_size = reduced ? 35 * 1000 * 1000 : 100 * 1000 * 1000;
  const std::string path = "/tmp/tessera_test_open_memory_" + std::to_string(::getpid()) + ".b2nd";
  struct remover {  // the file goes however the test ends
    const std::string& path;
    ~remover() { std::remove(path.c_str()); }
  } remove_at_end{path};
  // Write the array chunk by chunk (a chunk's items in C order), so the test itself needs little memory.
  {
    auto file = posix_file_open(path.c_str(), posix_open::replace);
    REQUIRE_OK(file);
    const storage st = posix_file_storage(*file);
    array a;
    array_params p = params_make(shape);
    REQUIRE_OK(array_create(a, array_target_contiguous(st, false), test::system_allocator(), p, array_fill_uninit()));
    a.auto_commit = false;
    std::vector<float> chunk(static_cast<size_t>(kChunk) * kChunk * kChunk);
    test::rng r(20240611);
    for (int64_t c0 = 0; c0 < shape[0]; c0 += kChunk)
      for (int64_t c1 = 0; c1 < shape[1]; c1 += kChunk)
        for (int64_t c2 = 0; c2 < shape[2]; c2 += kChunk) {
          size_t k = 0;
          for (int64_t x = c0; x < c0 + kChunk; ++x)
            for (int64_t y = c1; y < c1 + kChunk; ++y)
              for (int64_t z = c2; z < c2 + kChunk; ++z)
                chunk[k++] = value_at((x * shape[1] + y) * shape[2] + z, static_cast<uint32_t>(r.next()));
          const int64_t start[3] = {c0, c1, c2};
          const int64_t stop[3] = {c0 + kChunk, c1 + kChunk, c2 + kChunk};
          REQUIRE_OK(array_slice_write(a, start, stop,
                                       bytes_view(reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size() * 4)));
        }
    REQUIRE_OK(array_commit(a));
    CHECK_OK(array_close(a));
    REQUIRE_OK(posix_file_close(*file));
  }
  long long file_size = 0;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fseek(f, 0, SEEK_END);
    file_size = std::ftell(f);
    std::fclose(f);
  }
  CHECK(file_size > min_file_size);  // a file of over 100 MB (reduced: 35 MB)

  auto file = posix_file_open(path.c_str(), posix_open::read);
  REQUIRE_OK(file);
  test::counting_allocator counting;
  {
    array a;
    REQUIRE_OK(array_open(a, posix_file_storage(*file), counting.get()));
    const size_t after_open = counting.high_water_bytes;
    const int64_t coords[3] = {201, 202, 103};
    float v = 0;
    REQUIRE_OK(array_element_read(a, coords, bytes_mut(reinterpret_cast<uint8_t*>(&v), 4)));
    std::printf("file %lld bytes: high water %zu bytes after open, %zu after one element read\n", file_size,
                after_open, counting.high_water_bytes);
    CHECK_LE(counting.high_water_bytes, kLimit);
    CHECK_LT(after_open, counting.high_water_bytes);  // the read needed a block: the count saw it
    // The value is the one written (the noise comes from the same sequence: recompute it in write order).
    test::rng r(20240611);
    uint32_t noise = 0;
    const int64_t cx = coords[0] / kChunk, cy = coords[1] / kChunk, cz = coords[2] / kChunk;
    const int64_t grid[3] = {shape[0] / kChunk, shape[1] / kChunk, shape[2] / kChunk};
    const int64_t before = ((cx * grid[1] + cy) * grid[2] + cz) * int64_t{kChunk} * kChunk * kChunk +
                           (((coords[0] % kChunk) * kChunk + coords[1] % kChunk) * kChunk + coords[2] % kChunk);
    for (int64_t i = 0; i <= before; ++i) noise = static_cast<uint32_t>(r.next());
    const float expected = value_at((coords[0] * shape[1] + coords[1]) * shape[2] + coords[2], noise);
    CHECK(std::memcmp(&v, &expected, 4) == 0);
    CHECK_OK(array_close(a));
  }
  CHECK(!counting.leaked());
  CHECK_OK(posix_file_close(*file));
}

// Slices that decode whole chunks (most of a chunk's blocks needed) go through the executor; with two workers
// they must give exactly the serial bytes, edges and padding included.
TESSERA_TEST(array_open_memory, parallel_reads_equal_serial_reads) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  test::rng r(77);
  for (int round = 0; round < 16; ++round) {
    // Half the rounds with chunks of over 128 KiB (the size from which a chunk's copy is split over workers).
    const bool big = round % 2 == 0;
    array_params p;
    p.ndim = big ? 3 : 1 + static_cast<int>(r.range(0, 2));
    int64_t n = 1;
    for (int i = 0; i < p.ndim; ++i) {
      p.chunkshape[i] = static_cast<int32_t>(big ? r.range(33, 48) : r.range(1, 40));
      p.shape[i] = big ? r.range(p.chunkshape[i], 100) : r.range(1, p.ndim == 3 ? 60 : 300);
      // Every other big round: one block per chunk, so the copy also cuts blocks into slabs.
      p.blockshape[i] = big && round % 4 == 0 ? p.chunkshape[i] : static_cast<int32_t>(r.range(1, p.chunkshape[i]));
      n *= p.shape[i];
    }
    p.itemsize = 4;
    p.compressor = codec::lz4;
    std::vector<uint32_t> items(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) items[static_cast<size_t>(i)] = static_cast<uint32_t>(i * 2654435761u);
    growable_buffer gb;
    growable_buffer_init(gb, test::system_allocator());
    const storage st = growable_buffer_storage(gb);
    array a;
    const bytes_view all(reinterpret_cast<const uint8_t*>(items.data()), items.size() * 4);
    REQUIRE_OK(
        array_create(a, array_target_contiguous(st, false), test::system_allocator(), p, array_fill_buffer(all)));
    CHECK_OK(array_close(a));
    array serial, parallel;
    REQUIRE_OK(array_open(serial, st, test::system_allocator()));
    array_open_options opt;
    opt.exec = thread_pool_executor(pool);
    REQUIRE_OK(array_open(parallel, st, test::system_allocator(), opt));
    for (int q = 0; q < 30; ++q) {
      int64_t start[3] = {}, stop[3] = {};
      int64_t m = 1;
      for (int i = 0; i < p.ndim; ++i) {
        start[i] = r.range(0, p.shape[i] - 1);
        stop[i] = r.chance(50) ? p.shape[i] : r.range(start[i] + 1, p.shape[i]);
        m *= stop[i] - start[i];
      }
      std::vector<uint32_t> x(static_cast<size_t>(m), 1), y(static_cast<size_t>(m), 2);
      const bytes_mut xb(reinterpret_cast<uint8_t*>(x.data()), x.size() * 4);
      const bytes_mut yb(reinterpret_cast<uint8_t*>(y.data()), y.size() * 4);
      REQUIRE_OK(array_slice_read(serial, start, stop, xb));
      REQUIRE_OK(array_slice_read(parallel, start, stop, yb));
      CHECK(x == y);
      // And against the items themselves (plain loops).
      bool same = true;
      int64_t k = 0;
      int64_t idx[3] = {start[0], start[1], start[2]};
      for (; k < m; ++k) {
        int64_t flat = 0;
        for (int i = 0; i < p.ndim; ++i) flat = flat * p.shape[i] + idx[i];
        same &= y[static_cast<size_t>(k)] == items[static_cast<size_t>(flat)];
        for (int i = p.ndim - 1; i >= 0; --i) {
          if (++idx[i] < stop[i]) break;
          idx[i] = start[i];
        }
      }
      CHECK(same);
    }
    CHECK_OK(array_close(serial));
    CHECK_OK(array_close(parallel));
  }
}
