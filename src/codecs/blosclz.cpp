// SPDX-License-Identifier: BSD-3-Clause
// BloscLZ compressor and decoder. See blosclz.hpp for the stream format.
#include "codecs/blosclz.hpp"

#include <string.h>
#include <limits.h>

#include "base/byte_order.hpp"

namespace tessera::detail {
namespace {

constexpr uint32_t kMaxLiteralRun = 32;        // a literal token carries 1..32 bytes
constexpr uint8_t kLiteralPlaceholder = kMaxLiteralRun - 1;
constexpr uint32_t kNearLimit = 8191;          // biased distances below this fit the 13-bit form
constexpr uint32_t kDistanceLimit = 73725;     // unbiased distances must stay below this (16-bit far form)
constexpr size_t kBackShift = 4;               // the reference ends every match 4 bytes before the mismatch
constexpr size_t kMinMatch = 4;                // shorter (shifted) matches are emitted as literals
constexpr uint32_t kHashMultiplier = 2654435761u;

inline uint64_t load64(const uint8_t* p) noexcept {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

// Index of the first differing byte (in memory order) of two 8-byte loads whose XOR is `x` != 0. 32-bit
// targets count within halves: a 64-bit count would be a libgcc call there.
inline size_t first_diff_byte(uint64_t x) noexcept {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#if UINTPTR_MAX > 0xFFFFFFFFu
  return static_cast<size_t>(__builtin_clzll(x)) >> 3;
#else
  const uint32_t hi = static_cast<uint32_t>(x >> 32);
  return hi != 0 ? static_cast<size_t>(__builtin_clz(hi)) >> 3
                 : 4 + (static_cast<size_t>(__builtin_clz(static_cast<uint32_t>(x))) >> 3);
#endif
#else
#if UINTPTR_MAX > 0xFFFFFFFFu
  return static_cast<size_t>(__builtin_ctzll(x)) >> 3;
#else
  const uint32_t lo = static_cast<uint32_t>(x);
  return lo != 0 ? static_cast<size_t>(__builtin_ctz(lo)) >> 3
                 : 4 + (static_cast<size_t>(__builtin_ctz(static_cast<uint32_t>(x >> 32))) >> 3);
#endif
#endif
}

// Sequences are hashed as little-endian loads (le_load32) on every host, so the output matches the reference
// on little-endian machines everywhere.
inline uint32_t hash_of(uint32_t seq, unsigned hash_log) noexcept {
  return (seq * kHashMultiplier) >> (32u - hash_log);
}

unsigned hash_log_for(int clevel) noexcept { return clevel == 1 ? 12u : clevel == 2 ? 13u : 14u; }

// Where the reference's match extension stops: one past the first position p in [pos, bound) where
// base[p] != base[p - dist], or `bound` when there is none. (Runs, dist == 1, follow the same rule.)
inline size_t extend_match(const uint8_t* base, size_t pos, size_t bound, size_t dist) noexcept {
#ifdef __OPTIMIZE_SIZE__
  // A size build (firmware): one 32-bit word per step, no unrolled 64-bit pairs (a speed path for hosts).
  while (bound - pos >= 4) {
    uint32_t a;
    uint32_t b;
    memcpy(&a, base + pos, 4);
    memcpy(&b, base + pos - dist, 4);
    if (a != b) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      return pos + (static_cast<size_t>(__builtin_clz(a ^ b)) >> 3) + 1;
#else
      return pos + (static_cast<size_t>(__builtin_ctz(a ^ b)) >> 3) + 1;
#endif
    }
    pos += 4;
  }
#else
  while (bound - pos >= 16) {  // long matches are common in shuffled data: 16 bytes per step
    const uint64_t x = load64(base + pos) ^ load64(base + pos - dist);
    const uint64_t y = load64(base + pos + 8) ^ load64(base + pos + 8 - dist);
    if ((x | y) != 0) return x != 0 ? pos + first_diff_byte(x) + 1 : pos + 8 + first_diff_byte(y) + 1;
    pos += 16;
  }
  while (bound - pos >= 8) {
    const uint64_t x = load64(base + pos) ^ load64(base + pos - dist);
    if (x != 0) return pos + first_diff_byte(x) + 1;
    pos += 8;
  }
#endif
  for (; pos < bound; ++pos) {
    if (base[pos] != base[pos - dist]) return pos + 1;
  }
  return bound;
}

// One step of the match search at `pos`: looks up the hash table, records `pos` there, and extends a candidate
// that matches 4 bytes. `len` is the match length as the reference counts it (ending kBackShift bytes before
// the mismatch), 0 when there is no candidate; `dist` is the unbiased distance either way.
struct match {
  size_t dist;
  size_t len;
};

inline match match_find(const uint8_t* base, size_t pos, size_t bound, uint32_t* table,
                        unsigned hash_log) noexcept {
  const uint32_t seq = le_load32(base + pos);
  const uint32_t h = hash_of(seq, hash_log);
  const size_t cand = table[h];
  table[h] = static_cast<uint32_t>(pos);
  match m{pos - cand, 0};
  if (m.dist != 0 && m.dist < kDistanceLimit && le_load32(base + cand) == seq)
    m.len = extend_match(base, pos + 4, bound, m.dist) - kBackShift - pos;
  return m;
}

// The entropy probe: a dry run of the compressor over `len` bytes (capped at the table size) that only counts
// output bytes. The reference skips blocks whose estimated ratio is below a per-clevel threshold.
struct probe_estimate {
  uint32_t consumed;
  uint32_t produced;
};

probe_estimate probe_block(const uint8_t* base, size_t len, uint32_t* table, unsigned hash_log) noexcept {
  const size_t table_len = size_t{1} << hash_log;
  const size_t limit = len < table_len ? len : table_len;
  memset(table, 0, table_len * sizeof(uint32_t));
  probe_estimate est{0, 5};  // the opening literal token plus 4 literals
  if (limit < 13) return est;
  const size_t bound = limit - 1;
  const size_t stop = limit - 12;
  uint32_t run = 4;
  size_t pos = 0;
  while (pos < stop) {
    const match m = match_find(base, pos, bound, table, hash_log);
    if (m.len < kMinMatch) {  // literal
      ++est.produced;
      ++pos;
      if (++run == kMaxLiteralRun) {
        run = 0;
        ++est.produced;
      }
      continue;
    }
    pos += m.len;
    if (run == 0) --est.produced;
    run = 0;
    if (m.len >= 7) est.produced += static_cast<uint32_t>((m.len - 7) / 255 + 1);
    est.produced += (m.dist - 1 < kNearLimit) ? 2 : 4;
    const uint32_t next = le_load32(base + pos);
    table[hash_of(next, hash_log)] = static_cast<uint32_t>(pos);
    pos += 2;
    ++est.produced;  // the next literal token
  }
  est.consumed = static_cast<uint32_t>(pos);
  return est;
}

// Minimum probe ratio per clevel, as exact fractions (num / den) of the reference's thresholds
// {2, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0}; comparing consumed * den < produced * num in integers gives
// the same decisions as the reference's double division for every count a probe can produce.
constexpr uint8_t kProbeNum[10] = {0, 2, 3, 6, 6, 6, 6, 23, 11, 1};
constexpr uint8_t kProbeDen[10] = {1, 1, 2, 5, 5, 5, 5, 20, 10, 1};

// Output writer with the reference's room checks (each returns false when the reference gives up).
struct writer {
  uint8_t* data;
  size_t pos;
  size_t cap;
  bool room(size_t n) const noexcept { return cap - pos >= n; }

