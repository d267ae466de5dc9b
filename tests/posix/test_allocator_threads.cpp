// SPDX-License-Identifier: BSD-3-Clause
// The allocator contract: the caller's allocator is called only from the thread that called the API function,
// and never by two threads at once, whatever the executor. Every codec, encode and decode (whole chunks, single
// blocks, block requests, arrays through a file whose workers read their own blocks), on 1 to 4 workers, with an
// allocator that refuses and records any call from another thread or any overlapping call.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "../support/long_tests.hpp"
#include "posix_test_util.hpp"
#include "tessera/array.hpp"
#include "tessera/chunk.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_file.hpp"
#include "tessera/port/thread_pool.hpp"

using namespace tessera;

namespace {

// Serves from malloc while called on the owner thread, one call at a time; anything else is refused and counted.
struct caller_only_allocator {
  std::thread::id owner = std::this_thread::get_id();
  std::atomic<int> inside{0};
  std::atomic<int> foreign_calls{0};
  std::atomic<int> overlapping_calls{0};
  std::atomic<long> calls{0};
  allocator base = posix_allocator();

  bool enter() {
    calls.fetch_add(1, std::memory_order_relaxed);
    const bool overlapping = inside.fetch_add(1, std::memory_order_acq_rel) != 0;
    if (overlapping) overlapping_calls.fetch_add(1, std::memory_order_relaxed);
    const bool foreign = std::this_thread::get_id() != owner;
    if (foreign) foreign_calls.fetch_add(1, std::memory_order_relaxed);
    return !overlapping && !foreign;
  }
  void leave() { inside.fetch_sub(1, std::memory_order_acq_rel); }

