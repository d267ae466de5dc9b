// SPDX-License-Identifier: BSD-3-Clause
// Every array the reference wrote (golden/b2nd) opens through the array API, from a file or a directory (POSIX
// port) and from memory (memory port), and reads exactly the bytes of its .raw: the whole array, random slices,
// elements and orthogonal selections (expected values taken from the .raw with plain loops). Where tests/data keeps
// only the .raw's SHA-256 (NAME.raw.sha256), the whole read must have that digest, and then stands for the .raw.
//
// One explained exception, filter-delta-shuffle-i4: the reference's .raw differs from the data the array
// holds in one block. The reference's b2nd_get_slice_cbuffer decodes a chunk block by block (its "compact"
// path, blosc2_getitem_bytes_ctx) when the slice needs few of its blocks (needed * blocksize * 4 <= chunksize
// for arrays on disk); its single-block decode passes the block to the delta filter as if it were block 0, so
// a block j > 0 comes out as the running XOR of (block j ^ block 0) instead of block j. In a whole-array read
// only the corner chunk of that file needs so few blocks (2 of 8), and only one of them is not block 0. Tessera
// decodes delta blocks against block 0 (as the reference's chunk decoder and its maskout path do), so it
// returns the data that was written; this test checks that the .raw differs only in that one block, and that
// there it equals the quirk's running XOR computed from Tessera's correct blocks.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/posix_directory.hpp"
#include "tessera/port/posix_file.hpp"

#include "../support/check.hpp"
#include "../support/file_load.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "../support/test_data.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

namespace {

const std::string kGolden = test::data_path("golden/b2nd/");

#define GOLDEN_CHECK(cond, what)                                                                     \
  do {                                                                                               \
    if (!(cond)) {                                                                                   \
      char text_[512];                                                                               \
      std::snprintf(text_, sizeof text_, "%s: CHECK(%s)", (what).c_str(), #cond);                    \
      ::tessera::test::report_failure(t, __FILE__, __LINE__, text_);                                 \
    }                                                                                                \
  } while (0)

struct entry {
  std::string name;
  std::string reported;
  bool sparse = false;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  std::string dtype;
};

std::string field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string w;
  while (in >> w)
    if (w.compare(0, key.size() + 1, key + "=") == 0) return w.substr(key.size() + 1);
  return "";
}

std::vector<entry> manifest() {
  std::vector<entry> out;
  std::ifstream f(kGolden + "MANIFEST.tsv");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    entry e;
    const size_t t1 = line.find('\t');
    const size_t t2 = line.find('\t', t1 + 1);
    e.name = line.substr(0, t1);
    e.reported = line.substr(t1 + 1, t2 - t1 - 1);
    const std::string params = line.substr(t2 + 1);
    e.sparse = field(params, "sparse") == "1";
    e.ndim = std::stoi(field(e.reported, "ndim"));
    std::string shape = field(e.reported, "shape");
    for (int i = 0; i < e.ndim; ++i) {
      const size_t c = shape.find(',');
      e.shape[i] = std::stoll(shape.substr(0, c));
      shape = c == std::string::npos ? "" : shape.substr(c + 1);
    }
    e.dtype = field(e.reported, "dtype");
    out.push_back(e);
  }
  return out;
}

