// SPDX-License-Identifier: BSD-3-Clause
// ZFP, c-blosc2's codecs 33 (fixed accuracy), 34 (fixed precision) and 35 (fixed rate), through the array API,
// which gives the codec its block shape (tests/data/plugins/README.md has the files):
// - the reference's golden ZFP arrays decode exactly to its own decodes (array_open, several workers, slices,
//   elements, array_view, the C API, chunk by chunk with and without the geometry);
// - arrays written here are, chunk for chunk, the reference's bytes for the same input and parameters (captured
//   once from c-blosc2 3.3.2 with Debian's libzfp 1.0.0, single-threaded);
// - damaged streams are errors (a stream cut short) or at worst other numbers, never a read outside the chunk;
// - what the reference refuses is refused; an application's codec 33 comes first.
// A build without libzfp (cross targets, bare metal) says so: codec_available is false and every ZFP chunk is
// codec_unavailable, the golden files are read all the same (a missing file fails).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/array_view.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/tessera.h"

#include "../support/check.hpp"
#include "plugins_testing.hpp"
#include "nd_array_testing.hpp"
#include "../support/test_allocators.hpp"
#include "../support/test_data.hpp"

using namespace tessera;
using namespace nd_array_testing;

namespace {

bool zfp_here() {
  return codec_available(codec::zfp_acc) && codec_available(codec::zfp_prec) && codec_available(codec::zfp_rate);
}

void* c_allocate(void*, size_t size, size_t alignment) {
  return std::aligned_alloc(alignment < sizeof(void*) ? sizeof(void*) : alignment,
                            (size + alignment - 1) / alignment * alignment);
}
void c_deallocate(void*, void* block, size_t, size_t) { std::free(block); }

const char* const kGolden[] = {"zfp_acc_f4_3d", "zfp_prec_f8_2d", "zfp_rate_f4_1d", "zfp_rate_f8_4d"};

TESSERA_TEST(ZfpArray, TheReferencesArraysDecodeExactly) {
  const allocator alloc = test::system_allocator();
  const bool here = zfp_here();
  CHECK(std::strcmp(codec_name(codec::zfp_acc), "zfp_acc") == 0);
  CHECK(std::strcmp(codec_name(codec::zfp_prec), "zfp_prec") == 0);
  CHECK(std::strcmp(codec_name(codec::zfp_rate), "zfp_rate") == 0);
  for (const char* name : kGolden) {
    std::vector<uint8_t> frame_bytes;
    REQUIRE(load(std::string(name) + ".b2nd", frame_bytes));  // a missing file fails, in every build
    test::reference_output ref;  // NAME.raw, or its SHA-256 (NAME.raw.sha256) for the larger ones
    REQUIRE(test::reference_load(plugins_dir() + name + ".raw", ref));
    std::vector<uint8_t> raw = ref.bytes;
    const_buffer cb{frame_bytes.data(), frame_bytes.size()};
    for (bool parallel : {false, true}) {
      array a;
      array_open_options oo;
      if (parallel) oo.exec = scrambled();
      REQUIRE_OK(array_open(a, const_buffer_storage(cb), alloc, oo));
      const array_layout& l = array_layout_get(a);
      const int64_t itemsize = array_itemsize(a);
      const size_t nbytes = static_cast<size_t>(l.nitems * itemsize);
      if (ref.have_bytes) REQUIRE_EQ(nbytes, raw.size());
      std::vector<uint8_t> got(nbytes, 0xee);
      if (!here) {
        CHECK_ERR(array_read(a, bytes_mut(got.data(), got.size())), errc::codec_unavailable);
        CHECK_OK(array_close(a));
        continue;
      }
      REQUIRE_OK(array_read(a, bytes_mut(got.data(), got.size())));
      REQUIRE(test::reference_matches(ref, got.data(), got.size()));
      raw = got;  // the reference's decode: the slices below are checked against it
      check_slices(t, a, raw);
      // Chunk by chunk: ZFP needs the block shape to read too.
      frame& f = array_frame(a);
      const frame_info* fi = frame_info_get(f);
      REQUIRE(fi != nullptr);
      chunk_decoder_options with;
      with.geometry = array_chunk_geometry(l);
      chunk_decoder dg, dn;
      REQUIRE_OK(chunk_decoder_init(dg, alloc, with));
      REQUIRE_OK(chunk_decoder_init(dn, alloc));
      std::vector<uint8_t> chunk(static_cast<size_t>(l.extchunk_nitems * itemsize));
      for (int64_t c = 0; c < fi->nchunks; ++c) {
        CHECK_OK(frame_chunk_decode(f, dg, c, bytes_mut(chunk.data(), chunk.size())));
        CHECK_ERR(frame_chunk_decode(f, dn, c, bytes_mut(chunk.data(), chunk.size())), errc::unsupported);
      }
      CHECK_OK(array_close(a));
    }
    // The in-memory reader, and the C API's.
    array_view v;
    REQUIRE_OK(array_view_open(v, bytes_view(frame_bytes.data(), frame_bytes.size()), alloc));
    int64_t start[kMaxDims] = {}, stop[kMaxDims];
    for (int d = 0; d < v.layout.ndim; ++d) stop[d] = v.layout.shape[d];
    std::vector<uint8_t> got(raw.empty() ? static_cast<size_t>(v.layout.nitems * v.itemsize) : raw.size(), 0xee);
    const status vs = array_view_slice_read(v, start, stop, bytes_mut(got.data(), got.size()));
    if (here) {
      CHECK_OK(vs);
      CHECK(test::reference_matches(ref, got.data(), got.size()));
    } else {
      CHECK_ERR(vs, errc::codec_unavailable);
    }
    array_view_close(v);
    const tessera_allocator ca{c_allocate, c_deallocate, nullptr};
    tessera_array_view* cv = nullptr;
    REQUIRE(tessera_array_view_open(&cv, frame_bytes.data(), frame_bytes.size(), &ca, 0).code == TESSERA_OK);
    std::fill(got.begin(), got.end(), 0xee);
    const tessera_status cs = tessera_array_view_slice_get(cv, start, stop, got.data(), got.size());
    if (here) {
      CHECK(cs.code == TESSERA_OK);
      CHECK(test::reference_matches(ref, got.data(), got.size()));
    } else {
      CHECK(cs.code == TESSERA_ERR_CODEC_UNAVAILABLE);
    }
    tessera_array_view_close(cv);
  }
}

// ---- Byte identity with the reference's chunks ------------------------------------------------------------

struct lcg {
  uint32_t s;
  uint32_t next() {
    s = s * 1103515245u + 12345u;
    return s >> 16;
  }
};

// floats(seed) of tests/data/plugins/README.md: (draw % 2000) / 8 - 100, little-endian.
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

double item_at(const std::vector<uint8_t>& v, size_t i, size_t itemsize) {
  if (itemsize == 4) {
    float f = 0;
    std::memcpy(&f, v.data() + 4 * i, 4);
    return f;
  }
  double d = 0;
  std::memcpy(&d, v.data() + 8 * i, 8);
  return d;
}

struct identity_case {
  const char* name;
  const char* dtype;
  int ndim;
  int64_t shape[4];
  int32_t chunks[4];
  int32_t blocks[4];
  codec compressor;
  uint8_t meta;
  int clevel;
  split_mode split;
  uint32_t seed;
};

const identity_case kCases[] = {
    {"zfp-acc4-f4-3d", "<f4", 3, {20, 20, 20}, {10, 10, 10}, {5, 5, 5}, codec::zfp_acc, 4, 5, split_mode::forward_compat, 11},
    {"zfp-accm1-f4-3d", "<f4", 3, {12, 12, 12}, {12, 12, 12}, {4, 4, 4}, codec::zfp_acc, 255, 5, split_mode::forward_compat, 12},
    {"zfp-rate10-f4-1d", "<f4", 1, {1000}, {250}, {50}, codec::zfp_rate, 10, 5, split_mode::forward_compat, 14},
    {"zfp-rate50-f4-split", "<f4", 2, {24, 40}, {24, 40}, {12, 20}, codec::zfp_rate, 50, 5, split_mode::always, 16},
    {"zfp-prec10-f4-pad", "<f4", 2, {30, 26}, {20, 20}, {8, 12}, codec::zfp_prec, 10, 9, split_mode::forward_compat, 17},
};

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
  p.compcode_meta = c.meta;
  p.clevel = c.clevel;
  for (int i = 0; i < kChunkMaxFilters; ++i) p.filters[i] = p.filters_meta[i] = 0;
  p.split = c.split;
  return p;
}

