// SPDX-License-Identifier: BSD-3-Clause
// The in-memory view (tessera/array_view.hpp) against the array API: every contiguous array the reference wrote
// (golden/b2nd, golden/b2nd-more) reads the same through both, whole, in random slices and elements (the array
// API's reads are checked against the reference's decodes in test_array_golden.cpp). Then what a firmware meets:
// every truncation and random damage of a frame fails cleanly or reads, never past the bytes it was given; every
// failed allocation is reported and leaks nothing; a frame of 10^8 chunks opens and reads in bounded memory.
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/array_view.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/file_load.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

const std::string kData = test::data_path("golden/");

// The contiguous arrays of a golden directory's MANIFEST.tsv (sparse ones are directories: not for a view).
std::vector<std::string> contiguous_goldens(const std::string& dir) {
  std::vector<std::string> out;
  std::ifstream f(kData + dir + "/MANIFEST.tsv");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#' || line.find("sparse=1") != std::string::npos) continue;
    out.push_back(kData + dir + "/" + line.substr(0, line.find('\t')) + ".b2nd");
  }
  return out;
}

// A random box inside the array (at least one item per dimension when the shape allows).
void random_box(test::rng& r, const array_layout& l, int64_t* start, int64_t* stop) {
  for (int d = 0; d < l.ndim; ++d) {
    start[d] = l.shape[d] > 0 ? r.range(0, l.shape[d] - 1) : 0;
    stop[d] = l.shape[d] > 0 ? r.range(start[d] + 1, l.shape[d]) : 0;
  }
}

int64_t box_items(const array_layout& l, const int64_t* start, const int64_t* stop) {
  int64_t n = 1;
  for (int d = 0; d < l.ndim; ++d) n *= stop[d] - start[d];
  return n;
}

// Reads slices and elements through the view and through array_open over the same bytes; they must agree.
void compare_with_array(test::context& t, const std::string& path) {
  std::vector<uint8_t> bytes;
  REQUIRE(test::file_load(path, bytes));
  test::counting_allocator heap;
  array_view v;
  const status opened = array_view_open(v, bytes_view(bytes.data(), bytes.size()), heap.get());
  if (!opened.ok()) {
    // The view reads what the array API reads, except chunks written with other blocks than the array's.
    std::fprintf(stderr, "%s: %s\n", path.c_str(), opened.message);
    CHECK(false);
    return;
  }
  const_buffer cb{bytes.data(), bytes.size()};
  array a;
  REQUIRE_OK(array_open(a, const_buffer_storage(cb), heap.get()));
  const array_layout& l = v.layout;
  CHECK_EQ(l.ndim, array_layout_get(a).ndim);
  CHECK_EQ(v.itemsize, array_itemsize(a));
  CHECK(v.dtype.size() == array_dtype(a).size() && std::memcmp(v.dtype.data(), array_dtype(a).data(), v.dtype.size()) == 0);
  const size_t itemsize = static_cast<size_t>(v.itemsize);

  test::rng r(std::hash<std::string>{}(path));
  int64_t start[kMaxDims] = {}, stop[kMaxDims] = {};
  for (int d = 0; d < l.ndim; ++d) stop[d] = l.shape[d];
  for (int round = 0; round < 8; ++round) {
    if (round > 0) random_box(r, l, start, stop);
    const size_t n = static_cast<size_t>(box_items(l, start, stop)) * itemsize;
    if (n > (64u << 20)) continue;
    std::vector<uint8_t> got(n + 1, 0xa5), want(n + 1, 0x5a);
    const status s = array_view_slice_read(v, start, stop, bytes_mut(got.data(), n));
    if (!s.ok()) std::fprintf(stderr, "%s: %s\n", path.c_str(), s.message);
    CHECK(s.ok());
    REQUIRE_OK(array_slice_read(a, start, stop, bytes_mut(want.data(), n)));
    CHECK(std::memcmp(got.data(), want.data(), n) == 0);
    CHECK_EQ(got[n], 0xa5);  // nothing written past the slice
  }
  for (int k = 0; k < 16 && l.nitems > 0; ++k) {
    int64_t c[kMaxDims] = {};
    for (int d = 0; d < l.ndim; ++d) c[d] = r.range(0, l.shape[d] - 1);
    std::vector<uint8_t> got(itemsize, 0xa5), want(itemsize, 0x5a);  // items up to 64 KiB (b2nd-more)
    CHECK_OK(array_view_element_read(v, c, bytes_mut(got.data(), itemsize)));
    REQUIRE_OK(array_element_read(a, c, bytes_mut(want.data(), itemsize)));
    CHECK(got == want);
  }
  (void)array_close(a);
  array_view_close(v);
  CHECK(!heap.leaked());
}

}  // namespace

