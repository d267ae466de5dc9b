// SPDX-License-Identifier: BSD-3-Clause
// Every storage call and every allocation of open, read, change and commit fails in turn (once, or from then
// on like a crash): an error comes back, nothing leaks, and the storage still opens as the frame committed
// before or the one committed after, never anything else. A sparse frame's directory, opened writable again,
// holds exactly the entries that committed frame references.
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

constexpr int32_t kChunk = 512;
constexpr int32_t kBlock = 128;
constexpr int kMax = 12;

struct snapshot {
  uint64_t seeds[kMax];
  uint8_t special[kMax];
  int n = 0;
  bool has_b = false;
  uint8_t meta0 = 0;
};

using scratch = scratch_buffers<kChunk, kBlock>;
scratch g;

span<const char> nm(const char* s) { return span<const char>(s, std::strlen(s)); }

status put_chunk(frame& f, int how, int64_t at, uint64_t seed, uint8_t special) {
  size_t len = 32;
  if (special == 0) len = chunk_make(seed, kChunk, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
  else special_make(special, kChunk, g.chunk);
  const bytes_view cv(g.chunk, len);
  if (how == 0) return frame_chunk_append(f, cv);
  if (how == 1) return frame_chunk_insert(f, at, cv);
  return frame_chunk_update(f, at, cv);
}

// Whether the frame holds exactly the snapshot (false on any error).
bool frame_matches(frame& f, const snapshot& s, chunk_decoder& d) {
  const frame_info* info = frame_info_get(f);
  if (info == nullptr || info->nchunks != s.n) return false;
  for (int i = 0; i < s.n; ++i) {
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    if (!n.ok() || *n != static_cast<size_t>(kChunk)) return false;
    if (s.special[i] == 0) content_fill(s.seeds[i], g.expect, kChunk);
    else std::memset(g.expect, 0, kChunk);
    if (std::memcmp(g.out, g.expect, kChunk) != 0) return false;
  }
  if (frame_vlmeta_raw(f, nm("a")).ok() != true) return false;
  if (frame_vlmeta_raw(f, nm("b")).ok() != s.has_b) return false;
  auto m = frame_meta_find(f, nm("m"));
  return m.ok() && m->size() == 4 && (*m)[0] == s.meta0;
}

// The committed frame before (S1) and after (S2) the scenario.
snapshot s1() {
  snapshot s;
  s.n = 3;
  for (int i = 0; i < 3; ++i) {
    s.seeds[i] = 100 + static_cast<uint64_t>(i);
    s.special[i] = 0;
  }
  s.meta0 = 7;
  return s;
}
snapshot s2(bool clear) {
  snapshot s;
  s.meta0 = 9;
  s.has_b = true;
  if (clear) return s;
  // append 200, 201; update 1 -> 300; delete 0; insert zeros at 1.
  const uint64_t seq[] = {300, 0, 102, 200, 201};
  const uint8_t sp[] = {0, 1, 0, 0, 0};
  s.n = 5;
  for (int i = 0; i < 5; ++i) {
    s.seeds[i] = seq[i];
    s.special[i] = sp[i];
  }
  return s;
}

status build_s1(frame& f, const storage* st, const storage_directory* dir, const allocator& a, bool durable) {
  const uint8_t meta[4] = {7, 0, 0, 0};
  frame_metalayer_init ml{nm("m"), bytes_view(meta, 4)};
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  p.metalayers = &ml;
  p.nmetalayers = 1;
  frame_open_options o;
  o.durable = durable;
  TESSERA_TRY(st != nullptr ? frame_create(f, *st, a, p, o) : frame_create_sparse(f, *dir, a, p, o));
  for (int i = 0; i < 3; ++i) TESSERA_TRY(put_chunk(f, 0, 0, 100 + static_cast<uint64_t>(i), 0));
  const uint8_t v[3] = {1, 2, 3};
  TESSERA_TRY(frame_vlmeta_set(f, nm("a"), bytes_view(v, 3)));
  TESSERA_TRY(frame_commit(f));
  return frame_close(f);
}

// Every block of a chunk in one request, counted.
struct counted_blocks {
  size_t count = 0;
  size_t consumed = 0;
  static size_t block(void*, size_t i) noexcept { return i; }
  static status consume(void* c, size_t, bytes_view, uint32_t) noexcept {
    ++static_cast<counted_blocks*>(c)->consumed;
    return ok_status();
  }
};

// Runs tasks in reverse order over 3 worker indices, in this thread.
void reverse_run(void*, size_t ntasks, executor_task task, void* task_context) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(task_context, i, static_cast<uint32_t>(i % 3));
}

