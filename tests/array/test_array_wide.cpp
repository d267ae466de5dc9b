// SPDX-License-Identifier: BSD-3-Clause
// Items wider than 255 bytes (golden/b2nd-more: |S300, <U64 = 256 bytes, |V2048), as python-blosc2 writes them
// for wide strings and records: the frame keeps the real typesize, every chunk header says 1. They open and read
// exactly (whole, slices, elements, orthogonal selections), and arrays Tessera writes with the same parameters
// have the reference's very chunks (LZ4 and BloscLZ; Zstd chunks decode the same).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/file_load.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

const std::string kMore = test::data_path("golden/b2nd-more/");

struct wide_case {
  const char* name;
  const char* dtype;
  int32_t itemsize;
  int ndim;
  int64_t shape[2];
  int32_t chunks[2];
  int32_t blocks[2];
  codec compressor;
  int clevel;
  bool shuffle;
};

const wide_case kCases[] = {
    {"wide-s300-2d", "|S300", 300, 2, {12, 7}, {5, 4}, {2, 4}, codec::zstd, 1, true},
    {"wide-u64-1d", "<U64", 256, 1, {50, 0}, {16, 0}, {8, 0}, codec::lz4, 5, true},
    {"wide-v2048-2d", "|V2048", 2048, 2, {9, 5}, {4, 5}, {2, 5}, codec::blosclz, 5, false},
};

int64_t nitems_of(const wide_case& c) { return c.ndim == 1 ? c.shape[0] : c.shape[0] * c.shape[1]; }

}  // namespace

TESSERA_TEST(array_wide, golden_wide_items_read_exactly) {
  for (const wide_case& c : kCases) {
    std::vector<uint8_t> file, raw;
    REQUIRE(test::file_load(kMore + c.name + ".b2nd", file));
    REQUIRE(test::file_load(kMore + c.name + ".raw", raw));
    const_buffer in{file.data(), file.size()};
    array a;
    REQUIRE_OK(array_open(a, const_buffer_storage(in), test::system_allocator()));
    CHECK_EQ(array_itemsize(a), c.itemsize);
    CHECK(array_dtype(a).size() == std::strlen(c.dtype) &&
          std::memcmp(array_dtype(a).data(), c.dtype, std::strlen(c.dtype)) == 0);
    const size_t isz = static_cast<size_t>(c.itemsize);
    REQUIRE_EQ(raw.size(), static_cast<size_t>(nitems_of(c)) * isz);
    // The chunks say typesize 1, as the reference writes them.
    auto ref = frame_chunk_locate(array_frame(a), 0);
    REQUIRE_OK(ref);
    owned_array<uint8_t> buf;
    auto chunk = frame_chunk_read(array_frame(a), 0, buf);
    REQUIRE_OK(chunk);
    CHECK_EQ((*chunk)[3], 1);
    // Whole.
    std::vector<uint8_t> got(raw.size());
    REQUIRE_OK(array_read(a, bytes_mut(got.data(), got.size())));
    CHECK(std::memcmp(got.data(), raw.data(), raw.size()) == 0);
    // Every element, last first (a fresh chunk and block for most of them).
    int bad = 0;
    std::vector<uint8_t> item(isz);
    for (int64_t i = nitems_of(c) - 1; i >= 0; --i) {
      int64_t coords[2] = {c.ndim == 1 ? i : i / c.shape[1], c.ndim == 1 ? 0 : i % c.shape[1]};
      if (!array_element_read(a, coords, bytes_mut(item.data(), isz)).ok() ||
          std::memcmp(item.data(), raw.data() + static_cast<size_t>(i) * isz, isz) != 0)
        ++bad;
    }
    CHECK_EQ(bad, 0);
    // A slice straddling chunks and blocks.
    int64_t start[2] = {1, 1}, stop[2] = {c.shape[0] - 1, c.ndim == 1 ? 0 : c.shape[1] - 1};
    const int64_t rows = stop[0] - start[0];
    const int64_t cols = c.ndim == 1 ? 1 : stop[1] - start[1];
    std::vector<uint8_t> slice(static_cast<size_t>(rows * cols) * isz);
    REQUIRE_OK(array_slice_read(a, start, stop, bytes_mut(slice.data(), slice.size())));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k) {
        const int64_t src = c.ndim == 1 ? start[0] + r : (start[0] + r) * c.shape[1] + start[1] + k;
        bad += std::memcmp(slice.data() + static_cast<size_t>(r * cols + k) * isz, raw.data() + static_cast<size_t>(src) * isz, isz) != 0;
      }
    CHECK_EQ(bad, 0);
    // An orthogonal selection with repeats.
    const int64_t i0[3] = {c.shape[0] - 1, 0, c.shape[0] - 1};
    const int64_t i1[2] = {c.ndim == 1 ? 0 : c.shape[1] - 1, 0};
    const int64_t* idx[2] = {i0, i1};
    const int64_t counts[2] = {3, 2};
    const int64_t nout = c.ndim == 1 ? 3 : 6;
    std::vector<uint8_t> sel(static_cast<size_t>(nout) * isz);
    REQUIRE_OK(array_orthogonal_read(a, idx, counts, bytes_mut(sel.data(), sel.size())));
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t k = 0; k < (c.ndim == 1 ? 1 : 2); ++k) {
        const int64_t src = c.ndim == 1 ? i0[r] : i0[r] * c.shape[1] + i1[k];
        bad += std::memcmp(sel.data() + static_cast<size_t>(r * (c.ndim == 1 ? 1 : 2) + k) * isz,
                           raw.data() + static_cast<size_t>(src) * isz, isz) != 0;
      }
    CHECK_EQ(bad, 0);
  }
}