// Checks the whole-array read against raw; returns where a difference is allowed (the delta quirk block).
void check_whole(test::context& t, array& a, const entry& e, const std::vector<uint8_t>& raw,
                 const std::string& what, std::vector<bool>& quirk_items) {
  const int64_t itemsize = array_itemsize(a);
  const array_layout& l = array_layout_get(a);
  std::vector<uint8_t> got(raw.size() + 1);
  GOLDEN_CHECK(array_read(a, bytes_mut(got.data(), raw.size())).ok(), what);
  quirk_items.assign(raw.size() / static_cast<size_t>(itemsize), false);
  const bool delta_quirk = e.name == "filter-delta-shuffle-i4";
  if (!delta_quirk) {
    GOLDEN_CHECK(raw.empty() || std::memcmp(got.data(), raw.data(), raw.size()) == 0, what);
    return;
  }
  // The items that differ: all in one block, and there the reference's single-block delta decode.
  int64_t qchunk = -1;
  int64_t qblock = -1;
  int64_t ndiff = 0;
  int64_t coords[kMaxDims] = {};
  for (int64_t i = 0; i < l.nitems; ++i) {
    if (std::memcmp(got.data() + i * itemsize, raw.data() + i * itemsize, static_cast<size_t>(itemsize)) == 0)
      continue;
    ++ndiff;
    int64_t rest = i;
    for (int d = l.ndim - 1; d >= 0; --d) {
      coords[d] = rest % l.shape[d];
      rest /= l.shape[d];
    }
    auto loc = layout_locate(l, coords);
    GOLDEN_CHECK(loc.ok(), what);
    if (qchunk < 0) {
      qchunk = loc->nchunk;
      qblock = loc->nblock;
    }
    GOLDEN_CHECK(loc->nchunk == qchunk && loc->nblock == qblock, what);
  }
  GOLDEN_CHECK(ndiff > 0 && qblock > 0, what);  // the quirk is there (and never hits block 0)
  if (qblock <= 0) return;
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  const size_t bn = static_cast<size_t>(l.block_nitems * itemsize);
  std::vector<uint8_t> b0(bn), bj(bn);
  GOLDEN_CHECK(frame_block_decode(array_frame(a), d, qchunk, 0, bytes_mut(b0.data(), bn)).ok(), what);
  GOLDEN_CHECK(frame_block_decode(array_frame(a), d, qchunk, static_cast<size_t>(qblock), bytes_mut(bj.data(), bn)).ok(),
               what);
  // Running XOR over the block's int32 items, padding included, of (block j ^ block 0).
  std::vector<uint32_t> q(static_cast<size_t>(l.block_nitems));
  uint32_t acc = 0;
  for (size_t k = 0; k < q.size(); ++k) {
    uint32_t x, y;
    std::memcpy(&x, bj.data() + k * 4, 4);
    std::memcpy(&y, b0.data() + k * 4, 4);
    acc ^= x ^ y;
    q[k] = acc;
  }
  int64_t checked = 0;
  for (int64_t off = 0; off < l.block_nitems; ++off) {
    if (layout_item_coords(l, qchunk, qblock * l.block_nitems + off, coords).ok()) {
      int64_t lin = 0;
      for (int dd = 0; dd < l.ndim; ++dd) lin = lin * l.shape[dd] + coords[dd];
      GOLDEN_CHECK(std::memcmp(raw.data() + lin * 4, &q[static_cast<size_t>(off)], 4) == 0, what);
      quirk_items[static_cast<size_t>(lin)] = true;
      ++checked;
    }
  }
  GOLDEN_CHECK(checked > 0 && checked >= ndiff, what);
}

