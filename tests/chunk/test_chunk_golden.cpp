// SPDX-License-Identifier: BSD-3-Clause
// The reference's compatibility chunks (Blosc 1.3.0 .. 3.0.0) and VL-block frames decode to the exact bytes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/chunk.hpp"

#include "../../src/chunk/chunk_internal.hpp"  // the fixed-size-block path array_view uses (internal)
#include "../support/check.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

bool read_file(const std::string& path, std::vector<uint8_t>& data) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  data.clear();
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + n);
  std::fclose(f);
  return true;
}

std::string compat(const char* name) { return std::string(TESSERA_TEST_DATA_DIR) + "/golden/compat/" + name; }

// The first n bytes of the little-endian int32 sequence 0, 1, 2, ...
std::vector<uint8_t> int32_sequence(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t x = static_cast<uint32_t>(i / 4);
    v[i] = static_cast<uint8_t>(x >> (8 * (i % 4)));
  }
  return v;
}

enum class needs { none, lz4, zlib, zstd };

struct compat_case {
  const char* file;
  needs codec;
};

const compat_case kCompat[] = {
    {"blosc-1.3.0-blosclz.cdata", needs::none},
    {"blosc-1.3.0-lz4.cdata", needs::lz4},
    {"blosc-1.3.0-lz4hc.cdata", needs::lz4},
    {"blosc-1.3.0-zlib.cdata", needs::zlib},
    {"blosc-1.7.0-blosclz.cdata", needs::none},
    {"blosc-1.7.0-lz4.cdata", needs::lz4},
    {"blosc-1.7.0-lz4hc.cdata", needs::lz4},
    {"blosc-1.7.0-zlib.cdata", needs::zlib},
    {"blosc-1.11.1-blosclz.cdata", needs::none},
    {"blosc-1.11.1-lz4.cdata", needs::lz4},
    {"blosc-1.11.1-lz4hc.cdata", needs::lz4},
    {"blosc-1.11.1-zlib.cdata", needs::zlib},
    {"blosc-1.11.1-zstd.cdata", needs::zstd},
    {"blosc-1.14.0-blosclz.cdata", needs::none},
    {"blosc-1.14.0-lz4.cdata", needs::lz4},
    {"blosc-1.14.0-lz4hc.cdata", needs::lz4},
    {"blosc-1.14.0-zlib.cdata", needs::zlib},
    {"blosc-1.14.0-zstd.cdata", needs::zstd},
    {"blosc-1.17.1-lz4-bitshuffle4-memcpy.cdata", needs::lz4},
    {"blosc-1.17.1-lz4-bitshuffle8-nomemcpy.cdata", needs::lz4},
    {"blosc-1.18.0-lz4-bitshuffle4-memcpy.cdata", needs::lz4},
    {"blosc-1.18.0-lz4-bitshuffle8-nomemcpy.cdata", needs::lz4},
    {"blosc-2.0.0-lz4-bitshuffle4-memcpy.cdata", needs::lz4},
    {"blosc-2.0.0-lz4-bitshuffle8-nomemcpy.cdata", needs::lz4},
    {"blosc-blosclz-3.0.0.cdata", needs::none},
    {"blosc-lz4-3.0.0.cdata", needs::lz4},
    {"blosc-zstd-3.0.0.cdata", needs::zstd},
};

bool available(needs n) {
  switch (n) {
    case needs::none: return true;
    case needs::lz4: return codec_available(codec::lz4);
    case needs::zlib: return codec_available(codec::zlib);
    case needs::zstd: return codec_available(codec::zstd);
  }
  return false;
}

// A native build is expected to have every library unless it was switched off on purpose: a missing one must
// fail here, not skip.
bool missing_allowed(needs n) {
#ifndef TESSERA_TEST_NATIVE
  (void)n;
  return true;
#else
  switch (n) {
#ifdef TESSERA_TEST_LZ4_DISABLED
    case needs::lz4: return true;
#endif
#ifdef TESSERA_TEST_ZLIB_DISABLED
    case needs::zlib: return true;
#endif
#ifdef TESSERA_TEST_ZSTD_DISABLED
    case needs::zstd: return true;
#endif
    default: return false;
  }
#endif
}

}  // namespace

