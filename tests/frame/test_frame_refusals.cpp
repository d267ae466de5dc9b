// SPDX-License-Identifier: BSD-3-Clause
// What the frame API refuses, and with which code: every call on a frame that is not open (invalid_argument),
// refreshing a writable frame, opening a frame again into itself; and frame_refresh, which picks up what a
// writer committed (and on error leaves the reader as it was).
#include <cstring>
#include <initializer_list>

#include "tessera/chunk.hpp"
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

span<const char> nm(const char* s) { return span<const char>(s, std::strlen(s)); }

scratch_buffers<kChunk, kBlock> g_scratch;

bytes_view chunk_of(uint64_t seed) {
  const size_t n = chunk_make(seed, kChunk, kBlock, g_scratch.src, g_scratch.chunk, sizeof g_scratch.chunk,
                              g_scratch.work);
  return bytes_view(g_scratch.chunk, n);
}

frame_create_params create_params() {
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  return p;
}

// Nothing but a consumer that counts.
struct blocks_counter {
  static size_t block(void*, size_t i) noexcept { return i; }
  static status consume(void*, size_t, bytes_view, uint32_t) noexcept { return ok_status(); }
};

}  // namespace

TESSERA_TEST(frame_refusals, every_call_on_a_frame_not_open_is_invalid_argument) {
  frame f;
  chunk_decoder d;
  owned_array<uint8_t> buffer;
  const bytes_view c = chunk_of(1);
  CHECK(frame_info_get(f) == nullptr);
  CHECK(frame_max_alloc(f) == kDefaultMaxAlloc);
  CHECK(!frame_dirty(f));
  CHECK_ERR(frame_meta_name(f, 0), errc::invalid_argument);
  CHECK_ERR(frame_meta_find(f, nm("m")), errc::invalid_argument);
  CHECK_ERR(frame_vlmeta_name(f, 0), errc::invalid_argument);
  CHECK_ERR(frame_vlmeta_raw(f, nm("a")), errc::invalid_argument);
  CHECK_ERR(frame_vlmeta_nbytes(f, nm("a")), errc::invalid_argument);
  CHECK_ERR(frame_vlmeta_decode(f, d, nm("a"), bytes_mut(g_scratch.out, kChunk)), errc::invalid_argument);
  CHECK_ERR(frame_chunk_locate(f, 0), errc::invalid_argument);
  CHECK_ERR(frame_chunk_special_run(f, 0), errc::invalid_argument);
  CHECK_ERR(frame_chunk_read(f, 0, buffer), errc::invalid_argument);
  CHECK_ERR(frame_chunk_decode(f, d, 0, bytes_mut(g_scratch.out, kChunk)), errc::invalid_argument);
  CHECK_ERR(frame_block_decode(f, d, 0, 0, bytes_mut(g_scratch.out, kChunk)), errc::invalid_argument);
  chunk_block_request request;
  CHECK_ERR(frame_blocks_decode(f, d, 0, request), errc::invalid_argument);
  CHECK_ERR(frame_chunk_append(f, c), errc::invalid_argument);
  CHECK_ERR(frame_chunk_insert(f, 0, c), errc::invalid_argument);
  CHECK_ERR(frame_chunk_update(f, 0, c), errc::invalid_argument);
  CHECK_ERR(frame_chunk_delete(f, 0), errc::invalid_argument);
  CHECK_ERR(frame_meta_update(f, nm("m"), c), errc::invalid_argument);
  CHECK_ERR(frame_vlmeta_set(f, nm("a"), c), errc::invalid_argument);
  CHECK_ERR(frame_vlmeta_delete(f, nm("a")), errc::invalid_argument);
  CHECK_ERR(frame_commit(f), errc::invalid_argument);
  CHECK_ERR(frame_compact(f), errc::invalid_argument);
  CHECK_ERR(frame_space_get(f), errc::invalid_argument);
  CHECK_ERR(frame_refresh(f), errc::invalid_argument);
  frame other;
  CHECK_ERR(frame_open_again(other, f, test::system_allocator()), errc::invalid_argument);
  CHECK(frame_info_get(other) == nullptr);
}