void check_random(test::context& t, test::rng& r, array& a, const std::vector<uint8_t>& raw,
                  const std::vector<bool>& quirk, const std::string& what) {
  const array_layout& l = array_layout_get(a);
  const int64_t itemsize = array_itemsize(a);
  for (int k = 0; k < 40 && t.failures == 0; ++k) {
    int64_t start[kMaxDims] = {};
    int64_t stop[kMaxDims] = {};
    int64_t ext[kMaxDims] = {};
    for (int d = 0; d < l.ndim; ++d) {
      if (l.shape[d] == 0) continue;
      start[d] = r.range(0, l.shape[d] - 1);
      stop[d] = r.range(start[d] + 1, l.shape[d]);
      if (r.chance(20)) {
        start[d] = 0;
        stop[d] = l.shape[d];
      }
      ext[d] = stop[d] - start[d];
    }
    const int64_t n = prod(l.ndim, ext);
    std::vector<uint8_t> got(static_cast<size_t>(n * itemsize) + 1), want(static_cast<size_t>(n * itemsize) + 1);
    GOLDEN_CHECK(array_slice_read(a, start, stop, bytes_mut(got.data(), got.size() - 1)).ok(), what);
    const int64_t zero[kMaxDims] = {};
    box_copy(l.ndim, itemsize, raw.data(), l.shape, start, want.data(), ext, zero, ext);
    // Compare item by item, skipping the explained quirk block.
    int64_t idx[kMaxDims] = {};
    for (int64_t i = 0; i < n; ++i) {
      int64_t lin = 0;
      for (int d = 0; d < l.ndim; ++d) lin = lin * l.shape[d] + start[d] + idx[d];
      if (!quirk[static_cast<size_t>(lin)])
        GOLDEN_CHECK(std::memcmp(got.data() + i * itemsize, want.data() + i * itemsize, static_cast<size_t>(itemsize)) == 0,
                     what);
      for (int d = l.ndim - 1; d >= 0; --d) {
        if (++idx[d] < ext[d]) break;
        idx[d] = 0;
      }
      if (t.failures > 0) return;
    }
  }
  if (l.nitems == 0) return;
  // Elements and an orthogonal selection.
  for (int k = 0; k < 20; ++k) {
    int64_t c[kMaxDims] = {};
    int64_t lin = 0;
    for (int d = 0; d < l.ndim; ++d) {
      c[d] = r.range(0, l.shape[d] - 1);
      lin = lin * l.shape[d] + c[d];
    }
    uint8_t item[32];
    GOLDEN_CHECK(array_element_read(a, c, bytes_mut(item, sizeof item)).ok(), what);
    if (!quirk[static_cast<size_t>(lin)])
      GOLDEN_CHECK(std::memcmp(item, raw.data() + lin * itemsize, static_cast<size_t>(itemsize)) == 0, what);
  }
  int64_t idx[kMaxDims][5] = {};
  int64_t counts[kMaxDims] = {};
  const int64_t* sel[kMaxDims] = {};
  int64_t n = 1;
  for (int d = 0; d < l.ndim; ++d) {
    counts[d] = r.range(1, 5);
    for (int64_t j = 0; j < counts[d]; ++j) idx[d][j] = r.range(0, l.shape[d] - 1);
    sel[d] = idx[d];
    n *= counts[d];
  }
  std::vector<uint8_t> got(static_cast<size_t>(n * itemsize));
  GOLDEN_CHECK(array_orthogonal_read(a, sel, counts, bytes_mut(got.data(), got.size())).ok(), what);
  int64_t j[kMaxDims] = {};
  for (int64_t o = 0; o < n; ++o) {
    int64_t lin = 0;
    for (int d = 0; d < l.ndim; ++d) lin = lin * l.shape[d] + idx[d][j[d]];
    if (!quirk[static_cast<size_t>(lin)])
      GOLDEN_CHECK(std::memcmp(got.data() + o * itemsize, raw.data() + lin * itemsize, static_cast<size_t>(itemsize)) == 0,
                   what);
    for (int d = l.ndim - 1; d >= 0; --d) {
      if (++j[d] < counts[d]) break;
      j[d] = 0;
    }
  }
}

void check_array(test::context& t, array& a, const entry& e, const test::reference_output& ref,
                 const std::string& what) {
  const array_layout& l = array_layout_get(a);
  GOLDEN_CHECK(l.ndim == e.ndim, what);
  for (int d = 0; d < e.ndim; ++d) GOLDEN_CHECK(l.shape[d] == e.shape[d], what);
  const span<const char> dt = array_dtype(a);
  GOLDEN_CHECK(std::string(dt.data(), dt.size()) == e.dtype, what);
  const size_t nbytes = static_cast<size_t>(array_nbytes(a));
  std::vector<bool> quirk;
  test::rng r(std::hash<std::string>{}(what));
  if (ref.have_bytes) {
    GOLDEN_CHECK(nbytes == ref.bytes.size(), what);
    if (nbytes != ref.bytes.size()) return;
    check_whole(t, a, e, ref.bytes, what, quirk);
    check_random(t, r, a, ref.bytes, quirk, what);
    return;
  }
  // Only the .raw's digest is kept: the whole read must have it (then it is the .raw, and the slices, elements
  // and selections are checked against it). The delta quirk needs the .raw's bytes: tests/data keeps them.
  GOLDEN_CHECK(e.name != "filter-delta-shuffle-i4", what);
  std::vector<uint8_t> whole(nbytes + 1);
  const bool read = array_read(a, bytes_mut(whole.data(), nbytes)).ok();
  GOLDEN_CHECK(read, what);
  whole.resize(nbytes);
  const bool same = read && test::reference_matches(ref, whole.data(), nbytes);
  GOLDEN_CHECK(same, what + ": the SHA-256 of the whole read is the .raw's");
  if (!same) return;
  quirk.assign(nbytes / static_cast<size_t>(array_itemsize(a)), false);
  check_random(t, r, a, whole, quirk, what);
}

}  // namespace