size_t items_of(const identity_case& c) {
  size_t n = 1;
  for (int d = 0; d < c.ndim; ++d) n *= static_cast<size_t>(c.shape[d]);
  return n;
}

TESSERA_TEST(ZfpArray, ChunksAreTheReferencesBytes) {
  const allocator alloc = test::system_allocator();
  for (const identity_case& c : kCases) {
    std::vector<uint8_t> captured;
    REQUIRE(load(std::string("oracle-") + c.name + ".chunks", captured));
    const size_t itemsize = static_cast<size_t>(c.dtype[2] - '0');
    const std::vector<uint8_t> input = floats(c.seed, items_of(c), itemsize);
    for (bool parallel : {false, true}) {
      array_params p = params_of(c);
      if (parallel) p.exec = scrambled();
      growable_buffer gb;
      growable_buffer_init(gb, alloc);
      array a;
      const status s = array_create(a, array_target_contiguous(growable_buffer_storage(gb)), alloc, p,
                                    array_fill_buffer(bytes_view(input.data(), input.size())));
      if (!zfp_here()) {
        CHECK_ERR(s, errc::codec_unavailable);
        (void)array_close(a);
        continue;
      }
      REQUIRE_OK(s);
      frame& f = array_frame(a);
      const frame_info* fi = frame_info_get(f);
      REQUIRE(fi != nullptr);
      CHECK_EQ(fi->compcode, static_cast<uint8_t>(c.compressor));
      CHECK_EQ(fi->compcode_meta, c.meta);
      check_chunks_match(t, f, captured);
      // It reads back: within the tolerance (accuracy), or the input itself where the blocks went verbatim.
      std::vector<uint8_t> back(input.size());
      REQUIRE_OK(array_read(a, bytes_mut(back.data(), back.size())));
      if (c.split == split_mode::always) CHECK(back == input);  // split streams are not whole blocks: verbatim
      if (c.compressor == codec::zfp_acc) {
        const double tol = std::pow(10.0, static_cast<int8_t>(c.meta));
        bool within = true;
        for (size_t i = 0; i < items_of(c); ++i)
          within = within && std::fabs(item_at(back, i, itemsize) - item_at(input, i, itemsize)) <= tol;
        CHECK(within);
      }
      CHECK_OK(array_close(a));
    }
  }
}

