// SPDX-License-Identifier: BSD-3-Clause
// The in-house LZ4 block decoder (lz4_block.hpp), compiled with -mavx2: SSSE3's byte shuffle repeats the
// pattern of a close match in one instruction, so a match's first 16 bytes are one store without a branch on its
// offset; long literals and far matches move 32 bytes a step.
//
// The time goes to mispredicted branches on the lengths, and which ones depends on the stream. A byte plane of
// low-order bytes is mostly literals and short matches: its literal lengths cross the token's 15 often, so a
// long literal's first 64 bytes are copied without a branch on their length. A plane of high-order bytes
// compresses 3 times or more and is mostly matches whose lengths straddle the token's 19 (about 40% of them
// have an extension byte): for such a stream (kMatchRich) every match's first 32 bytes are stored without a
// branch on its length or offset, its first extension byte added without one; in a stream of literals that
// extra work costs more than the branches it saves (by 12% on the low-order planes of the 400^3 array of
// docs/performance.md, where it saves 12% on the high-order ones).
#include <immintrin.h>

#include <string.h>

#include "codecs/lz4_block.hpp"

namespace tessera::detail {

namespace {

// For an offset d below 16: the shuffle that repeats a match's first d bytes over 16 (byte i takes byte i % d),
// the one for its next 16 bytes (byte i takes byte (16 + i) % d), and the largest multiple of d up to 16, by
// which such a vector can be stored again further on. d = 16 stands for every offset from 16 up: identities,
// 16, and `far` set (a blend's selector: the match's second 16 bytes are loaded, not repeated).
struct pattern_table {
  alignas(16) uint8_t mask[17][16];
  alignas(16) uint8_t mask2[17][16];
  alignas(16) uint8_t far[17][16];
  uint8_t step[17];
  constexpr pattern_table() : mask(), mask2(), far(), step() {
    for (int d = 1; d <= 16; ++d) {
      for (int i = 0; i < 16; ++i) {
        mask[d][i] = static_cast<uint8_t>(i % d);
        mask2[d][i] = static_cast<uint8_t>(d == 16 ? i : (16 + i) % d);
        far[d][i] = static_cast<uint8_t>(d == 16 ? 0xff : 0);
      }
      step[d] = static_cast<uint8_t>(16 - 16 % d);
    }
  }
};
constexpr pattern_table kPattern;

inline __m128i load16(const uint8_t* s) noexcept { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)); }
inline void store16(uint8_t* d, __m128i v) noexcept { _mm_storeu_si128(reinterpret_cast<__m128i*>(d), v); }
inline void copy16(uint8_t* d, const uint8_t* s) noexcept { store16(d, load16(s)); }
inline void copy32(uint8_t* d, const uint8_t* s) noexcept {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
}
inline __m128i table16(const uint8_t (&row)[16]) noexcept {
  return _mm_load_si128(reinterpret_cast<const __m128i*>(row));
}

// The 16 bytes a match from m = op - offset writes first: for a close offset its pattern repeated (the load
// reads past op, bytes the shuffle does not use), for a far one its bytes as they are.
inline __m128i match_first16(const uint8_t* m, size_t offset) noexcept {
  const size_t d = offset < 16 ? offset : 16;
  return _mm_shuffle_epi8(load16(m), table16(kPattern.mask[d]));
}

// A match of ml bytes at op from op - offset that writes nothing past op + ml (near the output's end).
inline void match_copy_exact(uint8_t* op, size_t offset, size_t ml) noexcept {
  const uint8_t* m = op - offset;
  uint8_t* const e = op + ml;
  if (ml >= 16) {
    if (offset >= 16) {
      for (; e - op >= 16; op += 16, m += 16) copy16(op, m);
    } else {
      const __m128i v = match_first16(m, offset);  // reads m + 15 < op + 15 < e
      const size_t step = kPattern.step[offset];
      for (; e - op >= 16; op += step) store16(op, v);
      m = op - offset;
    }
  }
  for (; op < e; ++op, ++m) *op = *m;  // byte by byte: right for any overlap
}

