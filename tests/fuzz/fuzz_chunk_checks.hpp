// SPDX-License-Identifier: BSD-3-Clause
// Checks shared by the chunk fuzzers (fuzz_chunk_decode.cpp, fuzz_chunk_decode_block.cpp): the blocks of a chunk
// read as the array layer reads them (requests with byte ranges, serial and over workers, the fixed-block reader,
// one block on a prepared worker: into its scratch, into a buffer, as byte planes), each against the whole chunk
// decoded; and the decoder's other entry points on the same chunk (what it lacks, a moved decoder, a fixed
// scratch, the streams' extents the frame reader relies on).
#pragma once

#include <cstring>
#include <vector>

#include "tessera/chunk.hpp"

#include "../../src/chunk/chunk_internal.hpp"
#include "fuzz_common.hpp"

namespace tessera::fuzz {

constexpr size_t kMaxRequested = 64;  // blocks asked for in one chunk_decode_blocks request

// A chunk_decode_blocks request: blocks in reverse order, each read in a range of its bytes (salt 0: whole).
struct ranged {
  const chunk_header* h = nullptr;
  bytes_view chunk;
  const uint8_t* whole = nullptr;  // the whole chunk decoded, or null
  size_t count = 0;
  uint64_t salt = 0;
  uint32_t workers = 1;
  std::vector<uint8_t> seen;
  static size_t block(void* c, size_t i) noexcept { return static_cast<ranged*>(c)->count - 1 - i; }
  static void range_of(uint64_t salt, size_t nblock, size_t size, size_t* begin, size_t* end) noexcept {
    *begin = 0;
    *end = size;
    if (salt == 0 || size == 0) return;
    const uint64_t x = (salt + nblock) * 0x9E3779B97F4A7C15ull;
    *begin = static_cast<size_t>(x % size);
    // Mostly short ranges (a few elements: the gathers), sometimes to the end.
    const size_t len = (x >> 40) % 4 == 0 ? size - *begin : 1 + static_cast<size_t>((x >> 32) % 24);
    *end = *begin + (len < size - *begin ? len : size - *begin);
  }
  static void range(void* c, size_t i, size_t* begin, size_t* end) noexcept {
    const auto& a = *static_cast<const ranged*>(c);
    const size_t nblock = block(c, i);
    const auto e = chunk_block_extent_get(*a.h, a.chunk, nblock);
    range_of(a.salt, nblock, e.ok() ? e->size : 0, begin, end);
  }
  static status consume(void* c, size_t i, bytes_view decoded, uint32_t worker) noexcept {
    auto& a = *static_cast<ranged*>(c);
    const size_t nblock = block(c, i);
    FUZZ_CHECK(worker < a.workers);
    FUZZ_CHECK(a.seen[i] == 0);
    a.seen[i] = 1;
    const auto e = chunk_block_extent_get(*a.h, a.chunk, nblock);
    FUZZ_CHECK(e.ok());
    FUZZ_CHECK(decoded.size() == e->size);
    if (a.whole != nullptr) {
      size_t lo = 0, hi = 0;
      range_of(a.salt, nblock, e->size, &lo, &hi);
      FUZZ_CHECK(std::memcmp(decoded.data() + lo, a.whole + e->offset + lo, hi - lo) == 0);
    }
    return ok_status();
  }
};

inline void run_rotating(void* context, size_t ntasks, executor_task task, void* task_context) noexcept {
  const uint32_t workers = *static_cast<const uint32_t*>(context);
  for (size_t i = 0; i < ntasks; ++i) task(task_context, i, static_cast<uint32_t>((i * 7) % workers));
}

// chunk_decode_blocks (and the fixed-block reader) over the first blocks, each in a range; equal to the whole.
inline void requests_check(chunk_decoder& d, const chunk_header& h, bytes_view chunk, const uint8_t* whole, uint64_t salt,
                    uint32_t workers, bool fixed) {
  ranged a;
  a.h = &h;
  a.chunk = chunk;
  a.whole = whole;
  a.salt = salt;
  a.workers = workers;
  a.count = h.nblocks < kMaxRequested ? h.nblocks : kMaxRequested;
  a.seen.assign(a.count, 0);
  chunk_block_request r;
  r.count = a.count;
  r.block = ranged::block;
  r.consume = ranged::consume;
  r.context = &a;
  if (salt != 0) r.range = ranged::range;
  const status s = fixed ? detail::chunk_decode_fixed_blocks(d, chunk, r) : chunk_decode_blocks(d, chunk, r);
  // Whole blocks of a chunk that decodes whole decode too. A range may fail where the whole does not: a partial
  // LZ4 decode walks the stream's tail (lz4_block.hpp), which refuses offset 0 where liblz4's whole decode
  // writes zeros (found by this fuzzer; such a stream is corrupt either way).
  if (whole != nullptr && !(fixed && h.vlblocks) && salt == 0) FUZZ_CHECK(s.ok());
  if (s.ok())
    for (uint8_t k : a.seen) FUZZ_CHECK(k == 1);
  // A request without its callbacks is refused.
  chunk_block_request bad;
  bad.count = 1;
  FUZZ_CHECK(!chunk_decode_blocks(d, chunk, bad).ok());
}

// One block on a prepared worker, as the array's slice readers decode them: into the worker's scratch, into a
// buffer, as byte planes. Only regular chunks qualify (no special value, memcpy, VL blocks, or delta past block 0).
inline void worker_blocks_check(chunk_decoder& d, uint32_t workers, const chunk_header& h, bytes_view chunk,
                         const uint8_t* whole, fuzz::params& p) {
  if (!detail::chunk_decoder_prepare(d, h).ok()) return;
  const size_t tries = h.nblocks < 4 ? h.nblocks + 1 : 5;
  for (size_t k = 0; k < tries; ++k) {
    const size_t nblock = k < 2 ? k : k + 1 == tries ? h.nblocks : p.range(0, h.nblocks - 1);
    const auto e = chunk_block_extent_get(h, chunk, nblock);
    const size_t size = e.ok() ? e->size : 0;
    size_t lo = 0, hi = 0;
    ranged::range_of(p.next() | 1, nblock, size, &lo, &hi);
    const uint32_t worker = static_cast<uint32_t>(p.range(0, workers));  // == workers: refused
    bytes_view decoded;
    const status s1 = detail::chunk_block_decode_on(d, worker, chunk, nblock, lo, hi, &decoded);
    if (worker >= workers || !e.ok()) FUZZ_CHECK(!s1.ok());
    const bool compare = whole != nullptr && e.ok();
    if (s1.ok()) {
      FUZZ_CHECK(decoded.size() == size);
      if (compare) FUZZ_CHECK(std::memcmp(decoded.data() + lo, whole + e->offset + lo, hi - lo) == 0);
    }
#if TESSERA_SPEED_PATHS
    fuzz::guarded_buffer into(size + p.range(0, 8));
    const status s2 = detail::chunk_block_decode_into_on(d, worker, chunk, nblock, lo, hi,
                                                         bytes_mut(into.data(), into.size()), &decoded);
    FUZZ_CHECK(into.guards_intact());
    FUZZ_CHECK(s2.ok() == s1.ok());
    if (s2.ok() && compare) FUZZ_CHECK(std::memcmp(into.data() + lo, whole + e->offset + lo, hi - lo) == 0);
    if (size > 0) {
      fuzz::guarded_buffer small(size - 1);
      FUZZ_CHECK(!detail::chunk_block_decode_into_on(d, worker, chunk, nblock, lo, hi,
                                                     bytes_mut(small.data(), small.size()), &decoded).ok());
    }
    detail::block_planes planes;
    size_t stored = 0;
    planes.stored = [](void* c, size_t, size_t, const uint8_t*) noexcept { ++*static_cast<size_t*>(c); };
    planes.context = &stored;
    const status s3 = detail::chunk_block_planes_on(d, worker, chunk, nblock, lo, hi, &decoded, &planes);
    FUZZ_CHECK(s3.ok() == s1.ok());
    if (s3.ok() && compare) {
      if (planes.typesize == 0) {
        FUZZ_CHECK(std::memcmp(decoded.data() + lo, whole + e->offset + lo, hi - lo) == 0);
      } else {
        FUZZ_CHECK(planes.typesize == h.typesize && size % h.typesize == 0);
        for (size_t i = lo / h.typesize; i < (hi + h.typesize - 1) / h.typesize; ++i)
          for (size_t b = 0; b < planes.typesize; ++b)
            FUZZ_CHECK(planes.plane[b][i] == whole[e->offset + i * h.typesize + b]);
      }
    }
#endif
  }
}

// The requests again on a fresh decoder of `o` over 2 or 3 workers (a rotating executor; fixed: the
// fixed-block reader), then each worker's own blocks; its allocator must come back clean.
inline void workers_check(const chunk_decoder_options& o, const chunk_header& h, bytes_view chunk, const uint8_t* whole,
                          fuzz::params& p, bool fixed) {
  uint32_t workers = static_cast<uint32_t>(p.range(2, 3));
  chunk_decoder_options po = o;
  po.exec.run = run_rotating;
  po.exec.context = &workers;
  po.exec.workers = workers;
  fuzz::checked_allocator mem;
  {
    chunk_decoder d;
    FUZZ_CHECK(chunk_decoder_init(d, mem.get(), po).ok());
    requests_check(d, h, chunk, whole, p.next() | 1, workers, fixed);
    if (h.special == chunk_special::none && !h.memcpyed && !h.vlblocks && h.nbytes > 0 &&
        static_cast<size_t>(h.blocksize) <= fuzz::kMaxOutput)
      worker_blocks_check(d, workers, h, chunk, whole, p);
  }
  FUZZ_CHECK(mem.clean());
}

// The decoder's other entry points on a chunk whose header reads (whole_ok: it decodes whole with `base`).
inline void extras_check(const chunk_header& h, bytes_view chunk, const chunk_decoder_options& base, bool whole_ok) {
  // A filter the decoder lacks fails every block (a chunk without bytes has none); a codec it lacks fails only
  // the streams that are not stored as they are.
  const chunk_missing missing = chunk_plugins_missing(h, base.plugins);
  if (whole_ok && h.nbytes > 0) FUZZ_CHECK(missing.kind != chunk_missing_kind::filter);
  if (missing.kind == chunk_missing_kind::codec) FUZZ_CHECK(h.format == codec_format::user && missing.id == h.udcodec);
  if (missing.kind == chunk_missing_kind::filter) {
    bool named = false;
    for (uint8_t f : h.filters) named = named || f == missing.id;
    FUZZ_CHECK(named);
  }
  // The codec's name and availability, as a report of the chunk would print them.
  if (h.format != codec_format::user) {
    const codec c = h.format == codec_format::zlib ? codec::zlib : h.format == codec_format::zstd ? codec::zstd
                    : h.format == codec_format::lz4 ? codec::lz4 : codec::blosclz;
    FUZZ_CHECK(codec_name(c) != nullptr);
    if (whole_ok && h.nbytes > 0 && !h.memcpyed && h.special == chunk_special::none) FUZZ_CHECK(codec_available(c));
  } else {
    FUZZ_CHECK(codec_name(static_cast<codec>(h.udcodec)) != nullptr);
    (void)codec_available(static_cast<codec>(h.udcodec));
  }
  // A decoded chunk's streams stay inside cbytes (the frame reader copies blocks by these extents).
  if (whole_ok && h.special == chunk_special::none && !h.memcpyed && !h.vlblocks && h.nbytes > 0) {
    const uint8_t* c = chunk.data();
    for (size_t j = 0; j < h.nblocks && j < kMaxRequested; ++j) {
      const int32_t start = detail::chunk_load_i32(c + h.header_size + 4 * j);
      FUZZ_CHECK(start >= 0 && detail::block_streams_within(c, static_cast<uint64_t>(start),
                                                            static_cast<uint64_t>(h.cbytes), detail::block_nstreams(h, j)));
    }
  }
  // A decoder with a fixed scratch for the chunk's blocks, moved twice: decodes what the first decoded.
  if (whole_ok && h.nbytes > 0 && static_cast<size_t>(h.nbytes) <= kMaxOutput) {
    checked_allocator mem;
    {
      chunk_decoder_options o = base;
      o.fixed_scratch = true;
      o.max_blocksize = h.vlblocks ? static_cast<size_t>(h.nbytes) : static_cast<size_t>(h.blocksize);
      chunk_decoder d;
      FUZZ_CHECK(chunk_decoder_init(d, mem.get(), o).ok());
      chunk_decoder moved(static_cast<chunk_decoder&&>(d));
      chunk_decoder again;
      again = static_cast<chunk_decoder&&>(moved);
      guarded_buffer out(static_cast<size_t>(h.nbytes));
      FUZZ_CHECK(chunk_decode(again, chunk, bytes_mut(out.data(), out.size())).ok());
      FUZZ_CHECK(out.guards_intact());
      if (h.special == chunk_special::none && !h.memcpyed)
        FUZZ_CHECK(!chunk_decode(d, chunk, bytes_mut(out.data(), out.size())).ok());  // d holds nothing now
    }
    FUZZ_CHECK(mem.clean());
  }
}

}  // namespace tessera::fuzz