// The golden arrays whose decode ZFP codes again to the same streams (fixed precision, and fixed rate in 4-D)
// written back from that decode with the same parameters: the reference's chunks, byte for byte. The
// other two do not come back to their streams from their decodes (the accuracy one decodes to zeros, which are
// written as special chunks); their parameters are in the captured cases above, on the recipes' inputs.
TESSERA_TEST(ZfpArray, GoldenArraysWrittenBackAreTheReferencesBytes) {
  const allocator alloc = test::system_allocator();
  for (const char* name : {"zfp_prec_f8_2d", "zfp_rate_f8_4d"}) {
    std::vector<uint8_t> frame_bytes;
    REQUIRE(load(std::string(name) + ".b2nd", frame_bytes));
    const_buffer cb{frame_bytes.data(), frame_bytes.size()};
    array a;
    REQUIRE_OK(array_open(a, const_buffer_storage(cb), alloc));
    array_params p = array_params_get(a);
    std::vector<uint8_t> items(static_cast<size_t>(array_nbytes(a)));
    const status rs = array_read(a, bytes_mut(items.data(), items.size()));
    if (!zfp_here()) {
      CHECK_ERR(rs, errc::codec_unavailable);
      CHECK_OK(array_close(a));
      continue;
    }
    REQUIRE_OK(rs);
    growable_buffer gb;
    growable_buffer_init(gb, alloc);
    array b;
    REQUIRE_OK(array_create(b, array_target_contiguous(growable_buffer_storage(gb)), alloc, p,
                            array_fill_buffer(bytes_view(items.data(), items.size()))));
    const frame_info* fa = frame_info_get(array_frame(a));
    const frame_info* fb = frame_info_get(array_frame(b));
    REQUIRE(fa != nullptr && fb != nullptr);
    REQUIRE_EQ(fa->nchunks, fb->nchunks);
    owned_array<uint8_t> ba, bb;
    for (int64_t k = 0; k < fa->nchunks; ++k) {
      auto ca = frame_chunk_read(array_frame(a), k, ba);
      auto cbk = frame_chunk_read(array_frame(b), k, bb);
      REQUIRE_OK(ca);
      REQUIRE_OK(cbk);
      CHECK(ca->size() == cbk->size() && std::memcmp(ca->data(), cbk->data(), ca->size()) == 0);
    }
    CHECK_OK(array_close(b));
    CHECK_OK(array_close(a));
  }
}

