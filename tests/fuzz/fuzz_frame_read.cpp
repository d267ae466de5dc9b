// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes reading a frame. The input is a contiguous frame, or (first byte fuzz::kStructuredTag) a recipe from
// which the project's frame writer builds a frame, contiguous or sparse, that the recipe's edits then damage
// (fuzz_frame_build.hpp). A contiguous frame: frame_open, then per chunk frame_chunk_decode (whole) and
// frame_blocks_decode (every block in one request, in reverse), on three storages over the same bytes: one with
// a view (the chunk is read in place), one without (the requested blocks' streams go into one sparse copy), one
// without a view that claims concurrent reads, decoded by a 3-worker executor (each worker reads its own block).
// Some requests say which bytes of each block they read (a random range), so the decoder may decode only part.
// Lazily read blocks are compared only in chunks whose streams stay inside their blocks' extents (see below).
// Invariants: no crash, no out-of-bounds access, no UB, nothing leaks; through the view, a chunk that decodes
// whole also decodes block by block; every block handed over has its extent's size and, in the range read,
// equals its part of the whole chunk; no block is handed over twice. Also, on every frame that opens (a sparse
// one through its directory): the metalayers and vlmetalayers by index and by name (a vlmetalayer decodes to its
// nbytes), each chunk located (a special run only for special entries) and its first and last block alone (equal
// to their part of the whole), another handle and a refresh that see the same frame.
#include <cstring>
#include <vector>

#include "tessera/chunk.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../../src/frame/frame_internal.hpp"
#include "fuzz_frame_build.hpp"

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

// The array layer's readers of a stored chunk: a few consecutive blocks read as a chunk of their own
// (frame_blocks_reader_init, chunk_blocks_read), and the chunk a request would decode (frame_blocks_copy); the
// blocks they give decode to their part of `whole` (the chunk decoded, or null).
void block_readers_check(frame& f, chunk_decoder& d, int64_t n, const chunk_header& h, bytes_view chunk,
                         const uint8_t* whole, fuzz::params& p) {
  constexpr uint32_t kMax = 64;
  std::vector<uint8_t> prefix(detail::frame_blocks_prefix_size(kMax));
  detail::chunk_blocks_reader rd;
  const auto init = detail::frame_blocks_reader_init(f, n, kMax, prefix.data(), &rd);
  if (init.ok() && *init && rd.nblocks > 0) {
    const size_t first = p.range(0, rd.nblocks - 1);
    const size_t count = p.range(1, rd.nblocks - first);
    FUZZ_CHECK(!detail::chunk_blocks_size(rd, first, rd.nblocks - first + 1).ok());
    const auto need = detail::chunk_blocks_size(rd, first, count);
    if (need.ok() && *need <= fuzz::kMaxOutput) {
      std::vector<uint8_t> buffer(*need);
      if (*need > 0) FUZZ_CHECK(!detail::chunk_blocks_read(rd, first, count, bytes_mut(buffer.data(), *need - 1)).ok());
      const auto got = detail::chunk_blocks_read(rd, first, count, bytes_mut(buffer.data(), buffer.size()));
      if (got.ok() && whole != nullptr && !rd.memcpyed) {
        const auto e = chunk_block_extent_get(h, chunk, first);
        chunk_decoder_options o;
        fuzz::checked_allocator mem;
        {
          chunk_decoder d2;
          FUZZ_CHECK(chunk_decoder_init(d2, mem.get(), o).ok());
          if (e.ok() && e->size <= fuzz::kMaxOutput) {
            fuzz::guarded_buffer out(e->size);
            const auto r = chunk_decode_block(d2, *got, first, bytes_mut(out.data(), out.size()));
            if (r.ok()) FUZZ_CHECK(std::memcmp(out.data(), whole + e->offset, e->size) == 0);
          }
        }
        FUZZ_CHECK(mem.clean());
      }
    }
  }
  // The chunk a one-block request would decode.
  all_blocks a;
  a.h = &h;
  a.chunk = chunk;
  a.count = 1;
  a.seen.assign(1, 0);
  chunk_block_request r;
  r.count = 1;
  r.block = all_blocks::block;
  r.consume = all_blocks::consume;
  r.context = &a;
  bytes_view copy;
  if (detail::frame_blocks_copy(f, d, n, r, &copy).ok() && !copy.empty() && whole != nullptr && h.nblocks > 0) {
    const auto e = chunk_block_extent_get(h, chunk, 0);
    if (e.ok() && e->size <= fuzz::kMaxOutput) {
      fuzz::guarded_buffer out(e->size);
      const auto rb = chunk_decode_block(d, copy, 0, bytes_mut(out.data(), out.size()));
      if (rb.ok()) FUZZ_CHECK(std::memcmp(out.data(), whole + e->offset, e->size) == 0);
    }
  }
}