  // A match token's length part: mlen (< 7) in the top 3 bits of the first byte, or 7 there and mlen - 7 in
  // 255-steps after it; `low` fills the first byte's low 5 bits. `tail`: the distance bytes that follow, whose
  // room is checked with the last length byte, as the reference does.
  bool put_length(size_t mlen, uint8_t low, size_t tail) noexcept {
    if (mlen < 7) {
      if (!room(1 + tail)) return false;
      data[pos++] = static_cast<uint8_t>((mlen << 5) + low);
      return true;
    }
    // Never fails: a match starts where the literal writes left a byte (room(2)) or dropped the placeholder.
    if (!room(1)) return false;  // GCOVR_EXCL_BR_LINE: see above
    data[pos++] = static_cast<uint8_t>((7u << 5) + low);
    size_t rest = mlen - 7;
    for (; rest >= 255; rest -= 255) {
      if (!room(1)) return false;
      data[pos++] = 255;
    }
    if (!room(1 + tail)) return false;
    data[pos++] = static_cast<uint8_t>(rest);
    return true;
  }
};

}  // namespace

size_t blosclz_workspace_size(int clevel) noexcept {
  if (clevel < kBlosclzMinLevel || clevel > kBlosclzMaxLevel) return 0;
  return blosclz_workspace_size_for_log(hash_log_for(clevel));
}

result<size_t> blosclz_compress(int clevel, bytes_view in, bytes_mut out, bytes_mut workspace) noexcept {
  if (clevel < kBlosclzMinLevel || clevel > kBlosclzMaxLevel)
    return make_error(errc::invalid_argument, TESSERA_MSG("blosclz_compress: clevel must be 1..9"));
  if (workspace.size() < blosclz_workspace_size_for_log(kBlosclzHashLogMin))
    return make_error(errc::invalid_argument, TESSERA_MSG("blosclz_compress: workspace smaller than the smallest table"));
  if (in.size() > static_cast<size_t>(INT32_MAX))
    return make_error(errc::invalid_argument, TESSERA_MSG("blosclz_compress: input larger than INT32_MAX bytes"));

  const size_t n = in.size();
  if (n < 16 || out.size() < 66) return size_t{0};
  const uint8_t* const src = in.data();
  // The reference's table for the clevel, or the largest one a smaller workspace holds (a firmware's choice).
  unsigned hash_log = hash_log_for(clevel);
  while (hash_log > kBlosclzHashLogMin && workspace.size() < blosclz_workspace_size_for_log(hash_log)) --hash_log;

  // The table: uint32 offsets in the workspace, aligned up (the workspace size includes the slack).
  const uintptr_t raw = reinterpret_cast<uintptr_t>(workspace.data());
  const size_t skew = (alignof(uint32_t) - raw % alignof(uint32_t)) % alignof(uint32_t);
  uint32_t* const table = static_cast<uint32_t*>(static_cast<void*>(workspace.data() + skew));

  // Entropy probe over the tail of the block: 1/8 of it at clevel 1, 1/4 at 2-3, 1/2 at 4-6, all at 7-9.
  size_t probe_len = n;
  if (clevel < 2) probe_len /= 8;
  else if (clevel < 4) probe_len /= 4;
  else if (clevel < 7) probe_len /= 2;
  const probe_estimate est = probe_block(src + (n - probe_len), probe_len, table, hash_log);
  // 32-bit products: a probe covers at most the table (at most 2^14 positions), so both counts stay below 2^16.
  if (est.consumed * kProbeDen[clevel] < est.produced * kProbeNum[clevel]) return size_t{0};

  memset(table, 0, (size_t{1} << hash_log) * sizeof(uint32_t));
  writer w{out.data(), 0, out.size()};
  const size_t bound = n - 1;
  const size_t stop = n - 12;

  // Opening literal token with the first 4 bytes; `run` counts literals in the open token.
  w.data[w.pos++] = kLiteralPlaceholder;
  for (size_t i = 0; i < 4; ++i) w.data[w.pos++] = src[i];
  uint32_t run = 4;
  size_t pos = 4;

  while (pos < stop) {
    const match m = match_find(src, pos, bound, table, hash_log);
    const size_t mlen = m.len;
    const size_t bdist = m.dist - 1;  // distances are stored biased
    if (mlen < kMinMatch || (mlen <= 5 && bdist >= kNearLimit)) {
      if (!w.room(2)) return size_t{0};
      w.data[w.pos++] = src[pos++];
      if (++run == kMaxLiteralRun) {
        run = 0;
        w.data[w.pos++] = kLiteralPlaceholder;
      }
      continue;
    }

    pos += mlen;
    // Close the open literal token (or drop its unused placeholder).
    if (run != 0) w.data[w.pos - run - 1] = static_cast<uint8_t>(run - 1);
    else --w.pos;
    run = 0;

    if (bdist < kNearLimit) {
      if (!w.put_length(mlen, static_cast<uint8_t>(bdist >> 8), 1)) return size_t{0};
      w.data[w.pos++] = static_cast<uint8_t>(bdist & 255);
    } else {
      const size_t far = bdist - kNearLimit;  // < 65533
      if (!w.put_length(mlen, 31, 3)) return size_t{0};
      w.data[w.pos++] = 255;
      w.data[w.pos++] = static_cast<uint8_t>(far >> 8);
      w.data[w.pos++] = static_cast<uint8_t>(far & 255);
    }

    // Re-seed the table at the match end (clevel 9 also seeds the next position, hashing the 3 bytes
    // that follow as the reference does: the 32-bit word shifted right by 8).
    const uint32_t next = le_load32(src + pos);
    table[hash_of(next, hash_log)] = static_cast<uint32_t>(pos);
    ++pos;
    if (clevel == 9) table[hash_of(next >> 8, hash_log)] = static_cast<uint32_t>(pos);
    ++pos;

    if (!w.room(1)) return size_t{0};
    w.data[w.pos++] = kLiteralPlaceholder;
  }

  // The tail goes out as literals.
  while (pos <= bound) {
    if (!w.room(2)) return size_t{0};
    w.data[w.pos++] = src[pos++];
    if (++run == kMaxLiteralRun) {
      run = 0;
      w.data[w.pos++] = kLiteralPlaceholder;
    }
  }
  if (run != 0) w.data[w.pos - run - 1] = static_cast<uint8_t>(run - 1);
  else --w.pos;

  w.data[0] |= 1u << 5;  // the BloscLZ marker in the first token
  return w.pos;
}

namespace {

// Copies `len` bytes from ref (at least Step bytes back) to op in Step-byte pieces, writing up to Step - 1
// bytes past op + len (the caller checked the room).
template <size_t Step>
inline uint8_t* copy_pieces(uint8_t* op, const uint8_t* ref, size_t len) noexcept {
  uint8_t* const stop = op + len;
  do {
    memcpy(op, ref, Step);
    op += Step;
    ref += Step;
  } while (op < stop);
  return stop;
}

// Copies a match of `len` bytes from `dist` bytes back; op + len <= end and dist <= op - start are checked.
inline uint8_t* copy_match(uint8_t* op, size_t dist, size_t len, uint8_t* end) noexcept {
  const uint8_t* ref = op - dist;
  if (dist == 1) {
    memset(op, *ref, len);
    return op + len;
  }
  const size_t room = static_cast<size_t>(end - op);
  if (dist >= 16 && room >= len + 16) return copy_pieces<16>(op, ref, len);
  if (dist >= 8 && room >= len + 8) return copy_pieces<8>(op, ref, len);
  if (dist >= len) {
    memcpy(op, ref, len);
    return op + len;
  }
  // Overlapping: the bytes from ref repeat with period dist, so copying the whole span [ref, op) at once
  // stays correct while the span doubles each step.
  uint8_t* const stop = op + len;
  while (op < stop) {
    size_t chunk = static_cast<size_t>(op - ref);
    const size_t left = static_cast<size_t>(stop - op);
    if (chunk > left) chunk = left;
    memcpy(op, ref, chunk);
    op += chunk;
  }
  return stop;
}

}  // namespace

// Decodes until the stream ends, or (want < out.size()) until `want` bytes are out.
result<size_t> blosclz_decompress_prefix(bytes_view in, bytes_mut out, size_t want) noexcept {
  // The whole output wanted: decode to the stream's end, so that a stream longer than out is an error.
  if (want >= out.size()) want = SIZE_MAX;
  if (in.empty()) return make_error(errc::truncated, TESSERA_MSG("blosclz_decompress: empty stream"));
  const uint8_t* ip = in.data();
  const uint8_t* const ip_end = ip + in.size();
  uint8_t* const op_start = out.data();
  uint8_t* op = op_start;
  uint8_t* const op_end = op_start + out.size();

  uint32_t ctrl = *ip++ & 31u;  // the first token is a literal run; its top bits are the marker
  for (;;) {
    if (ctrl < 32) {
      const size_t run = ctrl + 1;
      if (static_cast<size_t>(ip_end - ip) < run)
        return make_error(errc::truncated, TESSERA_MSG("blosclz_decompress: stream ends inside a literal run"));
      if (static_cast<size_t>(op_end - op) < run)
        return make_error(errc::corrupt, TESSERA_MSG("blosclz_decompress: literal run overflows the output"));
      if (ip_end - ip >= 32 && op_end - op >= 32) memcpy(op, ip, 32);
      else memcpy(op, ip, run);
      op += run;
      ip += run;
      if (ip == ip_end || static_cast<size_t>(op - op_start) >= want) break;
      ctrl = *ip++;
      continue;
    }

    size_t len = (ctrl >> 5) + 2;
    const size_t room = static_cast<size_t>(op_end - op);
    if (len == 9) {
      uint8_t code;
      do {
        if (ip == ip_end) return make_error(errc::truncated, TESSERA_MSG("blosclz_decompress: stream ends inside a match length"));
        code = *ip++;
        len += code;
        if (len > room) return make_error(errc::corrupt, TESSERA_MSG("blosclz_decompress: match overflows the output"));
      } while (code == 255);
    }
    if (ip == ip_end) return make_error(errc::truncated, TESSERA_MSG("blosclz_decompress: stream ends inside a match"));
    const uint8_t lo = *ip++;
    size_t dist;
    if (lo == 255 && (ctrl & 31u) == 31u) {
      if (ip_end - ip < 2) return make_error(errc::truncated, TESSERA_MSG("blosclz_decompress: stream ends inside a far distance"));
      dist = ((size_t{ip[0]} << 8) | ip[1]) + kNearLimit + 1;
      ip += 2;
    } else {
      dist = ((size_t{ctrl & 31u} << 8) | lo) + 1;
    }
    if (len > room) return make_error(errc::corrupt, TESSERA_MSG("blosclz_decompress: match overflows the output"));
    if (dist > static_cast<size_t>(op - op_start))
      return make_error(errc::corrupt, TESSERA_MSG("blosclz_decompress: match distance before the start of the output"));
    if (ip == ip_end) return make_error(errc::truncated, TESSERA_MSG("blosclz_decompress: stream ends with a match"));
    ctrl = *ip++;
    op = copy_match(op, dist, len, op_end);
    if (static_cast<size_t>(op - op_start) >= want) break;
  }
  return static_cast<size_t>(op - op_start);
}

result<size_t> blosclz_decompress(bytes_view in, bytes_mut out) noexcept {
  return blosclz_decompress_prefix(in, out, SIZE_MAX);
}

}  // namespace tessera::detail