TESSERA_TEST(array_view, golden_arrays_read_as_the_array_api) {
  for (const char* dir : {"b2nd", "b2nd-more"}) {
    const std::vector<std::string> files = contiguous_goldens(dir);
    CHECK(files.size() >= 5);  // the goldens are there: a missing directory fails, it does not skip
    for (const std::string& f : files) compare_with_array(t, f);
  }
}

// array_view_estimate sizes an arena that never refuses: every golden array opens and reads (whole, slices,
// elements) from an arena of exactly the estimate, and the counting allocator's high water stays within it.
TESSERA_TEST(array_view, the_estimate_is_an_arena_that_never_refuses) {
  static uint8_t g_arena_bytes[4 << 20];
  for (const char* dir : {"b2nd", "b2nd-more"}) {
    for (const std::string& path : contiguous_goldens(dir)) {
      std::vector<uint8_t> bytes;
      REQUIRE(test::file_load(path, bytes));
      size_t need = 0;
      {
        array_view probe;
        REQUIRE_OK(array_view_open(probe, bytes_view(bytes.data(), bytes.size()), test::system_allocator()));
        need = array_view_estimate(probe);
        const size_t block = static_cast<size_t>(probe.layout.block_nitems * probe.itemsize);
        CHECK(need >= array_view_estimate(block));
        array_view_close(probe);
      }
      REQUIRE(need <= sizeof g_arena_bytes);
      arena heap;
      arena_init(heap, g_arena_bytes, need);
      array_view v;
      const status opened = array_view_open(v, bytes_view(bytes.data(), bytes.size()), arena_allocator(heap));
      if (!opened.ok()) std::fprintf(stderr, "%s: %s\n", path.c_str(), opened.message);
      REQUIRE_OK(opened);
      const array_layout& l = v.layout;
      test::rng r(std::hash<std::string>{}(path) + 1);
      int64_t start[kMaxDims] = {}, stop[kMaxDims] = {};
      for (int d = 0; d < l.ndim; ++d) stop[d] = l.shape[d];
      for (int round = 0; round < 8; ++round) {
        if (round > 0) random_box(r, l, start, stop);
        const size_t n = static_cast<size_t>(box_items(l, start, stop)) * static_cast<size_t>(v.itemsize);
        if (n > (64u << 20)) continue;
        std::vector<uint8_t> got(n + 1);
        const status st = array_view_slice_read(v, start, stop, bytes_mut(got.data(), n));
        if (!st.ok()) std::fprintf(stderr, "%s: %s (arena of %zu bytes)\n", path.c_str(), st.message, need);
        CHECK(st.ok());
      }
      CHECK_LE(heap.high_water, need);
      array_view_close(v);
    }
  }
}

