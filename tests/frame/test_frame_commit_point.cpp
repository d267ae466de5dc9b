// SPDX-License-Identifier: BSD-3-Clause
// The commit protocol's three storage assumptions, each held by a scenario that broke it (docs/architecture.md,
// "The commit protocol"): the commit point is one write inside one 512-byte sector, whatever the frame's
// base_offset; a frame without chunks never rewrites its committed trailer in place; a failed sync poisons the
// handle until it is reopened. The page-cache crash model (test_frame_crash_model.cpp) sweeps the same
// promises over whole workloads; these are the smallest cases, portable to every target.
#include <cstring>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/forwarding_storage.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr int32_t kChunk = 512;
constexpr int32_t kBlock = 128;
constexpr uint64_t kSector = 512;
scratch_buffers<kChunk, kBlock> g;

// Forwards to a growable buffer and watches the writes: which ones touch a guarded range (the committed
// trailer, say) and which header writes cross a sector; a sync fails when asked. No view and no lend: every
// read and write goes through it.
struct watched_storage : test::forwarding_storage<watched_storage> {
  uint64_t base = 0;
  uint32_t header_len = 0;              // header writes: those that touch [base, base + header_len)
  uint64_t guard_from = 0, guard_to = 0;  // writes must not touch [guard_from, guard_to)
  int header_writes_across = 0;
  int guarded_writes = 0;
  int writes = 0;
  int fail_syncs = 0;  // this many next syncs fail
  int pass_syncs = 0;  // after this many more succeed

  static status wr(void* c, uint64_t off, bytes_view src) noexcept {
    watched_storage& w = self(c);
    ++w.writes;
    const uint64_t end = off + src.size();
    if (off < w.base + w.header_len && end > w.base && off / kSector != (end - 1) / kSector) ++w.header_writes_across;
    if (off < w.guard_to && end > w.guard_from) ++w.guarded_writes;
    return write_forward(c, off, src);
  }
  static status sy(void* c) noexcept {
    watched_storage& w = self(c);
    if (w.pass_syncs > 0) {
      --w.pass_syncs;
      return ok_status();
    }
    if (w.fail_syncs > 0) {
      --w.fail_syncs;
      return make_error(errc::io, "test: injected sync failure");
    }
    return ok_status();
  }
  storage get() noexcept {
    storage s = forwarded();
    s.write = wr;
    s.sync = sy;
    s.view = nullptr;
    s.lend = nullptr;
    return s;
  }
};

span<const char> nm(const char* s) { return span<const char>(s, std::strlen(s)); }

// A frame like an array's: typesize 4, one fixed metalayer of `meta_len` bytes after the fixed fields.
uint8_t g_meta[160];
frame_create_params params_with_meta(frame_metalayer_init& m, size_t meta_len) {
  for (size_t i = 0; i < sizeof g_meta; ++i) g_meta[i] = static_cast<uint8_t>(i * 7 + 1);
  m.name = nm("b2nd");
  m.content = bytes_view(g_meta, meta_len);
  frame_create_params p;
  p.typesize = 4;
  p.metalayers = &m;
  p.nmetalayers = 1;
  return p;
}

uint8_t g_vl[2][6000];

}  // namespace

// Hole 3: a frame at base_offset 4000 has its 190-byte header across the 4096 boundary. A commit writes only the
// header bytes that change, which for appends, updates, deletes and vlmetalayers are fixed fields in the
// header's first 70 bytes, inside one sector; a change of the metalayer that would cross it is refused before
// anything is written, and the frame committed before stays.
TESSERA_TEST(frame_commit_point, the_header_write_never_crosses_a_sector) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), chunk_decoder_options{}));
  static const uint64_t kBases[] = {0, 97, 4000};
  for (uint64_t base : kBases) {
    growable_buffer buf;
    growable_buffer_init(buf, test::system_allocator());
    watched_storage w;
    w.inner = growable_buffer_storage(buf);
    w.base = base;
    frame_metalayer_init m;
    const frame_create_params p = params_with_meta(m, 100);
    frame_open_options o;
    o.base_offset = base;
    frame f;
    REQUIRE_OK(frame_create(f, w.get(), test::system_allocator(), p, o));
    w.header_len = frame_info_get(f)->header_len;
    CHECK(base == 0 || base + w.header_len > 4096 || base < 4000);  // 4000: the header crosses 4096
    for (uint64_t seed = 1; seed <= 4; ++seed) REQUIRE_OK(frame_chunk_append(f, g.chunk_of(seed)));
    REQUIRE_OK(frame_commit(f));
    REQUIRE_OK(frame_chunk_update(f, 1, g.chunk_of(9)));
    REQUIRE_OK(frame_commit(f));
    REQUIRE_OK(frame_chunk_delete(f, 0));
    REQUIRE_OK(frame_vlmeta_set(f, nm("note"), bytes_view(g_meta, 40)));
    REQUIRE_OK(frame_commit(f));
    CHECK(w.header_writes_across == 0);
    // A change of the metalayer (an array's resize) reaches past the sector at 4096 only from base 4000.
    uint8_t changed[100];
    std::memcpy(changed, g_meta, sizeof changed);
    changed[99] ^= 0xff;
    REQUIRE_OK(frame_meta_update(f, nm("b2nd"), bytes_view(changed, sizeof changed)));
    const int writes_before = w.writes;
    const status c = frame_commit(f);
    if (base == 4000) {
      CHECK_ERR(c, errc::unsupported);
      CHECK(w.writes - writes_before <= 1);  // the index and trailer at most: no header byte
    } else {
      REQUIRE_OK(c);
    }
    CHECK(w.header_writes_across == 0);
    (void)frame_close(f);
    // What the storage holds opens as the last committed frame.
    frame r;
    REQUIRE_OK(frame_open(r, growable_buffer_storage(buf), test::system_allocator(), o));
    CHECK(frame_info_get(r)->nchunks == 3);
    REQUIRE_OK(frame_chunk_decode(r, d, 0, bytes_mut(g.out, sizeof g.out)));
    (void)g.chunk_of(9);
    CHECK(std::memcmp(g.out, g.src, kChunk) == 0);
    (void)frame_close(r);
  }
}

