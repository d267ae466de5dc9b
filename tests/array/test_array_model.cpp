// SPDX-License-Identifier: BSD-3-Clause
// Every array operation against a plain C-order model, on random geometries (ndim 0..8, zero extents, partial
// edge chunks and blocks, chunks larger than the shape), random item sizes, codecs and filters, in contiguous
// frames (durable or not) and sparse frames in memory. After every change the whole array, random slices,
// elements and orthogonal selections must equal the model; reopening the storage must give the same array.
#include <cstdint>
#include <cstring>
#include <utility>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

namespace {

struct dtype_choice {
  const char* dtype;
  int64_t itemsize;
};
const dtype_choice kDtypes[] = {{"|u1", 1}, {"<i2", 2}, {"<f4", 4}, {"<f8", 8}, {"|V3", 3}, {"<c16", 16}, {"<i4", 4}};

struct model {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t itemsize = 1;
  buf data;
  int64_t nitems() const noexcept { return prod(ndim, shape); }
};

// Where an array lives during a case.
struct home {
  growable_buffer gb;
  storage st{};
  memory_directory dir;
  storage_directory sdir{};
  bool sparse = false;
  bool durable = true;
  array_target target() noexcept {
    return sparse ? array_target_sparse(sdir) : array_target_contiguous(st, durable);
  }
};

void home_init(test::context& t, home& h, const allocator& alloc, bool sparse, bool durable) {
  h.sparse = sparse;
  h.durable = durable;
  if (sparse) {
    REQUIRE_OK(memory_directory_init(h.dir, alloc, 4100));
    h.sdir = memory_directory_interface(h.dir);
  } else {
    growable_buffer_init(h.gb, alloc);
    h.st = growable_buffer_storage(h.gb);
  }
}

status home_open(home& h, array& a, const allocator& alloc, bool writable) {
  array_open_options o;
  o.frame.writable = writable;
  o.frame.durable = h.durable;
  return h.sparse ? array_open_sparse(a, h.sdir, alloc, o) : array_open(a, h.st, alloc, o);
}

void random_shape(test::rng& r, int ndim, int64_t* shape, int64_t max_items) {
  for (int i = 0; i < ndim; ++i) {
    const int64_t hi = ndim <= 1 ? 300 : ndim == 2 ? 40 : ndim == 3 ? 14 : 5;
    shape[i] = r.chance(4) ? 0 : r.range(1, hi);
  }
  while (prod(ndim, shape) > max_items) {
    const int d = static_cast<int>(r.range(0, ndim - 1));
    if (shape[d] > 1) --shape[d];
  }
}

void random_params(test::rng& r, array_params& p, const model& m, const dtype_choice& dt) {
  p = array_params{};
  p.ndim = m.ndim;
  for (int i = 0; i < m.ndim; ++i) p.shape[i] = m.shape[i];
  if (!r.chance(12)) {
    int64_t chunk[kMaxDims] = {};
    for (int i = 0; i < m.ndim; ++i) chunk[i] = r.range(1, m.shape[i] + 2);
    while (prod(m.ndim, chunk) > 600) {
      const int d = static_cast<int>(r.range(0, m.ndim - 1));
      if (chunk[d] > 1) --chunk[d];
    }
    for (int i = 0; i < m.ndim; ++i) {
      p.chunkshape[i] = static_cast<int32_t>(chunk[i]);
      p.blockshape[i] = static_cast<int32_t>(r.range(1, chunk[i]));
    }
  } else {
    p.partition.block_bytes = 256;  // keep automatic shapes small enough for the test
    p.partition.min_chunk_bytes = 1024;
  }
  p.dtype = str(dt.dtype);
  p.compressor = codec_available(codec::lz4) && r.chance(40) ? codec::lz4 : codec::blosclz;
  p.clevel = static_cast<int>(r.range(0, 9));
  for (int i = 0; i < kChunkMaxFilters; ++i) p.filters[i] = 0;
  switch (r.range(0, 3)) {
    case 0: p.filters[5] = static_cast<uint8_t>(filter_id::shuffle); break;
    case 1: p.filters[5] = static_cast<uint8_t>(filter_id::bitshuffle); break;
    case 2:
      p.filters[4] = static_cast<uint8_t>(filter_id::delta);
      p.filters[5] = static_cast<uint8_t>(filter_id::shuffle);
      break;
    default: break;
  }
}

// Expected bytes of [start, stop) from the model.
void model_slice(const model& m, const int64_t* start, const int64_t* stop, uint8_t* out) {
  int64_t ext[kMaxDims] = {};
  const int64_t zero[kMaxDims] = {};
  for (int i = 0; i < m.ndim; ++i) ext[i] = stop[i] - start[i];
  box_copy(m.ndim, m.itemsize, m.data.data(), m.shape, start, out, ext, zero, ext);
}

void check_whole(test::context& t, array& a, const model& m) {
  const array_layout& l = array_layout_get(a);
  REQUIRE_EQ(l.ndim, m.ndim);
  for (int i = 0; i < m.ndim; ++i) REQUIRE_EQ(l.shape[i], m.shape[i]);
  buf got;
  REQUIRE(got.make(static_cast<size_t>(m.nitems() * m.itemsize)));
  REQUIRE_OK(array_read(a, got.mut()));
  CHECK(std::memcmp(got.data(), m.data.data(), got.n) == 0);
}

void random_box(test::rng& r, const model& m, int64_t* start, int64_t* stop) {
  for (int i = 0; i < m.ndim; ++i) {
    start[i] = r.range(0, m.shape[i]);
    stop[i] = r.range(start[i], m.shape[i]);
    if (r.chance(30) && m.shape[i] > 0) {  // mostly non-empty slices
      start[i] = r.range(0, m.shape[i] - 1);
      stop[i] = r.range(start[i] + 1, m.shape[i]);
    }
  }
}

void check_reads(test::context& t, test::rng& r, array& a, const model& m) {
  for (int k = 0; k < 4; ++k) {
    int64_t start[kMaxDims] = {};
    int64_t stop[kMaxDims] = {};
    random_box(r, m, start, stop);
    int64_t ext[kMaxDims] = {};
    for (int i = 0; i < m.ndim; ++i) ext[i] = stop[i] - start[i];
    const size_t n = static_cast<size_t>(prod(m.ndim, ext) * m.itemsize);
    buf got, want;
    REQUIRE(got.make(n));
    REQUIRE(want.make(n));
    REQUIRE_OK(array_slice_read(a, start, stop, got.mut()));
    model_slice(m, start, stop, want.data());
    CHECK(std::memcmp(got.data(), want.data(), n) == 0);
  }
  if (m.nitems() > 0) {
    int64_t c[kMaxDims] = {};
    for (int i = 0; i < m.ndim; ++i) c[i] = r.range(0, m.shape[i] - 1);
    uint8_t item[16];
    REQUIRE_OK(array_element_read(a, c, bytes_mut(item, sizeof item)));
    int64_t off = 0;
    for (int i = 0; i < m.ndim; ++i) off = off * m.shape[i] + c[i];
    CHECK(std::memcmp(item, m.data.data() + off * m.itemsize, static_cast<size_t>(m.itemsize)) == 0);
    // An orthogonal selection with repeats and any order.
    int64_t idx[kMaxDims][4] = {};
    int64_t counts[kMaxDims] = {};
    const int64_t* ptrs[kMaxDims] = {};
    int64_t nsel = 1;
    for (int i = 0; i < m.ndim; ++i) {
      counts[i] = r.range(1, 4);
      for (int64_t j = 0; j < counts[i]; ++j) idx[i][j] = r.range(0, m.shape[i] - 1);
      ptrs[i] = idx[i];
      nsel *= counts[i];
    }
    buf got, want;
    REQUIRE(got.make(static_cast<size_t>(nsel * m.itemsize)));
    REQUIRE(want.make(static_cast<size_t>(nsel * m.itemsize)));
    REQUIRE_OK(array_orthogonal_read(a, ptrs, counts, got.mut()));
    int64_t j[kMaxDims] = {};
    for (int64_t o = 0; o < nsel; ++o) {
      int64_t src = 0;
      for (int i = 0; i < m.ndim; ++i) src = src * m.shape[i] + idx[i][j[i]];
      std::memcpy(want.data() + o * m.itemsize, m.data.data() + src * m.itemsize, static_cast<size_t>(m.itemsize));
      for (int i = m.ndim - 1; i >= 0; --i) {
        if (++j[i] < counts[i]) break;
        j[i] = 0;
      }
    }
    CHECK(std::memcmp(got.data(), want.data(), got.n) == 0);
  }
}

// The model after a resize: the overlap kept, new items zero.
void model_resize(model& m, const int64_t* new_shape) {
  model n;
  n.ndim = m.ndim;
  n.itemsize = m.itemsize;
  int64_t ext[kMaxDims] = {};
  const int64_t zero[kMaxDims] = {};
  for (int i = 0; i < m.ndim; ++i) {
    n.shape[i] = new_shape[i];
    ext[i] = new_shape[i] < m.shape[i] ? new_shape[i] : m.shape[i];
  }
  (void)n.data.make(static_cast<size_t>(n.nitems() * n.itemsize));
  box_copy(m.ndim, m.itemsize, m.data.data(), m.shape, zero, n.data.data(), n.shape, zero, ext);
  m.ndim = n.ndim;
  for (int i = 0; i < m.ndim; ++i) m.shape[i] = n.shape[i];
  m.data = std::move(n.data);
}

// Inserts `src` (count items along axis at pos) into the model.
void model_insert(model& m, int axis, int64_t pos, int64_t count, const uint8_t* src) {
  model n;
  n.ndim = m.ndim;
  n.itemsize = m.itemsize;
  for (int i = 0; i < m.ndim; ++i) n.shape[i] = m.shape[i];
  n.shape[axis] += count;
  (void)n.data.make(static_cast<size_t>(n.nitems() * n.itemsize));
  int64_t ext[kMaxDims] = {};
  int64_t a0[kMaxDims] = {};
  int64_t b0[kMaxDims] = {};
  int64_t sshape[kMaxDims] = {};
  for (int i = 0; i < m.ndim; ++i) ext[i] = sshape[i] = m.shape[i];
  sshape[axis] = count;
  ext[axis] = pos;
  box_copy(m.ndim, m.itemsize, m.data.data(), m.shape, a0, n.data.data(), n.shape, b0, ext);
  ext[axis] = count;
  b0[axis] = pos;
  box_copy(m.ndim, m.itemsize, src, sshape, a0, n.data.data(), n.shape, b0, ext);
  ext[axis] = m.shape[axis] - pos;
  a0[axis] = pos;
  b0[axis] = pos + count;
  box_copy(m.ndim, m.itemsize, m.data.data(), m.shape, a0, n.data.data(), n.shape, b0, ext);
  m.shape[axis] = n.shape[axis];
  m.data = std::move(n.data);
}

void model_delete(model& m, int axis, int64_t pos, int64_t count) {
  model n;
  n.ndim = m.ndim;
  n.itemsize = m.itemsize;
  for (int i = 0; i < m.ndim; ++i) n.shape[i] = m.shape[i];
  n.shape[axis] -= count;
  (void)n.data.make(static_cast<size_t>(n.nitems() * n.itemsize));
  int64_t ext[kMaxDims] = {};
  int64_t a0[kMaxDims] = {};
  int64_t b0[kMaxDims] = {};
  for (int i = 0; i < m.ndim; ++i) ext[i] = m.shape[i];
  ext[axis] = pos;
  box_copy(m.ndim, m.itemsize, m.data.data(), m.shape, a0, n.data.data(), n.shape, b0, ext);
  ext[axis] = m.shape[axis] - pos - count;
  a0[axis] = pos + count;
  b0[axis] = pos;
  box_copy(m.ndim, m.itemsize, m.data.data(), m.shape, a0, n.data.data(), n.shape, b0, ext);
  m.shape[axis] = n.shape[axis];
  m.data = std::move(n.data);
}

// One random change applied to both (and, for inserts, a misaligned insert the array must refuse).
void random_change(test::context& t, test::rng& r, array& a, model& m) {
  const array_layout& l = array_layout_get(a);
  const int op = static_cast<int>(r.range(0, 5));
  if (op <= 1 || m.ndim == 0) {  // slice write (element write for ndim 0 or sometimes)
    int64_t start[kMaxDims] = {};
    int64_t stop[kMaxDims] = {};
    random_box(r, m, start, stop);
    int64_t ext[kMaxDims] = {};
    for (int i = 0; i < m.ndim; ++i) ext[i] = stop[i] - start[i];
    buf src;
    REQUIRE(src.make(static_cast<size_t>(prod(m.ndim, ext) * m.itemsize)));
    fill_random(r, src.data(), src.n, r.chance(50));
    if (op == 1 && prod(m.ndim, ext) == 1) {
      REQUIRE_OK(array_element_write(a, start, src.view()));
    } else {
      REQUIRE_OK(array_slice_write(a, start, stop, src.view()));
    }
    const int64_t zero[kMaxDims] = {};
    box_copy(m.ndim, m.itemsize, src.data(), ext, zero, m.data.data(), m.shape, start, ext);
    return;
  }
  if (op == 2) {  // resize
    int64_t ns[kMaxDims] = {};
    for (int i = 0; i < m.ndim; ++i) ns[i] = m.shape[i];
    const int d = static_cast<int>(r.range(0, m.ndim - 1));
    ns[d] = r.range(m.shape[d] > 3 ? m.shape[d] - 3 : 0, m.shape[d] + 4);
    if (l.chunkshape[d] == 0 && ns[d] > 0) {
      CHECK_ERR(array_resize(a, ns), errc::invalid_argument);  // a zero chunk extent cannot grow
      return;
    }
    while (prod(m.ndim, ns) > 3000) ns[d] = ns[d] > 0 ? ns[d] - 1 : 0;
    REQUIRE_OK(array_resize(a, ns));
    model_resize(m, ns);
    return;
  }
  const int axis = static_cast<int>(r.range(0, m.ndim - 1));
  const int64_t c = l.chunkshape[axis];
  if (c == 0) return;
  if (op == 3 || op == 4) {  // append / insert
    int64_t pos = m.shape[axis];
    int64_t count = r.range(1, 3);
    const bool middle = op == 4 && m.shape[axis] >= c;
    if (middle) {
      pos = c * r.range(0, (m.shape[axis] - 1) / c);
      count = c * r.range(1, 2);
    }
    int64_t other = prod(m.ndim, m.shape) / (m.shape[axis] == 0 ? 1 : m.shape[axis]);
    if (m.shape[axis] == 0) {
      other = 1;
      for (int i = 0; i < m.ndim; ++i)
        if (i != axis) other *= m.shape[i];
    }
    if ((m.nitems() + other * count) > 3000) return;
    buf src;
    REQUIRE(src.make(static_cast<size_t>(other * count * m.itemsize)));
    fill_random(r, src.data(), src.n, r.chance(50));
    if (op == 3) {
      REQUIRE_OK(array_append(a, axis, count, src.view()));
    } else {
      REQUIRE_OK(array_insert(a, axis, pos, count, src.view()));
    }
    model_insert(m, axis, pos, count, src.data());
    // A misaligned insert inside the array is refused.
    if (c > 1 && m.shape[axis] > 1) {
      buf one;
      REQUIRE(one.make(static_cast<size_t>(other * m.itemsize)));
      CHECK_ERR(array_insert(a, axis, 1, 1, one.view()), errc::invalid_argument);
    }
    return;
  }
  // delete: at the end (any count) or aligned inside
  if (m.shape[axis] == 0) return;
  if (r.chance(50) || m.shape[axis] <= c) {
    const int64_t count = r.range(1, m.shape[axis]);
    REQUIRE_OK(array_delete(a, axis, m.shape[axis] - count, count));
    model_delete(m, axis, m.shape[axis] - count, count);
  } else {
    const int64_t nfull = m.shape[axis] / c;  // whole chunks before the end
    const int64_t p = r.range(0, nfull - 1);
    const int64_t k = r.range(1, nfull - p);
    REQUIRE_OK(array_delete(a, axis, p * c, k * c));  // whole chunks (possibly reaching the end)
    model_delete(m, axis, p * c, k * c);
  }
}

void run_case(test::context& t, uint64_t seed) {
  test::rng r(seed);
  test::counting_allocator counting;
  const allocator alloc = counting.get();
  {
    model m;
    static const int kNdims[] = {0, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 7, 8};
    m.ndim = kNdims[r.range(0, sizeof kNdims / sizeof kNdims[0] - 1)];
    const dtype_choice& dt = kDtypes[r.range(0, sizeof kDtypes / sizeof kDtypes[0] - 1)];
    m.itemsize = dt.itemsize;
    random_shape(r, m.ndim, m.shape, 1500);
    REQUIRE(m.data.make(static_cast<size_t>(m.nitems() * m.itemsize)));
    array_params p;
    random_params(r, p, m, dt);

    home h;
    home_init(t, h, alloc, r.chance(20), r.chance(50));
    array a;
    a.auto_commit = !r.chance(30);
    // The initial contents.
    const int kind = static_cast<int>(r.range(0, 9));
    if (kind < 5) {
      fill_random(r, m.data.data(), m.data.n, r.chance(50));
      REQUIRE_OK(array_create(a, h.target(), alloc, p, array_fill_buffer(m.data.view())));
    } else if (kind < 7) {
      REQUIRE_OK(array_create(a, h.target(), alloc, p, kind == 5 ? array_fill_zeros() : array_fill_uninit()));
    } else if (kind < 9 || (m.itemsize != 4 && m.itemsize != 8)) {
      uint8_t v[16];
      fill_random(r, v, sizeof v, false);
      REQUIRE_OK(array_create(a, h.target(), alloc, p, array_fill_full(bytes_view(v, static_cast<size_t>(m.itemsize)))));
      for (int64_t i = 0; i < m.nitems(); ++i)
        std::memcpy(m.data.data() + i * m.itemsize, v, static_cast<size_t>(m.itemsize));
    } else {
      REQUIRE_OK(array_create(a, h.target(), alloc, p, array_fill_nans()));
      for (int64_t i = 0; i < m.nitems(); ++i) {
        uint8_t* q = m.data.data() + i * m.itemsize;
        if (m.itemsize == 4) {
          q[2] = 0xC0;
          q[3] = 0x7F;
        } else {
          q[6] = 0xF8;
          q[7] = 0x7F;
        }
      }
    }
    CHECK(std::memcmp(array_dtype(a).data(), dt.dtype, std::strlen(dt.dtype)) == 0);
    CHECK_EQ(array_itemsize(a), m.itemsize);
    check_whole(t, a, m);
    check_reads(t, r, a, m);

    for (int step = 0; step < 5 && t.failures == 0; ++step) {
      random_change(t, r, a, m);
      check_whole(t, a, m);
      check_reads(t, r, a, m);
    }
    if (!a.auto_commit) REQUIRE_OK(array_commit(a));
    REQUIRE_OK(array_close(a));

    // Reopened from its storage: the same array.
    REQUIRE_OK(home_open(h, a, alloc, true));
    check_whole(t, a, m);

    // New arrays from it.
    {
      home h2;
      home_init(t, h2, alloc, r.chance(20), true);
      array b;
      array_params q;
      random_params(r, q, m, dt);
      REQUIRE_OK(array_copy(b, h2.target(), alloc, a, &q));
      check_whole(t, b, m);
      REQUIRE_OK(array_close(b));
    }
    {
      home h2;
      home_init(t, h2, alloc, false, false);
      array b;
      REQUIRE_OK(array_save(b, h2.target(), alloc, a));
      check_whole(t, b, m);
      REQUIRE_OK(array_close(b));
    }
    if (m.ndim > 0) {
      home h2;
      home_init(t, h2, alloc, false, true);
      array b;
      int64_t start[kMaxDims] = {};
      int64_t stop[kMaxDims] = {};
      random_box(r, m, start, stop);
      REQUIRE_OK(array_slice_copy(b, h2.target(), alloc, a, start, stop));
      model s;
      s.ndim = m.ndim;
      s.itemsize = m.itemsize;
      for (int i = 0; i < m.ndim; ++i) s.shape[i] = stop[i] - start[i];
      REQUIRE(s.data.make(static_cast<size_t>(s.nitems() * s.itemsize)));
      model_slice(m, start, stop, s.data.data());
      check_whole(t, b, s);
      REQUIRE_OK(array_close(b));

      // Concatenated with itself along a random axis.
      home h3;
      home_init(t, h3, alloc, false, true);
      const int axis = static_cast<int>(r.range(0, m.ndim - 1));
      model c;
      c.ndim = m.ndim;
      c.itemsize = m.itemsize;
      for (int i = 0; i < m.ndim; ++i) c.shape[i] = m.shape[i];
      c.shape[axis] = 0;
      REQUIRE(c.data.make(0));
      model_insert(c, axis, 0, m.shape[axis], m.data.data());
      model_insert(c, axis, c.shape[axis], m.shape[axis], m.data.data());
      array q;
      REQUIRE_OK(array_concatenate(q, h3.target(), alloc, a, a, axis));
      check_whole(t, q, c);
      REQUIRE_OK(array_close(q));
    }
    if (m.ndim < kMaxDims) {
      // expand_dims then squeeze back: the same items.
      home h2, h3;
      home_init(t, h2, alloc, false, true);
      home_init(t, h3, alloc, r.chance(30), true);
      bool axes[kMaxDims] = {};
      const int pos = static_cast<int>(r.range(0, m.ndim));
      axes[pos] = true;
      array e, s;
      REQUIRE_OK(array_expand_dims(e, h2.target(), alloc, a, axes, m.ndim + 1));
      model em;
      em.ndim = m.ndim + 1;
      em.itemsize = m.itemsize;
      for (int i = 0, k = 0; i < em.ndim; ++i) em.shape[i] = axes[i] ? 1 : m.shape[k++];
      REQUIRE(em.data.make(m.data.n));
      std::memcpy(em.data.data(), m.data.data(), m.data.n);
      check_whole(t, e, em);
      REQUIRE_OK(array_squeeze(s, h3.target(), alloc, e, axes));
      check_whole(t, s, m);
      REQUIRE_OK(array_close(s));
      REQUIRE_OK(array_close(e));
    }
    REQUIRE_OK(array_close(a));
  }
  CHECK(!counting.leaked());
  CHECK_EQ(counting.mismatched_frees, 0u);
}

}  // namespace