TESSERA_TEST(frame_refusals, refresh_picks_up_what_a_writer_committed) {
  growable_buffer g;
  growable_buffer_init(g, test::system_allocator());
  const storage st = growable_buffer_storage(g);
  test::counting_allocator counting;
  frame w;
  frame_open_options wo;
  REQUIRE_OK(frame_create(w, st, test::system_allocator(), create_params(), wo));
  REQUIRE_OK(frame_chunk_append(w, chunk_of(1)));
  REQUIRE_OK(frame_commit(w));
  // A writable frame is its own writer: it has nothing to refresh; nor can a frame be opened again into itself.
  CHECK_ERR(frame_refresh(w), errc::invalid_argument);
  CHECK_ERR(frame_open_again(w, w, test::system_allocator()), errc::invalid_argument);
  {
    frame r;
    REQUIRE_OK(frame_open(r, st, counting.get()));
    REQUIRE(frame_info_get(r) != nullptr);
    CHECK(frame_info_get(r)->nchunks == 1);
    // Uncommitted changes are not seen; committed ones are, after a refresh.
    REQUIRE_OK(frame_chunk_append(w, chunk_of(2)));
    REQUIRE_OK(frame_vlmeta_set(w, nm("a"), chunk_of(3)));
    CHECK_OK(frame_refresh(r));
    CHECK(frame_info_get(r)->nchunks == 1);
    REQUIRE_OK(frame_commit(w));
    CHECK_OK(frame_refresh(r));
    CHECK(frame_info_get(r)->nchunks == 2);
    CHECK(frame_vlmeta_nbytes(r, nm("a")).ok());
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), chunk_decoder_options{}));
    auto n = frame_chunk_decode(r, d, 1, bytes_mut(g_scratch.out, kChunk));
    CHECK(n.ok() && *n == static_cast<size_t>(kChunk));
    content_fill(2, g_scratch.src, kChunk);
    CHECK(std::memcmp(g_scratch.out, g_scratch.src, kChunk) == 0);
    // A refresh that cannot allocate fails, and the reader stays as it was.
    REQUIRE_OK(frame_chunk_delete(w, 0));
    REQUIRE_OK(frame_commit(w));
    counting.fail_at = counting.requests + 1;
    counting.fail_after = true;
    CHECK_ERR(frame_refresh(r), errc::out_of_memory);
    counting.fail_at = SIZE_MAX;
    counting.fail_after = false;
    CHECK(frame_info_get(r)->nchunks == 2);
    CHECK_OK(frame_refresh(r));
    CHECK(frame_info_get(r)->nchunks == 1);
    CHECK_OK(frame_close(r));
  }
  CHECK_OK(frame_close(w));
  CHECK(!counting.leaked());
}

TESSERA_TEST(frame_refusals, names_and_contents_out_of_range) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  const uint8_t meta[4] = {1, 2, 3, 4};
  frame_metalayer_init ml{nm("m"), bytes_view(meta, 4)};
  frame_create_params p = create_params();
  p.metalayers = &ml;
  p.nmetalayers = 1;
  // A fixed metalayer whose content has a size but no bytes is refused before anything is written.
  frame_metalayer_init missing{nm("m"), bytes_view(nullptr, 4)};
  p.metalayers = &missing;
  {
    frame f;
    CHECK_ERR(frame_create(f, growable_buffer_storage(buf), test::system_allocator(), p), errc::invalid_argument);
  }
  p.metalayers = &ml;
  frame f;
  frame_open_options o;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), test::system_allocator(), p, o));
  REQUIRE_OK(frame_chunk_append(f, chunk_of(1)));
  // vlmetalayer names have 1 to 31 bytes.
  const uint8_t v[2] = {5, 6};
  CHECK_ERR(frame_vlmeta_set(f, span<const char>(), bytes_view(v, 2)), errc::invalid_argument);
  CHECK_ERR(frame_vlmeta_set(f, nm("a_name_of_thirty_two_bytes_long_"), bytes_view(v, 2)), errc::invalid_argument);
  // A fixed metalayer that the header does not hold cannot be updated.
  CHECK_ERR(frame_meta_update(f, nm("absent"), bytes_view(meta, 4)), errc::out_of_range);
  // Content past what a chunk holds is refused from its size alone (the bytes are never read).
  const bytes_view huge(v, static_cast<size_t>(INT32_MAX));
  CHECK_ERR(frame_vlmeta_set(f, nm("big"), huge), errc::invalid_argument);
  chunk_encoder_options eo;
  eo.max_blocksize = 1024;  // the default scratch is a lot on the Cortex-M4
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator(), eo));
  static uint8_t out[64];
  CHECK_ERR(frame_vlmeta_encode(e, huge, bytes_mut(out, sizeof out)), errc::invalid_argument);
  // None of it changed the frame.
  REQUIRE_OK(frame_commit(f));
  CHECK(!frame_vlmeta_raw(f, nm("big")).ok());
  auto m = frame_meta_find(f, nm("m"));
  REQUIRE_OK(m);
  REQUIRE_EQ(m->size(), 4u);
  CHECK(std::memcmp(m->data(), meta, 4) == 0);
  CHECK_EQ(frame_info_get(f)->nchunks, 1);
}

