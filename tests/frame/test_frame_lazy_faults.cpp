// SPDX-License-Identifier: BSD-3-Clause
// Block reads from a storage without a view (the frame reads only a chunk's header, block starts, dictionary
// and the blocks asked for), with each storage call and each allocation of the frame failing in turn: every
// read either hands over exactly the stored blocks or fails with the injected code, and nothing leaks. Then the
// frame damaged at each byte of its header, index, trailer and chunk fronts: the stored blocks or a code that
// names bad data. Chunks large enough to be read in parts: compressed, memcpyed, under delta, with a dictionary.
#include <cstring>
#include <initializer_list>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr size_t kNbytes = 8192;
constexpr int32_t kBlock = 1024;
constexpr int kChunks = 4;

struct chunk_kind {
  codec compressor;
  int clevel;
  bool delta;
  bool dict;
};
constexpr chunk_kind kKinds[kChunks] = {
    {codec::blosclz, 5, false, false},  // compressed streams
    {codec::blosclz, 0, false, false},  // memcpyed: blocks stored as they are
    {codec::lz4, 5, true, false},       // later blocks need block 0
    {codec::zstd, 3, false, true},      // a dictionary after the block starts
};

struct buffers {
  uint8_t src[kChunks][kNbytes];
  uint8_t chunk[kNbytes + kChunkMaxOverhead];
  uint8_t out[kNbytes];
};
buffers g;

// Checks every block consumed against the chunk's source; counts them.
struct blocks_seen {
  const uint8_t* src = nullptr;
  const size_t* list = nullptr;
  size_t consumed = 0;
  bool wrong = false;
  static size_t block(void* c, size_t i) noexcept { return static_cast<blocks_seen*>(c)->list[i]; }
  static status consume(void* c, size_t i, bytes_view decoded, uint32_t) noexcept {
    auto& b = *static_cast<blocks_seen*>(c);
    const size_t at = b.list[i] * static_cast<size_t>(kBlock);
    if (decoded.size() != static_cast<size_t>(kBlock) || std::memcmp(decoded.data(), b.src + at, kBlock) != 0) b.wrong = true;
    ++b.consumed;
    return ok_status();
  }
};

bool kind_available(const chunk_kind& k) { return codec_available(k.compressor); }

// A frame of the four kinds of chunk (those whose codec this build has) in buf.
void frame_build(tessera::test::context& t, growable_buffer& buf) {
  chunk_encoder_options eo;
  eo.max_blocksize = kBlock;  // scratch for these blocks only (the default is a lot on the Cortex-M4)
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, tessera::test::system_allocator(), eo));
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  frame f;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), tessera::test::system_allocator(), p));
  for (int c = 0; c < kChunks; ++c) {
    content_fill(1000 + static_cast<uint64_t>(c), g.src[c], kNbytes);
    if (!kind_available(kKinds[c])) continue;
    chunk_encode_params ep;
    ep.typesize = 4;
    ep.blocksize = kBlock;
    ep.compressor = kKinds[c].compressor;
    ep.clevel = kKinds[c].clevel;
    ep.use_dict = kKinds[c].dict;
    if (kKinds[c].delta) ep.filters[4] = static_cast<uint8_t>(filter_id::delta);
    auto n = chunk_encode(e, ep, bytes_view(g.src[c], kNbytes), bytes_mut(g.chunk, sizeof g.chunk));
    REQUIRE_OK(n);
    REQUIRE(*n > 256);  // large enough to be read in parts
    REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, *n)));
  }
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_close(f));
}

// One read of each kind for every chunk; the first error is returned, wrong bytes are errc::corrupt.
status reads(frame& f, chunk_decoder& d, chunk_decoder& d3) {
  int64_t nchunk = 0;
  for (int c = 0; c < kChunks; ++c) {
    if (!kind_available(kKinds[c])) continue;
    auto b = frame_block_decode(f, d, nchunk, 5, bytes_mut(g.out, sizeof g.out));
    if (!b.ok()) return b.err();
    if (*b != static_cast<size_t>(kBlock) || std::memcmp(g.out, g.src[c] + 5 * kBlock, kBlock) != 0)
      return make_error(errc::corrupt, "test: frame_block_decode handed over wrong bytes");
    static const size_t kList[] = {6, 1, 2, 7};
    for (chunk_decoder* dec : {&d, &d3}) {
      blocks_seen seen;
      seen.src = g.src[c];
      seen.list = kList;
      chunk_block_request r;
      r.count = 4;
      r.block = blocks_seen::block;
      r.consume = blocks_seen::consume;
      r.context = &seen;
      TESSERA_TRY(frame_blocks_decode(f, *dec, nchunk, r));
      if (seen.wrong || seen.consumed != 4) return make_error(errc::corrupt, "test: frame_blocks_decode handed over wrong blocks");
    }
    ++nchunk;
  }
  return ok_status();
}