// A writable handle on a copy of the frame (a growable buffer): its chunk table loaded into memory, each chunk
// located and decoded from it as from the committed index.
void table_check(bytes_view frame_bytes, const allocator& alloc) {
  growable_buffer gb;
  growable_buffer_init(gb, alloc);
  const storage st = growable_buffer_storage(gb);
  if (!frame_bytes.empty() && storage_write(st, 0, frame_bytes).ok()) {
    frame f;
    frame_open_options fo;
    fo.max_alloc = kMaxAlloc;
    fo.writable = true;
    if (frame_open(f, st, alloc, fo).ok() && detail::frame_table_load(f).ok()) {
      FUZZ_CHECK(!frame_refresh(f).ok());  // a writable frame does not refresh
      FUZZ_CHECK(!frame_dirty(f));
      const frame_info* info = frame_info_get(f);
      chunk_decoder d;
      FUZZ_CHECK(chunk_decoder_init(d, alloc).ok());
      for (int64_t n = 0; n < info->nchunks && n < kMaxChunks; ++n) {
        const auto a = detail::frame_chunk_locate_table(f, n);
        const auto b = frame_chunk_locate(f, n);
        FUZZ_CHECK(a.ok() == b.ok());
        if (!a.ok()) continue;
        FUZZ_CHECK(a->special == b->special && a->nbytes == b->nbytes && a->offset == b->offset);
        if (a->nbytes < 0 || static_cast<size_t>(a->nbytes) > fuzz::kMaxOutput) continue;
        fuzz::guarded_buffer out(static_cast<size_t>(a->nbytes));
        (void)detail::frame_chunk_decode_table(f, d, n, bytes_mut(out.data(), out.size()));
        FUZZ_CHECK(out.guards_intact());
      }
    }
    (void)detail::frame_release(f);
  }
  growable_buffer_release(gb);
}