// ---- Damaged streams, refusals, precedence ----------------------------------------------------------------

// A one-chunk array of `c` (not split) written here, its bytes in frame_bytes; the chunk's offset and size.
struct written {
  std::vector<uint8_t> chunk;
  chunk_nd_geometry geometry;
  size_t nbytes = 0;
};

written chunk_of(const identity_case& c) {
  const allocator alloc = test::system_allocator();
  written w;
  const size_t itemsize = static_cast<size_t>(c.dtype[2] - '0');
  const std::vector<uint8_t> input = floats(c.seed, items_of(c), itemsize);
  array_params p = params_of(c);
  growable_buffer gb;
  growable_buffer_init(gb, alloc);
  array a;
  if (!array_create(a, array_target_contiguous(growable_buffer_storage(gb)), alloc, p,
                    array_fill_buffer(bytes_view(input.data(), input.size())))
           .ok())
    return w;
  owned_array<uint8_t> buffer;
  auto mine = frame_chunk_read(array_frame(a), 0, buffer);
  if (mine.ok()) w.chunk.assign(mine->data(), mine->data() + mine->size());
  w.geometry = array_chunk_geometry(array_layout_get(a));
  w.nbytes = static_cast<size_t>(array_layout_get(a).extchunk_nitems) * itemsize;
  (void)array_close(a);
  return w;
}