  static void* allocate(void* ctx, size_t size, size_t align) {
    auto& a = *static_cast<caller_only_allocator*>(ctx);
    void* p = a.enter() ? a.base.allocate(a.base.context, size, align) : nullptr;
    a.leave();
    return p;
  }
  static void deallocate(void* ctx, void* block, size_t size, size_t align) {
    auto& a = *static_cast<caller_only_allocator*>(ctx);
    a.enter();  // freed either way (a leak would hide the report), but counted
    a.base.deallocate(a.base.context, block, size, align);
    a.leave();
  }
  allocator get() {
    allocator r;
    r.allocate = allocate;
    r.deallocate = deallocate;
    r.context = this;
    return r;
  }
};

struct codec_case {
  codec c;
  int clevel;
};

const codec_case kCodecs[] = {{codec::blosclz, 5}, {codec::lz4, 5}, {codec::lz4hc, 5}, {codec::zlib, 5},
                              {codec::zstd, 5}};
// Zstd's strongest level (22) has the largest context; chunks only, as arrays of it take seconds per case.
const codec_case kChunkCodecs[] = {{codec::blosclz, 5}, {codec::lz4, 5}, {codec::lz4hc, 5}, {codec::zlib, 5},
                                   {codec::zstd, 5},    {codec::zstd, 9}};

std::vector<uint8_t> smooth_f32(size_t n) {
  std::vector<uint8_t> bytes(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(std::sin(static_cast<double>(i) / 97.0) * 1000.0 + static_cast<double>(i) * 0.01);
    std::memcpy(bytes.data() + 4 * i, &v, 4);
  }
  return bytes;
}

class AllocatorThreads : public ::testing::TestWithParam<std::tuple<codec_case, uint32_t>> {};
class AllocatorThreadsArrays : public AllocatorThreads {};

std::string case_name(const ::testing::TestParamInfo<std::tuple<codec_case, uint32_t>>& info) {
  const codec_case cc = std::get<0>(info.param);
  return std::string(codec_name(cc.c)) + "_c" + std::to_string(cc.clevel) + "_w" +
         std::to_string(std::get<1>(info.param));
}

// Block requests: every other block, consumed into a sum (the consumer runs on the workers).
struct block_sum {
  std::atomic<uint64_t> sum{0};
  size_t nblocks = 0;
  static size_t block(void* ctx, size_t i) noexcept { return 2 * i % static_cast<block_sum*>(ctx)->nblocks; }
  static status consume(void* ctx, size_t, bytes_view decoded, uint32_t) noexcept {
    uint64_t s = 0;
    for (uint8_t b : decoded) s += b;
    static_cast<block_sum*>(ctx)->sum.fetch_add(s, std::memory_order_relaxed);
    return ok_status();
  }
};

TEST_P(AllocatorThreads, ChunksEncodeAndDecodeOnlyOnTheCallersThread) {
  const codec_case cc = std::get<0>(GetParam());
  const uint32_t workers = std::get<1>(GetParam());
  if (!codec_available(cc.c)) GTEST_SKIP() << codec_name(cc.c) << " is not in this build";
  thread_pool pool;
  ASSERT_TRUE(thread_pool_init(pool, workers).ok());
  caller_only_allocator probe;
  const allocator alloc = probe.get();

  // 1 MiB: 16 blocks of 64 KiB; in the reduced run of the long sweeps 4, and 2 for Zstd's level 22 (Blosc's
  // clevel 9), whose blocks take seconds each under qemu.
  const size_t nblocks = !test::long_tests_reduced() ? 16 : cc.c == codec::zstd && cc.clevel == 9 ? 2 : 4;
  const size_t one = nblocks > 3 ? nblocks - 3 : 1;  // a block decoded alone (13 in the full run)
  const std::vector<uint8_t> src = smooth_f32(nblocks * 16 * 1024);
  chunk_encode_params p;
  p.typesize = 4;
  p.compressor = cc.c;
  p.clevel = cc.clevel;
  p.blocksize = 64 * 1024;
  {
    chunk_encoder_options eo;
    eo.exec = thread_pool_executor(pool);
    eo.max_blocksize = 16 * 1024;  // smaller than the blocks: scratch grows during the call
    chunk_encoder enc;
    ASSERT_TRUE(chunk_encoder_init(enc, alloc, eo).ok());
    std::vector<uint8_t> chunk(chunk_encode_bound(src.size()));
    // Twice: the second call reuses what the first prepared. Then another level, which prepares again.
    for (int round = 0; round < 3; ++round) {
      chunk_encode_params q = p;
      if (round == 2) q.clevel = cc.clevel > 1 ? cc.clevel - 1 : 2;
      auto n = chunk_encode(enc, q, bytes_view(src.data(), src.size()), bytes_mut(chunk.data(), chunk.size()));
      ASSERT_TRUE(n.ok()) << n.err().message;
      chunk.resize(*n);

      chunk_decoder_options dopt;
      dopt.exec = thread_pool_executor(pool);
      dopt.max_blocksize = 4 * 1024;
      chunk_decoder dec;
      ASSERT_TRUE(chunk_decoder_init(dec, alloc, dopt).ok());
      std::vector<uint8_t> back(src.size());
      auto m = chunk_decode(dec, bytes_view(chunk.data(), chunk.size()), bytes_mut(back.data(), back.size()));
      ASSERT_TRUE(m.ok()) << m.err().message;
      EXPECT_EQ(back, src);

      block_sum bs;
      bs.nblocks = nblocks;
      chunk_block_request r;
      r.count = nblocks / 2;
      r.block = block_sum::block;
      r.consume = block_sum::consume;
      r.context = &bs;
      ASSERT_TRUE(chunk_decode_blocks(dec, bytes_view(chunk.data(), chunk.size()), r).ok());
      uint64_t want = 0;
      for (size_t b = 0; b < nblocks; b += 2)
        for (size_t k = 0; k < 64 * 1024; ++k) want += src[b * 64 * 1024 + k];
      EXPECT_EQ(bs.sum.load(), want);

      std::vector<uint8_t> block(64 * 1024);
      auto alone = chunk_decode_block(dec, bytes_view(chunk.data(), chunk.size()), one, bytes_mut(block.data(), block.size()));
      ASSERT_TRUE(alone.ok()) << alone.err().message;
      EXPECT_EQ(0, std::memcmp(block.data(), src.data() + one * 64 * 1024, block.size()));
      chunk.resize(chunk_encode_bound(src.size()));
    }
  }
  EXPECT_GT(probe.calls.load(), 0);
  EXPECT_EQ(probe.foreign_calls.load(), 0) << "the allocator was called from a pool thread";
  EXPECT_EQ(probe.overlapping_calls.load(), 0) << "two allocator calls overlapped";
}

TEST_P(AllocatorThreadsArrays, WriteAndReadOnlyOnTheCallersThread) {
  const codec_case cc = std::get<0>(GetParam());
  const uint32_t workers = std::get<1>(GetParam());
  if (!codec_available(cc.c)) GTEST_SKIP() << codec_name(cc.c) << " is not in this build";
  thread_pool pool;
  ASSERT_TRUE(thread_pool_init(pool, workers).ok());
  caller_only_allocator probe;
  const allocator alloc = probe.get();
  posix_test::temp_dir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.b2nd");

  std::vector<uint8_t> items = smooth_f32(96 * 80 * 40);
  {
    auto file = posix_file_open(path.c_str(), posix_open::replace);
    ASSERT_TRUE(file.ok());
    array_params ap;
    ap.ndim = 3;
    const int64_t shape[3] = {96, 80, 40};
    const int32_t chunks[3] = {48, 40, 40};
    const int32_t blocks[3] = {12, 20, 40};
    for (int d = 0; d < 3; ++d) {
      ap.shape[d] = shape[d];
      ap.chunkshape[d] = chunks[d];
      ap.blockshape[d] = blocks[d];
    }
    ap.dtype = span<const char>("<f4", 3);
    ap.compressor = cc.c;
    ap.clevel = cc.clevel;
    ap.exec = thread_pool_executor(pool);
    array a;
    const status s = array_create(a, array_target_contiguous(posix_file_storage(*file)), alloc, ap,
                                  array_fill_buffer(bytes_view(items.data(), items.size())));
    ASSERT_TRUE(s.ok()) << s.message;
    // A slice write rewrites chunks through the encoder again.
    const int64_t start[3] = {10, 0, 0}, stop[3] = {60, 80, 40};
    std::vector<uint8_t> part(50 * 80 * 40 * 4);
    for (size_t i = 0; i < part.size(); ++i) part[i] = static_cast<uint8_t>(i * 31);
    const status w = array_slice_write(a, start, stop, bytes_view(part.data(), part.size()));
    ASSERT_TRUE(w.ok()) << w.message;
    std::memcpy(items.data() + 10 * 80 * 40 * 4, part.data(), part.size());
  }
  {
    auto file = posix_file_open(path.c_str(), posix_open::read);  // pread: workers read their own blocks
    ASSERT_TRUE(file.ok());
    array a;
    array_open_options opt;
    opt.exec = thread_pool_executor(pool);
    const status s = array_open(a, posix_file_storage(*file), alloc, opt);
    ASSERT_TRUE(s.ok()) << s.message;
    std::vector<uint8_t> back(items.size());
    const status r = array_read(a, bytes_mut(back.data(), back.size()));
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(back, items);
    const int64_t start[3] = {5, 7, 0}, stop[3] = {90, 9, 40};  // a thin slab: blocks decoded by request
    std::vector<uint8_t> slab(85 * 2 * 40 * 4);
    const status q = array_slice_read(a, start, stop, bytes_mut(slab.data(), slab.size()));
    ASSERT_TRUE(q.ok()) << q.message;
    for (int64_t i = 0; i < 85; ++i)
      for (int64_t j = 0; j < 2; ++j)
        ASSERT_EQ(0, std::memcmp(slab.data() + ((i * 2 + j) * 40) * 4,
                                 items.data() + (((5 + i) * 80 + 7 + j) * 40) * 4, 40 * 4));
  }
  EXPECT_GT(probe.calls.load(), 0);
  EXPECT_EQ(probe.foreign_calls.load(), 0) << "the allocator was called from a pool thread";
  EXPECT_EQ(probe.overlapping_calls.load(), 0) << "two allocator calls overlapped";
}

INSTANTIATE_TEST_SUITE_P(EveryCodecAndWorkerCount, AllocatorThreads,
                         ::testing::Combine(::testing::ValuesIn(kChunkCodecs), ::testing::Values(1u, 2u, 3u, 4u)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(EveryCodecAndWorkerCount, AllocatorThreadsArrays,
                         ::testing::Combine(::testing::ValuesIn(kCodecs), ::testing::Values(1u, 2u, 3u, 4u)),
                         case_name);

}  // namespace