// The reads that do not decode every block: metalayers, vlmetalayers, chunk lookups, single blocks, another
// handle and a refresh.
void frame_reads_check(frame& f, chunk_decoder& d, fuzz::params& p, const allocator& alloc) {
  const frame_info* info = frame_info_get(f);
  FUZZ_CHECK(info != nullptr);
  FUZZ_CHECK(frame_max_alloc(f) == kMaxAlloc);
  for (uint32_t i = 0; i <= info->nmetalayers && i < kFrameMaxMetalayers + 1; ++i) {
    const auto name = frame_meta_name(f, i);
    if (i == info->nmetalayers) {
      FUZZ_CHECK(!name.ok());
      break;
    }
    if (!name.ok()) continue;
    FUZZ_CHECK(name->size() <= kFrameMetalayerNameMax);
    const auto content = frame_meta_find(f, *name);
    FUZZ_CHECK(content.ok());
    // The header is held by the frame: its content is readable (ASan checks) and within the header's length.
    FUZZ_CHECK(content->size() < info->header_len);
    volatile uint8_t sum = 0;
    for (uint8_t c : *content) sum = static_cast<uint8_t>(sum + c);
  }
  FUZZ_CHECK(!frame_meta_find(f, span<const char>("no such metalayer", 17)).ok());
  const uint32_t nvl = info->nvlmetalayers < 8 ? info->nvlmetalayers : 8;
  for (uint32_t i = 0; i <= nvl; ++i) {
    const auto name = frame_vlmeta_name(f, i);
    if (i == info->nvlmetalayers) FUZZ_CHECK(!name.ok());
    if (!name.ok()) continue;
    const auto raw = frame_vlmeta_raw(f, *name);
    const auto nbytes = frame_vlmeta_nbytes(f, *name);
    if (!raw.ok() || !nbytes.ok() || *nbytes > fuzz::kMaxOutput) continue;
    fuzz::guarded_buffer out(*nbytes + 1);
    const auto r = frame_vlmeta_decode(f, d, *name, bytes_mut(out.data(), out.size()));
    FUZZ_CHECK(out.guards_intact());
    if (r.ok()) FUZZ_CHECK(*r == *nbytes);
    if (*nbytes > 0) FUZZ_CHECK(!frame_vlmeta_decode(f, d, *name, bytes_mut(out.data(), *nbytes - 1)).ok());
  }
  // A name that none of the frame's variable-length metalayers has is not found (a fuzzed frame may name one
  // "none": the dictionary holds the word).
  bool none_named = info->nvlmetalayers > nvl;  // not every name looked at: no claim
  for (uint32_t i = 0; i < nvl && !none_named; ++i) {
    const auto name = frame_vlmeta_name(f, i);
    none_named = !name.ok() || (name->size() == 4 && std::memcmp(name->data(), "none", 4) == 0);
  }
  if (!none_named) FUZZ_CHECK(!frame_vlmeta_raw(f, span<const char>("none", 4)).ok());
  // Chunks: located, special runs, single blocks.
  const int64_t nchunks = info->nchunks < kMaxChunks ? info->nchunks : kMaxChunks;
  for (int64_t n = 0; n < nchunks; ++n) {
    const auto ref = frame_chunk_locate(f, n);
    const auto run = frame_chunk_special_run(f, n);
    if (ref.ok() && run.ok()) FUZZ_CHECK((ref->special != chunk_special::none) == (*run > 0));
    if (!ref.ok() || ref->nbytes < 0 || static_cast<size_t>(ref->nbytes) > fuzz::kMaxOutput) continue;
    const size_t nbytes = static_cast<size_t>(ref->nbytes);
    fuzz::guarded_buffer all(nbytes);
    const auto r = frame_chunk_decode(f, d, n, bytes_mut(all.data(), all.size()));
    owned_array<uint8_t> buffer;
    const auto bytes = frame_chunk_read(f, n, buffer);
    if (!bytes.ok()) continue;
    const auto h = chunk_header_read(*bytes);
    if (!h.ok()) continue;
    const size_t picks[] = {0, h->nblocks > 0 ? h->nblocks - 1 : 0, h->nblocks, p.range(0, h->nblocks)};
    for (size_t nblock : picks) {
      const auto e = chunk_block_extent_get(*h, *bytes, nblock);
      const size_t bsize = e.ok() ? e->size : 16;
      if (bsize > fuzz::kMaxOutput) continue;
      fuzz::guarded_buffer out(bsize);
      const auto rb = frame_block_decode(f, d, n, nblock, bytes_mut(out.data(), out.size()));
      FUZZ_CHECK(out.guards_intact());
      if (nblock >= h->nblocks) FUZZ_CHECK(!rb.ok());
      if (rb.ok()) FUZZ_CHECK(e.ok() && *rb == e->size);
      if (rb.ok() && r.ok() && streams_within_extents(*h, *bytes))
        FUZZ_CHECK(std::memcmp(out.data(), all.data() + e->offset, e->size) == 0);
    }
  }
  FUZZ_CHECK(!frame_chunk_locate(f, info->nchunks).ok());
  FUZZ_CHECK(!frame_chunk_locate(f, -1).ok());
  // Another handle sees the same frame; so does a refresh.
  {
    frame again;
    if (frame_open_again(again, f, alloc).ok()) {
      const frame_info* a = frame_info_get(again);
      FUZZ_CHECK(a->nchunks == info->nchunks && a->frame_len == info->frame_len && a->nbytes == info->nbytes);
    }
  }
  const int64_t before = info->nchunks;
  if (frame_refresh(f).ok()) FUZZ_CHECK(frame_info_get(f)->nchunks == before);
  // The parameters that would create a frame like this one: a header of a size that holds them.
  const frame_create_params cp = frame_create_params_from(*frame_info_get(f));
  const auto hs = frame_header_size(cp);
  if (hs.ok()) FUZZ_CHECK(*hs >= kFrameHeaderMinLen);
}

// A storage over the input whose read fails from the k-th call on (an I/O error mid-read), and, when asked, a
// size call that fails.
struct failing_input {
  bytes_view bytes;
  size_t calls = 0;
  size_t fail_at = 0;
  bool size_fails = false;
  static status read(void* c, uint64_t offset, bytes_mut dst) noexcept {
    auto& f = *static_cast<failing_input*>(c);
    if (++f.calls >= f.fail_at) return make_error(errc::io, "fuzz: a failing read");
    if (offset > f.bytes.size() || dst.size() > f.bytes.size() - offset) return make_error(errc::truncated, "fuzz: past the end");
    if (!dst.empty()) std::memcpy(dst.data(), f.bytes.data() + offset, dst.size());
    return ok_status();
  }
  static status size(void* c, uint64_t* out) noexcept {
    auto& f = *static_cast<failing_input*>(c);
    if (f.size_fails) return make_error(errc::io, "fuzz: a failing size");
    *out = f.bytes.size();
    return ok_status();
  }
};