TESSERA_TEST(ZfpArray, DamagedStreamsAreErrorsNotReadsOutside) {
  if (!zfp_here()) {
    CHECK(!codec_available(codec::zfp_rate));
    return;
  }
  const allocator alloc = test::system_allocator();
  chunk_decoder_options o;
  for (const identity_case& c : {kCases[1], kCases[2], kCases[4]}) {  // accuracy, rate 1-D, precision
    const written w = chunk_of(c);
    REQUIRE(!w.chunk.empty());
    o.geometry = w.geometry;
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, alloc, o));
    std::vector<uint8_t> out(w.nbytes);
    REQUIRE_OK(chunk_decode(d, bytes_view(w.chunk.data(), w.chunk.size()), bytes_mut(out.data(), out.size())));
    // Each block's stream claimed 8 and 1 bytes shorter (the bytes after it stay in the chunk): libzfp would
    // read on into them; the decoder reads a padded copy and reports the stream as corrupt.
    auto hr = chunk_header_read(bytes_view(w.chunk.data(), w.chunk.size()));
    REQUIRE_OK(hr);
    const chunk_header h = *hr;
    const size_t nblocks = (static_cast<size_t>(h.nbytes) + static_cast<size_t>(h.blocksize) - 1) /
                           static_cast<size_t>(h.blocksize);
    for (size_t b = 0; b < nblocks; ++b) {
      for (int32_t cut : {8, 1}) {
        std::vector<uint8_t> bad = w.chunk;
        uint32_t start = 0;
        std::memcpy(&start, bad.data() + 32 + 4 * b, 4);  // little-endian hosts (ZFP is host only)
        int32_t csize = 0;
        std::memcpy(&csize, bad.data() + start, 4);
        if (csize <= cut || csize == h.blocksize) continue;  // a run or a verbatim block
        csize -= cut;
        std::memcpy(bad.data() + start, &csize, 4);
        auto r = chunk_decode(d, bytes_view(bad.data(), bad.size()), bytes_mut(out.data(), out.size()));
        CHECK_ERR(r, errc::corrupt);
      }
    }
    // Bytes flipped anywhere after the header and the offsets: an error or other numbers, under ASan never a
    // read outside the chunk (the chunk is copied to a buffer of exactly its size).
    lcg g{99};
    for (int k = 0; k < 300; ++k) {
      std::vector<uint8_t> bad(w.chunk);
      for (int j = 0; j < 4; ++j) {
        const size_t at = 32 + g.next() % (bad.size() - 32);
        bad[at] = static_cast<uint8_t>(bad[at] ^ (1u << (g.next() % 8)));
      }
      std::vector<uint8_t> exact(bad);
      (void)chunk_decode(d, bytes_view(exact.data(), exact.size()), bytes_mut(out.data(), out.size()));
    }
  }
}

TESSERA_TEST(ZfpArray, WhatTheReferenceRefuses) {
  const allocator alloc = test::system_allocator();
  std::vector<uint8_t> data(8 * 8 * 8 * 8 * 8 * 8);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  struct refusal {
    int ndim;
    const char* dtype;
    int32_t block;
    uint8_t filter;
    errc want;
  };
  const refusal cases[] = {
      {5, "<f4", 4, 0, errc::unsupported},         // 1 to 4 dimensions
      {2, "<f4", 3, 0, errc::unsupported},         // block edges of at least 4
      {2, "<i2", 4, 0, errc::unsupported},         // items of 4 or 8 bytes
      {2, "<f4", 4, 1, errc::invalid_argument},    // no shuffle (the reference makes no context)
      {2, "<f8", 4, 2, errc::invalid_argument},    // no bitshuffle
  };
  for (const refusal& c : cases) {
    for (codec z : {codec::zfp_acc, codec::zfp_prec, codec::zfp_rate}) {
      array_params p;
      p.ndim = c.ndim;
      for (int d = 0; d < c.ndim; ++d) {
        p.shape[d] = 8;
        p.chunkshape[d] = 8;
        p.blockshape[d] = c.block;
      }
      p.dtype = span<const char>(c.dtype, 3);
      p.compressor = z;
      p.compcode_meta = 20;
      for (int i = 0; i < kChunkMaxFilters; ++i) p.filters[i] = p.filters_meta[i] = 0;
      p.filters[5] = c.filter;
      const size_t itemsize = static_cast<size_t>(c.dtype[2] - '0');
      size_t n = itemsize;
      for (int d = 0; d < c.ndim; ++d) n *= 8;
      growable_buffer gb;
      growable_buffer_init(gb, alloc);
      array a;
      const status s = array_create(a, array_target_contiguous(growable_buffer_storage(gb)), alloc, p,
                                    array_fill_buffer(bytes_view(data.data(), n)));
      CHECK_ERR(s, zfp_here() ? c.want : errc::codec_unavailable);
      (void)array_close(a);
    }
  }
  // At the chunk level, without the array's geometry: writing and reading both need it.
  if (!zfp_here()) return;
  const written w = chunk_of(kCases[1]);
  REQUIRE(!w.chunk.empty());
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, alloc));
  std::vector<uint8_t> out(w.nbytes);
  CHECK_ERR(chunk_decode(d, bytes_view(w.chunk.data(), w.chunk.size()), bytes_mut(out.data(), out.size())),
            errc::unsupported);
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, alloc));
  chunk_encode_params ep;
  ep.typesize = 4;
  ep.compressor = codec::zfp_rate;
  ep.compcode_meta = 50;
  ep.filters[5] = 0;
  ep.blocksize = 256;
  const std::vector<uint8_t> in = floats(5, 256, 4);
  std::vector<uint8_t> chunk(chunk_encode_bound(in.size()));
  CHECK_ERR(chunk_encode(e, ep, bytes_view(in.data(), in.size()), bytes_mut(chunk.data(), chunk.size())),
            errc::unsupported);
  // The geometry disagreeing with the block: a shape of more items than the block is corrupt.
  chunk_decoder_options o;
  o.geometry = w.geometry;
  o.geometry.blockshape[0] = 8;
  chunk_decoder dw;
  REQUIRE_OK(chunk_decoder_init(dw, alloc, o));
  CHECK_ERR(chunk_decode(dw, bytes_view(w.chunk.data(), w.chunk.size()), bytes_mut(out.data(), out.size())),
            errc::corrupt);
}

