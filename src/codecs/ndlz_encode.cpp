// SPDX-License-Identifier: BSD-3-Clause
// NDLZ's encoder (the format is in codecs/ndlz.hpp), making the reference's choices so that its streams are the
// reference's bytes: the same hash tables (XXH32, seed 1, top 12 bits; zeroed for every stream), the same order
// of choices (all-equal cell, whole cell, two pairs, triples, pairs), the same table updates (only after a
// literal cell, and only when its first triple or pair was new) and the same give-ups (0: the caller stores the
// stream raw). One exception: the 4x4 matches whose offsets the decoder wraps (see `wraps`). A cell is read once
// into 32-bit words, which the hashes, compares and literals use. Its own object file: on bare metal only a
// program that calls codec_link_ndlz_encoder links it.
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

// XXH32 (the public xxHash algorithm), seed 1, of n 32-bit words read little-endian: every set of rows NDLZ
// hashes is a multiple of 4 bytes, so XXH32's byte tail is never needed.
constexpr uint32_t kPrime1 = 0x9E3779B1u;
constexpr uint32_t kPrime2 = 0x85EBCA77u;
constexpr uint32_t kPrime3 = 0xC2B2AE3Du;
constexpr uint32_t kPrime4 = 0x27D4EB2Fu;
constexpr uint32_t kPrime5 = 0x165667B1u;

inline uint32_t rotl32(uint32_t x, unsigned r) noexcept { return (x << r) | (x >> (32 - r)); }
inline uint32_t xxh_round(uint32_t acc, uint32_t in) noexcept { return rotl32(acc + in * kPrime2, 13) * kPrime1; }

TESSERA_NDLZ_INLINE uint32_t xxh32_words(const uint32_t* v, size_t n) noexcept {
  constexpr uint32_t kSeed = 1;
  size_t i = 0;
  uint32_t h = kSeed + kPrime5;
  if (n >= 4) {
    uint32_t v1 = kSeed + kPrime1 + kPrime2, v2 = kSeed + kPrime2, v3 = kSeed, v4 = kSeed - kPrime1;
    for (; i + 4 <= n; i += 4) {
      v1 = xxh_round(v1, v[i]);
      v2 = xxh_round(v2, v[i + 1]);
      v3 = xxh_round(v3, v[i + 2]);
      v4 = xxh_round(v4, v[i + 3]);
    }
    h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
  }
  h += static_cast<uint32_t>(4 * n);
  for (; i < n; ++i) h = rotl32(h + v[i] * kPrime3, 17) * kPrime4;
  h ^= h >> 15;
  h *= kPrime2;
  h ^= h >> 13;
  h *= kPrime3;
  h ^= h >> 16;
  return h;
}

// The table slot of kN words (the top 12 bits of the hash).
template <size_t kN>
TESSERA_NDLZ_INLINE uint32_t slot(const uint32_t* v) noexcept {
  return xxh32_words(v, kN) >> 20;
}

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
  void words(const uint32_t* v, size_t n) noexcept {
    for (size_t i = 0; i < n; ++i, op += 4) le_store32(o + op, v[i]);
  }
  // Whether table entry `at` (0: empty) holds the n words of v.
  [[nodiscard]] TESSERA_NDLZ_INLINE bool holds(uint32_t at, const uint32_t* v, size_t n) const noexcept {
    if (at == 0) return false;
    uint32_t diff = 0;
    for (size_t i = 0; i < n; ++i) diff |= le_load32(o + at + 4 * i) ^ v[i];
    return diff == 0;
  }
};

// A full cell: its rows as little-endian words, kPerRow to a row.
template <size_t kEdge>
struct cell_rows {
  static constexpr size_t kPerRow = kEdge / 4;
  static constexpr size_t kWords = kEdge * kPerRow;
  uint32_t w[kWords];
};