// The frame read with faults: a storage whose reads fail from some call on, an allocator that refuses one
// request. Every read either works or returns an error; nothing leaks.
void faults_check(const uint8_t* data, size_t size, fuzz::params& p) {
  failing_input in;
  in.bytes = bytes_view(data, size);
  in.fail_at = p.range(1, 24);
  in.size_fails = (p.next() & 15) == 0;
  storage st;
  st.read = failing_input::read;
  st.size = failing_input::size;
  st.context = &in;
  fuzz::checked_allocator mem;
  mem.counter.fail_at = p.range(1, 12);
  mem.counter.fail_after = (p.next() & 1) != 0;
  {
    frame f;
    frame_open_options fo;
    fo.max_alloc = kMaxAlloc;
    if (frame_open(f, st, mem.get(), fo).ok()) {
      chunk_decoder d;
      if (chunk_decoder_init(d, mem.get()).ok()) {
        const frame_info* info = frame_info_get(f);
        for (int64_t n = 0; n < info->nchunks && n < 4; ++n) {
          const auto ref = frame_chunk_locate(f, n);
          if (!ref.ok() || ref->nbytes < 0 || static_cast<size_t>(ref->nbytes) > fuzz::kMaxOutput) continue;
          fuzz::guarded_buffer out(static_cast<size_t>(ref->nbytes));
          (void)frame_chunk_decode(f, d, n, bytes_mut(out.data(), out.size()));
          FUZZ_CHECK(out.guards_intact());
          fuzz::guarded_buffer block(static_cast<size_t>(ref->blocksize > 0 && ref->blocksize <= ref->nbytes ? ref->blocksize : ref->nbytes));
          (void)frame_block_decode(f, d, n, 0, bytes_mut(block.data(), block.size()));
          FUZZ_CHECK(block.guards_intact());
        }
        frame again;
        (void)frame_open_again(again, f, mem.get());
        (void)frame_refresh(f);
      }
    }
  }
  FUZZ_CHECK(mem.clean());
}

// Every read on a frame that is not open is refused (invalid_argument), never a crash; the handles opened on the
// input say what they can do (in place, by tasks); a request without its callbacks is refused; a frame moved
// away from is not open.
void handles_check(frame& fv, frame& fl, frame& fc, chunk_decoder& d) {
  FUZZ_CHECK(detail::frame_chunks_in_place(fv));  // read-only, over memory with a view
  FUZZ_CHECK(!detail::frame_chunks_in_place(fl));
  FUZZ_CHECK(detail::frame_blocks_readable_by_tasks(fl, false) && !detail::frame_blocks_readable_by_tasks(fl, true));
  FUZZ_CHECK(detail::frame_blocks_readable_by_tasks(fc, true));
  FUZZ_CHECK(!frame_dirty(fv));
  FUZZ_CHECK(!frame_open_again(fv, fv, test::system_allocator()).ok());  // onto itself
  chunk_block_request bad;
  bad.count = 1;
  FUZZ_CHECK(!frame_blocks_decode(fv, d, 0, bad).ok());
  bytes_view copy;
  FUZZ_CHECK(!detail::frame_blocks_copy(fv, d, 0, bad, &copy).ok());
  // Moved away: the new handle reads, the old one is closed.
  frame moved(static_cast<frame&&>(fv));
  FUZZ_CHECK(frame_info_get(moved) != nullptr);
  frame& closed = fv;
  FUZZ_CHECK(frame_info_get(closed) == nullptr);
  FUZZ_CHECK(frame_max_alloc(closed) == kDefaultMaxAlloc);
  const span<const char> name("b2nd", 4);
  FUZZ_CHECK(!frame_meta_name(closed, 0).ok() && !frame_meta_find(closed, name).ok());
  FUZZ_CHECK(!frame_vlmeta_name(closed, 0).ok() && !frame_vlmeta_raw(closed, name).ok());
  FUZZ_CHECK(!frame_vlmeta_nbytes(closed, name).ok());
  uint8_t out[64];
  FUZZ_CHECK(!frame_vlmeta_decode(closed, d, name, bytes_mut(out, sizeof out)).ok());
  FUZZ_CHECK(!frame_chunk_locate(closed, 0).ok() && !frame_chunk_special_run(closed, 0).ok());
  owned_array<uint8_t> buffer;
  FUZZ_CHECK(!frame_chunk_read(closed, 0, buffer).ok());
  FUZZ_CHECK(!frame_chunk_decode(closed, d, 0, bytes_mut(out, sizeof out)).ok());
  FUZZ_CHECK(!frame_block_decode(closed, d, 0, 0, bytes_mut(out, sizeof out)).ok());
  chunk_block_request none;
  FUZZ_CHECK(!frame_blocks_decode(closed, d, 0, none).ok());
  FUZZ_CHECK(!detail::frame_blocks_copy(closed, d, 0, none, &copy).ok());
  detail::chunk_blocks_reader rd;
  uint8_t prefix[64];
  FUZZ_CHECK(!detail::frame_blocks_reader_init(closed, 0, 1, prefix, &rd).ok());
  FUZZ_CHECK(!detail::frame_chunks_in_place(closed) && !detail::frame_blocks_readable_by_tasks(closed, false));
  FUZZ_CHECK(!frame_dirty(closed));
  frame other;
  FUZZ_CHECK(!frame_open_again(other, closed, test::system_allocator()).ok());
  FUZZ_CHECK(!frame_refresh(closed).ok());
  FUZZ_CHECK(frame_close(closed).ok());
  fv = static_cast<frame&&>(moved);  // back, for the caller
  FUZZ_CHECK(frame_info_get(fv) != nullptr);
}