TESSERA_TEST(chunk_golden, compat_chunks_decode_exactly) {
  test::counting_allocator counter;
  {
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, counter.get()));
    for (const compat_case& c : kCompat) {
      std::vector<uint8_t> data;
      if (!read_file(compat(c.file), data)) {
        std::fprintf(stderr, "missing golden file %s\n", c.file);
        CHECK(false);
        continue;
      }
      auto h = chunk_header_read(bytes_view(data.data(), data.size()));
      REQUIRE_OK(h);
      const size_t nbytes = static_cast<size_t>(h->nbytes);
      CHECK_LE(static_cast<size_t>(h->cbytes), data.size());
      // Guard bytes around out catch writes past it.
      std::vector<uint8_t> out(nbytes + 64, 0xa5);
      auto r = chunk_decode(d, bytes_view(data.data(), data.size()), bytes_mut(out.data() + 32, nbytes));
      if (!available(c.codec)) {
        CHECK(missing_allowed(c.codec));
        CHECK_ERR(r, errc::codec_unavailable);
        continue;
      }
      if (!r.ok()) std::fprintf(stderr, "%s: %s\n", c.file, r.err().message);
      REQUIRE_OK(r);
      CHECK_EQ(*r, nbytes);
      const std::vector<uint8_t> expected = int32_sequence(nbytes);
      // Blosc 1.x left the bytes past the last multiple of 8 of bit-shuffled chunks unspecified (the
      // reference's own compat test skips them too).
      const size_t checked = std::strstr(c.file, "-bitshuffle") != nullptr ? nbytes - nbytes % 8 : nbytes;
      const bool same = std::memcmp(out.data() + 32, expected.data(), checked) == 0;
      if (!same) std::fprintf(stderr, "%s: wrong bytes\n", c.file);
      CHECK(same);
      for (size_t i = 0; i < 32; ++i) {
        CHECK_EQ(out[i], 0xa5);
        CHECK_EQ(out[32 + nbytes + i], 0xa5);
      }
      // Each block alone.
      for (size_t b = 0; b < h->nblocks; ++b) {
        auto e = chunk_block_extent_get(*h, bytes_view(data.data(), data.size()), b);
        REQUIRE_OK(e);
        std::vector<uint8_t> blk(e->size + 32, 0x5a);
        auto rb = chunk_decode_block(d, bytes_view(data.data(), data.size()), b, bytes_mut(blk.data(), e->size));
        REQUIRE_OK(rb);
        CHECK_EQ(*rb, e->size);
        const size_t upto = e->offset + e->size < checked ? e->size : checked - e->offset;
        CHECK(std::memcmp(blk.data(), expected.data() + e->offset, upto) == 0);
        CHECK(std::memcmp(blk.data(), out.data() + 32 + e->offset, e->size) == 0);
        for (size_t i = 0; i < 32; ++i) CHECK_EQ(blk[e->size + i], 0x5a);
      }
    }
  }
  CHECK(!counter.leaked());
}

// Walks the chunks of a contiguous frame: they follow the header one after the other (each says its cbytes).
static void frame_chunks(const std::vector<uint8_t>& frame, size_t count, std::vector<bytes_view>& chunks) {
  const size_t header_len = (size_t{frame[11]} << 24) | (size_t{frame[12]} << 16) | (size_t{frame[13]} << 8) | frame[14];
  size_t pos = header_len;
  for (size_t i = 0; i < count && pos + 16 <= frame.size(); ++i) {
    auto h = chunk_header_read(bytes_view(frame.data() + pos, frame.size() - pos));
    if (!h.ok()) break;
    chunks.push_back(bytes_view(frame.data() + pos, static_cast<size_t>(h->cbytes)));
    pos += static_cast<size_t>(h->cbytes);
  }
}

