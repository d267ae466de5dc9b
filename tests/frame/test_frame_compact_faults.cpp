// SPDX-License-Identifier: BSD-3-Clause
// Compaction and the space figures of a contiguous frame with holes, with each storage call failing in turn
// (once, or from then on like a crash) and each allocation failing in turn (once, or from then on): the error is
// the injected one, nothing leaks, and the storage opens as the same chunks whatever step failed (compaction
// moves chunks, it never changes what the frame holds). The frame is read without a storage view, so the chunk
// table and each chunk's size come from the storage too.
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
constexpr int kChunks = 5;

using scratch = scratch_buffers<kChunk, kBlock>;
scratch g;

// What the frame holds after the setup: chunk i is content of seed kSeeds[i], or zeros where the seed is 0.
constexpr uint64_t kSeeds[kChunks] = {11, 0, 30, 13, 14};

status put(frame& f, int how, int64_t at, uint64_t seed) {
  const bytes_view c = g.chunk_of(seed);
  if (how == 0) return frame_chunk_append(f, c);
  if (how == 1) return frame_chunk_insert(f, at, c);
  return frame_chunk_update(f, at, c);
}

// Six chunks committed, then one deleted, one rewritten and zeros inserted, committed: holes where the dropped
// bytes were, and the rewritten chunk past them.
void frame_with_holes(tessera::test::context& t, growable_buffer& buf, bool durable) {
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  frame_open_options o;
  o.durable = durable;
  frame f;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), tessera::test::system_allocator(), p, o));
  for (uint64_t s = 10; s < 16; ++s) REQUIRE_OK(put(f, 0, 0, s));
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_chunk_delete(f, 0));  // 11 12 13 14 15
  REQUIRE_OK(put(f, 2, 1, 30));          // 11 30 13 14 15
  REQUIRE_OK(frame_chunk_delete(f, 4));  // 11 30 13 14
  REQUIRE_OK(put(f, 1, 1, 0));           // 11 0 30 13 14
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_close(f));
}

bool holds_the_chunks(frame& f, chunk_decoder& d) {
  const frame_info* info = frame_info_get(f);
  if (info == nullptr || info->nchunks != kChunks) return false;
  for (int i = 0; i < kChunks; ++i) {
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    if (!n.ok() || *n != static_cast<size_t>(kChunk)) return false;
    if (kSeeds[i] != 0) content_fill(kSeeds[i], g.expect, kChunk);
    else std::memset(g.expect, 0, kChunk);
    if (std::memcmp(g.out, g.expect, kChunk) != 0) return false;
  }
  return true;
}

enum class fault { storage_once, storage_crash, allocation_once, allocation_from };

struct variant {
  fault kind;
  bool durable;
  bool truncate_tail;
};

void sweep(tessera::test::context& t, const variant& v) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  const bool allocating = v.kind == fault::allocation_once || v.kind == fault::allocation_from;
  bool completed = false;
  int failed_runs = 0;
  for (uint64_t n = 1; n < 2000 && !completed; ++n) {
    growable_buffer buf;
    growable_buffer_init(buf, tessera::test::system_allocator());
    frame_with_holes(t, buf, v.durable);
    if (t.failures > 0) return;
    tessera::test::counting_allocator ca;
    wrapped_storage w;
    w.inner = growable_buffer_storage(buf);
    if (allocating) {
      ca.fail_at = n;
      ca.fail_after = v.kind == fault::allocation_from;
    } else {
      w.plan->fail_at = n;
      w.plan->fail_after = v.kind == fault::storage_crash;
    }
    status s;
    uint64_t free_after = 1;
    {
      frame_open_options o;
      o.writable = true;
      o.durable = v.durable;
      o.truncate_tail = v.truncate_tail;
      frame f;
      s = frame_open(f, w.get(), ca.get(), o);
      if (s.ok()) {
        auto before = frame_space_get(f);
        s = before.ok() ? frame_compact(f) : before.err();
        if (s.ok() && v.durable && before->free_bytes == 0) s = make_error(errc::corrupt, "test: the setup left no hole");
      }
      if (s.ok()) {
        auto after = frame_space_get(f);
        s = after.ok() ? ok_status() : after.err();
        if (after.ok()) free_after = after->free_bytes;
      }
    }
    const bool injected = allocating ? ca.requests >= ca.fail_at : w.plan->failed;
    if (s.ok()) {
      completed = !injected;
      CHECK_EQ(free_after, 0u);
    } else {
      ++failed_runs;
      CHECK(injected);
      CHECK_EQ(s.code, allocating ? errc::out_of_memory : errc::io);
    }
    CHECK(!ca.leaked());
    // Durable: whatever failed, the storage holds the same chunks. In place, only a run that succeeded is read.
    if (v.durable || s.ok()) {
      frame r;
      REQUIRE_OK(frame_open(r, growable_buffer_storage(buf), tessera::test::system_allocator()));
      CHECK(holds_the_chunks(r, d));
    }
    if (t.failures > 0) return;
  }
  CHECK(completed);
  // The open, the space scan, the moves and the commits each failed somewhere; the allocations are fewer (the
  // state, its table and buffers, the sort, the encoder).
  CHECK(failed_runs >= (allocating ? 3 : 10));
}

}  // namespace

