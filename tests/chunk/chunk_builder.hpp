// SPDX-License-Identifier: BSD-3-Clause
// Builds chunks by hand from the format description (README_CHUNK_FORMAT.rst), independently of the library's
// encoder: headers, bstarts, streams stored raw, as zero runs or as byte runs, and the forward filters written
// from their definitions. Tests decode what it builds and compare with the original bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace chunk_test {

inline void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put_i32(uint8_t* p, int32_t v) { put_u32(p, static_cast<uint32_t>(v)); }

struct header_spec {
  uint8_t version = 5;
  uint8_t flags = 0x05;  // extended header marker (shuffle + bitshuffle bits)
  uint8_t typesize = 1;
  int32_t nbytes = 0;
  int32_t blocksize = 0;
  int32_t cbytes = 0;
  bool extended = true;
  uint8_t filters[6] = {};
  uint8_t metas[6] = {};
  uint8_t udcodec = 0;
  uint8_t blosc2_flags = 0;
  uint8_t blosc2_flags2 = 0;
};

inline size_t header_write(uint8_t* p, const header_spec& s) {
  p[0] = s.version;
  p[1] = 1;
  p[2] = s.flags;
  p[3] = s.typesize;
  put_i32(p + 4, s.nbytes);
  put_i32(p + 8, s.blocksize);
  put_i32(p + 12, s.cbytes);
  if (!s.extended) return 16;
  std::memcpy(p + 16, s.filters, 6);
  p[22] = s.udcodec;
  p[23] = 0;
  std::memcpy(p + 24, s.metas, 6);
  p[30] = s.blosc2_flags2;
  p[31] = s.blosc2_flags;
  return 32;
}

// Reference forward filters, written from their definitions.
inline void shuffle_ref(size_t ts, size_t n, const uint8_t* src, uint8_t* dst) {
  const size_t ne = n / ts;
  for (size_t i = 0; i < ne; ++i)
    for (size_t j = 0; j < ts; ++j) dst[j * ne + i] = src[i * ts + j];
  std::memcpy(dst + ne * ts, src + ne * ts, n - ne * ts);
}
inline size_t delta_width_ref(size_t ts) { return (ts == 1 || ts == 2 || ts == 4 || ts == 8) ? ts : (ts % 8 == 0 ? 8 : 1); }
// Delta as the first filter: block 0 against itself (element minus previous, as XOR), others against block 0.
inline void delta_ref(size_t ts, size_t n, const uint8_t* block0, bool is_block0, const uint8_t* src, uint8_t* dst) {
  const size_t w = delta_width_ref(ts);
  const size_t ne = n / w;
  for (size_t e = 0; e < ne; ++e)
    for (size_t b = 0; b < w; ++b) {
      const size_t i = e * w + b;
      if (is_block0) dst[i] = e == 0 ? src[i] : static_cast<uint8_t>(src[i] ^ src[i - w]);
      else dst[i] = static_cast<uint8_t>(src[i] ^ block0[i]);
    }
  std::memcpy(dst + ne * w, src + ne * w, n - ne * w);
}
inline void bytedelta_ref(size_t ts, size_t n, const uint8_t* src, uint8_t* dst) {
  const size_t len = n / ts;
  for (size_t ch = 0; ch < ts; ++ch)
    for (size_t i = 0; i < len; ++i)
      dst[ch * len + i] = static_cast<uint8_t>(src[ch * len + i] - (i == 0 ? 0 : src[ch * len + i - 1]));
  std::memcpy(dst + len * ts, src + len * ts, n - len * ts);
}

struct build_spec {
  uint8_t typesize = 4;
  int32_t blocksize = 256;
  bool split = false;
  bool extended = true;   // false: a Blosc1 16-byte header (filters from flags)
  // Extended: filter slots (forward in slot order). Supported: 1 shuffle (meta 0), 3 delta (first only),
  // 35 bytedelta, 4 trunc_prec and 36 int_trunc (given data they leave unchanged).
  uint8_t filters[6] = {};
  uint8_t metas[6] = {};
  bool blosc1_shuffle = false;  // Blosc1 header flags
  bool blosc1_delta = false;
  bool raw_streams_only = false;  // never use the run encodings
};

