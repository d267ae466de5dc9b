// SPDX-License-Identifier: BSD-3-Clause
// NDLZ's encoder (the format is in codecs/ndlz.hpp), making the reference's choices so that its streams are the
// reference's bytes: the same hash tables (XXH32, seed 1, top 12 bits; zeroed for every stream), the same order
// of lookups (whole cell, all-equal cell, two pairs, triples, pairs), the same table updates (only after a
// literal cell, and only when its first triple or pair was new) and the same give-ups (0: the caller stores the
// stream raw). One exception: the 4x4 matches whose offsets the decoder wraps (see `wraps`). Its own object file: on bare metal only a program that calls codec_link_ndlz_encoder links it.
#include <string.h>

#include "base/byte_order.hpp"
#include "codecs/codec_link.hpp"
#include "codecs/ndlz.hpp"

namespace tessera::detail {

namespace {

constexpr uint32_t kMaxDistance = 65535;  // a match must lie closer than this
// The 4x4 decoder adds 3 (a row pair or triple) or 5 (two pairs) to the stored 16-bit offset in 16 bits: the
// reference's encoder writes matches 65533 and 65534 (two pairs: 65531 to 65534) bytes back, which its decoder
// reads from the wrong place, so the data does not come back. Such a candidate is passed over here, as if it
// did not match: the only place where these streams are not the reference's, which reads them right.
inline bool wraps(uint32_t offset, uint32_t add) noexcept { return offset + add > 0xffffu; }
constexpr size_t kHeader = 9;

// The hashes and compares of the cells run at every cell with a constant size: inlined, they unroll (size builds
// keep one copy each).
#if defined(__OPTIMIZE_SIZE__)
#define TESSERA_NDLZ_INLINE inline
#else
#define TESSERA_NDLZ_INLINE [[gnu::always_inline]] inline
#endif

// XXH32 (the public xxHash algorithm) of n bytes, little-endian reads on every host.
constexpr uint32_t kPrime1 = 0x9E3779B1u;
constexpr uint32_t kPrime2 = 0x85EBCA77u;
constexpr uint32_t kPrime3 = 0xC2B2AE3Du;
constexpr uint32_t kPrime4 = 0x27D4EB2Fu;
constexpr uint32_t kPrime5 = 0x165667B1u;

inline uint32_t rotl32(uint32_t x, unsigned r) noexcept { return (x << r) | (x >> (32 - r)); }
inline uint32_t xxh_round(uint32_t acc, uint32_t in) noexcept { return rotl32(acc + in * kPrime2, 13) * kPrime1; }

TESSERA_NDLZ_INLINE uint32_t xxh32(const uint8_t* p, size_t n, uint32_t seed) noexcept {
  const uint8_t* const end = p + n;
  uint32_t h;
  if (n >= 16) {
    uint32_t v1 = seed + kPrime1 + kPrime2, v2 = seed + kPrime2, v3 = seed, v4 = seed - kPrime1;
    for (; end - p >= 16; p += 16) {
      v1 = xxh_round(v1, le_load32(p));
      v2 = xxh_round(v2, le_load32(p + 4));
      v3 = xxh_round(v3, le_load32(p + 8));
      v4 = xxh_round(v4, le_load32(p + 12));
    }
    h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
  } else {
    h = seed + kPrime5;
  }
  h += static_cast<uint32_t>(n);
  for (; end - p >= 4; p += 4) h = rotl32(h + le_load32(p) * kPrime3, 17) * kPrime4;
  for (; p < end; ++p) h = rotl32(h + *p * kPrime5, 11) * kPrime1;
  h ^= h >> 15;
  h *= kPrime2;
  h ^= h >> 13;
  h *= kPrime3;
  h ^= h >> 16;
  return h;
}

// The table slot of n bytes.
TESSERA_NDLZ_INLINE uint32_t slot(const uint8_t* p, size_t n) noexcept { return xxh32(p, n, 1) >> 20; }

// The three tables: positions in the output (0: empty) of literal cells, row triples and row pairs.
struct tables {
  uint32_t* cell;
  uint32_t* triple;
  uint32_t* pair;
};

// The output being written; the caller checked that a whole cell's worth fits before each cell.
struct out_stream {
  uint8_t* o;
  size_t op;
  void byte(uint8_t b) noexcept { o[op++] = b; }
  void u16(uint32_t v) noexcept {
    o[op] = static_cast<uint8_t>(v);
    o[op + 1] = static_cast<uint8_t>(v >> 8);
    op += 2;
  }
  void bytes(const uint8_t* p, size_t n) noexcept {
    memcpy(o + op, p, n);
    op += n;
  }
  // Whether table entry `at` (0: empty) holds the n bytes of p.
  [[nodiscard]] TESSERA_NDLZ_INLINE bool holds(uint32_t at, const uint8_t* p, size_t n) const noexcept {
    return at != 0 && memcmp(o + at, p, n) == 0;
  }
};

TESSERA_NDLZ_INLINE bool all_equal(const uint8_t* p, size_t n) noexcept {
  for (size_t i = 1; i < n; ++i)
    if (p[i] != p[0]) return false;
  return true;
}

// An edge cell (p0 x p1 items inside the block): a literal of its items, no table update.
void edge_cell(out_stream& w, const uint8_t* ip, size_t bs1, size_t orig, size_t p0, size_t p1) noexcept {
  w.byte(0);
  for (size_t i = 0; i < p0; ++i) w.bytes(ip + orig + i * bs1, p1);
}

// One full 4x4 cell (its rows back to back in `cell`), the reference's order of tries.
void cell4(out_stream& w, const tables& t, const uint8_t* cell, uint32_t* hash_triple, uint32_t* hash_pair) noexcept {
  uint32_t update_triple[2] = {0, 0};
  uint32_t update_pair[3] = {0, 0, 0};
  const uint32_t anchor = static_cast<uint32_t>(w.op);
  const uint32_t hc = slot(cell, 16);
  const uint32_t distance = w.holds(t.cell[hc], cell, 16) ? anchor - t.cell[hc] : 0;
  if (all_equal(cell, 16)) {
    w.byte(64);
    w.byte(cell[0]);
    return;
  }
  if (distance != 0 && distance < kMaxDistance) {
    w.byte(192);
    w.u16(anchor - t.cell[hc]);
    return;
  }
  uint8_t buf[12];
  // Rows 0 and j as a pair seen before, and the other two as another.
  for (uint32_t j = 1; j < 4; ++j) {
    memcpy(buf, cell, 4);
    memcpy(buf + 4, cell + 4 * j, 4);
    const uint32_t at1 = t.pair[slot(buf, 8)];
    if (!w.holds(at1, buf, 8) || anchor - at1 >= kMaxDistance || wraps(anchor - at1, 5)) continue;
    uint32_t l = 0, m = 0;
    for (uint32_t k = 1; k < 4; ++k) {
      if (k == j) continue;
      if (l == 0) l = k;
      else m = k;
    }
    memcpy(buf, cell + 4 * l, 4);
    memcpy(buf + 4, cell + 4 * m, 4);
    const uint32_t at2 = t.pair[slot(buf, 8)];
    if (!w.holds(at2, buf, 8) || anchor + 4 * l - at2 >= kMaxDistance || wraps(anchor - at2, 5)) continue;
    w.byte(static_cast<uint8_t>(32u | j << 3));
    w.u16(anchor - at1);
    w.u16(anchor - at2);
    return;
  }
  // Three rows seen before (new consecutive triples noted for the table).
  for (uint32_t i = 0; i < 2; ++i) {
    memcpy(buf, cell + 4 * i, 4);
    for (uint32_t j = i + 1; j < 3; ++j) {
      memcpy(buf + 4, cell + 4 * j, 4);
      for (uint32_t k = j + 1; k < 4; ++k) {
        memcpy(buf + 8, cell + 4 * k, 4);
        const uint32_t h = slot(buf, 12);
        const uint32_t at = t.triple[h];
        if (at == 0 && j - i == 1 && k - j == 1) {
          update_triple[i] = anchor + 1 + 4 * i;
          hash_triple[i] = h;
        }
        if (!w.holds(at, buf, 12) || anchor + 4 * i - at >= kMaxDistance || wraps(anchor - at, 3)) continue;
        w.byte(static_cast<uint8_t>(i == 1 ? 224u : 224u | (j + k - 2) << 3));
        w.u16(anchor - at);
        for (uint32_t r = 0; r < 4; ++r) {
          if (r != i && r != j && r != k) {
            w.bytes(cell + 4 * r, 4);
            break;
          }
        }
        return;
      }
    }
  }
  // Two rows seen before (new consecutive pairs noted).
  for (uint32_t i = 0; i < 3; ++i) {
    memcpy(buf, cell + 4 * i, 4);
    for (uint32_t j = i + 1; j < 4; ++j) {
      memcpy(buf + 4, cell + 4 * j, 4);
      const uint32_t h = slot(buf, 8);
      const uint32_t at = t.pair[h];
      if (at == 0 && j - i == 1) {
        update_pair[i] = anchor + 1 + 4 * i;
        hash_pair[i] = h;
      }
      if (!w.holds(at, buf, 8) || anchor + 4 * i - at >= kMaxDistance || wraps(anchor - at, 3)) continue;
      w.byte(static_cast<uint8_t>(i == 2 ? 128u : 128u | i << 5 | j << 3));
      w.u16(anchor - at);
      for (uint32_t r = 0; r < 4; ++r)
        if (r != i && r != j) w.bytes(cell + 4 * r, 4);
      return;
    }
  }
  // A literal: it and its first triple and pair go into the tables (all the noted ones, stale slots included,
  // when the first was new; none otherwise: the reference's rule).
  t.cell[hc] = anchor + 1;
  if (update_triple[0] != 0)
    for (int h = 0; h < 2; ++h) t.triple[hash_triple[h]] = update_triple[h];
  if (update_pair[0] != 0)
    for (int h = 0; h < 3; ++h) t.pair[hash_pair[h]] = update_pair[h];
  w.byte(0);
  w.bytes(cell, 16);
}

// One full 8x8 cell: triples and pairs of consecutive rows only.
void cell8(out_stream& w, const tables& t, const uint8_t* cell, uint32_t* hash_triple, uint32_t* hash_pair) noexcept {
  uint32_t update_triple[6] = {};
  uint32_t update_pair[7] = {};
  const uint32_t anchor = static_cast<uint32_t>(w.op);
  const uint32_t hc = slot(cell, 64);
  const uint32_t distance = w.holds(t.cell[hc], cell, 64) ? anchor - t.cell[hc] : 0;
  if (all_equal(cell, 64)) {
    w.byte(64);
    w.byte(cell[0]);
    return;
  }
  if (distance != 0 && distance < kMaxDistance) {
    w.byte(192);
    w.u16(anchor - t.cell[hc]);
    return;
  }
  for (uint32_t i = 0; i < 6; ++i) {
    const uint8_t* rows = cell + 8 * i;
    const uint32_t h = slot(rows, 24);
    const uint32_t at = t.triple[h];
    if (at == 0) {
      update_triple[i] = anchor + 1 + 8 * i;
      hash_triple[i] = h;
    }
    if (!w.holds(at, rows, 24) || anchor + 8 * i - at >= kMaxDistance) continue;
    w.byte(static_cast<uint8_t>(21u << 3 | i));
    w.u16(anchor - at);
    for (uint32_t r = 0; r < 8; ++r)
      if (r < i || r > i + 2) w.bytes(cell + 8 * r, 8);
    return;
  }
  for (uint32_t i = 0; i < 7; ++i) {
    const uint8_t* rows = cell + 8 * i;
    const uint32_t h = slot(rows, 16);
    const uint32_t at = t.pair[h];
    if (at == 0) {
      update_pair[i] = anchor + 1 + 8 * i;
      hash_pair[i] = h;
    }
    if (!w.holds(at, rows, 16) || anchor + 8 * i - at >= kMaxDistance) continue;
    w.byte(static_cast<uint8_t>(17u << 3 | i));
    w.u16(anchor - at);
    for (uint32_t r = 0; r < 8; ++r)
      if (r < i || r > i + 1) w.bytes(cell + 8 * r, 8);
    return;
  }
  t.cell[hc] = anchor + 1;
  if (update_triple[0] != 0)
    for (int h = 0; h < 6; ++h) t.triple[hash_triple[h]] = update_triple[h];
  if (update_pair[0] != 0)
    for (int h = 0; h < 7; ++h) t.pair[hash_pair[h]] = update_pair[h];
  w.byte(0);
  w.bytes(cell, 64);
}

// Every cell of the block, cells of kEdge; 0 when the output would not shrink or does not fit.
template <size_t kEdge>
size_t cells_encode(const uint8_t* ip, size_t n, out_stream& w, size_t maxout, size_t bs0, size_t bs1,
                    const tables& t) noexcept {
  constexpr size_t kCell = kEdge * kEdge;
  constexpr size_t kRows = kEdge == 4 ? 2 : 6;  // triples, then pairs (one more), noted across cells
  uint32_t hash_triple[kRows] = {};
  uint32_t hash_pair[kRows + 1] = {};
  uint8_t cell[kCell];
  const size_t nrows = (bs0 + kEdge - 1) / kEdge;
  const size_t ncols = (bs1 + kEdge - 1) / kEdge;
  for (size_t r = 0; r < nrows; ++r) {
    for (size_t c = 0; c < ncols; ++c) {
      if (w.op + kCell + 1 > maxout) return 0;
      const size_t orig = r * kEdge * bs1 + c * kEdge;
      const bool edge_row = r + 1 == nrows && bs0 % kEdge != 0;
      const bool edge_col = c + 1 == ncols && bs1 % kEdge != 0;
      if (edge_row || edge_col) {
        edge_cell(w, ip, bs1, orig, edge_row ? bs0 % kEdge : kEdge, edge_col ? bs1 % kEdge : kEdge);
      } else {
        for (size_t i = 0; i < kEdge; ++i) memcpy(cell + i * kEdge, ip + orig + i * bs1, kEdge);
        if constexpr (kEdge == 4) cell4(w, t, cell, hash_triple, hash_pair);
        else cell8(w, t, cell, hash_triple, hash_pair);
      }
      if (w.op > n) return 0;
    }
  }
  return w.op;
}

status encode_check(const chunk_nd_geometry& g, uint8_t meta) noexcept {
  if (meta != 4 && meta != 8)
    return make_error(errc::unsupported, TESSERA_MSG("ndlz: the codec meta (compcode_meta, the cell edge) must be 4 or 8"));
  if (g.ndim == 0)
    return make_error(errc::unsupported, TESSERA_MSG("ndlz: writing needs the blocks' 2-D shape "
                                                     "(chunk_encode_params::geometry; C: nd_blockshape)"));
  if (g.ndim != 2) return make_error(errc::unsupported, TESSERA_MSG("ndlz: NDLZ codes 2-D blocks only (the reference's rule)"));
  return ok_status();
}

}  // namespace

result<size_t> ndlz_compress(bytes_view in, bytes_mut out, uint8_t meta, const chunk_nd_geometry& g,
                             bytes_mut workspace) noexcept {
  TESSERA_TRY(encode_check(g, meta));
  const int32_t bs0 = g.blockshape[0], bs1 = g.blockshape[1];
  if (bs0 <= 0 || bs1 <= 0 || static_cast<uint64_t>(bs0) * static_cast<uint64_t>(bs1) != in.size())
    return make_error(errc::unsupported, TESSERA_MSG("ndlz: a stream that is not one 2-D block of bytes (NDLZ needs "
                                                     "typesize 1, or blocks split into one stream per byte)"));
  if (workspace.size() < kNdlzWorkspace)
    return make_error(errc::invalid_argument, TESSERA_MSG("ndlz: workspace smaller than the three tables"));
  const size_t n = in.size();
  const size_t maxout = out.size();
  const size_t cell = static_cast<size_t>(meta) * meta;
  // The reference refuses an output shorter than the header outright (the chunk fails there); here the stream
  // is stored raw instead. Then its give-ups: too short a stream, or too little room for the cells' tokens.
  const int64_t overhead = 17 + (static_cast<int64_t>(n / cell) - 1) * 2;
  if (maxout < kHeader || n < cell || static_cast<int64_t>(maxout) < overhead) return size_t{0};
  const uintptr_t raw = reinterpret_cast<uintptr_t>(workspace.data());
  const size_t skew = (alignof(uint32_t) - raw % alignof(uint32_t)) % alignof(uint32_t);
  uint32_t* const base = static_cast<uint32_t*>(static_cast<void*>(workspace.data() + skew));
  memset(base, 0, 3 * kNdlzTableEntries * sizeof(uint32_t));
  const tables t{base, base + kNdlzTableEntries, base + 2 * kNdlzTableEntries};
  out_stream w{out.data(), 0};
  w.byte(2);
  le_store32(out.data() + 1, static_cast<uint32_t>(bs0));
  le_store32(out.data() + 5, static_cast<uint32_t>(bs1));
  w.op = kHeader;
  if (meta == 4) return cells_encode<4>(in.data(), n, w, maxout, static_cast<size_t>(bs0), static_cast<size_t>(bs1), t);
  return cells_encode<8>(in.data(), n, w, maxout, static_cast<size_t>(bs0), static_cast<size_t>(bs1), t);
}

}  // namespace tessera::detail

TESSERA_CODEC_LINK_ANCHORS(ndlz_encoder)
