// SPDX-License-Identifier: BSD-3-Clause
// c-blosc2's n-d plugins (NDLZ, NDCELL, NDMEAN) through the array API, where the array gives the chunk codec its
// block shape (tests/data/plugins/README.md has the files):
// - the reference's golden arrays decode exactly to its own decodes, whole, by slices and elements, with
//   array_open and with array_view; their chunks with a decoder given the array's geometry, and the NDCELL and
//   NDMEAN ones not without it;
// - arrays written here with each plugin are, chunk for chunk, the reference's bytes for the same input and
//   parameters (its chunks captured once with c-blosc2 3.3.2, single-threaded), and read back;
// - writes that touch part of a chunk, and several workers (an executor that hands tasks to three worker
//   indexes), give the same array.
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/array_view.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "nd_array_testing.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;
using namespace nd_array_testing;

namespace {

int64_t items_of(const array_layout& l) {
  int64_t n = 1;
  for (int d = 0; d < l.ndim; ++d) n *= l.shape[d];
  return n;
}

TESSERA_TEST(NdPluginsArray, TheReferencesArraysDecodeExactly) {
  const allocator alloc = test::system_allocator();
  for (const char* name : {"ndlz4_u1", "ndlz8_u1", "ndcell4_i2", "ndmean4_f4"}) {
    std::vector<uint8_t> frame_bytes, raw;
    REQUIRE(load(std::string(name) + ".b2nd", frame_bytes));
    REQUIRE(load(std::string(name) + ".raw", raw));
    const_buffer cb{frame_bytes.data(), frame_bytes.size()};
    for (bool parallel : {false, true}) {
      array a;
      array_open_options oo;
      if (parallel) oo.exec = scrambled();
      REQUIRE_OK(array_open(a, const_buffer_storage(cb), alloc, oo));
      const array_layout& l = array_layout_get(a);
      const int64_t itemsize = array_itemsize(a);
      REQUIRE_EQ(static_cast<size_t>(items_of(l) * itemsize), raw.size());
      std::vector<uint8_t> got(raw.size(), 0xee);
      REQUIRE_OK(array_read(a, bytes_mut(got.data(), got.size())));
      CHECK(got == raw);
      // Slices that cut blocks, and single items.
      check_slices(t, a, raw);
      // Each chunk with a decoder of its own: with the array's geometry it decodes; the filters need it.
      frame& f = array_frame(a);
      const frame_info* fi = frame_info_get(f);
      REQUIRE(fi != nullptr);
      chunk_decoder_options with;
      with.geometry = array_chunk_geometry(l);
      chunk_decoder dg, dn;
      REQUIRE_OK(chunk_decoder_init(dg, alloc, with));
      REQUIRE_OK(chunk_decoder_init(dn, alloc));
      std::vector<uint8_t> chunk(static_cast<size_t>(l.extchunk_nitems * itemsize));
      const bool filters = std::strncmp(name, "ndlz", 4) != 0;
      for (int64_t c = 0; c < fi->nchunks; ++c) {
        CHECK_OK(frame_chunk_decode(f, dg, c, bytes_mut(chunk.data(), chunk.size())));
        auto bare = frame_chunk_decode(f, dn, c, bytes_mut(chunk.data(), chunk.size()));
        if (filters) CHECK_ERR(bare, errc::unsupported);
        else CHECK_OK(bare);
      }
      CHECK_OK(array_close(a));
    }
    // The same through the in-memory reader.
    array_view v;
    REQUIRE_OK(array_view_open(v, bytes_view(frame_bytes.data(), frame_bytes.size()), alloc));
    int64_t start[kMaxDims] = {}, stop[kMaxDims];
    for (int d = 0; d < v.layout.ndim; ++d) stop[d] = v.layout.shape[d];
    std::vector<uint8_t> got(raw.size(), 0xee);
    CHECK_OK(array_view_slice_read(v, start, stop, bytes_mut(got.data(), got.size())));
    CHECK(got == raw);
    array_view_close(v);
  }
}

// ---- Byte identity with the reference's chunks ------------------------------------------------------------

// The recipes of tests/data/plugins/README.md.
struct lcg {
  uint32_t s;
  uint32_t next() {
    s = s * 1103515245u + 12345u;
    return s >> 16;
  }
};

std::vector<uint8_t> rows(uint32_t seed, size_t n, size_t width, size_t edge) {
  lcg g{seed};
  uint8_t pats[4][8];
  for (auto& p : pats)
    for (uint8_t& b : p) b = static_cast<uint8_t>(g.next() & 0xff);
  std::vector<uint8_t> out;
  for (size_t row = 0; row < n / width; ++row) {
    for (size_t x = 0; x < width;) {
      const uint32_t k = g.next() % 20;
      const size_t m = width - x < edge ? width - x : edge;
      for (size_t j = 0; j < m; ++j) {
        if (k < 16) out.push_back(pats[k % 4][j]);
        else if (k < 19) out.push_back(k < 18 ? 0 : 255);
        else out.push_back(static_cast<uint8_t>(g.next() & 0xff));
      }
      x += m;
    }
  }
  return out;
}

std::vector<uint8_t> smooth_i2(uint32_t seed, int64_t h, int64_t w) {
  lcg g{seed};
  std::vector<uint8_t> out;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      int32_t v = static_cast<int32_t>((y / 3 + x / 5) * 7);
      if (g.next() % 8 == 0) v += static_cast<int32_t>(g.next() % 3);
      out.push_back(static_cast<uint8_t>(v & 0xff));
      out.push_back(static_cast<uint8_t>((v >> 8) & 0xff));
    }
  }
  return out;
}