TESSERA_TEST(frame_refusals, compaction_with_older_frames_kept_and_a_sparse_frames_space) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  frame_open_options o;
  o.keep_old_frames = true;
  frame f;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), test::system_allocator(), create_params(), o));
  for (uint64_t i = 0; i < 4; ++i) REQUIRE_OK(frame_chunk_append(f, chunk_of(10 + i)));
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_chunk_update(f, 1, chunk_of(20)));
  REQUIRE_OK(frame_chunk_delete(f, 0));
  REQUIRE_OK(frame_commit(f));
  auto before = frame_space_get(f);
  REQUIRE_OK(before);
  CHECK(before->free_bytes > 0);  // the dropped versions, kept for readers of the older frames
  // Compaction moves chunks over those bytes: it runs as if no older frame were kept, then keeps them again.
  REQUIRE_OK(frame_compact(f));
  REQUIRE_OK(frame_commit(f));
  auto after = frame_space_get(f);
  REQUIRE_OK(after);
  CHECK_EQ(after->free_bytes, 0u);
  CHECK(after->frame_len < before->frame_len);
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  const uint64_t seeds[] = {20, 12, 13};
  for (int i = 0; i < 3; ++i) {
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g_scratch.out, sizeof g_scratch.out));
    REQUIRE_OK(n);
    chunk_of(seeds[i]);  // its source, in g_scratch.src
    CHECK(std::memcmp(g_scratch.out, g_scratch.src, kChunk) == 0);
  }
  // A sparse frame's chunks are entries of their own: everything its file holds is metadata.
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, test::system_allocator(), 8));
  frame sf;
  REQUIRE_OK(frame_create_sparse(sf, memory_directory_interface(md), test::system_allocator(), create_params()));
  REQUIRE_OK(frame_chunk_append(sf, chunk_of(1)));
  REQUIRE_OK(frame_commit(sf));
  auto st = frame_space_get(sf);
  REQUIRE_OK(st);
  CHECK_EQ(st->meta_bytes, st->frame_len);
  CHECK_EQ(st->free_bytes, 0u);
  CHECK(st->chunk_bytes > 0);
}

TESSERA_TEST(frame_refusals, a_read_only_storage_opened_writable_and_block_requests_without_callbacks) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  {
    frame f;
    REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), test::system_allocator(), create_params()));
    REQUIRE_OK(frame_chunk_append(f, chunk_of(3)));
    REQUIRE_OK(frame_commit(f));
  }
  storage ro = growable_buffer_storage(buf);
  ro.write = nullptr;
  ro.truncate = nullptr;
  frame_open_options o;
  o.writable = true;
  frame f;
  CHECK_ERR(frame_open(f, ro, test::system_allocator(), o), errc::read_only);
  REQUIRE_OK(frame_open(f, ro, test::system_allocator()));
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  chunk_block_request r;
  r.count = 1;
  r.block = blocks_counter::block;  // no consume
  CHECK_ERR(frame_blocks_decode(f, d, 0, r), errc::invalid_argument);
  r.block = nullptr;
  r.consume = blocks_counter::consume;
  CHECK_ERR(frame_blocks_decode(f, d, 0, r), errc::invalid_argument);
  r.block = blocks_counter::block;
  CHECK_OK(frame_blocks_decode(f, d, 0, r));
}