// Hole 2: a frame without chunks keeps its trailer right after the header (the format reads it there). Its
// commits never write over the committed trailer: the header grows a pad and the new trailer goes past the
// committed frame, or back right after the header's content when it fits below the committed trailer; the
// file stays within the header's content and three trailers.
TESSERA_TEST(frame_commit_point, an_empty_frame_never_rewrites_its_committed_trailer) {
  for (int i = 0; i < 2; ++i)
    for (size_t k = 0; k < sizeof g_vl[i]; ++k) g_vl[i][k] = static_cast<uint8_t>((k * (i + 3)) ^ (k >> 5));
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), chunk_decoder_options{}));
  static const uint64_t kBases[] = {0, 97};
  for (uint64_t base : kBases) {
    growable_buffer buf;
    growable_buffer_init(buf, test::system_allocator());
    watched_storage w;
    w.inner = growable_buffer_storage(buf);
    frame_metalayer_init m;
    const frame_create_params p = params_with_meta(m, 60);
    frame_open_options o;
    o.base_offset = base;
    frame f;
    REQUIRE_OK(frame_create(f, w.get(), test::system_allocator(), p, o));
    uint32_t content_len = frame_info_get(f)->header_len;
    for (int round = 0; round < 6; ++round) {
      const size_t len = round % 3 == 2 ? 200 : 6000;
      REQUIRE_OK(frame_vlmeta_set(f, nm("big"), bytes_view(g_vl[round % 2], len)));
      const frame_info* before = frame_info_get(f);
      w.guard_from = base + before->header_len;  // the committed trailer
      w.guard_to = base + before->frame_len;
      w.guarded_writes = 0;
      REQUIRE_OK(frame_commit(f));
      CHECK(w.guarded_writes == 0);
      const frame_info* after = frame_info_get(f);
      CHECK(after->nchunks == 0);
      CHECK(after->frame_len <= content_len + 3 * 6200);
      // Reopened, the frame holds this round's vlmetalayer.
      frame r;
      REQUIRE_OK(frame_open(r, growable_buffer_storage(buf), test::system_allocator(), o));
      uint8_t got[6000];
      auto n = frame_vlmeta_decode(r, d, nm("big"), bytes_mut(got, sizeof got));
      CHECK(n.ok() && *n == len && std::memcmp(got, g_vl[round % 2], len) == 0);
      (void)frame_close(r);
    }
    // The first commit with a chunk ends the header at its content again; the chunk reads like any other.
    REQUIRE_OK(frame_chunk_append(f, g.chunk_of(5)));
    REQUIRE_OK(frame_commit(f));
    (void)frame_close(f);
    frame r;
    REQUIRE_OK(frame_open(r, growable_buffer_storage(buf), test::system_allocator(), o));
    CHECK(frame_info_get(r)->nchunks == 1);
    CHECK_EQ(frame_info_get(r)->header_len, content_len);  // the pad is gone (c-blosc2 rewrites such headers)
    REQUIRE_OK(frame_chunk_decode(r, d, 0, bytes_mut(g.out, sizeof g.out)));
    (void)g.chunk_of(5);
    CHECK(std::memcmp(g.out, g.src, kChunk) == 0);
    (void)frame_close(r);
  }
}

