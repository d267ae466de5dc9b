// SPDX-License-Identifier: BSD-3-Clause
// The sweep of a sparse frame's directory: entries named like chunk entries that the committed index does not
// reference, and a stale index temporary, go at a writable open; other names stay, read-only
// opens change nothing, a directory without a list callback is not swept, and the sweep's memory does not
// grow with the number of entries the directory holds.
#include <cstring>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr int32_t kChunk = 256;
constexpr int32_t kBlock = 64;

using scratch = scratch_buffers<kChunk, kBlock>;
scratch g;

// A committed frame of `n` stored chunks (entries 00000000..n-1) and a zeros chunk (index only).
void frame_build(tessera::test::context& t, const storage_directory& dir, int n) {
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  frame f;
  REQUIRE_OK(frame_create_sparse(f, dir, tessera::test::system_allocator(), p));
  for (int i = 0; i < n; ++i) {
    const size_t len = chunk_make(static_cast<uint64_t>(i) + 1, kChunk, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
    REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, len)));
  }
  special_make(1, kChunk, g.chunk);
  REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, 32)));
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_close(f));
}

// Whether the frame holds the n chunks frame_build wrote (and the zeros chunk).
bool frame_reads(frame& f, int n) {
  chunk_decoder d;
  if (!chunk_decoder_init(d, tessera::test::system_allocator()).ok()) return false;
  const frame_info* info = frame_info_get(f);
  if (info == nullptr || info->nchunks != n + 1) return false;
  for (int i = 0; i <= n; ++i) {
    auto r = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    if (!r.ok() || *r != static_cast<size_t>(kChunk)) return false;
    if (i < n) content_fill(static_cast<uint64_t>(i) + 1, g.expect, kChunk);
    else std::memset(g.expect, 0, kChunk);
    if (std::memcmp(g.out, g.expect, kChunk) != 0) return false;
  }
  return true;
}

void plant(tessera::test::context& t, const storage_directory& dir, const char* name) {
  storage st;
  REQUIRE_OK(storage_directory_open(dir, name, storage_open::replace, &st));
  const uint8_t b[5] = {1, 2, 3, 4, 5};
  REQUIRE_OK(storage_write(st, 0, bytes_view(b, sizeof b)));
  REQUIRE_OK(storage_directory_close(dir, &st));
}

// Chunk entries of no committed frame: below, between and far past the referenced numbers, and the temporary.
const char* const kStrays[] = {"00000003.chunk", "00000007.chunk", "FFFFFFFF.chunk", "0000ABCD.chunk", "chunks.b2frame.tmp"};
// Names a sweep leaves alone: lower-case hex, other suffixes and lengths, non-hex digits, other files.
const char* const kForeign[] = {"0000000a.chunk", "00000009.chunk.bak", "9.chunk", "0000000G.chunk", "notes.txt",
                                "chunks.b2frame.old", "00000009.chunkx"};
constexpr uint32_t kNumStrays = sizeof kStrays / sizeof kStrays[0];
constexpr uint32_t kNumForeign = sizeof kForeign / sizeof kForeign[0];

bool present(const memory_directory& md, const char* name) { return !memory_directory_find(md, name).empty(); }

}  // namespace

TESSERA_TEST(frame_sweep, strays_go_foreign_names_stay) {
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), 32));
  const storage_directory dir = memory_directory_interface(md);
  frame_build(t, dir, 3);
  for (const char* n : kStrays) plant(t, dir, n);
  for (const char* n : kForeign) plant(t, dir, n);
  const uint32_t planted = memory_directory_count(md);
  REQUIRE_EQ(planted, 4u + kNumStrays + kNumForeign);
  {
    // Read-only: nothing changes.
    frame f;
    REQUIRE_OK(frame_open_sparse(f, dir, tessera::test::system_allocator()));
    CHECK(frame_reads(f, 3));
    REQUIRE_OK(frame_close(f));
    CHECK_EQ(memory_directory_count(md), planted);
  }
  {
    frame_open_options o;
    o.writable = true;
    frame f;
    REQUIRE_OK(frame_open_sparse(f, dir, tessera::test::system_allocator(), o));
    CHECK(directory_holds_exactly(md, f, kNumForeign));
    for (const char* n : kStrays) CHECK(!present(md, n));
    for (const char* n : kForeign) CHECK(present(md, n));
    CHECK(frame_reads(f, 3));
    REQUIRE_OK(frame_close(f));
  }
}

TESSERA_TEST(frame_sweep, no_list_callback_no_sweep) {
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), 32));
  storage_directory dir = memory_directory_interface(md);
  frame_build(t, dir, 2);
  for (const char* n : kStrays) plant(t, dir, n);
  const uint32_t planted = memory_directory_count(md);
  dir.list = nullptr;
  CHECK_ERR(storage_directory_list(dir, nullptr, nullptr), errc::unsupported);
  frame_open_options o;
  o.writable = true;
  frame f;
  REQUIRE_OK(frame_open_sparse(f, dir, tessera::test::system_allocator(), o));
  CHECK(frame_reads(f, 2));
  REQUIRE_OK(frame_close(f));
  CHECK_EQ(memory_directory_count(md), planted);
}