TESSERA_TEST(frame_refusals, chunk_positions_out_of_range) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  frame f;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), test::system_allocator(), create_params()));
  REQUIRE_OK(frame_chunk_append(f, chunk_of(1)));
  REQUIRE_OK(frame_chunk_append(f, chunk_of(2)));
  CHECK_ERR(frame_chunk_insert(f, -1, chunk_of(3)), errc::out_of_range);
  CHECK_ERR(frame_chunk_insert(f, 3, chunk_of(3)), errc::out_of_range);
  CHECK_ERR(frame_chunk_update(f, -1, chunk_of(3)), errc::out_of_range);
  CHECK_ERR(frame_chunk_update(f, 2, chunk_of(3)), errc::out_of_range);
  REQUIRE_OK(frame_chunk_insert(f, 2, chunk_of(3)));  // at the end: an append
  CHECK_EQ(frame_info_get(f)->nchunks, 3);
}

TESSERA_TEST(frame_refusals, opening_again_and_refreshing_with_the_storage_failing) {
  growable_buffer g;
  growable_buffer_init(g, test::system_allocator());
  {
    frame w;
    REQUIRE_OK(frame_create(w, growable_buffer_storage(g), test::system_allocator(), create_params()));
    for (uint64_t i = 1; i <= 3; ++i) REQUIRE_OK(frame_chunk_append(w, chunk_of(i)));
    REQUIRE_OK(frame_commit(w));
  }
  // Each call failing once (the open is tried again, up to 8 times), and from each call on (every try fails).
  for (const bool crash : {false, true}) {
    bool completed = false;
    int failed_runs = 0;
    for (uint64_t n = 1; n < 200 && !completed; ++n) {
      test::counting_allocator ca;
      wrapped_storage ws;
      ws.inner = growable_buffer_storage(g);
      {
        frame r;
        REQUIRE_OK(frame_open(r, ws.get(), ca.get()));
        ws.plan->fail_at = ws.plan->calls + n;
        ws.plan->fail_after = crash;
        frame again;
        status s = frame_open_again(again, r, ca.get());
        if (s.ok()) s = frame_refresh(r);
        if (s.ok()) {
          completed = !ws.plan->failed;
          CHECK_EQ(frame_info_get(again)->nchunks, 3);
          CHECK_EQ(frame_info_get(r)->nchunks, 3);
        } else {
          ++failed_runs;
          CHECK(crash);  // one failed call costs one more try, not the open
          CHECK(ws.plan->failed);
          CHECK_EQ(s.code, errc::io);
          CHECK_EQ(frame_info_get(r)->nchunks, 3);  // a failed refresh leaves the reader as it was
        }
      }
      CHECK(!ca.leaked());
      if (t.failures > 0) return;
    }
    CHECK(completed);
    CHECK(failed_runs >= (crash ? 3 : 0));
  }
}

TESSERA_TEST(frame_refusals, a_frame_moved_onto_itself_and_opened_over_uncommitted_changes) {
  growable_buffer g;
  growable_buffer_init(g, test::system_allocator());
  test::counting_allocator ca;
  {
    frame f;
    REQUIRE_OK(frame_create(f, growable_buffer_storage(g), ca.get(), create_params()));
    REQUIRE_OK(frame_chunk_append(f, chunk_of(1)));
    REQUIRE_OK(frame_commit(f));
    frame& alias = f;
    f = static_cast<frame&&>(alias);  // a move onto itself keeps the frame
    REQUIRE(frame_info_get(f) != nullptr);
    CHECK_EQ(frame_info_get(f)->nchunks, 1);
    // A special chunk handed out as its 32 bytes: the buffer comes from the frame's allocator.
    special_make(1, kChunk, g_scratch.chunk);
    REQUIRE_OK(frame_chunk_append(f, bytes_view(g_scratch.chunk, 32)));
    owned_array<uint8_t> buffer;
    ca.fail_at = ca.requests + 1;
    ca.fail_after = true;
    CHECK_ERR(frame_chunk_read(f, 1, buffer), errc::out_of_memory);
    ca.fail_at = SIZE_MAX;
    ca.fail_after = false;
    auto raw = frame_chunk_read(f, 1, buffer);
    REQUIRE_OK(raw);
    CHECK_EQ(raw->size(), 32u);
    // Opening into a frame that holds uncommitted changes drops them: the committed frame opens.
    REQUIRE_OK(frame_open(f, growable_buffer_storage(g), ca.get()));
    CHECK_EQ(frame_info_get(f)->nchunks, 1);
  }
  CHECK(!ca.leaked());
}
