// SPDX-License-Identifier: BSD-3-Clause
// The memory budget of a call (frame_open_options::max_alloc) swept from below a chunk header to above what any
// call needs, over a frame read without a view and changed: open, every read, an update, a commit, the space
// figures, a compaction. Each step either works or fails with errc::resource_limit (never another code),
// nothing leaks, and the storage opens as the frame committed before or after. A base offset at the end of the
// address space is refused (a range that overflows).
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

constexpr int32_t kChunk = 2048;
constexpr int32_t kBlock = 256;
constexpr int kChunks = 4;

using scratch = scratch_buffers<kChunk, kBlock>;
scratch g;

bytes_view chunk_of(uint64_t seed) {
  return bytes_view(g.chunk, chunk_make(seed, kChunk, kBlock, g.src, g.chunk, sizeof g.chunk, g.work));
}

// Chunk i holds content of seeds[i].
bool holds(frame& f, chunk_decoder& d, const uint64_t (&seeds)[kChunks]) {
  const frame_info* info = frame_info_get(f);
  if (info == nullptr || info->nchunks != kChunks) return false;
  for (int i = 0; i < kChunks; ++i) {
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    if (!n.ok() || *n != static_cast<size_t>(kChunk)) return false;
    content_fill(seeds[i], g.expect, kChunk);
    if (std::memcmp(g.out, g.expect, kChunk) != 0) return false;
  }
  return true;
}

// The steps under the budget; the first error.
status steps(frame& f, chunk_decoder& d, const uint64_t (&before)[kChunks], const uint64_t (&after)[kChunks]) {
  for (int i = 0; i < kChunks; ++i) {
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    if (!n.ok()) return n.err();
    content_fill(before[i], g.expect, kChunk);
    if (*n != static_cast<size_t>(kChunk) || std::memcmp(g.out, g.expect, kChunk) != 0)
      return make_error(errc::corrupt, "test: wrong chunk");
    auto b = frame_block_decode(f, d, i, 3, bytes_mut(g.out, sizeof g.out));
    if (!b.ok()) return b.err();
    auto run = frame_chunk_special_run(f, i);
    if (!run.ok()) return run.err();
  }
  TESSERA_TRY(frame_chunk_update(f, 1, chunk_of(after[1])));
  TESSERA_TRY(frame_chunk_delete(f, 3));
  TESSERA_TRY(frame_chunk_append(f, chunk_of(after[3])));
  TESSERA_TRY(frame_commit(f));
  auto sp = frame_space_get(f);
  if (!sp.ok()) return sp.err();
  return frame_compact(f);
}

}  // namespace

TESSERA_TEST(frame_budget, every_step_works_or_is_refused_within_max_alloc) {
  const uint64_t before[kChunks] = {1, 2, 3, 4};
  const uint64_t after[kChunks] = {1, 20, 3, 40};
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  int refused = 0, worked = 0;
  for (uint64_t budget = 16; budget <= 24 * 1024 && t.failures == 0; budget += budget < 1024 ? 16 : 256) {
    growable_buffer buf;
    growable_buffer_init(buf, test::system_allocator());
    {
      frame_create_params p;
      p.typesize = 4;
      p.blocksize = kBlock;
      frame f;
      REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), test::system_allocator(), p));
      for (int i = 0; i < kChunks; ++i) REQUIRE_OK(frame_chunk_append(f, chunk_of(before[i])));
      REQUIRE_OK(frame_commit(f));
    }
    test::counting_allocator ca;
    wrapped_storage w;
    w.inner = growable_buffer_storage(buf);
    status s;
    {
      frame_open_options o;
      o.writable = true;
      o.max_alloc = budget;
      frame f;
      s = frame_open(f, w.get(), ca.get(), o);
      if (s.ok()) s = steps(f, d, before, after);
    }
    if (s.ok()) {
      ++worked;
    } else {
      ++refused;
      CHECK_EQ(s.code, errc::resource_limit);
    }
    CHECK(!ca.leaked());
    frame r;
    REQUIRE_OK(frame_open(r, growable_buffer_storage(buf), test::system_allocator()));
    if (s.ok()) CHECK(holds(r, d, after));
    else CHECK(holds(r, d, before) || holds(r, d, after));
  }
  CHECK(refused > 0);
  CHECK(worked > 0);
}

TESSERA_TEST(frame_budget, a_base_offset_at_the_end_of_the_address_space_is_refused) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  frame_open_options o;
  o.base_offset = UINT64_MAX - 8;
  test::counting_allocator ca;
  {
    frame f;
    frame_create_params p;
    p.typesize = 4;
    CHECK_ERR(frame_create(f, growable_buffer_storage(buf), ca.get(), p, o), errc::out_of_range);  // the storage's check
  }
  REQUIRE_OK(storage_write(growable_buffer_storage(buf), 0, bytes_view(g.out, 256)));  // something to open
  for (const bool hide_view : {true, false}) {
    wrapped_storage w;
    w.inner = growable_buffer_storage(buf);
    w.hide_view = hide_view;
    frame f;
    const status s = frame_open(f, w.get(), ca.get(), o);
    CHECK(s.code == errc::overflow || s.code == errc::out_of_range);  // the frame's check, or the storage's
  }
  CHECK(!ca.leaked());
}