void contiguous_check(const uint8_t* data, size_t size, fuzz::params& p) {
  faults_check(data, size, p);
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
        block_readers_check(fl, serial, n, *h, *bytes, lazy_ref, p);
      }
      frame_reads_check(fv, serial, p, mem.get());
      table_check(bytes_view(data, size), mem.get());
      frame_reads_check(fl, serial, p, mem.get());
      handles_check(fv, fl, fc, serial);
    }
  }
  FUZZ_CHECK(mem.clean());
}

// A sparse frame in a memory directory: opened through it, every chunk decoded whole and block by block.
void sparse_check(const fuzz::built_frame& b, fuzz::params& p) {
  fuzz::checked_allocator mem;
  {
    memory_directory md;
    FUZZ_CHECK(memory_directory_init(md, test::system_allocator(), 1024).ok());
    if (fuzz::sparse_fill(md, b)) {
      frame f;
      frame_open_options fo;
      fo.max_alloc = kMaxAlloc;
      if (frame_open_sparse(f, memory_directory_interface(md), mem.get(), fo).ok()) {
        chunk_decoder serial, parallel;
        FUZZ_CHECK(chunk_decoder_init(serial, mem.get()).ok());
        chunk_decoder_options o;
        o.exec.run = reverse_run;
        o.exec.workers = 3;
        FUZZ_CHECK(chunk_decoder_init(parallel, mem.get(), o).ok());
        const frame_info* info = frame_info_get(f);
        FUZZ_CHECK(info->kind == frame_kind::sparse);
        const int64_t nchunks = info->nchunks < kMaxChunks ? info->nchunks : kMaxChunks;
        for (int64_t n = 0; n < nchunks; ++n) {
          owned_array<uint8_t> buffer;
          const auto bytes = frame_chunk_read(f, n, buffer);
          if (!bytes.ok()) continue;
          const auto h = chunk_header_read(*bytes);
          if (!h.ok() || static_cast<size_t>(h->nbytes) > fuzz::kMaxOutput) continue;
          const size_t nbytes = static_cast<size_t>(h->nbytes);
          fuzz::guarded_buffer whole(nbytes);
          const auto r = frame_chunk_decode(f, serial, n, bytes_mut(whole.data(), whole.size()));
          FUZZ_CHECK(whole.guards_intact());
          const uint8_t* ref = r.ok() && h->nblocks <= kMaxBlocks && streams_within_extents(*h, *bytes) ? whole.data() : nullptr;
          (void)blocks_decode(f, parallel, n, *h, *bytes, ref, nbytes, p.next() | 1);
          (void)blocks_decode(f, serial, n, *h, *bytes, ref, nbytes, 0);
        }
        frame_reads_check(f, serial, p, mem.get());
      }
    }
    memory_directory_release(md);
  }
  FUZZ_CHECK(mem.clean());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::params p(data, size);
  if (size == 0 || data[0] != fuzz::kStructuredTag) {
    contiguous_check(data, size, p);
    return 0;
  }
  fuzz::recipe rec(data + 1, size - 1);
  fuzz::built_frame b;
  {
    fuzz::checked_allocator mem;
    b = fuzz::frame_build(rec, mem.get());
    FUZZ_CHECK(mem.clean());
  }
  if (!b.built) return 0;
  if (b.sparse) {
    sparse_check(b, p);
  } else {
    std::vector<uint8_t> copy(b.bytes);  // exactly the frame's size: ASan sees reads past it
    contiguous_check(copy.data(), copy.size(), p);
  }
  return 0;
}