// A decoder over 3 workers: block requests read each block by its worker when the storage reads concurrently.
void decoder3_init(tessera::test::context& t, chunk_decoder& d) {
  chunk_decoder_options o;
  o.exec.run = reverse_run;
  o.exec.workers = 3;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator(), o));
}

// The scenario, from opening to committing; `clear` deletes every chunk instead.
status scenario(frame& f, const storage* st, const storage_directory* dir, const allocator& a, chunk_decoder& d,
                chunk_decoder& d3, bool clear, bool durable) {
  frame_open_options o;
  o.writable = true;
  o.durable = durable;
  TESSERA_TRY(st != nullptr ? frame_open(f, *st, a, o) : frame_open_sparse(f, *dir, a, o));
  // Reads through the failing storage too.
  for (int i = 0; i < 3; ++i) {
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    if (!n.ok()) return n.err();
    auto b = frame_block_decode(f, d, i, 2, bytes_mut(g.out, sizeof g.out));
    if (!b.ok()) return b.err();
    counted_blocks c;
    chunk_block_request r;
    r.count = *n / kBlock;
    r.block = counted_blocks::block;
    r.consume = counted_blocks::consume;
    r.context = &c;
    TESSERA_TRY(frame_blocks_decode(f, d3, i, r));
    if (c.consumed != r.count) return make_error(errc::corrupt, "test: a block was not handed over");
  }
  if (clear) {
    for (int i = 0; i < 3; ++i) TESSERA_TRY(frame_chunk_delete(f, 0));
  } else {
    TESSERA_TRY(put_chunk(f, 0, 0, 200, 0));
    TESSERA_TRY(put_chunk(f, 0, 0, 201, 0));
    TESSERA_TRY(put_chunk(f, 2, 1, 300, 0));
    TESSERA_TRY(frame_chunk_delete(f, 0));
    TESSERA_TRY(put_chunk(f, 1, 1, 0, 1));
  }
  const uint8_t v[2] = {4, 5};
  TESSERA_TRY(frame_vlmeta_set(f, nm("b"), bytes_view(v, 2)));
  const uint8_t meta[4] = {9, 0, 0, 0};
  TESSERA_TRY(frame_meta_update(f, nm("m"), bytes_view(meta, 4)));
  return frame_commit(f);
}

// allocation_from: every allocation from the Nth on is refused (the retries with a smaller size fail too).
// close_once: the Nth close of a directory entry fails (after releasing it).
enum class fault { storage_once, storage_crash, allocation, allocation_from, close_once };

bool allocating(fault kind) { return kind == fault::allocation || kind == fault::allocation_from; }

void run_contiguous(tessera::test::context& t, fault kind, bool clear, bool durable) {
  const snapshot before = s1(), after = s2(clear);
  tessera::test::counting_allocator ca;
  const allocator a = ca.get();
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  chunk_decoder d3;
  decoder3_init(t, d3);
  bool completed = false;
  for (uint64_t n = 1; n < 2000 && !completed; ++n) {
    growable_buffer buf;
    growable_buffer_init(buf, tessera::test::system_allocator());
    wrapped_storage w;
    w.inner = growable_buffer_storage(buf);
    w.concurrent = true;  // the tasks run in this thread: the plain counters stay right
    const storage st = w.get();
    {
      frame f;
      REQUIRE_OK(build_s1(f, &st, nullptr, a, durable));
    }
    if (allocating(kind)) {
      ca.fail_at = ca.requests + n;
      ca.fail_after = kind == fault::allocation_from;
    } else {
      w.plan->fail_at = w.plan->calls + n;
      w.plan->fail_after = kind == fault::storage_crash;
    }
    frame f;
    status s = scenario(f, &st, nullptr, a, d, d3, clear, durable);
    const bool injected = allocating(kind) ? ca.requests >= ca.fail_at : w.plan->failed;
    if (s.ok()) {
      completed = !injected;
    } else {
      CHECK(injected);
      CHECK(s.code == (allocating(kind) ? errc::out_of_memory : errc::io));
    }
    (void)frame_close(f);
    ca.fail_at = SIZE_MAX;
    ca.fail_after = false;
    CHECK(!ca.leaked());
    // What the storage holds: the frame before or the frame after. In place (no crash safety), a failed
    // commit may leave neither: only leaks are checked then.
    if (!durable && !s.ok()) continue;
    frame g2;
    REQUIRE_OK(frame_open(g2, growable_buffer_storage(buf), a));
    const bool old_one = frame_matches(g2, before, d);
    const bool new_one = frame_matches(g2, after, d);
    CHECK(old_one || new_one);
    if (s.ok()) CHECK(new_one);
    (void)frame_close(g2);
    CHECK(!ca.leaked());
    if (t.failures > 0) return;
  }
  CHECK(completed);
}

