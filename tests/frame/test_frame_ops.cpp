// SPDX-License-Identifier: BSD-3-Clause
// Random sequences of frame changes (append, insert, update, delete chunks; vlmetalayers; fixed metalayer
// updates; commits; reopening) checked after every step against a model, for contiguous frames (durable and
// in place, with and without a storage view) and sparse frames in a memory directory.
#include <cstring>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr int kMaxChunks = 48;
constexpr int32_t kChunk = 1024;
constexpr int32_t kBlock = 256;
constexpr int kVl = 4;

struct model_chunk {
  uint64_t seed = 0;
  int32_t nbytes = 0;
  uint8_t special = 0;  // 0 data, 1 zeros, 2 NaN, 4 uninit
};
struct model_vl {
  bool used = false;
  uint64_t seed = 0;
  uint32_t size = 0;
};
struct model {
  model_chunk chunks[kMaxChunks];
  int n = 0;
  model_vl vl[kVl];
  uint8_t meta[8] = {1, 2, 3, 4, 5, 6, 7, 8};
};

struct buffers {
  uint8_t src[kChunk];
  uint8_t chunk[kChunk * 2 + 64];
  uint8_t work[3 * kBlock];
  uint8_t out[kChunk];
  uint8_t expect[kChunk];
  uint8_t vl[64];
};
buffers g;

const char* vl_name(int i) {
  static const char* names[kVl] = {"alpha", "b", "vlmeta-with-a-long-name-31bytes", "zz"};
  return names[i];
}
span<const char> name_of(const char* s) { return span<const char>(s, std::strlen(s)); }

void expected_chunk(const model_chunk& c, uint8_t* out) {
  if (c.special == 0) {
    content_fill(c.seed, out, static_cast<size_t>(c.nbytes));
  } else if (c.special == 2) {
    for (int32_t i = 0; i < c.nbytes; i += 4) {
      out[i] = 0x00;
      out[i + 1] = 0x00;
      out[i + 2] = 0xc0;
      out[i + 3] = 0x7f;
    }
  } else {
    std::memset(out, 0, static_cast<size_t>(c.nbytes));
  }
}

void check_frame(tessera::test::context& t, frame& f, const model& m, chunk_decoder& d, tessera::test::rng& r) {
  const frame_info* info = frame_info_get(f);
  REQUIRE(info != nullptr);
  REQUIRE_EQ(info->nchunks, m.n);
  int64_t total = 0;
  for (int i = 0; i < m.n; ++i) total += m.chunks[i].nbytes;
  CHECK_EQ(info->nbytes, total);
  // The stored chunk bytes the frame counts through its changes (frame_space_get) are every stored chunk's cbytes.
  auto space = frame_space_get(f);
  REQUIRE_OK(space);
  uint64_t stored = 0;
  for (int i = 0; i < m.n; ++i) {
    const model_chunk& c = m.chunks[i];
    auto ref = frame_chunk_locate(f, i);
    REQUIRE_OK(ref);
    stored += static_cast<uint64_t>(ref->cbytes);
    CHECK_EQ(ref->nbytes, c.nbytes);
    CHECK_EQ(static_cast<int>(ref->special), static_cast<int>(c.special));
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    REQUIRE_OK(n);
    REQUIRE_EQ(*n, static_cast<size_t>(c.nbytes));
    expected_chunk(c, g.expect);
    CHECK(std::memcmp(g.out, g.expect, *n) == 0);
    // One block, read lazily.
    const int64_t nblocks = (c.nbytes + kBlock - 1) / kBlock;
    const size_t nb = static_cast<size_t>(r.range(0, nblocks - 1));
    auto b = frame_block_decode(f, d, i, nb, bytes_mut(g.out, sizeof g.out));
    if (c.special == 0) {
      REQUIRE_OK(b);
      const size_t want = nb * kBlock + kBlock <= static_cast<size_t>(c.nbytes) ? kBlock : c.nbytes - nb * kBlock;
      CHECK_EQ(*b, want);
      CHECK(std::memcmp(g.out, g.expect + nb * kBlock, *b) == 0);
    } else {
      REQUIRE_OK(b);
      CHECK(std::memcmp(g.out, g.expect, *b) == 0);
    }
  }
  CHECK_ERR(frame_chunk_locate(f, m.n), errc::out_of_range);
  CHECK_EQ(space->chunk_bytes, stored);
  uint32_t nvl = 0;
  for (int k = 0; k < kVl; ++k) {
    const model_vl& v = m.vl[k];
    auto size = frame_vlmeta_nbytes(f, name_of(vl_name(k)));
    if (!v.used) {
      CHECK_ERR(size, errc::out_of_range);
      continue;
    }
    ++nvl;
    REQUIRE_OK(size);
    REQUIRE_EQ(*size, static_cast<size_t>(v.size));
    uint8_t got[64];
    auto dn = frame_vlmeta_decode(f, d, name_of(vl_name(k)), bytes_mut(got, sizeof got));
    REQUIRE_OK(dn);
    content_fill(v.seed, g.vl, v.size);
    CHECK(std::memcmp(got, g.vl, v.size) == 0);
  }
  CHECK_EQ(info->nvlmetalayers, nvl);
  auto meta = frame_meta_find(f, name_of("m"));
  REQUIRE_OK(meta);
  REQUIRE_EQ(meta->size(), sizeof m.meta);
  CHECK(std::memcmp(meta->data(), m.meta, sizeof m.meta) == 0);
}