// A length's extension bytes added to n, while they are 255; false when they run to `limit` or n passes max
// (each addition is checked, so n cannot wrap).
inline bool length_extend(const uint8_t*& ip, const uint8_t* limit, size_t& n, size_t max) noexcept {
  unsigned b;
  do {
    if (ip >= limit) return false;
    b = *ip++;
    n += b;
    if (n > max) return false;
  } while (b == 255);
  return true;
}

// The ends the fast loop keeps away from: at every sequence's start there, ip < ilimit = in's end - 64 and
// op < ostop <= olimit = out's end - 64, so literals of up to 14 bytes are one 16-byte copy, a long literal's
// first 64 bytes one 64-byte copy, and a match's first 16 (kMatchRich: 32) bytes whole vectors; longer ones move
// in steps that may run 31 bytes past their end. A sequence that would come closer to either end is left, from
// its token, to the caller's exact loop.
struct fast_bounds {
  const uint8_t* ilimit;
  uint8_t* ostart;
  uint8_t* olimit;
  uint8_t* ostop;  // olimit, or where `want` bytes are out if that comes first
  uint8_t* oend;
  size_t max;  // out's size: a length above it is refused (so lengths cannot wrap)
};
constexpr size_t kFastMargin = 64;

// Decodes sequences from ip to op while they keep to b's bounds; false for a corrupt stream. ip and op end at a
// sequence's start.
template <bool kMatchRich>
bool fast_sequences(const uint8_t*& ip_ref, uint8_t*& op_ref, const fast_bounds& b) noexcept {
  const uint8_t* ip = ip_ref;
  uint8_t* op = op_ref;
  const uint8_t* const ilimit = b.ilimit;
  uint8_t* const olimit = b.olimit;
  while (ip < ilimit && op < b.ostop) {
    const uint8_t* const seq_ip = ip;
    uint8_t* const seq_op = op;
    const unsigned token = *ip++;
    size_t ll = token >> 4;
    if (__builtin_expect(ll != 15, 1)) {
      copy16(op, ip);
    } else {
      if (!length_extend(ip, ilimit, ll, b.max) || ll > static_cast<size_t>(ilimit - ip) ||
          ll > static_cast<size_t>(olimit - op)) {
        ip = seq_ip;
        op = seq_op;
        break;
      }
      copy32(op, ip);  // ip <= ilimit, op < olimit: 64 bytes fit both
      copy32(op + 32, ip + 32);
      if (ll > 64) {
        const uint8_t* s = ip + 64;
        uint8_t* d = op + 64;
        uint8_t* const e = op + ll;
        do { copy32(d, s); d += 32; s += 32; } while (d < e);
      }
    }
    op += ll;
    ip += ll;
    if (__builtin_expect(ip >= ilimit, 0)) {  // the last sequence, or close to it
      ip = seq_ip;
      op = seq_op;
      break;
    }
    const size_t offset = static_cast<size_t>(ip[0]) | static_cast<size_t>(ip[1]) << 8;
    ip += 2;
    if (__builtin_expect(offset - 1 >= static_cast<size_t>(op - b.ostart), 0)) return false;  // 0, or before out
    const uint8_t* const m = op - offset;
    size_t ml = (token & 15) + 4;
    const size_t dd = offset < 16 ? offset : 16;
    if (kMatchRich) {
      {  // the first extension byte (ip < ilimit: readable) added without a branch
        const size_t mx = ml == 19;
        ml += static_cast<size_t>(*ip) & (0 - mx);
        ip += mx;
      }
      // 32 bytes: a close match's pattern continued, or a far one's next 16 bytes loaded after its first 16 are
      // stored (an offset of 16 - 31 reads them back). Only a far match of more than 16 bytes loads them: the
      // others load out's first 16 bytes, written long before, so the load waits on no recent store. The address
      // is picked with a mask, not a branch, which would be mispredicted.
      const __m128i raw0 = load16(m);
      store16(op, _mm_shuffle_epi8(raw0, table16(kPattern.mask[dd])));
      const size_t second = 0 - static_cast<size_t>((offset >= 16) & (ml > 16));
      const __m128i raw1 = load16(b.ostart + (static_cast<size_t>(m + 16 - b.ostart) & second));
      const __m128i src1 = _mm_blendv_epi8(raw0, raw1, table16(kPattern.far[dd]));
      store16(op + 16, _mm_shuffle_epi8(src1, table16(kPattern.mask2[dd])));
      if (__builtin_expect(ml <= 32, 1)) {
        op += ml;
        continue;
      }
      if (__builtin_expect(ml == 19 + 255, 0) && !length_extend(ip, ilimit, ml, b.max)) {
        ip = seq_ip;
        op = seq_op;
        break;
      }
    } else {
      if (__builtin_expect(ml != 19, 1)) {  // at most 18 bytes: one store, two for 17 and 18
        const __m128i v = _mm_shuffle_epi8(load16(m), table16(kPattern.mask[dd]));
        store16(op, v);
        if (ml > 16) {
          if (offset >= 16) copy16(op + 16, m + 16);
          else store16(op + kPattern.step[offset], v);
        }
        op += ml;
        continue;
      }
      if (!length_extend(ip, ilimit, ml, b.max)) {
        ip = seq_ip;
        op = seq_op;
        break;
      }
    }
    if (ml + kFastMargin > static_cast<size_t>(b.oend - op)) {  // close to the end: exact copies
      if (ml > static_cast<size_t>(b.oend - op)) return false;
      match_copy_exact(op, offset, ml);
    } else {
      uint8_t* d = op;
      uint8_t* const e = op + ml;
      if (offset >= 32) {
        const uint8_t* s = m;
        do { copy32(d, s); d += 32; s += 32; } while (d < e);
      } else if (offset >= 16) {
        const uint8_t* s = m;
        do { copy16(d, s); d += 16; s += 16; } while (d < e);
      } else {
        const __m128i v = match_first16(m, offset);
        const size_t step = kPattern.step[offset];
        do { store16(d, v); d += step; } while (d < e);
      }
    }
    op += ml;
  }
  ip_ref = ip;
  op_ref = op;
  return true;
}

}  // namespace