TESSERA_TEST(array_golden, every_golden_array_reads_its_raw) {
  const std::vector<entry> entries = manifest();
  REQUIRE(entries.size() >= 30);  // a missing manifest fails
  const allocator alloc = test::system_allocator();
  for (const entry& e : entries) {
    test::reference_output raw;  // the .raw, or its SHA-256
    GOLDEN_CHECK(test::reference_load(kGolden + e.name + ".raw", raw), e.name);
    raw.bytes.reserve(1);  // a valid pointer for empty arrays
    const std::string path = kGolden + e.name + ".b2nd";
    if (!e.sparse) {
      // A file through the POSIX port.
      auto f = posix_file_open(path.c_str(), posix_open::read);
      GOLDEN_CHECK(f.ok(), e.name);
      if (!f.ok()) continue;
      const storage st = posix_file_storage(*f);
      array a;
      status s = array_open(a, st, alloc);
      GOLDEN_CHECK(s.ok(), e.name + " (file)");
      if (s.ok()) check_array(t, a, e, raw, e.name + " (file)");
      (void)array_close(a);
      (void)posix_file_close(*f);
      // The same bytes in memory.
      std::vector<uint8_t> bytes;
      GOLDEN_CHECK(test::file_load(path, bytes), e.name);
      const_buffer cb{bytes.data(), bytes.size()};
      const storage mst = const_buffer_storage(cb);
      s = array_open(a, mst, alloc);
      GOLDEN_CHECK(s.ok(), e.name + " (memory)");
      if (s.ok()) check_array(t, a, e, raw, e.name + " (memory)");
      (void)array_close(a);
    } else {
      auto d = posix_directory_open(path.c_str(), false);
      GOLDEN_CHECK(d.ok(), e.name);
      if (!d.ok()) continue;
      const storage_directory dir = posix_directory_interface(*d);
      array a;
      status s = array_open_sparse(a, dir, alloc);
      GOLDEN_CHECK(s.ok(), e.name + " (directory)");
      if (s.ok()) check_array(t, a, e, raw, e.name + " (directory)");
      (void)array_close(a);
      (void)posix_directory_close(*d);
      // The same entries in a memory directory.
      memory_directory md;
      REQUIRE_OK(memory_directory_init(md, alloc, 64));
      const storage_directory mdir = memory_directory_interface(md);
      const char* names[] = {"chunks.b2frame", "00000000.chunk", "00000001.chunk", "00000002.chunk",
                             "00000003.chunk"};
      for (const char* n : names) {
        std::vector<uint8_t> bytes;
        GOLDEN_CHECK(test::file_load(path + "/" + n, bytes), e.name);
        storage es;
        REQUIRE_OK(storage_directory_open(mdir, n, storage_open::replace, &es));
        REQUIRE_OK(storage_write(es, 0, bytes_view(bytes.data(), bytes.size())));
        REQUIRE_OK(storage_directory_close(mdir, &es));
      }
      s = array_open_sparse(a, mdir, alloc);
      GOLDEN_CHECK(s.ok(), e.name + " (memory directory)");
      if (s.ok()) check_array(t, a, e, raw, e.name + " (memory directory)");
      (void)array_close(a);
    }
  }
}

TESSERA_TEST(array_golden, metalayers_of_with_metalayers) {
  auto f = posix_file_open((kGolden + "with-metalayers.b2nd").c_str(), posix_open::read);
  REQUIRE_OK(f);
  const storage st = posix_file_storage(*f);
  array a;
  REQUIRE_OK(array_open(a, st, test::system_allocator()));
  auto m = array_meta_find(a, str("units"));
  REQUIRE_OK(m);
  const uint8_t expect[] = {0x92, 0x01, 0x02};  // [1, 2]
  CHECK(m->size() == 3 && std::memcmp(m->data(), expect, 3) == 0);
  auto n = array_vlmeta_nbytes(a, str("note"));
  REQUIRE_OK(n);
  std::vector<uint8_t> vl(*n);
  REQUIRE_OK(array_vlmeta_read(a, str("note"), bytes_mut(vl.data(), vl.size())));
  const uint8_t hello[] = {0xa5, 'h', 'e', 'l', 'l', 'o'};
  CHECK(vl.size() == 6 && std::memcmp(vl.data(), hello, 6) == 0);
  (void)array_close(a);
  (void)posix_file_close(*f);
}
