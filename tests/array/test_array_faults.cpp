// SPDX-License-Identifier: BSD-3-Clause
// Every array operation under faults: each allocation refused in turn, each storage call failed in turn (once,
// and from there on: a crash). A failed call returns exactly out_of_memory or io, frees all it allocated, and
// the storage holds the array as it was committed before the call or after it, never a mix; a call that
// succeeds is checked against the call run without faults, and the sweep ends when the call succeeds without
// meeting the fault (a call may survive a refused allocation it can do without: the sweep goes on past it).
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../frame/frame_testing.hpp"
#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

namespace {

constexpr int64_t kRows = 12;
constexpr int64_t kCols = 10;
constexpr int64_t kMaxItems = 24 * 20;  // the largest shape an operation below makes
constexpr uint64_t kMaxSteps = 2000;    // a sweep that has not succeeded by then is a failure

const uint8_t kExtraMeta[3] = {0x93, 0x01, 0x02};

// A 12 x 10 "<i4" array, chunks 4 x 5, blocks 2 x 5 (partial edge chunks along no axis, several blocks each),
// BloscLZ with shuffle, a fixed metalayer "extra" and a variable-length one "note".
array_params grid_params(frame_metalayer_init& extra) {
  array_params p;
  p.ndim = 2;
  p.shape[0] = kRows;
  p.shape[1] = kCols;
  p.chunkshape[0] = 4;
  p.chunkshape[1] = 5;
  p.blockshape[0] = 2;
  p.blockshape[1] = 5;
  p.dtype = str("<i4");
  extra.name = str("extra");
  extra.content = bytes_view(kExtraMeta, sizeof kExtraMeta);
  p.metalayers = &extra;
  p.nmetalayers = 1;
  return p;
}

// Items that vary (so that chunks compress to different sizes), from a seed.
void items_fill(int32_t* items, int64_t n, int32_t seed) {
  for (int64_t i = 0; i < n; ++i) items[i] = static_cast<int32_t>((i * 7 + seed) % 97) * (i % 3 == 0 ? 1000 : 1);
}

// What a storage holds as an array: shape, items, the fixed metalayer's bytes and the vlmetalayers' count.
struct snapshot {
  bool ok = false;
  int64_t shape[2] = {};
  int32_t items[kMaxItems] = {};
  uint8_t extra[sizeof kExtraMeta] = {};
  uint32_t nvlmeta = 0;
};

// The states of a sweep (static: each is 2 KiB, too much for a bare-metal test's stack).
snapshot g_before;
snapshot g_after;
snapshot g_now;

bool snapshot_take(const storage& st, snapshot& s) {
  s.ok = false;
  s.shape[0] = s.shape[1] = 0;
  s.nvlmeta = 0;
  std::memset(s.extra, 0, sizeof s.extra);
  array a;
  if (!array_open(a, st, test::system_allocator()).ok()) return false;
  const array_layout& l = array_layout_get(a);
  s.shape[0] = l.shape[0];
  s.shape[1] = l.shape[1];
  auto extra = array_meta_find(a, str("extra"));
  bool ok = extra.ok() && extra->size() == sizeof s.extra && s.shape[0] * s.shape[1] <= kMaxItems;
  if (ok) std::memcpy(s.extra, extra->data(), sizeof s.extra);
  s.nvlmeta = array_vlmeta_count(a);
  if (ok) ok = array_read(a, bytes_mut(reinterpret_cast<uint8_t*>(s.items), static_cast<size_t>(s.shape[0] * s.shape[1] * 4))).ok();
  (void)array_close(a);
  s.ok = ok;
  return ok;
}

bool snapshot_equal(const snapshot& a, const snapshot& b) {
  return a.ok && b.ok && a.shape[0] == b.shape[0] && a.shape[1] == b.shape[1] && a.nvlmeta == b.nvlmeta &&
         std::memcmp(a.extra, b.extra, sizeof a.extra) == 0 &&
         std::memcmp(a.items, b.items, static_cast<size_t>(a.shape[0] * a.shape[1] * 4)) == 0;
}

// ---- The writing operations ----------------------------------------------------------------------------------

int32_t g_src[kMaxItems];

bytes_view src_bytes(int64_t items) { return bytes_view(reinterpret_cast<const uint8_t*>(g_src), static_cast<size_t>(items * 4)); }

status op_slice_partial(array& a) {  // across four chunks, covering none
  const int64_t start[2] = {2, 3}, stop[2] = {7, 8};
  return array_slice_write(a, start, stop, src_bytes(25));
}
status op_slice_chunks(array& a) {  // two whole chunks
  const int64_t start[2] = {4, 0}, stop[2] = {8, 10};
  return array_slice_write(a, start, stop, src_bytes(40));
}
status op_element(array& a) {
  const int64_t at[2] = {9, 6};
  return array_element_write(a, at, src_bytes(1));
}
status op_orthogonal(array& a) {
  const int64_t rows[3] = {11, 0, 5}, cols[2] = {9, 2};
  const int64_t* const indices[2] = {rows, cols};
  const int64_t counts[2] = {3, 2};
  return array_orthogonal_write(a, indices, counts, src_bytes(6));
}
status op_slice_from(array& a) {  // a 3 x 4 box at (1, 2) of a 6 x 8 buffer
  const int64_t start[2] = {5, 4}, stop[2] = {8, 8}, shape[2] = {6, 8}, at[2] = {1, 2};
  return array_slice_write_from(a, start, stop, src_bytes(48), shape, at);
}
status op_grow(array& a) {
  const int64_t shape[2] = {kRows + 3, kCols + 7};
  return array_resize(a, shape);
}
status op_shrink(array& a) {
  const int64_t shape[2] = {kRows - 5, kCols - 1};
  return array_resize(a, shape);
}
status op_regrow(array& a) {  // cut inside edge chunks, then grown: their exposed padding is zeroed; one commit
  a.auto_commit = false;
  const int64_t cut[2] = {kRows - 1, kCols - 2}, grown[2] = {kRows + 2, kCols + 3};
  TESSERA_TRY(array_resize(a, cut));
  TESSERA_TRY(array_resize(a, grown));
  return array_commit(a);
}
status op_resize_at(array& a) {  // a chunk's height of zeros inserted at row 4, a chunk's width cut at column 5
  const int64_t shape[2] = {kRows + 4, kCols - 5}, start[2] = {4, 5};
  return array_resize_at(a, shape, start);
}
status op_insert(array& a) { return array_insert(a, 0, 4, 4, src_bytes(4 * kCols)); }
status op_append(array& a) { return array_append(a, 1, 3, src_bytes(kRows * 3)); }
status op_delete(array& a) { return array_delete(a, 1, 0, 5); }
status op_vlmeta_write(array& a) { return array_vlmeta_write(a, str("other"), src_bytes(60)); }
status op_vlmeta_delete(array& a) { return array_vlmeta_delete(a, str("note")); }
status op_meta_update(array& a) {
  const uint8_t content[3] = {0x93, 0x07, 0x08};
  return array_meta_update(a, str("extra"), bytes_view(content, sizeof content));
}
status op_compact(array& a) { return array_compact(a); }
status op_batch(array& a) {  // three writes, one commit
  a.auto_commit = false;
  const int64_t s1[2] = {0, 0}, e1[2] = {1, 10}, s2[2] = {11, 0}, e2[2] = {12, 10};
  TESSERA_TRY(array_slice_write(a, s1, e1, src_bytes(10)));
  TESSERA_TRY(array_slice_write(a, s2, e2, src_bytes(10)));
  TESSERA_TRY(array_append(a, 0, 4, src_bytes(4 * kCols)));
  return array_commit(a);
}

struct write_op {
  const char* name;
  status (*run)(array& a);
  bool allocates = true;  // false: the call needs no memory beyond what the open array holds
};

const write_op kWriteOps[] = {
    {"slice_partial", op_slice_partial}, {"slice_chunks", op_slice_chunks}, {"element", op_element},
    {"orthogonal", op_orthogonal},       {"slice_from", op_slice_from},     {"grow", op_grow},
    {"shrink", op_shrink},               {"regrow", op_regrow},             {"resize_at", op_resize_at},       {"insert", op_insert},
    {"append", op_append},               {"delete", op_delete},             {"vlmeta_write", op_vlmeta_write},
    {"vlmeta_delete", op_vlmeta_delete, false}, {"meta_update", op_meta_update, false},   {"compact", op_compact, false},
    {"batch", op_batch},
};

// The base array: written, then partly rewritten (so that the frame has free space for the writes to reuse and
// compaction to close), with its vlmetalayer.
void base_make(test::context& t, growable_buffer& base) {
  growable_buffer_init(base, test::system_allocator());
  const storage st = growable_buffer_storage(base);
  frame_metalayer_init extra;
  int32_t items[kRows * kCols];
  items_fill(items, kRows * kCols, 1);
  array a;
  REQUIRE_OK(array_create(a, array_target_contiguous(st), test::system_allocator(), grid_params(extra),
                          array_fill_buffer(bytes_view(reinterpret_cast<const uint8_t*>(items), sizeof items))));
  const int64_t start[2] = {0, 0}, stop[2] = {4, 5};
  items_fill(items, 20, 5);
  REQUIRE_OK(array_slice_write(a, start, stop, bytes_view(reinterpret_cast<const uint8_t*>(items), 80)));
  REQUIRE_OK(array_vlmeta_write(a, str("note"), bytes_view(kExtraMeta, sizeof kExtraMeta)));
  REQUIRE_OK(array_close(a));
}

void storage_copy(test::context& t, growable_buffer& to, const growable_buffer& from) {
  growable_buffer_init(to, test::system_allocator());
  REQUIRE_OK(storage_write(growable_buffer_storage(to), 0, from.bytes()));
}

// The states before and after op, run without faults.
void states_make(test::context& t, const growable_buffer& base, const write_op& op, snapshot& before, snapshot& after) {
  growable_buffer g;
  storage_copy(t, g, base);
  const storage st = growable_buffer_storage(g);
  REQUIRE(snapshot_take(st, before));
  array_open_options o;
  o.frame.writable = true;
  array a;
  REQUIRE_OK(array_open(a, st, test::system_allocator(), o));
  REQUIRE_OK(op.run(a));
  REQUIRE_OK(array_close(a));
  REQUIRE(snapshot_take(st, after));
  REQUIRE(!snapshot_equal(before, after) || op.run == op_compact);
}

// Names the operation and the step (the number of the refused allocation or failed storage call) of a failure.
void step_failure(test::context& t, const write_op& op, uint64_t n, const char* what, const status& s) {
  char text[512];
  std::snprintf(text, sizeof text, "%s, fault at %llu: %s (%s: %s)", op.name, static_cast<unsigned long long>(n), what,
                errc_name(s.code), s.message);
  test::report_failure(t, __FILE__, __LINE__, text);
}

// Each allocation of the operation refused in turn (the open's are not).
void sweep_allocations(test::context& t, const growable_buffer& base, const write_op& op, const snapshot& before,
                       const snapshot& after) {
  bool done = false;
  for (uint64_t n = 1; n < kMaxSteps && !done; ++n) {
    growable_buffer g;
    storage_copy(t, g, base);
    const storage st = growable_buffer_storage(g);
    test::counting_allocator counting;
    {
      array_open_options o;
      o.frame.writable = true;
      array a;
      REQUIRE_OK(array_open(a, st, counting.get(), o));
      counting.fail_at = counting.requests + n;
      const status s = op.run(a);
      if (s.ok()) {
        done = counting.requests < counting.fail_at;  // the refused request never came
        if (n == 1 && done && op.allocates) step_failure(t, op, n, "allocated nothing: the sweep tested no fault", s);
      } else if (s.code != errc::out_of_memory) {
        step_failure(t, op, n, "returned another error than out_of_memory", s);
      }
      counting.fail_at = SIZE_MAX;
      (void)array_close(a);
    }
    CHECK(!counting.leaked());
    snapshot& now = g_now;
    CHECK(snapshot_take(st, now));
    if (done) {
      CHECK(snapshot_equal(now, after));
    } else if (!snapshot_equal(now, before) && !snapshot_equal(now, after)) {
      step_failure(t, op, n, "left neither the old array nor the new one", ok_status());
    }
    if (t.failures > 0) return;
  }
  CHECK(done);
}

// Each storage call of the operation failed in turn, once or (crash) from there on.
void sweep_storage(test::context& t, const growable_buffer& base, const write_op& op, const snapshot& before,
                   const snapshot& after, bool crash) {
  bool done = false;
  for (uint64_t n = 1; n < kMaxSteps && !done; ++n) {
    growable_buffer g;
    storage_copy(t, g, base);
    frame_test::wrapped_storage w;
    w.inner = growable_buffer_storage(g);
    const storage st = w.get();
    test::counting_allocator counting;
    {
      array_open_options o;
      o.frame.writable = true;
      array a;
      REQUIRE_OK(array_open(a, st, counting.get(), o));
      w.plan->fail_at = w.plan->calls + n;
      w.plan->fail_after = crash;
      const status s = op.run(a);
      if (s.ok()) {
        done = !w.plan->failed;
        if (done && n == 1) step_failure(t, op, n, "called the storage not once: the sweep tested no fault", s);
      } else if (s.code != errc::io || !w.plan->failed) {
        step_failure(t, op, n, "returned another error than io", s);
      }
      (void)array_close(a);
    }
    CHECK(!counting.leaked());
    snapshot& now = g_now;
    CHECK(snapshot_take(growable_buffer_storage(g), now));
    if (done) {
      CHECK(snapshot_equal(now, after));
    } else if (!snapshot_equal(now, before) && !snapshot_equal(now, after)) {
      step_failure(t, op, n, "left neither the old array nor the new one", ok_status());
    }
    if (t.failures > 0) return;
  }
  CHECK(done);
}

void run_write_sweeps(test::context& t, int which) {
  growable_buffer base;
  base_make(t, base);
  if (t.failures > 0) return;
  items_fill(g_src, kMaxItems, 3);
  for (const write_op& op : kWriteOps) {
    states_make(t, base, op, g_before, g_after);
    if (t.failures > 0) {
      step_failure(t, op, 0, "failed without faults", ok_status());
      return;
    }
    if (which == 0) sweep_allocations(t, base, op, g_before, g_after);
    if (which == 1) sweep_storage(t, base, op, g_before, g_after, false);
    if (which == 2) sweep_storage(t, base, op, g_before, g_after, true);
    if (t.failures > 0) return;
  }
}

// ---- Reads and arrays made from arrays -------------------------------------------------------------------------

// A read into out (at most kMaxItems items); the same read without faults gives what it must equal.
struct read_op {
  const char* name;
  status (*run)(array& a, bytes_mut out, size_t* n);
};

status rd_all(array& a, bytes_mut out, size_t* n) {
  *n = kRows * kCols * 4;
  return array_read(a, bytes_mut(out.data(), *n));
}
status rd_slice(array& a, bytes_mut out, size_t* n) {
  const int64_t start[2] = {1, 3}, stop[2] = {11, 9};
  *n = 10 * 6 * 4;
  return array_slice_read(a, start, stop, bytes_mut(out.data(), *n));
}
status rd_element(array& a, bytes_mut out, size_t* n) {
  const int64_t at[2] = {7, 8};
  *n = 4;
  return array_element_read(a, at, bytes_mut(out.data(), *n));
}
status rd_orthogonal(array& a, bytes_mut out, size_t* n) {
  const int64_t rows[4] = {11, 0, 5, 5}, cols[3] = {9, 2, 4};
  const int64_t* const indices[2] = {rows, cols};
  const int64_t counts[2] = {4, 3};
  *n = 12 * 4;
  return array_orthogonal_read(a, indices, counts, bytes_mut(out.data(), *n));
}
status rd_into(array& a, bytes_mut out, size_t* n) {
  const int64_t start[2] = {3, 1}, stop[2] = {9, 7}, shape[2] = {8, 9}, at[2] = {2, 3};
  *n = 8 * 9 * 4;
  std::memset(out.data(), 0, *n);
  return array_slice_read_into(a, start, stop, bytes_mut(out.data(), *n), shape, at);
}
status rd_vlmeta(array& a, bytes_mut out, size_t* n) {
  auto r = array_vlmeta_read(a, str("note"), out);
  if (!r.ok()) return r.err();
  *n = *r;
  return ok_status();
}

const read_op kReadOps[] = {
    {"read", rd_all},       {"slice", rd_slice}, {"element", rd_element}, {"orthogonal", rd_orthogonal},
    {"slice_into", rd_into}, {"vlmeta", rd_vlmeta},
};

int32_t g_expected[kMaxItems];
int32_t g_got[kMaxItems];

bytes_mut out_of(int32_t* items) { return bytes_mut(reinterpret_cast<uint8_t*>(items), sizeof(int32_t) * kMaxItems); }

// Each allocation (kind 0) or storage call (kind 1: the frame reads through the storage, no view) of an open
// and a read failed in turn: out_of_memory or io, nothing leaked, and the read that succeeds is right.
void sweep_read(test::context& t, const growable_buffer& base, const read_op& op, int kind) {
  size_t expected_n = 0;
  {
    growable_buffer g;
    storage_copy(t, g, base);
    array a;
    REQUIRE_OK(array_open(a, growable_buffer_storage(g), test::system_allocator()));
    REQUIRE_OK(op.run(a, out_of(g_expected), &expected_n));
    (void)array_close(a);
  }
  bool done = false;
  for (uint64_t n = 1; n < kMaxSteps && !done; ++n) {
    growable_buffer g;
    storage_copy(t, g, base);
    frame_test::wrapped_storage w;
    w.inner = growable_buffer_storage(g);
    test::counting_allocator counting;
    if (kind == 0) counting.fail_at = n;
    if (kind == 1) w.plan->fail_at = n;
    status s;
    size_t got_n = 0;
    {
      array a;
      s = array_open(a, w.get(), counting.get());
      if (s.ok()) s = op.run(a, out_of(g_got), &got_n);
      (void)array_close(a);
    }
    const write_op named{op.name, nullptr, true};
    if (s.ok()) {
      done = kind == 0 ? counting.requests < counting.fail_at : !w.plan->failed;  // the fault never came
      if (n == 1 && done) step_failure(t, named, n, "met no fault: the sweep tested none", s);
      CHECK(got_n == expected_n && std::memcmp(g_got, g_expected, expected_n) == 0);
    } else if (s.code != (kind == 0 ? errc::out_of_memory : errc::io)) {
      step_failure(t, named, n, "returned another error than the fault's", s);
    }
    CHECK(!counting.leaked());
    if (t.failures > 0) return;
  }
  CHECK(done);
}

// An array made from the base into a new storage: each allocation (kind 0), call of the new storage (kind 1) or
// call of the source's storage (kind 2) failed in turn. A failure frees all, leaves dst closed; the array made
// when nothing fails reads as the one made without faults.
struct make_op {
  const char* name;
  status (*run)(array& dst, const array_target& target, const allocator& alloc, array& src);
  bool reads_source = true;  // false: made from a buffer or a value (no source to fail)
};

status mk_copy(array& dst, const array_target& target, const allocator& alloc, array& src) {
  frame_metalayer_init extra;
  array_params p = grid_params(extra);
  p.chunkshape[0] = 3;  // rechunked: every chunk decoded and encoded again
  p.chunkshape[1] = 4;
  p.blockshape[0] = 3;
  p.blockshape[1] = 2;
  return array_copy(dst, target, alloc, src, &p);
}
status mk_slice_copy(array& dst, const array_target& target, const allocator& alloc, array& src) {
  const int64_t start[2] = {2, 1}, stop[2] = {11, 9};
  return array_slice_copy(dst, target, alloc, src, start, stop);
}
status mk_concatenate(array& dst, const array_target& target, const allocator& alloc, array& src) {
  return array_concatenate(dst, target, alloc, src, src, 1);
}
status mk_expand(array& dst, const array_target& target, const allocator& alloc, array& src) {
  const bool axes[3] = {false, true, false};
  return array_expand_dims(dst, target, alloc, src, axes, 3);
}
status mk_save(array& dst, const array_target& target, const allocator& alloc, array& src) {
  return array_save(dst, target, alloc, src);
}
status mk_create(array& dst, const array_target& target, const allocator& alloc, array& src) {
  (void)src;
  frame_metalayer_init extra;
  return array_create(dst, target, alloc, grid_params(extra),
                      array_fill_buffer(bytes_view(reinterpret_cast<const uint8_t*>(g_src), kRows * kCols * 4)));
}
status mk_create_full(array& dst, const array_target& target, const allocator& alloc, array& src) {
  (void)src;
  frame_metalayer_init extra;
  return array_create(dst, target, alloc, grid_params(extra), array_fill_full(src_bytes(1)));
}

// A serial executor that claims two workers and runs the tasks backwards on both: the parallel create's paths
// (whole chunks per worker) with faults in a deterministic order.
void backwards_run(void*, size_t ntasks, executor_task task, void* ctx) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(ctx, i, static_cast<uint32_t>(i % 2));
}
executor two_workers() {
  executor e;
  e.run = backwards_run;
  e.workers = 2;
  return e;
}
status mk_create_parallel(array& dst, const array_target& target, const allocator& alloc, array& src) {
  (void)src;
  frame_metalayer_init extra;
  array_params p = grid_params(extra);
  p.exec = two_workers();
  return array_create(dst, target, alloc, p,
                      array_fill_buffer(bytes_view(reinterpret_cast<const uint8_t*>(g_src), kRows * kCols * 4)));
}
status mk_copy_parallel(array& dst, const array_target& target, const allocator& alloc, array& src) {
  frame_metalayer_init extra;
  array_params p = grid_params(extra);
  p.exec = two_workers();  // chunks read from src on the caller's thread, encoded on the workers
  return array_copy(dst, target, alloc, src, &p);
}