void run_sparse(tessera::test::context& t, fault kind, bool clear) {
  const snapshot before = s1(), after = s2(clear);
  tessera::test::counting_allocator ca;
  const allocator a = ca.get();
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  chunk_decoder d3;
  decoder3_init(t, d3);
  bool completed = false;
  for (uint64_t n = 1; n < 2000 && !completed; ++n) {
    memory_directory md;
    REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), 32));
    wrapped_directory w;
    w.inner = memory_directory_interface(md);
    const storage_directory dir = w.get();
    {
      frame f;
      REQUIRE_OK(build_s1(f, nullptr, &dir, a, true));
    }
    if (allocating(kind)) {
      ca.fail_at = ca.requests + n;
      ca.fail_after = kind == fault::allocation_from;
    } else if (kind == fault::close_once) {
      w.closes.fail_at = w.closes.calls + n;
    } else {
      w.plan.fail_at = w.plan.calls + n;
      w.plan.fail_after = kind == fault::storage_crash;
    }
    frame f;
    status s = scenario(f, nullptr, &dir, a, d, d3, clear, true);
    const bool injected = allocating(kind) ? ca.requests >= ca.fail_at
                          : kind == fault::close_once ? w.closes.failed
                                                      : w.plan.failed;
    if (s.ok()) {
      completed = !injected;
    } else {
      CHECK(injected);
      CHECK_EQ(s.code, allocating(kind) ? errc::out_of_memory : errc::io);
    }
    (void)frame_close(f);
    CHECK_EQ(w.open_count(), 0);
    ca.fail_at = SIZE_MAX;
    ca.fail_after = false;
    CHECK(!ca.leaked());
    // Opened writable, the directory is swept: exactly what the committed index references stays.
    frame g2;
    const storage_directory plain = memory_directory_interface(md);
    frame_open_options wo;
    wo.writable = true;
    REQUIRE_OK(frame_open_sparse(g2, plain, a, wo));
    CHECK(directory_holds_exactly(md, g2));
    CHECK(frame_matches(g2, before, d) || frame_matches(g2, after, d));
    if (s.ok()) CHECK(frame_matches(g2, after, d));
    (void)frame_close(g2);
    CHECK(!ca.leaked());
    if (t.failures > 0) return;
  }
  CHECK(completed);
}

}  // namespace

TESSERA_TEST(frame_faults, contiguous_storage_failures) {
  run_contiguous(t, fault::storage_once, false, true);
  run_contiguous(t, fault::storage_once, true, true);
}

TESSERA_TEST(frame_faults, contiguous_crash_at_every_call) {
  run_contiguous(t, fault::storage_crash, false, true);
  run_contiguous(t, fault::storage_crash, true, true);
}

TESSERA_TEST(frame_faults, contiguous_allocation_failures) {
  run_contiguous(t, fault::allocation, false, true);
  run_contiguous(t, fault::allocation, true, true);
  run_contiguous(t, fault::allocation, false, false);
}

TESSERA_TEST(frame_faults, contiguous_allocations_failing_from_each_on) {
  run_contiguous(t, fault::allocation_from, false, true);
  run_contiguous(t, fault::allocation_from, true, true);
  run_contiguous(t, fault::allocation_from, false, false);
}

TESSERA_TEST(frame_faults, sparse_storage_failures) {
  run_sparse(t, fault::storage_once, false);
  run_sparse(t, fault::storage_crash, false);
  run_sparse(t, fault::storage_crash, true);
}

TESSERA_TEST(frame_faults, sparse_entry_close_failures) {
  run_sparse(t, fault::close_once, false);
  run_sparse(t, fault::close_once, true);
}

TESSERA_TEST(frame_faults, sparse_allocation_failures) {
  run_sparse(t, fault::allocation, false);
  run_sparse(t, fault::allocation, true);
}

TESSERA_TEST(frame_faults, sparse_allocations_failing_from_each_on) {
  run_sparse(t, fault::allocation_from, false);
  run_sparse(t, fault::allocation_from, true);
}
