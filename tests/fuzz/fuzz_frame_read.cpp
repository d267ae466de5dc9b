// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes reading a contiguous frame: frame_open, then per chunk frame_chunk_decode (whole) and
// frame_blocks_decode (every block in one request, in reverse), on three storages over the same bytes: one with
// a view (the chunk is read in place), one without (the requested blocks' streams go into one sparse copy), one
// without a view that claims concurrent reads, decoded by a 3-worker executor (each worker reads its own block).
// Some requests say which bytes of each block they read (a random range), so the decoder may decode only part.
// Lazily read blocks are compared only in chunks whose streams stay inside their blocks' extents (see below).
// Invariants: no crash, no out-of-bounds access, no UB, nothing leaks; through the view, a chunk that decodes
// whole also decodes block by block; every block handed over has its extent's size and, in the range read,
// equals its part of the whole chunk; no block is handed over twice.
#include <cstring>
#include <vector>

#include "tessera/chunk.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "fuzz_common.hpp"

using namespace tessera;

namespace {

constexpr int64_t kMaxChunks = 8;      // chunks tried per input
constexpr size_t kMaxBlocks = 4096;    // blocks asked for per chunk
// The frames' max_alloc: a size the input claims above it is errc::resource_limit, refused before anything is
// allocated (ci/fuzz.sh caps malloc at 64 MiB: an allocation that follows a claim past this is a finding).
constexpr uint64_t kMaxAlloc = uint64_t{16} << 20;

// The input as the memory port's read-only storage; without its view (read through read) and, on request,
// claiming concurrent reads.
storage input_storage(const_buffer& b, bool with_view, bool concurrent) noexcept {
  storage s = const_buffer_storage(b);
  if (!with_view) s.view = nullptr;
  s.concurrent_reads = concurrent;
  return s;
}

// Tasks in reverse order over 3 worker indices, in this thread.
void reverse_run(void*, size_t ntasks, executor_task task, void* task_context) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(task_context, i, static_cast<uint32_t>(i % 3));
}

struct all_blocks {
  const chunk_header* h = nullptr;
  bytes_view chunk;
  const uint8_t* whole = nullptr;  // the whole chunk decoded, or null
  size_t nbytes = 0;
  std::vector<uint8_t> seen;
  size_t count = 0;
  uint64_t salt = 0;  // nonzero: consume reads only a range of each block (the decoder may decode less)
  static size_t block(void* c, size_t i) noexcept {
    const auto& a = *static_cast<all_blocks*>(c);
    return a.count - 1 - i;
  }
  static void range_of(const all_blocks& a, size_t nblock, size_t size, size_t* begin, size_t* end) noexcept {
    *begin = 0;
    *end = size;
    if (a.salt == 0 || size == 0) return;
    const uint64_t x = (a.salt + nblock) * 0x9E3779B97F4A7C15ull;
    *begin = static_cast<size_t>(x % size);
    *end = *begin + 1 + static_cast<size_t>((x >> 32) % (size - *begin));
  }
  static void range(void* c, size_t i, size_t* begin, size_t* end) noexcept {
    const auto& a = *static_cast<const all_blocks*>(c);
    const size_t nblock = block(c, i);
    const auto e = chunk_block_extent_get(*a.h, a.chunk, nblock);
    range_of(a, nblock, e.ok() ? e->size : 0, begin, end);
  }
  static status consume(void* c, size_t i, bytes_view decoded, uint32_t worker) noexcept {
    auto& a = *static_cast<all_blocks*>(c);
    const size_t nblock = block(c, i);
    FUZZ_CHECK(worker < 3);
    FUZZ_CHECK(a.seen[nblock] == 0);
    a.seen[nblock] = 1;
    const auto e = chunk_block_extent_get(*a.h, a.chunk, nblock);
    if (e.ok() && a.whole != nullptr) {
      FUZZ_CHECK(decoded.size() == e->size && e->offset + e->size <= a.nbytes);
      size_t lo = 0, hi = e->size;
      range_of(a, nblock, e->size, &lo, &hi);
      FUZZ_CHECK(lo <= hi && hi <= e->size);
      FUZZ_CHECK(std::memcmp(decoded.data() + lo, a.whole + e->offset + lo, hi - lo) == 0);
    }
    return ok_status();
  }
};

// Returns whether every block was handed over.
bool blocks_decode(frame& f, chunk_decoder& d, int64_t n, const chunk_header& h, bytes_view chunk,
                   const uint8_t* whole, size_t nbytes, uint64_t salt) {
  all_blocks a;
  a.salt = salt;
  a.h = &h;
  a.chunk = chunk;
  a.whole = whole;
  a.nbytes = nbytes;
  a.count = h.nblocks < kMaxBlocks ? h.nblocks : kMaxBlocks;
  a.seen.assign(a.count, 0);
  chunk_block_request r;
  r.count = a.count;
  r.block = all_blocks::block;
  r.consume = all_blocks::consume;
  r.context = &a;
  if (salt != 0) r.range = all_blocks::range;
  const status s = frame_blocks_decode(f, d, n, r);
  if (!s.ok()) return false;
  for (uint8_t k : a.seen) FUZZ_CHECK(k == 1);
  return true;
}