std::vector<uint8_t> floats(uint32_t seed, size_t n, size_t itemsize) {
  lcg g{seed};
  std::vector<uint8_t> out(n * itemsize);
  for (size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(g.next() % 2000) / 8.0 - 100.0;
    uint64_t bits = 0;
    if (itemsize == 4) {
      const float f = static_cast<float>(v);
      uint32_t b32 = 0;
      std::memcpy(&b32, &f, 4);
      bits = b32;
    } else {
      std::memcpy(&bits, &v, 8);
    }
    for (size_t b = 0; b < itemsize; ++b) out[i * itemsize + b] = static_cast<uint8_t>(bits >> (8 * b));
  }
  return out;
}

struct identity_case {
  const char* name;
  const char* dtype;
  int ndim;
  int64_t shape[3];
  int32_t chunks[3];
  int32_t blocks[3];
  codec compressor;
  uint8_t compcode_meta;
  int clevel;
  uint8_t filters[2];  // slots 4 and 5
  uint8_t metas[2];
  split_mode split;
};

const identity_case kCases[] = {
    {"ndlz4-u1", "|u1", 2, {60, 72}, {36, 40}, {18, 20}, codec::ndlz, 4, 5, {0, 0}, {0, 0}, split_mode::forward_compat},
    {"ndlz8-u1", "|u1", 2, {64, 90}, {40, 72}, {20, 36}, codec::ndlz, 8, 9, {0, 0}, {0, 0}, split_mode::forward_compat},
    {"ndlz4-u2-split", "<u2", 2, {24, 40}, {24, 40}, {12, 20}, codec::ndlz, 4, 5, {0, 0}, {0, 0}, split_mode::always},
    {"ndcell4-i2", "<i2", 2, {30, 26}, {20, 20}, {10, 12}, codec::lz4, 0, 5, {32, 1}, {4, 0}, split_mode::forward_compat},
    {"ndmean3-f4", "<f4", 3, {12, 10, 9}, {8, 10, 6}, {4, 5, 6}, codec::zstd, 0, 5, {0, 33}, {0, 3},
     split_mode::forward_compat},
    {"ndmean4-f8", "<f8", 2, {40, 30}, {20, 30}, {10, 15}, codec::blosclz, 0, 9, {33, 1}, {4, 0},
     split_mode::forward_compat},
};

std::vector<uint8_t> input_of(const identity_case& c, size_t itemsize) {
  size_t n = 1;
  for (int d = 0; d < c.ndim; ++d) n *= static_cast<size_t>(c.shape[d]);
  const std::string name = c.name;
  const size_t width = static_cast<size_t>(c.shape[c.ndim - 1]) * itemsize;
  if (name == "ndlz4-u1") return rows(1, n * itemsize, width, 4);
  if (name == "ndlz8-u1") return rows(2, n * itemsize, width, 8);
  if (name == "ndlz4-u2-split") return rows(3, n * itemsize, width, 4);
  if (name == "ndcell4-i2") return smooth_i2(4, c.shape[0], c.shape[1]);
  if (name == "ndmean3-f4") return floats(5, n, 4);
  return floats(6, n, 8);
}