TESSERA_TEST(array_wide, written_like_the_reference) {
  for (const wide_case& c : kCases) {
    std::vector<uint8_t> file, raw;
    REQUIRE(test::file_load(kMore + c.name + ".b2nd", file));
    REQUIRE(test::file_load(kMore + c.name + ".raw", raw));
    array_params p;
    p.ndim = c.ndim;
    for (int d = 0; d < c.ndim; ++d) {
      p.shape[d] = c.shape[d];
      p.chunkshape[d] = c.chunks[d];
      p.blockshape[d] = c.blocks[d];
    }
    p.dtype = span<const char>(c.dtype, std::strlen(c.dtype));
    p.compressor = c.compressor;
    p.clevel = c.clevel;
    if (!c.shuffle) p.filters[5] = 0;
    growable_buffer out;
    growable_buffer_init(out, test::system_allocator());
    array w;
    REQUIRE_OK(array_create(w, array_target_contiguous(growable_buffer_storage(out)), test::system_allocator(), p,
                            array_fill_buffer(bytes_view(raw.data(), raw.size()))));
    REQUIRE_OK(array_close(w));
    const_buffer gin{file.data(), file.size()}, tin{out.bytes().data(), out.bytes().size()};
    array g, m;
    REQUIRE_OK(array_open(g, const_buffer_storage(gin), test::system_allocator()));
    REQUIRE_OK(array_open(m, const_buffer_storage(tin), test::system_allocator()));
    CHECK_EQ(frame_info_get(array_frame(m))->typesize, c.itemsize);
    const int64_t n = frame_info_get(array_frame(g))->nchunks;
    REQUIRE_EQ(frame_info_get(array_frame(m))->nchunks, n);
    int differ = 0;
    for (int64_t i = 0; i < n; ++i) {
      owned_array<uint8_t> b1, b2;
      auto x = frame_chunk_read(array_frame(g), i, b1);
      auto y = frame_chunk_read(array_frame(m), i, b2);
      REQUIRE_OK(x);
      REQUIRE_OK(y);
      differ += x->size() != y->size() || std::memcmp(x->data(), y->data(), x->size()) != 0 ? 1 : 0;
    }
    // LZ4 and BloscLZ are deterministic across builds; Zstd chunks may differ with the library's version.
    if (c.compressor != codec::zstd) CHECK_EQ(differ, 0);
    std::vector<uint8_t> back(raw.size());
    REQUIRE_OK(array_read(m, bytes_mut(back.data(), back.size())));
    CHECK(std::memcmp(back.data(), raw.data(), raw.size()) == 0);
  }
}

TESSERA_TEST(array_wide, every_operation_on_wide_items) {
  // A |S300 array filled with one value (a special-value chunk of a 300-byte value), then grown, appended to,
  // written into and read back; the model is a plain vector of items.
  const size_t isz = 300;
  std::vector<uint8_t> value(isz);
  for (size_t i = 0; i < isz; ++i) value[i] = static_cast<uint8_t>('a' + i % 26);
  array_params p;
  p.ndim = 2;
  p.shape[0] = 7;
  p.shape[1] = 5;
  p.chunkshape[0] = 4;
  p.chunkshape[1] = 3;
  p.blockshape[0] = 2;
  p.blockshape[1] = 3;
  p.dtype = span<const char>("|S300", 5);
  p.compressor = codec::lz4;
  growable_buffer out;
  growable_buffer_init(out, test::system_allocator());
  array a;
  REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(out)), test::system_allocator(), p,
                          array_fill_full(bytes_view(value.data(), isz))));
  std::vector<uint8_t> model(7 * 5 * isz);
  for (size_t i = 0; i < 35; ++i) std::memcpy(model.data() + i * isz, value.data(), isz);
  std::vector<uint8_t> got(model.size());
  REQUIRE_OK(array_read(a, bytes_mut(got.data(), got.size())));
  CHECK(got == model);
  // Write a 3x2 block of distinct items across chunks.
  std::vector<uint8_t> patch(6 * isz);
  for (size_t i = 0; i < patch.size(); ++i) patch[i] = static_cast<uint8_t>(i * 7 + 3);
  const int64_t start[2] = {2, 2}, stop[2] = {5, 4};
  REQUIRE_OK(array_slice_write(a, start, stop, bytes_view(patch.data(), patch.size())));
  for (int64_t r = 0; r < 3; ++r)
    std::memcpy(model.data() + static_cast<size_t>((2 + r) * 5 + 2) * isz, patch.data() + static_cast<size_t>(r * 2) * isz, 2 * isz);
  // Grow by two rows (new items are zeros), then append one row.
  const int64_t grown[2] = {9, 5};
  REQUIRE_OK(array_resize(a, grown));
  model.resize(9 * 5 * isz, 0);
  std::vector<uint8_t> row(5 * isz, 0x5a);
  REQUIRE_OK(array_append(a, 0, 1, bytes_view(row.data(), row.size())));
  model.insert(model.end(), row.begin(), row.end());
  REQUIRE_OK(array_close(a));
  const_buffer in{out.bytes().data(), out.bytes().size()};
  array r;
  REQUIRE_OK(array_open(r, const_buffer_storage(in), test::system_allocator()));
  CHECK_EQ(array_layout_get(r).shape[0], 10);
  got.assign(model.size(), 0);
  REQUIRE_OK(array_read(r, bytes_mut(got.data(), got.size())));
  CHECK(got == model);
}