bool lz4_block_decode_avx2(bytes_view in, bytes_mut out, size_t want, lz4_block_position* at) noexcept {
  const uint8_t* const istart = in.data();
  const uint8_t* ip = istart;
  const uint8_t* const iend = istart + in.size();
  uint8_t* const ostart = out.data();
  uint8_t* op = ostart;
  uint8_t* const oend = ostart + out.size();
  uint8_t* const owant = want < out.size() ? ostart + want : oend;
  const size_t max = out.size();
  if (in.empty()) return false;  // not even the last sequence's token

  if (in.size() > kFastMargin && out.size() > kFastMargin) {
    fast_bounds b;
    b.ilimit = iend - kFastMargin;
    b.ostart = ostart;
    b.olimit = oend - kFastMargin;
    b.ostop = owant < b.olimit ? owant : b.olimit;
    b.oend = oend;
    b.max = max;
    // A stream that compresses 3 times or more: mostly matches (the file's comment).
    const bool ok = in.size() <= out.size() / 3 ? fast_sequences<true>(ip, op, b) : fast_sequences<false>(ip, op, b);
    if (!ok) return false;
  }

  // Near the ends: every length checked, nothing written past out.
  while (ip < iend && op < owant) {
    const unsigned token = *ip++;
    size_t ll = token >> 4;
    if (ll == 15 && !length_extend(ip, iend, ll, max)) return false;
    if (ll > static_cast<size_t>(iend - ip) || ll > static_cast<size_t>(oend - op)) return false;
    memcpy(op, ip, ll);
    op += ll;
    ip += ll;
    if (ip == iend) break;  // the last sequence: literals only
    if (iend - ip < 2) return false;
    const size_t offset = static_cast<size_t>(ip[0]) | static_cast<size_t>(ip[1]) << 8;
    ip += 2;
    if (offset - 1 >= static_cast<size_t>(op - ostart)) return false;
    size_t ml = (token & 15) + 4;
    if (ml == 19 && !length_extend(ip, iend, ml, max)) return false;
    if (ml > static_cast<size_t>(oend - op)) return false;
    match_copy_exact(op, offset, ml);
    op += ml;
    if (ip == iend) return false;  // a block ends with literals, never with a match
  }
  at->in = static_cast<size_t>(ip - istart);
  at->out = static_cast<size_t>(op - ostart);
  return true;
}

}  // namespace tessera::detail