array_params params_of(const identity_case& c) {
  array_params p;
  p.ndim = c.ndim;
  for (int d = 0; d < c.ndim; ++d) {
    p.shape[d] = c.shape[d];
    p.chunkshape[d] = c.chunks[d];
    p.blockshape[d] = c.blocks[d];
  }
  p.dtype = span<const char>(c.dtype, 3);
  p.compressor = c.compressor;
  p.compcode_meta = c.compcode_meta;
  p.clevel = c.clevel;
  for (int i = 0; i < kChunkMaxFilters; ++i) p.filters[i] = p.filters_meta[i] = 0;
  p.filters[4] = c.filters[0];
  p.filters[5] = c.filters[1];
  p.filters_meta[4] = c.metas[0];
  p.filters_meta[5] = c.metas[1];
  p.split = c.split;
  return p;
}

TESSERA_TEST(NdPluginsArray, ChunksAreTheReferencesBytes) {
  const allocator alloc = test::system_allocator();
  for (const identity_case& c : kCases) {
    std::vector<uint8_t> captured;
    REQUIRE(load(std::string("oracle-") + c.name + ".chunks", captured));
    const size_t itemsize = static_cast<size_t>(c.dtype[2] - '0');
    const std::vector<uint8_t> input = input_of(c, itemsize);
    for (bool parallel : {false, true}) {
      array_params p = params_of(c);
      if (parallel) p.exec = scrambled();
      growable_buffer gb;
      growable_buffer_init(gb, alloc);
      array a;
      REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(gb)), alloc, p,
                              array_fill_buffer(bytes_view(input.data(), input.size()))));
      frame& f = array_frame(a);
      check_chunks_match(t, f, captured);
      // And it reads back: the input itself, or (NDMEAN, lossy) what the reference's chunks decode to.
      std::vector<uint8_t> back(input.size());
      REQUIRE_OK(array_read(a, bytes_mut(back.data(), back.size())));
      if (c.filters[0] != 33 && c.filters[1] != 33) CHECK(back == input);
      CHECK_OK(array_close(a));
    }
  }
}

// ---- Where Tessera departs from the reference's bytes --------------------------------------------------------

// A 4 x (4 * ncells) block of bytes whose NDLZ 4x4 stream has a row-pair match `offset` bytes back: a literal
// cell A, then a literal B or two and cells that cost 2 bytes each (one repeated byte: no table update) to reach
// the offset, then a cell whose rows 0 and 1 are A's (two_pairs: and rows 2 and 3 B's rows 0 and 1).
std::vector<uint8_t> pair_at(uint32_t offset, bool two_pairs, int32_t* width) {
  lcg g{77};
  auto row = [&g]() {
    std::vector<uint8_t> r(4);
    for (uint8_t& b : r) b = static_cast<uint8_t>(g.next() & 0xff);
    return r;
  };
  std::vector<std::vector<std::vector<uint8_t>>> cells;
  cells.push_back({row(), row(), row(), row()});
  const uint32_t gap = 10 + offset - 26;  // from the end of A (byte 26) to the last cell's token
  uint32_t lits = 0;
  while ((gap - 17 * lits) % 2 != 0) ++lits;
  if (lits == 0) lits = 2;
  for (uint32_t k = 0; k < lits; ++k) cells.push_back({row(), row(), row(), row()});
  for (uint32_t k = 0; k < (gap - 17 * lits) / 2; ++k) {
    const std::vector<uint8_t> v(4, static_cast<uint8_t>(k % 251));
    cells.push_back({v, v, v, v});
  }
  if (two_pairs) cells.push_back({cells[0][0], cells[0][1], cells[1][0], cells[1][1]});
  else cells.push_back({cells[0][0], cells[0][1], row(), row()});
  const size_t w = 4 * cells.size();
  std::vector<uint8_t> img(4 * w);
  for (size_t c = 0; c < cells.size(); ++c)
    for (size_t r = 0; r < 4; ++r) std::memcpy(img.data() + r * w + 4 * c, cells[c][r].data(), 4);
  *width = static_cast<int32_t>(w);
  return img;
}