TESSERA_TEST(frame_compact_faults, each_storage_call_failing) {
  sweep(t, {fault::storage_once, true, true});
  sweep(t, {fault::storage_once, false, false});
}

TESSERA_TEST(frame_compact_faults, the_storage_failing_from_each_call_on) {
  sweep(t, {fault::storage_crash, true, true});
}

TESSERA_TEST(frame_compact_faults, each_allocation_failing) {
  sweep(t, {fault::allocation_once, true, true});
  sweep(t, {fault::allocation_from, true, false});
  sweep(t, {fault::allocation_from, false, true});
}

TESSERA_TEST(frame_compact_faults, a_sparse_frame_and_an_emptied_frame_compact_to_what_they_hold) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  // Sparse: every chunk is an entry of its own, nothing to move; the pending changes are committed.
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), 8));
  {
    frame_create_params p;
    p.typesize = 4;
    p.blocksize = kBlock;
    frame f;
    REQUIRE_OK(frame_create_sparse(f, memory_directory_interface(md), tessera::test::system_allocator(), p));
    for (int i = 0; i < kChunks; ++i) REQUIRE_OK(put(f, 0, 0, kSeeds[i]));
    REQUIRE_OK(frame_compact(f));
    CHECK(!frame_dirty(f));
    CHECK(holds_the_chunks(f, d));
  }
  // Every chunk deleted: the compacted frame is its header and trailer (the commit that clears a durable frame
  // turns its space map off: compaction was refused as if chunks overlapped).
  growable_buffer buf;
  growable_buffer_init(buf, tessera::test::system_allocator());
  frame_with_holes(t, buf, true);
  if (t.failures > 0) return;
  frame_open_options o;
  o.writable = true;
  frame f;
  REQUIRE_OK(frame_open(f, growable_buffer_storage(buf), tessera::test::system_allocator(), o));
  for (int i = 0; i < kChunks; ++i) REQUIRE_OK(frame_chunk_delete(f, 0));
  REQUIRE_OK(frame_compact(f));
  auto sp = frame_space_get(f);
  REQUIRE_OK(sp);
  CHECK_EQ(sp->chunk_bytes, 0u);
  CHECK_EQ(sp->free_bytes, 0u);
  frame r;
  const storage st = growable_buffer_storage(buf);
  REQUIRE_OK(frame_open(r, st, tessera::test::system_allocator()));
  CHECK_EQ(frame_info_get(r)->nchunks, 0);
  uint64_t size = 0;
  REQUIRE_OK(st.size(st.context, &size));
  CHECK_EQ(size, frame_info_get(r)->frame_len);  // the bytes the cleared frame left behind are cut
  REQUIRE_OK(frame_close(r));
  // The same handle goes on after the clear: appends, a commit, a deletion and a compaction that brings the
  // frame tight again (the map the clear turned off comes back once the clear is committed).
  for (int i = 0; i < kChunks; ++i) REQUIRE_OK(put(f, 0, 0, kSeeds[i]));
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(put(f, 0, 0, 99));
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_chunk_delete(f, kChunks));
  REQUIRE_OK(frame_compact(f));
  CHECK(holds_the_chunks(f, d));
  auto sp2 = frame_space_get(f);
  REQUIRE_OK(sp2);
  CHECK_EQ(sp2->free_bytes, 0u);
  REQUIRE_OK(frame_close(f));
  REQUIRE_OK(frame_open(r, st, tessera::test::system_allocator()));
  CHECK(holds_the_chunks(r, d));
  REQUIRE_OK(st.size(st.context, &size));
  CHECK_EQ(size, frame_info_get(r)->frame_len);
  REQUIRE_OK(frame_close(r));
}
