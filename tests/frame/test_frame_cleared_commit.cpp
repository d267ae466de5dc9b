// SPDX-License-Identifier: BSD-3-Clause
// The durable commit of a frame left without chunks: its trailer goes right after the header, where the
// committed frame keeps chunks and its index, so those are first moved past every byte in use and committed
// again (frame_writer's clear of the front). Each allocation fails in turn (once, or from then on): the error
// is out_of_memory, nothing leaks, and the storage opens as the frame before or the empty one. So with each
// storage call failing (once, the same handle committing again; or from then on, a crash), and an emptied frame
// then takes new chunks on its handle and compacts tight. Then every byte
// of the committed frame is damaged in turn under the writer, between its open and its commit (what the clear
// reads back: the header's sizes, the index chunk's header, the chunks' headers, the trailer's length): the
// commit succeeds or fails with a code that names bad data, never anything else, and nothing leaks.
#include <cstring>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr int32_t kChunk = 512;
constexpr int32_t kBlock = 128;
constexpr int kChunks = 4;

using scratch = scratch_buffers<kChunk, kBlock>;
scratch g;

// Chunk i: content of seed 20 + i, zeros for chunk 2 (an index entry without bytes).
uint64_t seed_of(int i) { return i == 2 ? 0 : 20 + static_cast<uint64_t>(i); }

void frame_build(tessera::test::context& t, growable_buffer& buf) {
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  frame f;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), tessera::test::system_allocator(), p));
  for (int i = 0; i < kChunks; ++i) {
    REQUIRE_OK(frame_chunk_append(f, g.chunk_of(seed_of(i))));
  }
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_close(f));
}

bool holds_the_chunks(frame& f, chunk_decoder& d) {
  const frame_info* info = frame_info_get(f);
  if (info == nullptr || info->nchunks != kChunks) return false;
  for (int i = 0; i < kChunks; ++i) {
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    if (!n.ok() || *n != static_cast<size_t>(kChunk)) return false;
    if (seed_of(i) != 0) content_fill(seed_of(i), g.expect, kChunk);
    else std::memset(g.expect, 0, kChunk);
    if (std::memcmp(g.out, g.expect, kChunk) != 0) return false;
  }
  return true;
}

// Opens the frame writable through w (no view), deletes every chunk and commits.
status clear(wrapped_storage& w, const allocator& a) {
  frame_open_options o;
  o.writable = true;
  frame f;
  TESSERA_TRY(frame_open(f, w.get(), a, o));
  for (int i = 0; i < kChunks; ++i) TESSERA_TRY(frame_chunk_delete(f, 0));
  return frame_commit(f);
}

void allocation_sweep(tessera::test::context& t, bool from_then_on) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  bool completed = false;
  int failed_runs = 0;
  for (size_t n = 1; n < 500 && !completed; ++n) {
    growable_buffer buf;
    growable_buffer_init(buf, tessera::test::system_allocator());
    frame_build(t, buf);
    if (t.failures > 0) return;
    tessera::test::counting_allocator ca;
    ca.fail_at = n;
    ca.fail_after = from_then_on;
    wrapped_storage w;
    w.inner = growable_buffer_storage(buf);
    const status s = clear(w, ca.get());
    const bool injected = ca.requests >= ca.fail_at;
    if (s.ok()) {
      completed = !injected;
    } else {
      ++failed_runs;
      CHECK(injected);
      CHECK_EQ(s.code, errc::out_of_memory);
    }
    CHECK(!ca.leaked());
    frame r;
    REQUIRE_OK(frame_open(r, growable_buffer_storage(buf), tessera::test::system_allocator()));
    const frame_info* info = frame_info_get(r);
    REQUIRE(info != nullptr);
    if (s.ok()) CHECK_EQ(info->nchunks, 0);
    else CHECK(info->nchunks == 0 || holds_the_chunks(r, d));
    if (t.failures > 0) return;
  }
  CHECK(completed);
  // The state, its table, the encoder, the temporary state and table of the clear, its buffers.
  CHECK(failed_runs >= 5);
}