TESSERA_TEST(NdPluginsArray, NdlzNeverWritesAnOffsetTheDecoderWraps) {
  // The reference's 4x4 decoder adds 3 to a row match's 16-bit offset (5 for two pairs) in 16 bits: the
  // reference's encoder writes matches 65533 and 65534 bytes back (two pairs: 65531 to 65534), which its decoder
  // then reads from the wrong place (the array reads back wrong, or not at all). Tessera's encoder skips such a
  // match, as if it were not there (its stream then differs from the reference's); just closer, it is taken.
  const allocator alloc = test::system_allocator();
  chunk_encoder e;
  chunk_decoder d;
  REQUIRE_OK(chunk_encoder_init(e, alloc));
  REQUIRE_OK(chunk_decoder_init(d, alloc));
  for (int k = 0; k < 10; ++k) {
    const uint32_t offset = 65530u + static_cast<uint32_t>(k / 2);
    const bool two = k % 2 == 1;
    int32_t w = 0;
    const std::vector<uint8_t> img = pair_at(offset, two, &w);
    chunk_encode_params p;
    p.typesize = 1;
    p.compressor = codec::ndlz;
    p.compcode_meta = 4;
    p.filters[5] = 0;
    p.blocksize = static_cast<int32_t>(img.size());
    p.geometry.ndim = 2;
    p.geometry.blockshape[0] = 4;
    p.geometry.blockshape[1] = w;
    std::vector<uint8_t> chunk(chunk_encode_bound(img.size()));
    auto n = chunk_encode(e, p, bytes_view(img.data(), img.size()), bytes_mut(chunk.data(), chunk.size()));
    REQUIRE_OK(n);
    CHECK(*n < img.size() / 4);  // coded by NDLZ
    // Close enough, the last cell is a pair token (136) before its two literal rows, or two pairs (40).
    if (!two && offset <= 65532) CHECK_EQ(chunk[*n - 8 - 2 - 1], 136);
    if (two && offset <= 65530) CHECK_EQ(chunk[*n - 4 - 1], 40);
    std::vector<uint8_t> back(img.size());
    REQUIRE_OK(chunk_decode(d, bytes_view(chunk.data(), *n), bytes_mut(back.data(), back.size())));
    CHECK(back == img);
  }
}

// ---- Tessera's own arrays: writes, rewrites, refusals -------------------------------------------------------

TESSERA_TEST(NdPluginsArray, PartialWritesKeepTheArray) {
  const allocator alloc = test::system_allocator();
  for (const identity_case& c : kCases) {
    const size_t itemsize = static_cast<size_t>(c.dtype[2] - '0');
    std::vector<uint8_t> model = input_of(c, itemsize);
    const bool lossy = c.filters[0] == 33 || c.filters[1] == 33;
    array_params p = params_of(c);
    growable_buffer gb;
    growable_buffer_init(gb, alloc);
    array a;
    REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(gb)), alloc, p,
                            array_fill_buffer(bytes_view(model.data(), model.size()))));
    const array_layout& l = array_layout_get(a);
    if (lossy) REQUIRE_OK(array_read(a, bytes_mut(model.data(), model.size())));  // the means are the array now
    // A box across chunk and block edges, overwritten with a pattern (for NDMEAN: the box's items already
    // stand for their cells' means only where whole cells are written; compare with a fresh read instead).
    int64_t start[kMaxDims], stop[kMaxDims];
    for (int d = 0; d < l.ndim; ++d) {
      start[d] = l.shape[d] / 4;
      stop[d] = l.shape[d] - l.shape[d] / 5;
    }
    std::vector<uint8_t> box = box_of(model, l, static_cast<int64_t>(itemsize), start, stop);
    for (size_t i = 0; i < box.size(); ++i) box[i] = static_cast<uint8_t>(box[i] ^ (i % 7 == 0 ? 0x20 : 0));
    REQUIRE_OK(array_slice_write(a, start, stop, bytes_view(box.data(), box.size())));
    std::vector<uint8_t> back(model.size());
    REQUIRE_OK(array_read(a, bytes_mut(back.data(), back.size())));
    if (!lossy) {
      // The model: the box written into the input, item by item.
      int64_t idx[kMaxDims];
      for (int d = 0; d < l.ndim; ++d) idx[d] = start[d];
      size_t k = 0;
      for (;;) {
        int64_t at = 0;
        for (int d = 0; d < l.ndim; ++d) at = at * l.shape[d] + idx[d];
        std::memcpy(model.data() + at * static_cast<int64_t>(itemsize), box.data() + k * itemsize, itemsize);
        ++k;
        int d = l.ndim - 1;
        while (d >= 0 && ++idx[d] == stop[d]) {
          idx[d] = start[d];
          --d;
        }
        if (d < 0) break;
      }
      CHECK(back == model);
    }
    // Reopened from its bytes (and by another reader with several workers), it reads the same.
    CHECK_OK(array_close(a));
    const_buffer cb{gb.bytes().data(), gb.size()};
    array r;
    array_open_options oo;
    oo.exec = scrambled();
    REQUIRE_OK(array_open(r, const_buffer_storage(cb), alloc, oo));
    std::vector<uint8_t> again(model.size());
    REQUIRE_OK(array_read(r, bytes_mut(again.data(), again.size())));
    CHECK(again == back);
    CHECK_OK(array_close(r));
  }
}