TESSERA_TEST(array_view, refuses_what_it_does_not_read) {
  std::vector<uint8_t> bytes;
  REQUIRE(test::file_load(kData + "b2nd/codec-lz4-f4-3d.b2nd", bytes));
  test::counting_allocator heap;
  array_view v;
  int64_t c[3] = {0, 0, 0};
  uint8_t item[4];
  CHECK_ERR(array_view_element_read(v, c, bytes_mut(item, 4)), errc::invalid_argument);  // not open
  REQUIRE_OK(array_view_open(v, bytes_view(bytes.data(), bytes.size()), heap.get()));
  int64_t out_of_range[3] = {40, 0, 0};
  CHECK_ERR(array_view_element_read(v, out_of_range, bytes_mut(item, 4)), errc::out_of_range);
  CHECK_ERR(array_view_element_read(v, c, bytes_mut(item, 3)), errc::buffer_too_small);
  int64_t stop[3] = {2, 2, 2};
  CHECK_ERR(array_view_slice_read(v, c, stop, bytes_mut(item, 4)), errc::buffer_too_small);
  // A block shape past the budget is refused at open, before any scratch exists.
  array_view_options tight;
  tight.max_alloc = 1024;
  CHECK_ERR(array_view_open(v, bytes_view(bytes.data(), bytes.size()), heap.get(), tight), errc::resource_limit);
  CHECK(!v.open);
  array_view_close(v);
  CHECK(!heap.leaked());
}

// Every prefix of a frame: open fails (truncated or malformed), or, when the cut spares what the view reads,
// the reads fail or succeed; nothing reads past the prefix (ASan sees the copy's end).
TESSERA_TEST(array_view, every_truncation_fails_cleanly) {
  std::vector<uint8_t> bytes;
  REQUIRE(test::file_load(kData + "b2nd/codec-blosclz-f4-3d.b2nd", bytes));
  test::counting_allocator heap;
  size_t opened = 0;
  for (size_t n = 0; n < bytes.size(); n += (n < 4096 ? 1 : 997)) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    array_view v;
    if (array_view_open(v, bytes_view(cut.data(), cut.size()), heap.get()).ok()) ++opened;
    array_view_close(v);
  }
  CHECK_EQ(opened, size_t{0});  // the frame's length is in its header: every prefix is short
  CHECK(!heap.leaked());
}

// Random damage: every outcome is an error or a read, and nothing leaks.
TESSERA_TEST(array_view, damaged_frames_fail_cleanly) {
  test::counting_allocator heap;
  for (const char* name : {"b2nd/codec-lz4-f4-3d.b2nd", "b2nd/codec-zstd-f4-3d.b2nd", "b2nd/filter-bitshuffle-f8.b2nd"}) {
    std::vector<uint8_t> bytes;
    REQUIRE(test::file_load(kData + name, bytes));
    test::rng r(7);
    size_t reads_ok = 0, errors = 0;
    for (int round = 0; round < 300; ++round) {
      std::vector<uint8_t> bad = bytes;
      const int flips = static_cast<int>(r.range(1, 4));
      for (int k = 0; k < flips; ++k) {
        // Half the damage in the header, index and chunk headers, where the claims are.
        const size_t at = r.chance(50) ? static_cast<size_t>(r.range(0, 300))
                                       : static_cast<size_t>(r.range(0, static_cast<int64_t>(bad.size()) - 1));
        bad[at < bad.size() ? at : 0] ^= static_cast<uint8_t>(r.range(1, 255));
      }
      array_view v;
      array_view_options o;
      o.max_alloc = 1 << 20;
      if (!array_view_open(v, bytes_view(bad.data(), bad.size()), heap.get(), o).ok()) {
        ++errors;
        continue;
      }
      std::vector<uint8_t> out(static_cast<size_t>(v.layout.nitems * v.itemsize));
      int64_t start[kMaxDims] = {}, stop[kMaxDims] = {};
      for (int d = 0; d < v.layout.ndim; ++d) stop[d] = v.layout.shape[d];
      if (out.size() <= (16u << 20) && array_view_slice_read(v, start, stop, bytes_mut(out.data(), out.size())).ok()) ++reads_ok;
      else ++errors;
      array_view_close(v);
      CHECK_LE(heap.high_water_bytes, size_t{1} << 21);
    }
    CHECK(errors > 0);
    CHECK(reads_ok > 0);
  }
  CHECK(!heap.leaked());
}