// Writes a chunk of `src` into out (capacity cap); returns its size or 0 when it does not fit. `work` holds
// 3 * blocksize bytes of scratch.
inline size_t chunk_build(const build_spec& s, const uint8_t* src, size_t nbytes, uint8_t* out, size_t cap,
                          uint8_t* work) {
  const size_t hs = s.extended ? 32 : 16;
  size_t bs = nbytes == 0 ? 1 : (static_cast<size_t>(s.blocksize) > nbytes ? nbytes : static_cast<size_t>(s.blocksize));
  // As the reference does: blocks hold whole elements whenever they can.
  if (bs > s.typesize) bs = bs / s.typesize * s.typesize;
  const size_t nblocks = nbytes == 0 ? 0 : (nbytes + bs - 1) / bs;
  size_t pos = hs + 4 * nblocks;
  if (pos > cap) return 0;
  uint8_t filters[6] = {};
  uint8_t metas[6] = {};
  if (s.extended) {
    std::memcpy(filters, s.filters, 6);
    std::memcpy(metas, s.metas, 6);
  } else {
    if (s.blosc1_shuffle) filters[5] = 1;
    if (s.blosc1_delta) filters[4] = 3;
  }
  uint8_t* a = work;
  uint8_t* b = work + bs;
  for (size_t j = 0; j < nblocks; ++j) {
    const size_t off = j * bs;
    const size_t bsize = off + bs <= nbytes ? bs : nbytes - off;
    std::memcpy(a, src + off, bsize);
    for (int k = 0; k < 6; ++k) {
      switch (filters[k]) {
        case 1: shuffle_ref(metas[k] ? metas[k] : s.typesize, bsize, a, b); std::memcpy(a, b, bsize); break;
        case 3: delta_ref(s.typesize, bsize, src, j == 0, a, b); std::memcpy(a, b, bsize); break;
        case 35: bytedelta_ref(metas[k] ? metas[k] : s.typesize, bsize, a, b); std::memcpy(a, b, bsize); break;
        default: break;
      }
    }
    put_i32(out + hs + 4 * j, static_cast<int32_t>(pos));
    const bool short_block = bsize < bs;
    const size_t nstreams = (s.split && !short_block) ? s.typesize : 1;
    const size_t neblock = bsize / nstreams;
    for (size_t st = 0; st < nstreams; ++st) {
      const uint8_t* p = a + st * neblock;
      bool same = true;
      for (size_t i = 1; i < neblock; ++i) same = same && p[i] == p[0];
      if (pos + 5 > cap) return 0;
      if (same && !s.raw_streams_only && s.extended) {
        if (p[0] == 0) {
          put_i32(out + pos, 0);
          pos += 4;
        } else {
          put_i32(out + pos, -static_cast<int32_t>(p[0]));
          out[pos + 4] = 0x01;
          pos += 5;
        }
        continue;
      }
      if (pos + 4 + neblock > cap) return 0;
      put_i32(out + pos, static_cast<int32_t>(neblock));  // csize == neblock: stored verbatim
      std::memcpy(out + pos + 4, p, neblock);
      pos += 4 + neblock;
    }
  }
  header_spec h;
  h.typesize = s.typesize;
  h.nbytes = static_cast<int32_t>(nbytes);
  h.blocksize = static_cast<int32_t>(bs);
  h.cbytes = static_cast<int32_t>(pos);
  h.extended = s.extended;
  if (s.extended) {
    h.flags = 0x05;
    std::memcpy(h.filters, filters, 6);
    std::memcpy(h.metas, metas, 6);
  } else {
    h.version = 2;
    h.flags = static_cast<uint8_t>((s.blosc1_shuffle ? 0x01 : 0) | (s.blosc1_delta ? 0x08 : 0));
  }
  if (!s.split) h.flags |= 0x10;
  header_write(out, h);
  return pos;
}

inline uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace chunk_test