TESSERA_TEST(NdPluginsArray, GeometriesTheReferenceRefuses) {
  const allocator alloc = test::system_allocator();
  std::vector<uint8_t> data(24 * 24 * 24 * 4);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  struct refusal {
    int ndim;
    const char* dtype;
    codec compressor;
    uint8_t meta;
    uint8_t filter;
    uint8_t fmeta;
    int32_t blocks[3];
  };
  const refusal cases[] = {
      {3, "|u1", codec::ndlz, 4, 0, 0, {8, 8, 8}},           // NDLZ: 2-D only
      {1, "|u1", codec::ndlz, 4, 0, 0, {64, 0, 0}},          // NDLZ: 2-D only
      {2, "<u2", codec::ndlz, 4, 0, 0, {8, 8, 0}},           // NDLZ: items of 2 bytes in one stream
      {2, "|u1", codec::ndlz, 6, 0, 0, {8, 8, 0}},           // NDLZ: cells of 4 or 8
      {2, "<i2", codec::lz4, 0, 32, 9, {8, 8, 0}},           // NDCELL: a cell larger than the block
      {2, "<i2", codec::lz4, 0, 33, 4, {8, 8, 0}},           // NDMEAN: items of 4 or 8 bytes only
      {3, "<f4", codec::lz4, 0, 33, 6, {4, 12, 12}},         // NDMEAN: cells the reference misplaces
  };
  for (const refusal& c : cases) {
    array_params p;
    p.ndim = c.ndim;
    for (int d = 0; d < c.ndim; ++d) {
      p.shape[d] = 24;
      p.chunkshape[d] = 24;
      p.blockshape[d] = c.blocks[d];
    }
    if (c.ndim == 1) p.shape[0] = p.chunkshape[0] = 64 * 4;
    p.dtype = span<const char>(c.dtype, 3);
    p.compressor = c.compressor;
    p.compcode_meta = c.meta;
    for (int i = 0; i < kChunkMaxFilters; ++i) p.filters[i] = p.filters_meta[i] = 0;
    p.filters[5] = c.filter;
    p.filters_meta[5] = c.fmeta;
    const size_t itemsize = static_cast<size_t>(c.dtype[2] - '0');
    size_t n = itemsize;
    for (int d = 0; d < c.ndim; ++d) n *= static_cast<size_t>(p.shape[d]);
    growable_buffer gb;
    growable_buffer_init(gb, alloc);
    array a;
    const status s = array_create(a, array_target_contiguous(growable_buffer_storage(gb)), alloc, p,
                                  array_fill_buffer(bytes_view(data.data(), n)));
    CHECK_ERR(s, errc::unsupported);
    (void)array_close(a);
  }
}

}  // namespace