int32_t load_i32(const uint8_t* p) noexcept {
  const uint32_t u = p[0] | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  return u <= 0x7fffffffu ? static_cast<int32_t>(u) : -static_cast<int32_t>(~u) - 1;
}

// Whether every block's streams end before the next larger block start (or cbytes): true of every chunk a
// writer makes. Reads of single blocks copy only that extent, so a corrupt chunk whose streams run into another
// block's decodes there to other garbage than whole: still no crash, but nothing to compare.
bool streams_within_extents(const chunk_header& h, bytes_view chunk) noexcept {
  if (h.special != chunk_special::none || h.memcpyed || h.vlblocks || h.lazy) return true;
  const uint64_t cbytes = static_cast<uint64_t>(h.cbytes);
  if (chunk.size() < cbytes || h.header_size + uint64_t{4} * h.nblocks > cbytes) return false;
  const uint8_t* c = chunk.data();
  for (size_t j = 0; j < h.nblocks; ++j) {
    const int64_t st = load_i32(c + h.header_size + 4 * j);
    uint64_t end = cbytes;
    for (size_t k = 0; k < h.nblocks; ++k) {
      const int64_t o = load_i32(c + h.header_size + 4 * k);
      if (o > st && static_cast<uint64_t>(o) < end) end = static_cast<uint64_t>(o);
    }
    if (st < 0 || static_cast<uint64_t>(st) >= cbytes) return false;
    const bool short_block = j + 1 == h.nblocks && h.leftover > 0;
    const size_t nstreams = h.split && !short_block ? h.typesize : 1;
    uint64_t pos = static_cast<uint64_t>(st);
    for (size_t s = 0; s < nstreams; ++s) {
      if (pos + 4 > end) return false;
      const int32_t csize = load_i32(c + pos);
      pos += 4 + (csize > 0 ? static_cast<uint64_t>(csize) : csize < 0 ? 1 : 0);
      if (pos > end) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::params p(data, size);
  fuzz::checked_allocator mem;
  {
    const_buffer input{data, size};
    frame fv, fl, fc;
    frame_open_options fo;
    fo.max_alloc = kMaxAlloc;
    if (!frame_open(fv, input_storage(input, true, false), mem.get(), fo).ok()) {
      FUZZ_CHECK(!frame_open(fl, input_storage(input, false, false), mem.get(), fo).ok());
    } else if (frame_open(fl, input_storage(input, false, false), mem.get(), fo).ok() &&
               frame_open(fc, input_storage(input, false, true), mem.get(), fo).ok()) {
      chunk_decoder serial, parallel;
      chunk_decoder_options o;
      o.max_blocksize = p.range(0, 2) * 4096;  // grown on demand
      FUZZ_CHECK(chunk_decoder_init(serial, mem.get(), o).ok());
      o.exec.run = reverse_run;
      o.exec.workers = 3;
      FUZZ_CHECK(chunk_decoder_init(parallel, mem.get(), o).ok());
      const frame_info* info = frame_info_get(fv);
      const int64_t nchunks = info->nchunks < kMaxChunks ? info->nchunks : kMaxChunks;
      for (int64_t n = 0; n < nchunks; ++n) {
        owned_array<uint8_t> buffer;
        const auto bytes = frame_chunk_read(fv, n, buffer);
        if (!bytes.ok()) continue;
        const auto h = chunk_header_read(*bytes);
        if (!h.ok()) continue;
        const size_t nbytes = static_cast<size_t>(h->nbytes);
        if (nbytes > fuzz::kMaxOutput) continue;
        fuzz::guarded_buffer whole(nbytes);
        const auto r = frame_chunk_decode(fv, serial, n, bytes_mut(whole.data(), whole.size()));
        FUZZ_CHECK(whole.guards_intact());
        const uint8_t* ref = r.ok() && *r == nbytes ? whole.data() : nullptr;
        const bool via_view = blocks_decode(fv, parallel, n, *h, *bytes, ref, nbytes, 0);
        if (ref != nullptr && h->nblocks <= kMaxBlocks) FUZZ_CHECK(via_view);
        const uint64_t salt = p.next() | 1;
        (void)blocks_decode(fv, serial, n, *h, *bytes, ref, nbytes, salt);
        const uint8_t* lazy_ref = h->nblocks <= kMaxBlocks && streams_within_extents(*h, *bytes) ? ref : nullptr;
        (void)blocks_decode(fl, serial, n, *h, *bytes, lazy_ref, nbytes, 0);
        (void)blocks_decode(fl, parallel, n, *h, *bytes, lazy_ref, nbytes, salt);
        (void)blocks_decode(fc, parallel, n, *h, *bytes, lazy_ref, nbytes, salt);
      }
    }
  }
  FUZZ_CHECK(mem.clean());
  return 0;
}