// Hole 4: after a failed fsync, Linux may drop the dirty pages yet mark them clean, so a retried commit would
// succeed over bytes that never reached the disk. A failed sync poisons the handle: every later change,
// commit and compaction returns the error, closing writes nothing, and the storage reopens as what is durable.
TESSERA_TEST(frame_commit_point, a_failed_sync_poisons_the_handle) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), chunk_decoder_options{}));
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  watched_storage w;
  w.inner = growable_buffer_storage(buf);
  frame_metalayer_init m;
  const frame_create_params p = params_with_meta(m, 40);
  frame f;
  REQUIRE_OK(frame_create(f, w.get(), test::system_allocator(), p));
  for (uint64_t seed = 1; seed <= 3; ++seed) REQUIRE_OK(frame_chunk_append(f, g.chunk_of(seed)));
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_chunk_update(f, 2, g.chunk_of(7)));
  w.fail_syncs = 1;
  CHECK_ERR(frame_commit(f), errc::io);
  CHECK_ERR(frame_commit(f), errc::io);  // not retried over what may be lost
  CHECK_ERR(frame_chunk_append(f, g.chunk_of(4)), errc::io);
  CHECK_ERR(frame_vlmeta_set(f, nm("x"), bytes_view(g_meta, 4)), errc::io);
  CHECK_ERR(frame_compact(f), errc::io);
  const int writes = w.writes;
  CHECK(frame_close(f).ok());
  CHECK(w.writes == writes);  // the close's tidy writes nothing
  // Reopened: the commit before the failure (the memory keeps every write, so the failed commit's index went
  // nowhere the header points to).
  frame r;
  frame_open_options o;
  o.writable = true;
  REQUIRE_OK(frame_open(r, w.get(), test::system_allocator(), o));
  CHECK(frame_info_get(r)->nchunks == 3);
  REQUIRE_OK(frame_chunk_decode(r, d, 2, bytes_mut(g.out, sizeof g.out)));
  (void)g.chunk_of(3);
  CHECK(std::memcmp(g.out, g.src, kChunk) == 0);
  // The reopened handle writes again.
  REQUIRE_OK(frame_chunk_update(r, 2, g.chunk_of(7)));
  REQUIRE_OK(frame_commit(r));
  // The sync after the header write fails: the storage may show the new header while its disk keeps the old
  // one, so the old header's bytes are written back, and what reads see (a reopen) is the frame before.
  REQUIRE_OK(frame_chunk_update(r, 0, g.chunk_of(8)));
  w.pass_syncs = 1;
  w.fail_syncs = 1;
  CHECK_ERR(frame_commit(r), errc::io);
  (void)frame_close(r);
  frame r2;
  frame_open_options ro;
  REQUIRE_OK(frame_open(r2, w.get(), test::system_allocator(), ro));
  REQUIRE_OK(frame_chunk_decode(r2, d, 0, bytes_mut(g.out, sizeof g.out)));
  (void)g.chunk_of(1);
  CHECK(std::memcmp(g.out, g.src, kChunk) == 0);
  REQUIRE_OK(frame_chunk_decode(r2, d, 2, bytes_mut(g.out, sizeof g.out)));
  (void)g.chunk_of(7);
  CHECK(std::memcmp(g.out, g.src, kChunk) == 0);
  (void)frame_close(r2);
}