// A set of a cell's rows (ascending) looked up as one, and the token of its match. The reference's order of
// tries: with cells of 4, every triple (token 224 | (j + k - 2) << 3, or 224 from row 1) then every pair (128 |
// i << 5 | j << 3, or 128 from row 2); with cells of 8, the consecutive triples (168 + i) then pairs (136 + i).
struct row_set {
  uint8_t rows[3];
  uint8_t token;
};
template <size_t kEdge>
struct row_sets;
template <>
struct row_sets<4> {
  static constexpr row_set triples[] = {{{0, 1, 2}, 232}, {{0, 1, 3}, 240}, {{0, 2, 3}, 248}, {{1, 2, 3}, 224}};
  static constexpr row_set pairs[] = {{{0, 1}, 136}, {{0, 2}, 144}, {{0, 3}, 152},
                                      {{1, 2}, 176}, {{1, 3}, 184}, {{2, 3}, 128}};
};
template <>
struct row_sets<8> {
  static constexpr row_set triples[] = {{{0, 1, 2}, 168}, {{1, 2, 3}, 169}, {{2, 3, 4}, 170},
                                        {{3, 4, 5}, 171}, {{4, 5, 6}, 172}, {{5, 6, 7}, 173}};
  static constexpr row_set pairs[] = {{{0, 1}, 136}, {{1, 2}, 137}, {{2, 3}, 138}, {{3, 4}, 139},
                                      {{4, 5}, 140}, {{5, 6}, 141}, {{6, 7}, 142}};
};
template <size_t kCount>
constexpr size_t count_of(const row_set (&)[kCount]) noexcept {
  return kCount;
}

// The first of the `count` sets (n rows each) that `table` holds close enough: its token, offset and the cell's
// other rows are written (triples and pairs share one copy, which keeps size builds small). Lookups that find an
// empty slot for consecutive rows from row i note (note_at[i], note_slot[i]) what a literal cell puts in the table.
template <size_t kEdge>
bool sets_match(out_stream& w, uint32_t* table, const cell_rows<kEdge>& c, const row_set* sets, size_t count, size_t n,
                uint32_t anchor, uint32_t* note_at, uint32_t* note_slot) noexcept {
  constexpr size_t kP = cell_rows<kEdge>::kPerRow;
  for (const row_set* const end = sets + count; sets != end; ++sets) {
    const row_set& s = *sets;
    uint32_t v[3 * kP];
    for (size_t q = 0; q < n; ++q)
      for (size_t k = 0; k < kP; ++k) v[q * kP + k] = c.w[s.rows[q] * kP + k];
    const uint32_t h = xxh32_words(v, n * kP) >> 20;
    const uint32_t at = table[h];
    const uint32_t first = s.rows[0];
    if (at == 0 && s.rows[n - 1] - first == n - 1) {
      note_at[first] = anchor + 1 + static_cast<uint32_t>(kEdge) * first;
      note_slot[first] = h;
    }
    if (!w.holds(at, v, n * kP) || anchor + kEdge * first - at >= kMaxDistance) continue;
    if (kEdge == 4 && wraps(anchor - at, 3)) continue;
    w.byte(s.token);
    w.u16(anchor - at);
    unsigned in_set = 0;
    for (size_t q = 0; q < n; ++q) in_set |= 1u << s.rows[q];
    for (size_t r = 0; r < kEdge; ++r)
      if ((in_set >> r & 1u) == 0) w.words(c.w + r * kP, kP);
    return true;
  }
  return false;
}

// Cells of 4 first try rows 0 and j as a pair seen before, and the other two rows as another.
bool two_pairs(out_stream& w, const tables& t, const cell_rows<4>& c, uint32_t anchor) noexcept {
  for (uint32_t j = 1; j < 4; ++j) {
    const uint32_t a[2] = {c.w[0], c.w[j]};
    const uint32_t at1 = t.pair[slot<2>(a)];
    if (!w.holds(at1, a, 2) || anchor - at1 >= kMaxDistance || wraps(anchor - at1, 5)) continue;
    const uint32_t l = j == 1 ? 2 : 1, m = j == 3 ? 2 : 3;
    const uint32_t b[2] = {c.w[l], c.w[m]};
    const uint32_t at2 = t.pair[slot<2>(b)];
    if (!w.holds(at2, b, 2) || anchor + 4 * l - at2 >= kMaxDistance || wraps(anchor - at2, 5)) continue;
    w.byte(static_cast<uint8_t>(32u | j << 3));
    w.u16(anchor - at1);
    w.u16(anchor - at2);
    return true;
  }
  return false;
}