// Every allocation refused in turn: an error each time, nothing leaked, and the read succeeds once none is.
TESSERA_TEST(array_view, every_failed_allocation_is_reported) {
  for (const char* name : {"b2nd/codec-lz4-f4-3d.b2nd", "b2nd/codec-zstd-f4-3d.b2nd"}) {
    std::vector<uint8_t> bytes;
    REQUIRE(test::file_load(kData + name, bytes));
    bool passed = false;
    for (size_t nth = 1; nth < 64 && !passed; ++nth) {
      test::counting_allocator heap;
      heap.fail_at = nth;
      array_view v;
      status s = array_view_open(v, bytes_view(bytes.data(), bytes.size()), heap.get());
      uint8_t out[4 * 4 * 4 * 4];
      const int64_t start[3] = {3, 4, 5}, stop[3] = {7, 8, 9};
      if (s.ok()) s = array_view_slice_read(v, start, stop, bytes_mut(out, sizeof out));
      if (s.ok()) {
        passed = true;
        CHECK_LT(heap.allocations, nth);
      } else {
        CHECK_EQ(static_cast<int>(s.code), static_cast<int>(errc::out_of_memory));
      }
      array_view_close(v);
      CHECK(!heap.leaked());
    }
    CHECK(passed);
  }
}

// A frame whose index claims 10^8 chunks (all zeros, 221 bytes): opening and reading decode one index block.
TESSERA_TEST(array_view, hundred_million_chunks_in_bounded_memory) {
  std::vector<uint8_t> bytes;
  REQUIRE(test::file_load(kData + "huge-sparse/zeros-1e8-chunks.b2nd", bytes));
  test::counting_allocator heap;
  array_view v;
  REQUIRE_OK(array_view_open(v, bytes_view(bytes.data(), bytes.size()), heap.get()));
  CHECK(v.layout.nchunks >= 100000000);
  int64_t c[kMaxDims] = {};
  for (int d = 0; d < v.layout.ndim; ++d) c[d] = v.layout.shape[d] - 1;
  uint8_t item[16];
  memset(item, 0xff, sizeof item);
  REQUIRE(v.itemsize <= 16);
  CHECK_OK(array_view_element_read(v, c, bytes_mut(item, static_cast<size_t>(v.itemsize))));
  for (int64_t i = 0; i < v.itemsize; ++i) CHECK_EQ(item[i], 0);
  CHECK_LE(heap.high_water_bytes, size_t{1} << 20);
  array_view_close(v);
  CHECK(!heap.leaked());
}

// The reference's all-zeros arrays: their index chunk is one special value, so a walk over their 10^7 and 10^8
// entries (tessera verify) is one step per run, and the run is every chunk.
TESSERA_TEST(frame_index, a_special_index_chunk_is_one_run) {
  for (const char* name : {"zeros-1e7-chunks", "zeros-1e8-chunks"}) {
    std::vector<uint8_t> bytes;
    REQUIRE(test::file_load(kData + "huge-sparse/" + name + ".b2nd", bytes));
    const_buffer in{bytes.data(), bytes.size()};
    frame f;
    REQUIRE_OK(frame_open(f, const_buffer_storage(in), test::system_allocator()));
    const int64_t n = frame_info_get(f)->nchunks;
    CHECK(n >= 10000000);
    auto run = frame_chunk_special_run(f, 0);
    REQUIRE_OK(run);
    CHECK_EQ(*run, n);
    {
      auto r = frame_chunk_special_run(f, n - 1);
      REQUIRE_OK(r);
      CHECK_EQ(*r, int64_t{1});
    }
    {
      auto r = frame_chunk_special_run(f, n / 2);
      REQUIRE_OK(r);
      CHECK_EQ(*r, n - n / 2);
    }
  }
}