void reverse_run(void*, size_t ntasks, executor_task task, void* task_context) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(task_context, i, static_cast<uint32_t>(i % 3));
}

// allocation_from: every allocation from the Nth on is refused (the retries with a smaller size fail too).
enum class fault { storage_once, storage_crash, allocation, allocation_from };

bool allocating(fault kind) { return kind == fault::allocation || kind == fault::allocation_from; }

void sweep(tessera::test::context& t, fault kind) {
  growable_buffer buf;
  growable_buffer_init(buf, tessera::test::system_allocator());
  frame_build(t, buf);
  if (t.failures > 0) return;
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  chunk_decoder d3;
  chunk_decoder_options o3;
  o3.exec.run = reverse_run;
  o3.exec.workers = 3;
  REQUIRE_OK(chunk_decoder_init(d3, tessera::test::system_allocator(), o3));
  bool completed = false;
  int failed_runs = 0;
  for (uint64_t n = 1; n < 3000 && !completed; ++n) {
    tessera::test::counting_allocator ca;
    wrapped_storage w;
    w.inner = growable_buffer_storage(buf);
    w.concurrent = true;  // the reverse executor runs in this thread: the plain counters stay right
    if (allocating(kind)) {
      ca.fail_at = n;
      ca.fail_after = kind == fault::allocation_from;
    } else {
      w.plan->fail_at = n;
      w.plan->fail_after = kind == fault::storage_crash;
    }
    status s;
    {
      frame f;
      s = frame_open(f, w.get(), ca.get());
      if (s.ok()) s = reads(f, d, d3);
    }
    const bool injected = allocating(kind) ? ca.requests >= ca.fail_at : w.plan->failed;
    if (s.ok()) {
      completed = !injected;
    } else {
      ++failed_runs;
      CHECK(injected);
      CHECK_EQ(s.code, allocating(kind) ? errc::out_of_memory : errc::io);
    }
    CHECK(!ca.leaked());
    if (t.failures > 0) return;
  }
  CHECK(completed);
  // Each storage call of the open and the reads failed once (76 of them with the four kinds of chunk; fewer in
  // a build without LZ4 or Zstd, which leaves their chunks out), and each of the frame's allocations (6: the
  // state, its index and scratch buffers).
  int nkinds = 0;
  for (int c = 0; c < kChunks; ++c) nkinds += kind_available(kKinds[c]) ? 1 : 0;
  CHECK(failed_runs >= (allocating(kind) ? 4 : 4 + 9 * nkinds));
}

}  // namespace

// The first len bytes of from into to, through g.out.
status storage_copy(const storage& from, const storage& to, uint64_t len) {
  for (uint64_t at = 0; at < len; at += sizeof g.out) {
    const size_t n = static_cast<size_t>(len - at < sizeof g.out ? len - at : sizeof g.out);
    TESSERA_TRY(from.read(from.context, at, bytes_mut(g.out, n)));
    TESSERA_TRY(to.write(to.context, at, bytes_view(g.out, n)));
  }
  return ok_status();
}

// Whether a failed read's code names bad data (wrong bytes handed over count as corrupt: a chunk has no
// checksum), or says the blocks asked for are not the chunk's any more (a damaged nbytes or blocksize: past the
// chunk's blocks, or larger than the output).
bool names_bad_data(errc c) {
  return c == errc::corrupt || c == errc::malformed || c == errc::truncated || c == errc::unsupported ||
         c == errc::resource_limit || c == errc::codec_unavailable || c == errc::out_of_range ||
         c == errc::buffer_too_small;
}