const make_op kMakeOps[] = {
    {"create_parallel", mk_create_parallel, false}, {"copy_parallel", mk_copy_parallel},
    {"copy", mk_copy}, {"slice_copy", mk_slice_copy}, {"concatenate", mk_concatenate}, {"expand_dims", mk_expand},
    {"save", mk_save}, {"create", mk_create, false}, {"create_full", mk_create_full, false},
};

// The made array's items into out; *n their bytes.
bool made_read(array& a, int32_t* out, size_t* n) {
  const array_layout& l = array_layout_get(a);
  int64_t items = 1;
  for (int d = 0; d < l.ndim; ++d) items *= l.shape[d];
  if (items > kMaxItems) return false;
  *n = static_cast<size_t>(items * 4);
  return array_read(a, bytes_mut(reinterpret_cast<uint8_t*>(out), *n)).ok();
}

// kind 0: the allocations; 1: the new storage's calls; 2: the source's storage calls (its reads: the source is
// opened again for each step, through the storage, no view).
void sweep_make(test::context& t, const growable_buffer& base, const make_op& op, int kind) {
  growable_buffer src_buffer;
  storage_copy(t, src_buffer, base);
  array src;
  REQUIRE_OK(array_open(src, growable_buffer_storage(src_buffer), test::system_allocator()));
  size_t expected_n = 0;
  {
    growable_buffer g;
    growable_buffer_init(g, test::system_allocator());
    const storage st = growable_buffer_storage(g);
    array dst;
    REQUIRE_OK(op.run(dst, array_target_contiguous(st), test::system_allocator(), src));
    REQUIRE(made_read(dst, g_expected, &expected_n));
    REQUIRE_OK(array_close(dst));
  }
  const write_op named{op.name, nullptr, true};
  bool done = false;
  for (uint64_t n = 1; n < kMaxSteps && !done; ++n) {
    growable_buffer g;
    growable_buffer_init(g, test::system_allocator());
    frame_test::wrapped_storage w;
    w.inner = growable_buffer_storage(g);
    w.hide_view = false;
    const storage st = w.get();
    test::counting_allocator counting;
    frame_test::wrapped_storage w_src;
    w_src.inner = growable_buffer_storage(src_buffer);
    array faulty_src;
    if (kind == 2) REQUIRE_OK(array_open(faulty_src, w_src.get(), test::system_allocator()));
    if (kind == 0) counting.fail_at = n;
    if (kind == 1) w.plan->fail_at = n;
    if (kind == 2) w_src.plan->fail_at = w_src.plan->calls + n;
    {
      array dst;
      const status s = op.run(dst, array_target_contiguous(st), counting.get(), kind == 2 ? faulty_src : src);
      const bool fault_came = kind == 0 ? counting.requests >= counting.fail_at : kind == 1 ? w.plan->failed : w_src.plan->failed;
      if (s.ok()) {
        done = !fault_came;
        if (n == 1 && done) step_failure(t, named, n, "met no fault: the sweep tested none", s);
        counting.fail_at = SIZE_MAX;  // the check's own reads
        w.plan->fail_at = UINT64_MAX;
        w_src.plan->fail_at = UINT64_MAX;
        size_t got_n = 0;
        CHECK(made_read(dst, g_got, &got_n));
        CHECK(got_n == expected_n && std::memcmp(g_got, g_expected, expected_n) == 0);
        CHECK_OK(array_close(dst));
      } else {
        if (s.code != (kind == 0 ? errc::out_of_memory : errc::io) || !fault_came) {
          step_failure(t, named, n, "returned another error than the fault's", s);
        }
        if (array_is_open(dst)) step_failure(t, named, n, "failed and left the array open", s);
      }
    }
    (void)array_close(faulty_src);
    CHECK(!counting.leaked());
    if (t.failures > 0) break;
  }
  CHECK(done);
  (void)array_close(src);
}