enum class where { cframe_durable, cframe_in_place, cframe_lazy, sframe_durable, sframe_in_place };

struct target {
  where w;
  growable_buffer buf;
  wrapped_storage lazy;
  memory_directory dir;
  storage st{};
  storage_directory di{};
  bool sparse() const { return w == where::sframe_durable || w == where::sframe_in_place; }
  frame_open_options options() const {
    frame_open_options o;
    o.writable = true;
    o.durable = w == where::cframe_durable || w == where::cframe_lazy || w == where::sframe_durable;
    return o;
  }
};

status target_open(target& tg, frame& f, const allocator& a) {
  if (tg.sparse()) return frame_open_sparse(f, tg.di, a, tg.options());
  return frame_open(f, tg.st, a, tg.options());
}

void run_sequence(tessera::test::context& t, where w, uint64_t seed, tessera::test::counting_allocator& ca) {
  tessera::test::rng r(seed);
  const allocator a = ca.get();
  target tg;
  tg.w = w;
  growable_buffer_init(tg.buf, a);
  tg.st = growable_buffer_storage(tg.buf);
  if (w == where::cframe_lazy) {
    tg.lazy.inner = tg.st;
    tg.st = tg.lazy.get();
  }
  if (tg.sparse()) {
    REQUIRE_OK(memory_directory_init(tg.dir, a, 160));
    tg.di = memory_directory_interface(tg.dir);
  }
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, a));
  model cur, committed;
  frame f;
  {
    frame_metalayer_init ml{name_of("m"), bytes_view(cur.meta, sizeof cur.meta)};
    frame_create_params p;
    p.typesize = 4;
    p.blocksize = kBlock;
    p.metalayers = &ml;
    p.nmetalayers = 1;
    if (r.chance(50)) p.chunksize = kChunk;
    status s = tg.sparse() ? frame_create_sparse(f, tg.di, a, p, tg.options()) : frame_create(f, tg.st, a, p, tg.options());
    REQUIRE_OK(s);
  }
  const bool allow_special = r.chance(70);
  const bool allow_short = r.chance(40);
  const int nops = 30;
  for (int op = 0; op < nops; ++op) {
    const int kind = static_cast<int>(r.range(0, 99));
    model next = cur;
    status s;
    if (kind < 45) {  // append, insert or update
      const int sub = static_cast<int>(r.range(0, 2));
      if (sub != 0 && cur.n == 0) continue;
      if (sub != 2 && cur.n >= kMaxChunks) continue;
      model_chunk c;
      c.seed = r.next();
      c.nbytes = allow_short && r.chance(15) ? static_cast<int32_t>(r.range(1, kChunk / 4 - 1) * 4) : kChunk;
      c.special = 0;
      if (allow_special && r.chance(25)) c.special = static_cast<uint8_t>(r.chance(40) ? 1 : (r.chance(50) ? 2 : 4));
      size_t len = 32;
      if (c.special == 0) len = chunk_make(c.seed, static_cast<size_t>(c.nbytes), kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
      else special_make(c.special, c.nbytes, g.chunk);
      REQUIRE(len > 0);
      const bytes_view cv(g.chunk, len);
      if (sub == 0) {
        s = frame_chunk_append(f, cv);
        next.chunks[next.n++] = c;
      } else if (sub == 1) {
        const int at = static_cast<int>(r.range(0, cur.n));
        s = frame_chunk_insert(f, at, cv);
        std::memmove(next.chunks + at + 1, next.chunks + at, sizeof(model_chunk) * static_cast<size_t>(cur.n - at));
        next.chunks[at] = c;
        ++next.n;
      } else {
        const int at = static_cast<int>(r.range(0, cur.n - 1));
        s = frame_chunk_update(f, at, cv);
        next.chunks[at] = c;
      }
    } else if (kind < 60) {
      if (cur.n == 0) continue;
      const int at = static_cast<int>(r.range(0, cur.n - 1));
      s = frame_chunk_delete(f, at);
      std::memmove(next.chunks + at, next.chunks + at + 1, sizeof(model_chunk) * static_cast<size_t>(cur.n - at - 1));
      --next.n;
    } else if (kind < 72) {
      const int k = static_cast<int>(r.range(0, kVl - 1));
      model_vl v;
      v.used = true;
      v.seed = r.next();
      v.size = static_cast<uint32_t>(r.range(0, 40));
      content_fill(v.seed, g.vl, v.size);
      s = frame_vlmeta_set(f, name_of(vl_name(k)), bytes_view(g.vl, v.size));
      next.vl[k] = v;
    } else if (kind < 78) {
      const int k = static_cast<int>(r.range(0, kVl - 1));
      s = frame_vlmeta_delete(f, name_of(vl_name(k)));
      if (!cur.vl[k].used) {
        CHECK_ERR(s, errc::out_of_range);
        continue;
      }
      next.vl[k].used = false;
    } else if (kind < 83) {
      for (uint8_t& b : next.meta) b = static_cast<uint8_t>(r.next());
      s = frame_meta_update(f, name_of("m"), bytes_view(next.meta, sizeof next.meta));
      CHECK_ERR(frame_meta_update(f, name_of("m"), bytes_view(next.meta, 7)), errc::invalid_argument);
    } else if (kind < 93) {
      REQUIRE_OK(frame_commit(f));
      CHECK(!frame_dirty(f));
      committed = cur;
      check_frame(t, f, cur, d, r);
      continue;
    } else {
      // Drop the uncommitted changes: reopen what the storage holds. In place, changes overwrite the committed
      // index and trailer, so they are committed first there.
      if (!tg.options().durable) {
        REQUIRE_OK(frame_commit(f));
        committed = cur;
      }
      CHECK_OK(frame_close(f));
      REQUIRE_OK(target_open(tg, f, a));
      cur = committed;
      check_frame(t, f, cur, d, r);
      continue;
    }
    if (s.code == errc::unsupported || (s.code == errc::invalid_argument && kind < 45)) {
      // Special chunks in a frame whose chunk sizes differ, or a chunk larger than the chunksize an emptied
      // frame kept: refused, nothing changed.
      check_frame(t, f, cur, d, r);
      continue;
    }
    REQUIRE_OK(s);
    cur = next;
    check_frame(t, f, cur, d, r);
    if ((t.failures > 0)) return;
  }
  REQUIRE_OK(frame_commit(f));
  CHECK_OK(frame_close(f));
  REQUIRE_OK(target_open(tg, f, a));
  check_frame(t, f, cur, d, r);
  if (tg.sparse()) {
    // Every chunk entry left in the directory is one the index uses.
    uint32_t stored = 0;
    for (int i = 0; i < cur.n; ++i) stored += cur.chunks[i].special == 0 ? 1 : 0;
    CHECK_EQ(memory_directory_count(tg.dir), stored + 1);
  } else {
    // The frame fits its storage (changes dropped by reopening may have left bytes past its end).
    CHECK_LE(frame_info_get(f)->frame_len, tg.buf.size());
    // Compaction leaves it tight (no dead bytes, the storage cut at its end) and the same frame.
    CHECK_OK(frame_close(f));
    frame_open_options o = tg.options();
    o.writable = true;
    REQUIRE_OK(frame_open(f, tg.st, a, o));
    REQUIRE_OK(frame_compact(f));
    auto sp = frame_space_get(f);
    REQUIRE_OK(sp.err());
    CHECK_EQ(sp->free_bytes, 0u);
    CHECK_EQ(sp->chunk_bytes + sp->meta_bytes, sp->frame_len);
    CHECK_EQ(frame_info_get(f)->frame_len, tg.buf.size());
    check_frame(t, f, cur, d, r);
    CHECK_OK(frame_close(f));
    REQUIRE_OK(target_open(tg, f, a));
    check_frame(t, f, cur, d, r);
  }
}

}  // namespace