// Each storage call of the clearing commit fails in turn, once or from then on (a crash). After a single
// failure the same handle commits again. The storage then opens as the frame before or the empty one; an
// empty one takes new chunks on the same handle and compacts tight (its space map comes back once the clear
// is committed).
void storage_sweep(tessera::test::context& t, bool crash) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  bool completed = false;
  int failed_runs = 0;
  for (uint64_t n = 1; n < 500 && !completed; ++n) {
    growable_buffer buf;
    growable_buffer_init(buf, tessera::test::system_allocator());
    frame_build(t, buf);
    if (t.failures > 0) return;
    wrapped_storage w;
    w.inner = growable_buffer_storage(buf);
    frame_open_options o;
    o.writable = true;
    frame f;
    REQUIRE_OK(frame_open(f, w.get(), tessera::test::system_allocator(), o));
    for (int i = 0; i < kChunks; ++i) REQUIRE_OK(frame_chunk_delete(f, 0));
    w.plan->calls = 0;
    w.plan->fail_at = n;
    w.plan->fail_after = crash;
    status s = frame_commit(f);
    if (s.ok()) {
      completed = !w.plan->failed;
    } else {
      ++failed_runs;
      CHECK(w.plan->failed);
      CHECK_EQ(s.code, errc::io);
      if (!crash) s = frame_commit(f);  // the fault is over: the same handle tries again
    }
    const bool crashed = crash && w.plan->failed;
    w.plan->fail_at = UINT64_MAX;  // the sweep's fault is over (the chunks written next must not meet it)
    if (s.ok() && !crashed) {
      // Chunks again on the same handle, one dropped, compacted: the frame ends tight.
      for (int i = 0; i < kChunks; ++i) REQUIRE_OK(frame_chunk_append(f, g.chunk_of(seed_of(i))));
      REQUIRE_OK(frame_chunk_append(f, g.chunk_of(77)));
      REQUIRE_OK(frame_commit(f));
      REQUIRE_OK(frame_chunk_delete(f, kChunks));
      REQUIRE_OK(frame_compact(f));
      CHECK(holds_the_chunks(f, d));
    }
    (void)frame_close(f);
    frame r;
    REQUIRE_OK(frame_open(r, growable_buffer_storage(buf), tessera::test::system_allocator()));
    const frame_info* info = frame_info_get(r);
    REQUIRE(info != nullptr);
    if (s.ok() && !crashed) {
      CHECK(holds_the_chunks(r, d));
      auto sp = frame_space_get(r);
      REQUIRE_OK(sp);
      CHECK_EQ(sp->free_bytes, 0u);
    } else {
      CHECK(info->nchunks == 0 || holds_the_chunks(r, d));
    }
    REQUIRE_OK(frame_close(r));
    if (t.failures > 0) return;
  }
  CHECK(completed);
  CHECK(failed_runs >= 5);
}

}  // namespace

TESSERA_TEST(frame_cleared_commit, each_allocation_failing) { allocation_sweep(t, false); }

TESSERA_TEST(frame_cleared_commit, allocations_failing_from_each_on) { allocation_sweep(t, true); }

TESSERA_TEST(frame_cleared_commit, each_storage_call_failing_once) { storage_sweep(t, false); }

TESSERA_TEST(frame_cleared_commit, storage_calls_failing_from_each_on) { storage_sweep(t, true); }

TESSERA_TEST(frame_cleared_commit, each_byte_damaged_under_the_writer) {
  growable_buffer pristine;
  growable_buffer_init(pristine, tessera::test::system_allocator());
  frame_build(t, pristine);
  if (t.failures > 0) return;
  const storage ps = growable_buffer_storage(pristine);
  uint64_t len = 0;
  REQUIRE_OK(ps.size(ps.context, &len));
  REQUIRE(len > 0 && len < 8192);
  static uint8_t bytes[8192];
  REQUIRE_OK(ps.read(ps.context, 0, bytes_mut(bytes, static_cast<size_t>(len))));
  int refused = 0;
  for (uint64_t at = 0; at < len; ++at) {
    growable_buffer buf;
    growable_buffer_init(buf, tessera::test::system_allocator());
    const storage st = growable_buffer_storage(buf);
    REQUIRE_OK(st.write(st.context, 0, bytes_view(bytes, static_cast<size_t>(len))));
    tessera::test::counting_allocator ca;
    wrapped_storage w;
    w.inner = st;
    status s;
    {
      frame_open_options o;
      o.writable = true;
      frame f;
      REQUIRE_OK(frame_open(f, w.get(), ca.get(), o));
      for (int i = 0; i < kChunks; ++i) REQUIRE_OK(frame_chunk_delete(f, 0));
      const uint8_t damaged = static_cast<uint8_t>(bytes[at] ^ 0xA5);
      REQUIRE_OK(st.write(st.context, at, bytes_view(&damaged, 1)));
      s = frame_commit(f);
    }
    if (!s.ok()) {
      ++refused;
      const bool bad_data = s.code == errc::corrupt || s.code == errc::malformed || s.code == errc::truncated ||
                            s.code == errc::unsupported || s.code == errc::resource_limit;
      CHECK(bad_data);
    }
    CHECK(!ca.leaked());
    if (t.failures > 0) return;
  }
  // Damage to what the clear reads back (the fixed header's sizes, the index, the chunks' sizes, the trailer's
  // length) is refused; damage elsewhere is copied along.
  CHECK(refused > 0);
}