TESSERA_TEST(array_model, random_arrays_and_operations) {
  for (uint64_t seed = 1; seed <= 250 && t.failures == 0; ++seed) run_case(t, seed * 7919);
}

TESSERA_TEST(array_model, squeeze_rechunks_when_dims_are_padded) {
  // A dimension of extent 1 whose chunk extent is 3: its stored chunks differ from the squeezed array's.
  test::counting_allocator counting;
  const allocator alloc = counting.get();
  {
    growable_buffer g1, g2;
    growable_buffer_init(g1, alloc);
    growable_buffer_init(g2, alloc);
    const storage s1 = growable_buffer_storage(g1);
    const storage s2 = growable_buffer_storage(g2);
    array_params p;
    p.ndim = 3;
    const int64_t shape[3] = {5, 1, 7};
    const int32_t chunks[3] = {2, 3, 4};
    const int32_t blocks[3] = {1, 2, 3};
    for (int i = 0; i < 3; ++i) {
      p.shape[i] = shape[i];
      p.chunkshape[i] = chunks[i];
      p.blockshape[i] = blocks[i];
    }
    p.dtype = str("<i2");
    uint8_t data[70];
    for (int i = 0; i < 70; ++i) data[i] = static_cast<uint8_t>(i * 3 + 1);
    array a, b;
    REQUIRE_OK(array_create(a, array_target_contiguous(s1), alloc, p, array_fill_buffer(bytes_view(data, 70))));
    REQUIRE_OK(array_squeeze(b, array_target_contiguous(s2), alloc, a));
    const array_layout& l = array_layout_get(b);
    REQUIRE_EQ(l.ndim, 2);
    CHECK_EQ(l.shape[0], 5);
    CHECK_EQ(l.shape[1], 7);
    CHECK_EQ(l.chunkshape[1], 4);
    uint8_t got[70];
    REQUIRE_OK(array_read(b, bytes_mut(got, 70)));
    CHECK(std::memcmp(got, data, 70) == 0);
    CHECK_ERR(array_squeeze(b, array_target_contiguous(s2), alloc, b), errc::invalid_argument);
    bool axes[3] = {true, false, false};
    array c;
    CHECK_ERR(array_squeeze(c, array_target_contiguous(s2), alloc, a, axes), errc::invalid_argument);
    (void)array_close(a);
    (void)array_close(b);
  }
  CHECK(!counting.leaked());
}

TESSERA_TEST(array_model, a_dtype_given_as_a_string_literal_is_stored_without_its_terminator) {
  test::counting_allocator counting;
  const allocator alloc = counting.get();
  {
    growable_buffer g;
    growable_buffer_init(g, alloc);
    array_params p;
    p.ndim = 1;
    p.shape[0] = 10;
    p.dtype = "<f4";  // a literal: the b2nd metalayer says "<f4", not "<f4\0"
    array a;
    REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(g)), alloc, p, array_fill_zeros()));
    const span<const char> dt = array_dtype(a);
    REQUIRE_EQ(dt.size(), 3u);
    CHECK(std::memcmp(dt.data(), "<f4", 3) == 0);
    CHECK_EQ(array_itemsize(a), 4);
    (void)array_close(a);
  }
  CHECK(!counting.leaked());
}