TESSERA_TEST(chunk_golden, vlblocks_frame_decodes_to_raw) {
  std::vector<uint8_t> frame, raw;
  REQUIRE(read_file(compat("vlblocks-lz4-fixed-3.0.0.b2frame"), frame));
  REQUIRE(read_file(compat("vlblocks-lz4-fixed-3.0.0.raw"), raw));
  std::vector<bytes_view> chunks;
  frame_chunks(frame, 64, chunks);
  REQUIRE(!chunks.empty());
  test::counting_allocator counter;
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, counter.get()));
  size_t done = 0;
  size_t vl_chunks = 0;
  for (bytes_view c : chunks) {
    if (done >= raw.size()) break;
    auto h = chunk_header_read(c);
    REQUIRE_OK(h);
    if (h->vlblocks) ++vl_chunks;
    std::vector<uint8_t> out(static_cast<size_t>(h->nbytes));
    auto r = chunk_decode(d, c, bytes_mut(out.data(), out.size()));
    if (!codec_available(codec::lz4)) {
      CHECK_ERR(r, errc::codec_unavailable);
      CHECK(missing_allowed(needs::lz4));
      return;
    }
    REQUIRE_OK(r);
    REQUIRE(done + out.size() <= raw.size());
    CHECK(std::memcmp(out.data(), raw.data() + done, out.size()) == 0);
    // Blocks alone land where the extents say.
    for (size_t b = 0; b < h->nblocks; ++b) {
      auto e = chunk_block_extent_get(*h, c, b);
      REQUIRE_OK(e);
      std::vector<uint8_t> blk(e->size);
      REQUIRE_OK(chunk_decode_block(d, c, b, bytes_mut(blk.data(), blk.size())));
      CHECK(std::memcmp(blk.data(), out.data() + e->offset, e->size) == 0);
    }
    // Requested blocks: the general serial path reads VL blocks; the fixed-size one (array_view's) refuses them.
    struct last_block {
      size_t n;
      std::vector<uint8_t> got;
      static size_t block(void* c, size_t) noexcept { return static_cast<last_block*>(c)->n; }
      static status consume(void* c, size_t, bytes_view b, uint32_t) noexcept {
        static_cast<last_block*>(c)->got.assign(b.data(), b.data() + b.size());
        return ok_status();
      }
    } lb{h->nblocks - 1, {}};
    chunk_block_request req;
    req.count = h->nblocks > 0 ? 1 : 0;
    req.block = last_block::block;
    req.consume = last_block::consume;
    req.context = &lb;
    REQUIRE_OK(chunk_decode_blocks(d, c, req));
    if (req.count > 0) CHECK(std::memcmp(lb.got.data(), out.data() + out.size() - lb.got.size(), lb.got.size()) == 0);
    if (h->vlblocks && req.count > 0) CHECK_ERR(detail::chunk_decode_fixed_blocks(d, c, req), errc::unsupported);
    else REQUIRE_OK(detail::chunk_decode_fixed_blocks(d, c, req));
    done += out.size();
  }
  CHECK_EQ(done, raw.size());
  CHECK(vl_chunks > 0);
}

TESSERA_TEST(chunk_golden, vlblocks_variable_frame_decodes) {
  std::vector<uint8_t> frame;
  REQUIRE(read_file(compat("vlblocks-lz4-variable-3.0.0.b2frame"), frame));
  std::vector<bytes_view> chunks;
  frame_chunks(frame, 64, chunks);
  REQUIRE(!chunks.empty());
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  size_t decoded = 0;
  for (bytes_view c : chunks) {
    auto h = chunk_header_read(c);
    REQUIRE_OK(h);
    if (!h->vlblocks) break;  // the offsets chunk that ends the chunks section
    std::vector<uint8_t> out(static_cast<size_t>(h->nbytes));
    auto r = chunk_decode(d, c, bytes_mut(out.data(), out.size()));
    if (!codec_available(codec::lz4)) {
      CHECK_ERR(r, errc::codec_unavailable);
      CHECK(missing_allowed(needs::lz4));
      return;
    }
    REQUIRE_OK(r);
    ++decoded;
  }
  CHECK(decoded > 0);
}