// frame_meta_add (c-blosc2's blosc2_meta_add, which leaves a file with chunks unreadable): the header grows over
// a frame with stored chunks, special chunks, none, in a sparse directory and without durability; the chunks
// read as before, the metalayers in order. The crash sweeps (test_frame_crash_model.cpp, meta_add*) hold the
// old-or-new promise through it.
TESSERA_TEST(frame_meta_add, chunks_move_out_of_the_longer_header) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), chunk_decoder_options{}));
  static const uint8_t kExtra[] = {0x93, 1, 2};
  for (int variant = 0; variant < 5; ++variant) {
    // 0: stored chunks; 1: at base 97; 2: zeros chunks only; 3: no chunks; 4: not durable.
    growable_buffer buf;
    growable_buffer_init(buf, test::system_allocator());
    frame_metalayer_init m;
    const frame_create_params p = params_with_meta(m, 40);
    frame_open_options o;
    o.base_offset = variant == 1 ? 97 : 0;
    o.durable = variant != 4;
    frame f;
    REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), test::system_allocator(), p, o));
    const int n = variant == 3 ? 0 : 4;
    for (int i = 0; i < n; ++i) REQUIRE_OK(frame_chunk_append(f, g.chunk_of(variant == 2 ? 0 : 20 + static_cast<uint64_t>(i))));
    REQUIRE_OK(frame_vlmeta_set(f, nm("v"), bytes_view(g_meta, 30)));
    REQUIRE_OK(frame_commit(f));
    const uint32_t hl = frame_info_get(f)->header_len;
    CHECK_ERR(frame_meta_add(f, nm("b2nd"), bytes_view(kExtra, sizeof kExtra)), errc::invalid_argument);
    REQUIRE_OK(frame_meta_add(f, nm("extra"), bytes_view(kExtra, sizeof kExtra)));
    CHECK(frame_info_get(f)->header_len > hl);
    CHECK(!frame_dirty(f));
    (void)frame_close(f);
    frame r;
    o.writable = false;
    REQUIRE_OK(frame_open(r, growable_buffer_storage(buf), test::system_allocator(), o));
    const frame_info* info = frame_info_get(r);
    CHECK_EQ(info->nmetalayers, 2u);
    CHECK_EQ(info->nchunks, static_cast<int64_t>(n));
    auto extra = frame_meta_find(r, nm("extra"));
    CHECK(extra.ok() && extra->size() == sizeof kExtra && std::memcmp(extra->data(), kExtra, sizeof kExtra) == 0);
    auto first = frame_meta_find(r, nm("b2nd"));
    CHECK(first.ok() && first->size() == 40 && std::memcmp(first->data(), g_meta, 40) == 0);
    for (int i = 0; i < n; ++i) {
      REQUIRE_OK(frame_chunk_decode(r, d, i, bytes_mut(g.out, sizeof g.out)));
      if (variant == 2) {
        for (int k = 0; k < kChunk; ++k) CHECK(g.out[k] == 0);
      } else {
        (void)g.chunk_of(20 + static_cast<uint64_t>(i));
        CHECK(std::memcmp(g.out, g.src, kChunk) == 0);
      }
    }
    uint8_t vl[30];
    auto vn = frame_vlmeta_decode(r, d, nm("v"), bytes_mut(vl, sizeof vl));
    CHECK(vn.ok() && *vn == 30 && std::memcmp(vl, g_meta, 30) == 0);
    (void)frame_close(r);
  }
}

TESSERA_TEST(frame_meta_add, refusals_leave_the_frame_as_it_was) {
  static const uint8_t kExtra[] = {0x93, 1, 2};
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  frame_metalayer_init m;
  const frame_create_params p = params_with_meta(m, 40);
  // A frame at 400: its longer header would reach past byte 512 (the commit point could tear).
  frame_open_options o;
  o.base_offset = 400;
  frame f;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), test::system_allocator(), p, o));
  REQUIRE_OK(frame_chunk_append(f, g.chunk_of(3)));
  REQUIRE_OK(frame_commit(f));
  const uint32_t hl = frame_info_get(f)->header_len;
  CHECK_ERR(frame_meta_add(f, nm("extra"), bytes_view(kExtra, sizeof kExtra)), errc::unsupported);
  CHECK_EQ(frame_info_get(f)->header_len, hl);
  CHECK_EQ(frame_info_get(f)->nmetalayers, 1u);
  (void)frame_close(f);
  // keep_old_frames: the front would be rewritten under readers of older frames.
  growable_buffer buf2;
  growable_buffer_init(buf2, test::system_allocator());
  frame_open_options k;
  k.keep_old_frames = true;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf2), test::system_allocator(), p, k));
  CHECK_ERR(frame_meta_add(f, nm("extra"), bytes_view(kExtra, sizeof kExtra)), errc::unsupported);
  CHECK_ERR(frame_meta_add(f, nm(""), bytes_view(kExtra, sizeof kExtra)), errc::invalid_argument);
  (void)frame_close(f);
}

TESSERA_TEST(frame_meta_add, in_a_sparse_frame) {
  static const uint8_t kExtra[] = {0x93, 1, 2};
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), chunk_decoder_options{}));
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, test::system_allocator(), 16));
  const storage_directory dir = memory_directory_interface(md);
  frame_metalayer_init m;
  const frame_create_params p = params_with_meta(m, 40);
  frame f;
  REQUIRE_OK(frame_create_sparse(f, dir, test::system_allocator(), p));
  REQUIRE_OK(frame_chunk_append(f, g.chunk_of(31)));
  REQUIRE_OK(frame_meta_add(f, nm("extra"), bytes_view(kExtra, sizeof kExtra)));  // commits the append too
  (void)frame_close(f);
  frame r;
  REQUIRE_OK(frame_open_sparse(r, dir, test::system_allocator(), frame_open_options{}));
  CHECK_EQ(frame_info_get(r)->nmetalayers, 2u);
  auto extra = frame_meta_find(r, nm("extra"));
  CHECK(extra.ok() && extra->size() == sizeof kExtra && std::memcmp(extra->data(), kExtra, sizeof kExtra) == 0);
  REQUIRE_OK(frame_chunk_decode(r, d, 0, bytes_mut(g.out, sizeof g.out)));
  (void)g.chunk_of(31);
  CHECK(std::memcmp(g.out, g.src, kChunk) == 0);
  (void)frame_close(r);
  memory_directory_release(md);
}