TESSERA_TEST(frame_sweep, an_old_frames_chunks_go_at_the_next_writable_open) {
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), 32));
  const storage_directory dir = memory_directory_interface(md);
  frame_build(t, dir, 5);
  plant(t, dir, "keep.me");
  REQUIRE_EQ(memory_directory_count(md), 7u);
  frame_create_params p;
  p.typesize = 4;
  frame f;
  REQUIRE_OK(frame_create_sparse(f, dir, tessera::test::system_allocator(), p));
  const size_t len = chunk_make(70, kChunk, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
  REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, len)));  // replaces the old frame's entry 0
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_close(f));
  CHECK_EQ(memory_directory_count(md), 7u);
  frame_open_options o;
  o.writable = true;
  REQUIRE_OK(frame_open_sparse(f, dir, tessera::test::system_allocator(), o));
  CHECK(directory_holds_exactly(md, f, 1));
  CHECK(present(md, "keep.me"));
  CHECK_EQ(memory_directory_count(md), 3u);
  REQUIRE_OK(frame_close(f));
}

TESSERA_TEST(frame_sweep, closing_without_commit_removes_new_entries) {
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), 32));
  const storage_directory dir = memory_directory_interface(md);
  frame_build(t, dir, 2);
  frame_open_options o;
  o.writable = true;
  frame f;
  REQUIRE_OK(frame_open_sparse(f, dir, tessera::test::system_allocator(), o));
  const size_t len = chunk_make(50, kChunk, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
  REQUIRE_OK(frame_chunk_update(f, 0, bytes_view(g.chunk, len)));
  REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, len)));
  CHECK_EQ(memory_directory_count(md), 5u);  // the index, two chunks (zeros live in the index), two new entries
  REQUIRE_OK(frame_close(f));
  CHECK_EQ(memory_directory_count(md), 3u);
  REQUIRE_OK(frame_open_sparse(f, dir, tessera::test::system_allocator()));
  CHECK(frame_reads(f, 2));
  CHECK(directory_holds_exactly(md, f));
  REQUIRE_OK(frame_close(f));
}

TESSERA_TEST(frame_sweep, memory_does_not_grow_with_the_directory) {
  // The same frame swept with a few strays and with many: the same allocations, of the same peak.
#if defined(TESSERA_BAREMETAL)
  constexpr uint32_t kMany = 200;
#else
  constexpr uint32_t kMany = 3000;
#endif
  size_t allocations[2] = {}, peak[2] = {};
  for (int round = 0; round < 2; ++round) {
    memory_directory md;
    REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), kMany + 16));
    const storage_directory dir = memory_directory_interface(md);
    frame_build(t, dir, 4);
    const uint32_t strays = round == 0 ? 3 : kMany;
    char name[16];
    for (uint32_t i = 0; i < strays; ++i) {
      REQUIRE_OK(frame_sparse_chunk_name(100 + i, name, sizeof name));
      plant(t, dir, name);
    }
    tessera::test::counting_allocator ca;
    frame_open_options o;
    o.writable = true;
    frame f;
    REQUIRE_OK(frame_open_sparse(f, dir, ca.get(), o));
    CHECK(directory_holds_exactly(md, f));
    allocations[round] = ca.allocations;
    peak[round] = ca.high_water_bytes;
    REQUIRE_OK(frame_close(f));
    CHECK(!ca.leaked());
  }
  CHECK_EQ(allocations[0], allocations[1]);
  CHECK_EQ(peak[0], peak[1]);
}

TESSERA_TEST(frame_sweep, a_failed_sweep_leaves_the_open_frame_right) {
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), 32));
  wrapped_directory w;
  w.inner = memory_directory_interface(md);
  const storage_directory dir = w.get();
  frame_build(t, dir, 2);
  const char* const stray = "00000010.chunk";
  frame_open_options o;
  o.writable = true;
  // A clean open with one stray: its last two calls are the listing and the stray's removal.
  plant(t, dir, stray);
  w.plan = fault_plan{};
  uint64_t calls = 0;
  {
    frame f;
    REQUIRE_OK(frame_open_sparse(f, dir, tessera::test::system_allocator(), o));
    calls = w.plan.calls;
    REQUIRE_OK(frame_close(f));
  }
  CHECK(!present(md, stray));
  REQUIRE(calls >= 2);
  // The listing fails, then the removal: the open succeeds, the stray waits for the next sweep.
  for (uint64_t k = calls - 1; k <= calls; ++k) {
    plant(t, dir, stray);
    w.plan = fault_plan{};
    w.plan.fail_at = k;
    frame f;
    REQUIRE_OK(frame_open_sparse(f, dir, tessera::test::system_allocator(), o));
    CHECK(w.plan.failed);
    CHECK(present(md, stray));
    CHECK(frame_reads(f, 2));
    REQUIRE_OK(frame_close(f));
  }
  w.plan = fault_plan{};
  frame f;
  REQUIRE_OK(frame_open_sparse(f, dir, tessera::test::system_allocator(), o));
  CHECK(directory_holds_exactly(md, f));
  CHECK(frame_reads(f, 2));
  REQUIRE_OK(frame_close(f));
}