// One full cell, the reference's order of tries: all-equal, whole cell, (cells of 4: two pairs,) triples,
// pairs, else a literal. hash_triple and hash_pair keep their slots from cell to cell (the reference's rule).
template <size_t kEdge>
void cell_encode(out_stream& w, const tables& t, const cell_rows<kEdge>& c, uint32_t* hash_triple,
                 uint32_t* hash_pair) noexcept {
  constexpr size_t kWords = cell_rows<kEdge>::kWords;
  size_t same = c.w[0] == (c.w[0] & 0xffu) * 0x01010101u ? 1 : 0;
  while (same != 0 && same < kWords && c.w[same] == c.w[0]) ++same;
  if (same == kWords) {  // before the cell's hash: an all-equal cell never enters the table
    w.byte(64);
    w.byte(static_cast<uint8_t>(c.w[0]));
    return;
  }
  const uint32_t anchor = static_cast<uint32_t>(w.op);
  const uint32_t hc = slot<kWords>(c.w);
  const uint32_t at = t.cell[hc];
  if (w.holds(at, c.w, kWords) && anchor - at < kMaxDistance) {
    w.byte(192);
    w.u16(anchor - at);
    return;
  }
  if constexpr (kEdge == 4) {
    if (two_pairs(w, t, c, anchor)) return;
  }
  uint32_t note_triple[kEdge - 2] = {};
  uint32_t note_pair[kEdge - 1] = {};
  using sets = row_sets<kEdge>;
  if (sets_match(w, t.triple, c, sets::triples, count_of(sets::triples), 3, anchor, note_triple, hash_triple)) return;
  if (sets_match(w, t.pair, c, sets::pairs, count_of(sets::pairs), 2, anchor, note_pair, hash_pair)) return;
  // A literal: it and its runs go into the tables (all the noted ones, stale slots included, when the first was
  // new; none otherwise: the reference's rule).
  t.cell[hc] = anchor + 1;
  if (note_triple[0] != 0)
    for (size_t h = 0; h < kEdge - 2; ++h) t.triple[hash_triple[h]] = note_triple[h];
  if (note_pair[0] != 0)
    for (size_t h = 0; h < kEdge - 1; ++h) t.pair[hash_pair[h]] = note_pair[h];
  w.byte(0);
  w.words(c.w, kWords);
}

// An edge cell (p0 x p1 items inside the block): a literal of its items, no table update.
void edge_cell(out_stream& w, const uint8_t* at, size_t bs1, size_t p0, size_t p1) noexcept {
  w.byte(0);
  for (size_t i = 0; i < p0; ++i) w.bytes(at + i * bs1, p1);
}

// Every cell of the block, cells of kEdge; 0 when the output would not shrink or does not fit.
template <size_t kEdge>
size_t cells_encode(const uint8_t* ip, size_t n, out_stream& w, size_t maxout, size_t bs0, size_t bs1,
                    const tables& t) noexcept {
  constexpr size_t kP = cell_rows<kEdge>::kPerRow;
  uint32_t hash_triple[kEdge - 2] = {};
  uint32_t hash_pair[kEdge - 1] = {};
  const size_t nrows = (bs0 + kEdge - 1) / kEdge, ncols = (bs1 + kEdge - 1) / kEdge;
  const size_t full_rows = bs0 / kEdge, full_cols = bs1 / kEdge;
  for (size_t r = 0; r < nrows; ++r) {
    for (size_t c = 0; c < ncols; ++c) {
      if (w.op + kEdge * kEdge + 1 > maxout) return 0;
      const uint8_t* const at = ip + r * kEdge * bs1 + c * kEdge;
      if (r >= full_rows || c >= full_cols) {
        edge_cell(w, at, bs1, r < full_rows ? kEdge : bs0 % kEdge, c < full_cols ? kEdge : bs1 % kEdge);
      } else {
        cell_rows<kEdge> cell;
        for (size_t i = 0; i < kEdge; ++i)
          for (size_t k = 0; k < kP; ++k) cell.w[i * kP + k] = le_load32(at + i * bs1 + 4 * k);
        cell_encode<kEdge>(w, t, cell, hash_triple, hash_pair);
      }
      if (w.op > n) return 0;
    }
  }
  return w.op;
}

status encode_check(const chunk_nd_geometry& g, uint8_t meta) noexcept {
  if (meta != 4 && meta != 8)
    return make_error(errc::unsupported,
                      TESSERA_MSG("ndlz: the codec meta (compcode_meta, the cell edge) must be 4 or 8"));
  if (g.ndim == 0)
    return make_error(errc::unsupported, TESSERA_MSG("ndlz: writing needs the blocks' 2-D shape "
                                                     "(chunk_encode_params::geometry; C: nd_blockshape)"));
  if (g.ndim != 2)
    return make_error(errc::unsupported, TESSERA_MSG("ndlz: NDLZ codes 2-D blocks only (the reference's rule)"));
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