// An application's codec 33 (here: the tests' run-length codec) comes first, both ways; without it the library's
// ZFP reads the chunk (and fails: it is no ZFP stream, and there is no geometry).
TESSERA_TEST(ZfpArray, AnApplicationsCodecWithTheSameIdWins) {
  const allocator alloc = test::system_allocator();
  plugins_test::registry reg;
  chunk_user_codec mine = reg.codec;
  mine.id = 33;
  const chunk_plugins plugins{&mine, 1, nullptr, 0};
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, alloc));
  chunk_encode_params p;
  p.typesize = 4;
  p.compressor = codec::zfp_acc;
  p.compcode_meta = 0x5a;
  p.filters[5] = 1;  // a shuffle: the application's codec 33 is not ZFP, nothing refuses it
  p.blocksize = 256;
  p.plugins = &plugins;
  std::vector<uint8_t> in(1024);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i / 100);
  std::vector<uint8_t> chunk(chunk_encode_bound(in.size()));
  auto n = chunk_encode(e, p, bytes_view(in.data(), in.size()), bytes_mut(chunk.data(), chunk.size()));
  REQUIRE_OK(n);
  chunk_decoder_options o;
  o.plugins = &plugins;
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, alloc, o));
  std::vector<uint8_t> back(in.size());
  REQUIRE_OK(chunk_decode(d, bytes_view(chunk.data(), *n), bytes_mut(back.data(), back.size())));
  CHECK(back == in);
  CHECK(reg.codec_calls.encodes > 0);
  CHECK(reg.codec_calls.decodes > 0);
  auto hr = chunk_header_read(bytes_view(chunk.data(), *n));
  REQUIRE_OK(hr);
  const chunk_header h = *hr;
  const chunk_missing none = chunk_plugins_missing(h, &plugins);
  CHECK(none.kind == chunk_missing_kind::none);
  const chunk_missing m = chunk_plugins_missing(h, nullptr);
  if (zfp_here()) CHECK(m.kind == chunk_missing_kind::none);  // the library's ZFP would take it
  else CHECK(m.kind == chunk_missing_kind::codec && m.id == 33);
  chunk_decoder plain;
  REQUIRE_OK(chunk_decoder_init(plain, alloc));
  CHECK(!chunk_decode(plain, bytes_view(chunk.data(), *n), bytes_mut(back.data(), back.size())).ok());
}

}  // namespace
