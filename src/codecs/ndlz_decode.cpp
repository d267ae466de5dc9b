// SPDX-License-Identifier: BSD-3-Clause
// NDLZ's decoder (the format is in codecs/ndlz.hpp). Its own object file: on bare metal only a program that calls
// codec_link_ndlz_decoder links it. Reads untrusted streams: every position a token names is checked against the
// stream before it is read, every write stays in the cell's place in the block.
#include <string.h>

#include "base/byte_order.hpp"
#include "codecs/codec_link.hpp"
#include "codecs/ndlz.hpp"

namespace tessera::detail {

namespace {

constexpr size_t kHeader = 9;  // ndim and the two int32 block dimensions

// The stream: positions are int64 (an offset may reach before its start) and every read is checked here.
struct ndlz_stream {
  const uint8_t* base = nullptr;
  size_t size = 0;
  [[nodiscard]] bool holds(int64_t pos, size_t len) const noexcept {
    return pos >= 0 && static_cast<uint64_t>(pos) <= size && len <= size - static_cast<size_t>(pos);
  }
  [[nodiscard]] uint16_t u16(int64_t pos) const noexcept { return le_load16(base + pos); }
};

error stream_damaged() noexcept {
  return make_error(errc::corrupt, TESSERA_MSG("ndlz: a token reads past the stream or before its start"));
}

// Rows of a cell into `cell` (row stride `edge`): `n` rows from earlier bytes at `ref`, in the order `rows`
// names them.
void rows_from(uint8_t* cell, size_t edge, const uint8_t* ref, const int* rows, int n) noexcept {
  for (int k = 0; k < n; ++k) memcpy(cell + static_cast<size_t>(rows[k]) * edge, ref + static_cast<size_t>(k) * edge, edge);
}

// The rows of `cell` not `taken`, literal, in row order.
status literal_rows(const ndlz_stream& s, int64_t* pos, uint8_t* cell, size_t edge, const bool* taken) noexcept {
  for (size_t r = 0; r < edge; ++r) {
    if (taken[r]) continue;
    if (!s.holds(*pos, edge)) return stream_damaged();
    memcpy(cell + r * edge, s.base + *pos, edge);
    *pos += static_cast<int64_t>(edge);
  }
  return ok_status();
}

// The row tokens of 4x4 cells (224..255, 128..191, 40..63) into cell; cur is the token's position, *pos just past
// it. The offsets are the reference's: +3 (+5 for two pairs) in 16 bits, so a large one wraps, as there.
status rows4(const ndlz_stream& s, uint8_t token, int64_t cur, int64_t* pos, uint8_t* cell) noexcept {
  bool taken[4] = {false, false, false, false};
  if (token >= 224) {  // three rows
    if (!s.holds(cur + 1, 2)) return stream_damaged();
    const uint16_t off = static_cast<uint16_t>(s.u16(cur + 1) + 3);
    *pos = cur + 3;
    int rows[3] = {0, 1, 2};
    switch (token >> 3) {
      case 28: rows[0] = 1, rows[1] = 2, rows[2] = 3; break;
      case 29: break;
      case 30: rows[2] = 3; break;
      default: rows[1] = 2, rows[2] = 3; break;  // 31
    }
    const int64_t at = cur + 3 - off;
    if (!s.holds(at, 12)) return stream_damaged();
    rows_from(cell, 4, s.base + at, rows, 3);
    for (int r : rows) taken[r] = true;
    // One literal row: the first not taken.
    for (int r = 0; r < 4; ++r) {
      if (taken[r]) continue;
      if (!s.holds(*pos, 4)) return stream_damaged();
      memcpy(cell + 4 * r, s.base + *pos, 4);
      *pos += 4;
      break;
    }
    return ok_status();
  }
  if (token >= 128 && token <= 191) {  // a pair of rows, the other two literal
    if (!s.holds(cur + 1, 2)) return stream_damaged();
    const uint16_t off = static_cast<uint16_t>(s.u16(cur + 1) + 3);
    *pos = cur + 3;
    int rows[2] = {2, 3};
    if (token != 128) {
      rows[0] = (token - 128) >> 5;
      rows[1] = ((token - 128) >> 3) - (rows[0] << 2);  // 0..3; equal to rows[0] for tokens the encoder never writes
    }
    const int64_t at = cur + 3 - off;
    if (!s.holds(at, 8)) return stream_damaged();
    rows_from(cell, 4, s.base + at, rows, 2);
    taken[rows[0]] = taken[rows[1]] = true;
    return literal_rows(s, pos, cell, 4, taken);
  }
  if (token >= 40 && token <= 63) {  // rows 0 and j as one earlier pair, the other two as another
    if (!s.holds(cur + 1, 4)) return stream_damaged();
    const uint16_t off1 = static_cast<uint16_t>(s.u16(cur + 1) + 5);
    const uint16_t off2 = static_cast<uint16_t>(s.u16(cur + 3) + 5);
    *pos = cur + 5;
    const int j = (token - 32) >> 3;  // 1..3
    int first[2] = {0, j};
    int second[2] = {-1, -1};
    for (int k = 1, n = 0; k < 4; ++k)
      if (k != j) second[n++] = k;
    const int64_t at1 = cur + 5 - off1;
    if (!s.holds(at1, 8)) return stream_damaged();
    rows_from(cell, 4, s.base + at1, first, 2);
    const int64_t at2 = cur + 5 - off2;
    if (!s.holds(at2, 8)) return stream_damaged();
    rows_from(cell, 4, s.base + at2, second, 2);
    return ok_status();
  }
  return make_error(errc::corrupt, TESSERA_MSG("ndlz: an unknown token in a 4x4 stream"));
}

// The row tokens of 8x8 cells (168..175: three rows, 136..143: two rows, from row token & 7) into cell.
status rows8(const ndlz_stream& s, uint8_t token, int64_t cur, int64_t* pos, uint8_t* cell) noexcept {
  const int kind = token >> 3;
  const int row = token & 7;
  int n = 0;
  if (kind == 21) n = 3;
  else if (kind == 17) n = 2;
  else return make_error(errc::corrupt, TESSERA_MSG("ndlz: an unknown token in an 8x8 stream"));
  if (row + n > 8) return make_error(errc::corrupt, TESSERA_MSG("ndlz: a row match past the cell's last row"));
  if (!s.holds(cur + 1, 2)) return stream_damaged();
  const int64_t at = cur - s.u16(cur + 1);
  *pos = cur + 3;
  if (!s.holds(at, static_cast<size_t>(n) * 8)) return stream_damaged();
  bool taken[8] = {};
  for (int k = 0; k < n; ++k) {
    memcpy(cell + static_cast<size_t>(row + k) * 8, s.base + at + 8 * k, 8);
    taken[row + k] = true;
  }
  return literal_rows(s, pos, cell, 8, taken);
}

// Every cell of a bs0 x bs1 block into out, cells of kEdge x kEdge.
template <size_t kEdge>
status cells_decode(const ndlz_stream& s, uint8_t* out, size_t bs0, size_t bs1) noexcept {
  constexpr size_t kCell = kEdge * kEdge;
  uint8_t cell[kCell];
  const size_t nrows = (bs0 + kEdge - 1) / kEdge;
  const size_t ncols = (bs1 + kEdge - 1) / kEdge;
  int64_t pos = kHeader;
  for (size_t r = 0; r < nrows; ++r) {
    const size_t p0 = r + 1 == nrows && bs0 % kEdge != 0 ? bs0 % kEdge : kEdge;
    for (size_t c = 0; c < ncols; ++c) {
      const size_t p1 = c + 1 == ncols && bs1 % kEdge != 0 ? bs1 % kEdge : kEdge;
      const int64_t cur = pos;
      if (!s.holds(cur, 1)) return make_error(errc::corrupt, TESSERA_MSG("ndlz: the stream ends before its last cell"));
      const uint8_t token = s.base[cur];
      pos = cur + 1;
      const uint8_t* src = cell;  // the cell's bytes, p0 rows of p1 back to back
      if (token == 0) {
        if (!s.holds(pos, p0 * p1)) return stream_damaged();
        src = s.base + pos;
        pos += static_cast<int64_t>(p0 * p1);
      } else if (token == 192) {
        if (!s.holds(pos, 2)) return stream_damaged();
        const int64_t at = cur - s.u16(pos);
        if (!s.holds(at, p0 * p1)) return stream_damaged();
        src = s.base + at;
        pos += 2;
      } else if (token == 64) {
        if (!s.holds(pos, 1)) return stream_damaged();
        memset(cell, s.base[pos], kCell);
        pos += 1;
      } else if constexpr (kEdge == 4) {
        TESSERA_TRY(rows4(s, token, cur, &pos, cell));
      } else {
        TESSERA_TRY(rows8(s, token, cur, &pos, cell));
      }
      uint8_t* dst = out + r * kEdge * bs1 + c * kEdge;
      if (p0 == kEdge && p1 == kEdge) {  // a whole cell: rows of a constant size, moved inline (most cells)
        for (size_t i = 0; i < kEdge; ++i) memcpy(dst + i * bs1, src + i * kEdge, kEdge);
      } else {
        for (size_t i = 0; i < p0; ++i) memcpy(dst + i * bs1, src + i * p1, p1);
      }
    }
  }
  return ok_status();
}

}  // namespace

status ndlz_decompress(bytes_view in, bytes_mut out, uint8_t meta) noexcept {
  if (meta != 4 && meta != 8)
    return make_error(errc::unsupported, TESSERA_MSG("ndlz: the codec meta (the cell edge) is not 4 or 8"));
  if (in.size() < kHeader) return make_error(errc::corrupt, TESSERA_MSG("ndlz: a stream shorter than its header"));
  const uint8_t* p = in.data();
  if (p[0] != 2) return make_error(errc::unsupported, TESSERA_MSG("ndlz: a stream whose ndim is not 2 (NDLZ is 2-D only)"));
  const int32_t bs0 = static_cast<int32_t>(le_load32(p + 1));
  const int32_t bs1 = static_cast<int32_t>(le_load32(p + 5));
  if (bs0 < 0 || bs1 < 0) return make_error(errc::corrupt, TESSERA_MSG("ndlz: a negative block dimension"));
  if (static_cast<uint64_t>(bs0) * static_cast<uint64_t>(bs1) != out.size())
    return make_error(errc::corrupt, TESSERA_MSG("ndlz: the stream's block shape is not the block's size"));
  if (out.size() == 0) return ok_status();
  ndlz_stream s;
  s.base = p;
  s.size = in.size();
  if (meta == 4) return cells_decode<4>(s, out.data(), static_cast<size_t>(bs0), static_cast<size_t>(bs1));
  return cells_decode<8>(s, out.data(), static_cast<size_t>(bs0), static_cast<size_t>(bs1));
}

}  // namespace tessera::detail

TESSERA_CODEC_LINK_ANCHORS(ndlz_decoder)