void run_other_sweeps(test::context& t, int kind) {
  growable_buffer base;
  base_make(t, base);
  if (t.failures > 0) return;
  items_fill(g_src, kMaxItems, 3);
  for (const read_op& op : kReadOps) {
    if (kind == 2) break;  // the reads' storage faults are kind 1's
    sweep_read(t, base, op, kind);
    if (t.failures > 0) return;
  }
  for (const make_op& op : kMakeOps) {
    if (kind == 2 && !op.reads_source) continue;
    sweep_make(t, base, op, kind);
    if (t.failures > 0) return;
  }
}

}  // namespace

TESSERA_TEST(array_faults, every_refused_allocation_of_every_write) { run_write_sweeps(t, 0); }

TESSERA_TEST(array_faults, every_failed_storage_call_of_every_write) { run_write_sweeps(t, 1); }

TESSERA_TEST(array_faults, a_crash_at_every_storage_call_of_every_write) { run_write_sweeps(t, 2); }

TESSERA_TEST(array_faults, every_refused_allocation_of_reads_and_copies) { run_other_sweeps(t, 0); }

TESSERA_TEST(array_faults, every_failed_storage_call_of_reads_and_copies) { run_other_sweeps(t, 1); }

TESSERA_TEST(array_faults, every_failed_source_read_of_copies) { run_other_sweeps(t, 2); }