TESSERA_TEST(frame_ops, random_sequences_contiguous_durable) {
  tessera::test::counting_allocator ca;
  for (uint64_t i = 0; i < 120 && !(t.failures > 0); ++i) run_sequence(t, where::cframe_durable, 1000 + i, ca);
  CHECK(!ca.leaked());
  CHECK_EQ(ca.mismatched_frees, 0u);
}

TESSERA_TEST(frame_ops, random_sequences_contiguous_in_place) {
  tessera::test::counting_allocator ca;
  for (uint64_t i = 0; i < 120 && !(t.failures > 0); ++i) run_sequence(t, where::cframe_in_place, 2000 + i, ca);
  CHECK(!ca.leaked());
}

TESSERA_TEST(frame_ops, random_sequences_contiguous_lazy_reads) {
  tessera::test::counting_allocator ca;
  for (uint64_t i = 0; i < 80 && !(t.failures > 0); ++i) run_sequence(t, where::cframe_lazy, 3000 + i, ca);
  CHECK(!ca.leaked());
}

TESSERA_TEST(frame_ops, random_sequences_sparse_durable) {
  tessera::test::counting_allocator ca;
  for (uint64_t i = 0; i < 80 && !(t.failures > 0); ++i) run_sequence(t, where::sframe_durable, 4000 + i, ca);
  CHECK(!ca.leaked());
}

TESSERA_TEST(frame_ops, random_sequences_sparse_in_place) {
  tessera::test::counting_allocator ca;
  for (uint64_t i = 0; i < 80 && !(t.failures > 0); ++i) run_sequence(t, where::sframe_in_place, 5000 + i, ca);
  CHECK(!ca.leaked());
}
