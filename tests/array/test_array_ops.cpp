// SPDX-License-Identifier: BSD-3-Clause
// Orthogonal writes, slices into and from a larger buffer, and resizes at a position, each against a plain
// C-order model computed item by item here (random geometries with partial edge chunks and blocks, ndim 0 to 4),
// and their refusals: a refused call changes nothing.
#include <cstdint>
#include <cstring>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

namespace {

const int64_t kItemsizes[] = {1, 2, 3, 4, 8};

struct model {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t itemsize = 1;
  buf data;
  int64_t nitems() const noexcept { return prod(ndim, shape); }
};

// An array in a growable buffer and its model, with a random geometry and contents (items, or zeros: special
// index entries).
struct fixture {
  test::counting_allocator counting;
  allocator alloc = counting.get();
  growable_buffer gb;
  storage st{};
  array a;
  model m;
};

void fixture_make(test::context& t, test::rng& r, fixture& f, int ndim, int64_t max_extent) {
  f.m.ndim = ndim;
  f.m.itemsize = kItemsizes[r.range(0, 4)];
  array_params p;
  p.ndim = ndim;
  for (int d = 0; d < ndim; ++d) f.m.shape[d] = r.range(1, max_extent);
  while (prod(ndim, f.m.shape) > 1500) {  // small enough for the Cortex-M4's heap
    const int d = static_cast<int>(r.range(0, ndim - 1));
    if (f.m.shape[d] > 1) --f.m.shape[d];
  }
  for (int d = 0; d < ndim; ++d) {
    p.shape[d] = f.m.shape[d];
    p.chunkshape[d] = static_cast<int32_t>(r.range(1, f.m.shape[d] + 1));
    p.blockshape[d] = static_cast<int32_t>(r.range(1, p.chunkshape[d]));
  }
  p.itemsize = static_cast<int32_t>(f.m.itemsize);
  p.clevel = static_cast<int>(r.range(0, 9));
  if (r.chance(30)) p.filters[4] = static_cast<uint8_t>(filter_id::delta);  // later blocks need block 0
  REQUIRE(f.m.data.make(static_cast<size_t>(f.m.nitems() * f.m.itemsize)));
  growable_buffer_init(f.gb, f.alloc);
  f.st = growable_buffer_storage(f.gb);
  f.a.auto_commit = !r.chance(30);
  if (r.chance(25)) {
    REQUIRE_OK(array_create(f.a, array_target_contiguous(f.st), f.alloc, p, array_fill_zeros()));
  } else {
    fill_random(r, f.m.data.data(), f.m.data.n, r.chance(50));
    REQUIRE_OK(array_create(f.a, array_target_contiguous(f.st), f.alloc, p, array_fill_buffer(f.m.data.view())));
  }
}

void check_equal(test::context& t, array& a, const model& m) {
  const array_layout& l = array_layout_get(a);
  REQUIRE_EQ(l.ndim, m.ndim);
  for (int d = 0; d < m.ndim; ++d) REQUIRE_EQ(l.shape[d], m.shape[d]);
  buf got;
  REQUIRE(got.make(static_cast<size_t>(m.nitems() * m.itemsize)));
  REQUIRE_OK(array_read(a, got.mut()));
  CHECK(std::memcmp(got.data(), m.data.data(), got.n) == 0);
}

// Commits (when auto-commit is off), closes, reopens from the buffer and compares; leaves the array open writable.
void check_reopened(test::context& t, fixture& f) {
  if (!f.a.auto_commit) REQUIRE_OK(array_commit(f.a));
  REQUIRE_OK(array_close(f.a));
  array_open_options o;
  o.frame.writable = true;
  REQUIRE_OK(array_open(f.a, f.st, f.alloc, o));
  check_equal(t, f.a, f.m);
}

// The code a slice write on a gets (a read-only array: every write must get the same).
errc slice_write_code(array& a) {
  const int64_t zero[kMaxDims] = {};
  uint8_t item[8] = {};
  return array_slice_write(a, zero, zero, bytes_view(item, 0)).code;
}

// ---- Orthogonal writes ---------------------------------------------------------------------------------------

struct selection {
  int64_t idx[kMaxDims][6] = {};
  int64_t counts[kMaxDims] = {};
  const int64_t* ptrs[kMaxDims] = {};
  int64_t nitems = 1;
};

void selection_random(test::rng& r, const model& m, selection& s) {
  s.nitems = 1;
  for (int d = 0; d < m.ndim; ++d) {
    s.counts[d] = r.chance(5) ? 0 : r.range(1, 6);
    for (int64_t k = 0; k < s.counts[d]; ++k) s.idx[d][k] = r.range(0, m.shape[d] - 1);
    if (s.counts[d] > 1 && r.chance(50)) s.idx[d][s.counts[d] - 1] = s.idx[d][0];  // a repeat
    s.ptrs[d] = s.idx[d];
    s.nitems *= s.counts[d];
  }
}

// Applies the selection's items to the model one by one, in src's C order (so a repeated index keeps the last).
void model_orthogonal_write(model& m, const selection& s, const uint8_t* src) {
  if (s.nitems == 0) return;
  int64_t k[kMaxDims] = {};
  for (int64_t o = 0; o < s.nitems; ++o) {
    int64_t at = 0;
    for (int d = 0; d < m.ndim; ++d) at = at * m.shape[d] + s.idx[d][k[d]];
    std::memcpy(m.data.data() + at * m.itemsize, src + o * m.itemsize, static_cast<size_t>(m.itemsize));
    for (int d = m.ndim - 1; d >= 0; --d) {
      if (++k[d] < s.counts[d]) break;
      k[d] = 0;
    }
  }
}

TESSERA_TEST(array_ops, orthogonal_write_model) {
  for (uint64_t seed = 1; seed <= 60 && t.failures == 0; ++seed) {
    test::rng r(seed * 7919);
    fixture f;
    fixture_make(t, r, f, static_cast<int>(r.range(1, 4)), 11);
    if (t.failures != 0) return;
    for (int step = 0; step < 3; ++step) {
      selection s;
      selection_random(r, f.m, s);
      buf src;
      REQUIRE(src.make(static_cast<size_t>(s.nitems * f.m.itemsize)));
      fill_random(r, src.data(), src.n, false);
      REQUIRE_OK(array_orthogonal_write(f.a, s.ptrs, s.counts, src.view()));
      model_orthogonal_write(f.m, s, src.data());
      check_equal(t, f.a, f.m);
      // Read back through the orthogonal read when no index repeats: the very items written.
      bool repeats = false;
      for (int d = 0; d < f.m.ndim; ++d)
        for (int64_t i = 0; i < s.counts[d]; ++i)
          for (int64_t j = 0; j < i; ++j) repeats |= s.idx[d][i] == s.idx[d][j];
      if (!repeats && s.nitems > 0) {
        buf back;
        REQUIRE(back.make(src.n));
        REQUIRE_OK(array_orthogonal_read(f.a, s.ptrs, s.counts, back.mut()));
        CHECK(std::memcmp(back.data(), src.data(), src.n) == 0);
      }
    }
    check_reopened(t, f);
    REQUIRE_OK(array_close(f.a));
  }
}

TESSERA_TEST(array_ops, orthogonal_write_refusals) {
  test::rng r(42);
  fixture f;
  fixture_make(t, r, f, 3, 9);
  if (t.failures != 0) return;
  f.a.auto_commit = true;
  selection s;
  for (int d = 0; d < 3; ++d) {
    s.counts[d] = 2;
    s.idx[d][0] = 0;
    s.idx[d][1] = f.m.shape[d] - 1;
    s.ptrs[d] = s.idx[d];
  }
  uint8_t src[8 * 8] = {};
  const bytes_view whole(src, static_cast<size_t>(8 * f.m.itemsize));
  // Out of range (past the end, negative), src too small, a negative count, null indices: nothing changes.
  s.idx[1][1] = f.m.shape[1];
  CHECK_ERR(array_orthogonal_write(f.a, s.ptrs, s.counts, whole), errc::out_of_range);
  s.idx[1][1] = -1;
  CHECK_ERR(array_orthogonal_write(f.a, s.ptrs, s.counts, whole), errc::out_of_range);
  s.idx[1][1] = f.m.shape[1] - 1;
  CHECK_ERR(array_orthogonal_write(f.a, s.ptrs, s.counts, bytes_view(src, whole.size() - 1)), errc::buffer_too_small);
  s.counts[2] = -1;
  CHECK_ERR(array_orthogonal_write(f.a, s.ptrs, s.counts, whole), errc::invalid_argument);
  s.counts[2] = 2;
  s.ptrs[0] = nullptr;
  CHECK_ERR(array_orthogonal_write(f.a, s.ptrs, s.counts, whole), errc::invalid_argument);
  s.ptrs[0] = s.idx[0];
  CHECK(!array_dirty(f.a));
  check_equal(t, f.a, f.m);
  // An index listed twice takes the item listed last.
  int64_t rep[3][3] = {{0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
  const int64_t* rp[3] = {rep[0], rep[1], rep[2]};
  const int64_t counts[3] = {1, 3, 1};
  uint8_t items[3 * 8];
  for (size_t i = 0; i < sizeof items; ++i) items[i] = static_cast<uint8_t>(i + 1);
  if (f.m.shape[1] > 1) {
    REQUIRE_OK(array_orthogonal_write(f.a, rp, counts, bytes_view(items, static_cast<size_t>(3 * f.m.itemsize))));
    const int64_t at[3] = {0, 1, 0};
    uint8_t got[8] = {};
    REQUIRE_OK(array_element_read(f.a, at, bytes_mut(got, sizeof got)));
    CHECK(std::memcmp(got, items + 2 * f.m.itemsize, static_cast<size_t>(f.m.itemsize)) == 0);
  }
  REQUIRE_OK(array_close(f.a));
  // Read-only: refused as a slice write is.
  REQUIRE_OK(array_open(f.a, f.st, f.alloc));
  const errc code = slice_write_code(f.a);
  CHECK(code != errc::ok);
  CHECK_ERR(array_orthogonal_write(f.a, s.ptrs, s.counts, whole), code);
  REQUIRE_OK(array_close(f.a));
  growable_buffer_release(f.gb);
  CHECK(!f.counting.leaked());
}

TESSERA_TEST(array_ops, orthogonal_write_ndim0) {
  test::counting_allocator counting;
  const allocator alloc = counting.get();
  growable_buffer gb;
  growable_buffer_init(gb, alloc);
  const storage st = growable_buffer_storage(gb);
  array_params p;
  p.dtype = str("<i4");
  array a;
  REQUIRE_OK(array_create(a, array_target_contiguous(st), alloc, p, array_fill_zeros()));
  const int32_t v = -123456;
  CHECK_ERR(array_orthogonal_write(a, nullptr, nullptr, bytes_view(reinterpret_cast<const uint8_t*>(&v), 3)),
            errc::buffer_too_small);
  REQUIRE_OK(array_orthogonal_write(a, nullptr, nullptr, bytes_view(reinterpret_cast<const uint8_t*>(&v), 4)));
  int32_t got = 0;
  REQUIRE_OK(array_read(a, bytes_mut(reinterpret_cast<uint8_t*>(&got), 4)));
  CHECK_EQ(got, v);
  REQUIRE_OK(array_close(a));
}

// ---- Slices into and from a larger buffer --------------------------------------------------------------------

TESSERA_TEST(array_ops, slice_buffer_model) {
  for (uint64_t seed = 1; seed <= 60 && t.failures == 0; ++seed) {
    test::rng r(seed * 104729);
    fixture f;
    fixture_make(t, r, f, static_cast<int>(r.range(0, 3)), 13);
    if (t.failures != 0) return;
    const int n = f.m.ndim;
    const int64_t is = f.m.itemsize;
    for (int step = 0; step < 4; ++step) {
      int64_t start[kMaxDims] = {}, stop[kMaxDims] = {}, ext[kMaxDims] = {};
      int64_t bshape[kMaxDims] = {}, bstart[kMaxDims] = {};
      const bool corner = r.chance(25);
      for (int d = 0; d < n; ++d) {
        start[d] = r.range(0, f.m.shape[d]);
        stop[d] = r.range(start[d], f.m.shape[d]);
        ext[d] = stop[d] - start[d];
        bstart[d] = corner ? 0 : r.range(0, 3);
        bshape[d] = bstart[d] + ext[d] + r.range(0, 3);
      }
      buf got, want;
      REQUIRE(got.make(static_cast<size_t>(prod(n, bshape) * is)));
      REQUIRE(want.make(got.n));
      std::memset(got.data(), 0xA5, got.n);
      std::memset(want.data(), 0xA5, want.n);
      box_copy(n, is, f.m.data.data(), f.m.shape, start, want.data(), bshape, bstart, ext);
      REQUIRE_OK(array_slice_read_into(f.a, start, stop, got.mut(), bshape, corner ? nullptr : bstart));
      CHECK(std::memcmp(got.data(), want.data(), got.n) == 0);

      fill_random(r, got.data(), got.n, r.chance(30));
      REQUIRE_OK(array_slice_write_from(f.a, start, stop, got.view(), bshape, corner ? nullptr : bstart));
      box_copy(n, is, got.data(), bshape, bstart, f.m.data.data(), f.m.shape, start, ext);
      check_equal(t, f.a, f.m);
    }
    check_reopened(t, f);
    REQUIRE_OK(array_close(f.a));
  }
}

TESSERA_TEST(array_ops, slice_buffer_refusals) {
  test::rng r(7);
  fixture f;
  fixture_make(t, r, f, 2, 12);
  if (t.failures != 0) return;
  f.a.auto_commit = true;
  const int64_t is = f.m.itemsize;
  const int64_t start[2] = {0, 0};
  const int64_t stop[2] = {f.m.shape[0], 1};
  int64_t bshape[2] = {f.m.shape[0] + 1, 2};
  int64_t bstart[2] = {1, 1};
  buf b;
  REQUIRE(b.make(static_cast<size_t>(prod(2, bshape) * is)));
  REQUIRE_OK(array_slice_write_from(f.a, start, stop, b.view(), bshape, bstart));  // the box just fits
  const int64_t zero[2] = {};
  box_copy(2, is, b.data(), bshape, bstart, f.m.data.data(), f.m.shape, zero, stop);
  // The box past the buffer's edge (each side), a short buffer, negative and overflowing shapes, a slice
  // outside the array: refused by read and write alike, nothing changes.
  bstart[0] = 2;
  CHECK_ERR(array_slice_read_into(f.a, start, stop, b.mut(), bshape, bstart), errc::out_of_range);
  CHECK_ERR(array_slice_write_from(f.a, start, stop, b.view(), bshape, bstart), errc::out_of_range);
  bstart[0] = -1;
  CHECK_ERR(array_slice_write_from(f.a, start, stop, b.view(), bshape, bstart), errc::out_of_range);
  bstart[0] = 1;
  CHECK_ERR(array_slice_read_into(f.a, start, stop, bytes_mut(b.data(), b.n - 1), bshape, bstart),
            errc::buffer_too_small);
  CHECK_ERR(array_slice_write_from(f.a, start, stop, bytes_view(b.data(), b.n - 1), bshape, bstart),
            errc::buffer_too_small);
  bshape[1] = -2;
  CHECK_ERR(array_slice_write_from(f.a, start, stop, b.view(), bshape, bstart), errc::invalid_argument);
  bshape[1] = INT64_MAX;
  CHECK_ERR(array_slice_read_into(f.a, start, stop, b.mut(), bshape, bstart), errc::overflow);
  bshape[1] = 2;
  const int64_t past[2] = {f.m.shape[0] + 1, 1};
  CHECK_ERR(array_slice_read_into(f.a, start, past, b.mut(), bshape, bstart), errc::out_of_range);
  CHECK_ERR(array_slice_write_from(f.a, start, past, b.view(), bshape, bstart), errc::out_of_range);
  CHECK(!array_dirty(f.a));
  check_equal(t, f.a, f.m);
  REQUIRE_OK(array_close(f.a));
  REQUIRE_OK(array_open(f.a, f.st, f.alloc));
  check_equal(t, f.a, f.m);
  const errc code = slice_write_code(f.a);
  CHECK(code != errc::ok);
  CHECK_ERR(array_slice_write_from(f.a, start, stop, b.view(), bshape, bstart), code);
  REQUIRE_OK(array_close(f.a));
  growable_buffer_release(f.gb);
  CHECK(!f.counting.leaked());
}

// ---- Resizing at a position ----------------------------------------------------------------------------------

// The model after resize_at: per dimension, a new coordinate maps to an old one or to a new (zero) item.
void model_resize_at(model& m, const int64_t* new_shape, const int64_t* start) {
  model n;
  n.ndim = m.ndim;
  n.itemsize = m.itemsize;
  for (int d = 0; d < m.ndim; ++d) n.shape[d] = new_shape[d];
  (void)n.data.make(static_cast<size_t>(n.nitems() * n.itemsize));
  int64_t c[kMaxDims] = {};
  for (int64_t o = 0; o < n.nitems(); ++o) {
    bool fresh = false;
    int64_t at = 0;
    for (int d = 0; d < m.ndim; ++d) {
      int64_t oc = c[d];
      if (new_shape[d] > m.shape[d]) {
        const int64_t k = new_shape[d] - m.shape[d];
        if (c[d] >= start[d] && c[d] < start[d] + k) fresh = true;
        else if (c[d] >= start[d] + k) oc = c[d] - k;
      } else if (new_shape[d] < m.shape[d] && c[d] >= start[d]) {
        oc = c[d] + (m.shape[d] - new_shape[d]);
      }
      at = at * m.shape[d] + oc;
    }
    if (!fresh) std::memcpy(n.data.data() + o * m.itemsize, m.data.data() + at * m.itemsize, static_cast<size_t>(m.itemsize));
    for (int d = m.ndim - 1; d >= 0; --d) {
      if (++c[d] < n.shape[d]) break;
      c[d] = 0;
    }
  }
  for (int d = 0; d < m.ndim; ++d) m.shape[d] = new_shape[d];
  m.data = static_cast<buf&&>(n.data);
}

TESSERA_TEST(array_ops, resize_at_model) {
  for (uint64_t seed = 1; seed <= 60 && t.failures == 0; ++seed) {
    test::rng r(seed * 15485863);
    fixture f;
    fixture_make(t, r, f, static_cast<int>(r.range(1, 3)), 12);
    if (t.failures != 0) return;
    const array_layout& l = array_layout_get(f.a);
    for (int step = 0; step < 3; ++step) {
      int64_t ns[kMaxDims] = {}, start[kMaxDims] = {};
      for (int d = 0; d < f.m.ndim; ++d) {
        const int64_t o = f.m.shape[d];
        const int64_t c = l.chunkshape[d];
        ns[d] = o;
        start[d] = r.range(0, o);  // any start where the extent stays
        switch (r.range(0, 4)) {
          case 0: break;
          case 1: ns[d] = o + r.range(1, 5); start[d] = o; break;                 // grow at the end
          case 2: ns[d] = r.range(0, o); start[d] = ns[d]; break;                // shrink at the end
          case 3:                                                                 // grow inside
            if (o > 0 && c > 0) {
              start[d] = c * r.range(0, (o - 1) / c);
              ns[d] = o + c * r.range(1, 2);
            }
            break;
          default:                                                                // shrink inside
            if (c > 0 && o / c > 0) {
              const int64_t chunks = o / c;  // whole chunks
              const int64_t first = r.range(0, chunks - 1);
              start[d] = first * c;
              ns[d] = o - c * r.range(1, chunks - first);
            }
            break;
        }
      }
      if (prod(f.m.ndim, ns) > 4000) continue;
      REQUIRE_OK(array_resize_at(f.a, ns, start));
      model_resize_at(f.m, ns, start);
      check_equal(t, f.a, f.m);
    }
    check_reopened(t, f);
    REQUIRE_OK(array_close(f.a));
  }
}

TESSERA_TEST(array_ops, resize_at_refusals) {
  test::counting_allocator counting;
  const allocator alloc = counting.get();
  growable_buffer gb;
  growable_buffer_init(gb, alloc);
  const storage st = growable_buffer_storage(gb);
  model m;
  m.ndim = 3;
  m.itemsize = 2;
  m.shape[0] = 8;
  m.shape[1] = 6;
  m.shape[2] = 5;
  REQUIRE(m.data.make(static_cast<size_t>(m.nitems() * m.itemsize)));
  test::rng r(3);
  fill_random(r, m.data.data(), m.data.n, false);
  array_params p;
  p.ndim = 3;
  const int32_t cs[3] = {4, 3, 2};
  for (int d = 0; d < 3; ++d) {
    p.shape[d] = m.shape[d];
    p.chunkshape[d] = cs[d];
    p.blockshape[d] = 1 + cs[d] / 2;
  }
  p.dtype = str("<i2");
  array a;
  REQUIRE_OK(array_create(a, array_target_contiguous(st), alloc, p, array_fill_buffer(m.data.view())));
  int64_t ns[3] = {12, 6, 5};
  int64_t start[3] = {2, 0, 0};
  CHECK_ERR(array_resize_at(a, ns, start), errc::invalid_argument);  // inside, not on a chunk boundary
  ns[0] = 10;
  start[0] = 4;
  CHECK_ERR(array_resize_at(a, ns, start), errc::invalid_argument);  // a change not a chunk multiple
  ns[0] = 8;
  ns[1] = 3;
  start[1] = 4;
  CHECK_ERR(array_resize_at(a, ns, start), errc::out_of_range);  // items removed past the end
  ns[1] = 6;
  start[2] = 6;
  CHECK_ERR(array_resize_at(a, ns, start), errc::out_of_range);  // start past the extent
  start[2] = -1;
  CHECK_ERR(array_resize_at(a, ns, start), errc::out_of_range);
  ns[2] = -1;
  start[2] = 0;
  CHECK_ERR(array_resize_at(a, ns, start), errc::invalid_argument);
  CHECK(!array_dirty(a));
  check_equal(t, a, m);
  // A shrink and a grow in one call: rows 0..3 out, 3 zero columns before column 3, 2 more planes at the end.
  const int64_t ns2[3] = {4, 9, 7};
  const int64_t start2[3] = {0, 3, 5};
  REQUIRE_OK(array_resize_at(a, ns2, start2));
  model_resize_at(m, ns2, start2);
  check_equal(t, a, m);
  // start null: array_resize.
  const int64_t ns3[3] = {5, 8, 3};
  REQUIRE_OK(array_resize_at(a, ns3, nullptr));
  const int64_t ends[3] = {4, 8, 3};
  model_resize_at(m, ns3, ends);
  check_equal(t, a, m);
  REQUIRE_OK(array_close(a));
  REQUIRE_OK(array_open(a, st, alloc));
  check_equal(t, a, m);
  const errc code = slice_write_code(a);
  CHECK(code != errc::ok);
  CHECK_ERR(array_resize_at(a, ns2, start2), code);
  REQUIRE_OK(array_close(a));

  // ndim 0: nothing to resize.
  array_params q;
  q.dtype = str("<i2");
  REQUIRE_OK(array_create(a, array_target_contiguous(st), alloc, q, array_fill_zeros()));
  REQUIRE_OK(array_resize_at(a, nullptr, nullptr));
  REQUIRE_OK(array_close(a));
}

}  // namespace