// Each byte of the frame's header, of each chunk's front (header, block starts, dictionary size and the first
// bytes after them) and of the index and trailer damaged in turn (two ways), the frame opened with its
// storage's view and without one, and every read of `reads` run: each either hands over the stored blocks or
// fails with a code that names bad data, and nothing leaks.
void damage_sweep(tessera::test::context& t) {
  growable_buffer pristine;
  growable_buffer_init(pristine, tessera::test::system_allocator());
  frame_build(t, pristine);
  if (t.failures > 0) return;
  const storage ps = growable_buffer_storage(pristine);
  uint64_t fronts[kChunks] = {};
  int nstored = 0;
  uint64_t len = 0, header_len = 0, meta_from = 0;
  {
    frame f;
    REQUIRE_OK(frame_open(f, ps, tessera::test::system_allocator()));
    const frame_info* info = frame_info_get(f);
    REQUIRE(info != nullptr);
    len = info->frame_len;
    header_len = info->header_len;
    meta_from = info->header_len + static_cast<uint64_t>(info->cbytes);
    for (int64_t i = 0; i < info->nchunks; ++i) {
      auto r = frame_chunk_locate(f, i);
      REQUIRE_OK(r);
      fronts[nstored++] = info->header_len + static_cast<uint64_t>(r->offset);
    }
  }
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  chunk_decoder d3;
  chunk_decoder_options o3;
  o3.exec.run = reverse_run;
  o3.exec.workers = 3;
  REQUIRE_OK(chunk_decoder_init(d3, tessera::test::system_allocator(), o3));
  int refused = 0;
  auto damage_at = [&](uint64_t at, uint8_t mask) {
    growable_buffer buf;
    growable_buffer_init(buf, tessera::test::system_allocator());
    const storage st = growable_buffer_storage(buf);
    REQUIRE_OK(storage_copy(ps, st, len));
    uint8_t damaged = 0;
    REQUIRE_OK(st.read(st.context, at, bytes_mut(&damaged, 1)));
    damaged = static_cast<uint8_t>(damaged ^ mask);
    REQUIRE_OK(st.write(st.context, at, bytes_view(&damaged, 1)));
    for (const bool hide_view : {true, false}) {
      tessera::test::counting_allocator ca;
      wrapped_storage w;
      w.inner = st;
      w.hide_view = hide_view;
      w.concurrent = true;  // the reverse executor runs in this thread
      status s;
      {
        frame f;
        s = frame_open(f, w.get(), ca.get());
        if (s.ok()) s = reads(f, d, d3);
      }
      if (!s.ok()) {
        ++refused;
        CHECK(names_bad_data(s.code));
        if (!names_bad_data(s.code)) CHECK_OK(s);  // reports the unexpected error with its message
      }
      CHECK(!ca.leaked());
    }
  };
  // Two flips of a byte: its low bit (sizes off by one, odd sizes), its high one (negative or huge values).
  // A chunk's front: its 32-byte header, 8 block starts, a dictionary's size and its first bytes.
  for (const uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}}) {
    for (uint64_t at = 0; at < header_len && t.failures == 0; ++at) damage_at(at, mask);
    for (int c = 0; c < nstored; ++c)
      for (uint64_t k = 0; k < 80 && fronts[c] + k < len && t.failures == 0; ++k) damage_at(fronts[c] + k, mask);
    for (uint64_t at = meta_from; at < len && t.failures == 0; ++at) damage_at(at, mask);
  }
  CHECK(refused > 0);
}

TESSERA_TEST(frame_lazy_faults, block_reads_with_each_storage_call_failing) { sweep(t, fault::storage_once); }

TESSERA_TEST(frame_lazy_faults, block_reads_of_frames_damaged_at_each_byte_of_header_index_trailer_and_chunk_fronts) { damage_sweep(t); }

TESSERA_TEST(frame_lazy_faults, block_reads_with_the_storage_failing_from_each_call_on) {
  sweep(t, fault::storage_crash);
}

TESSERA_TEST(frame_lazy_faults, block_reads_with_each_allocation_failing) { sweep(t, fault::allocation); }

TESSERA_TEST(frame_lazy_faults, block_reads_with_allocations_failing_from_each_on) {
  sweep(t, fault::allocation_from);
}
