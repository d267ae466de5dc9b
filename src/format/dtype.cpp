// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/dtype.hpp"

namespace tessera {

namespace {

bool is_byte_order(char c) noexcept { return c == '<' || c == '>' || c == '|' || c == '='; }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_alnum(char c) noexcept { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Whether NumPy has a dtype of this kind and itemsize (bytes). The numeric kinds' sizes as bit masks of the
// size: one test instead of a chain of 64-bit compares (which the 32-bit targets pay for).
bool itemsize_valid(char kind, uint64_t itemsize) noexcept {
  if (itemsize > UINT32_MAX) return false;  // S, V and U hold at most 2^32-1 bytes, the others far less
  const uint32_t n = static_cast<uint32_t>(itemsize);
  if (kind == 'S' || kind == 'V') return true;
  if (kind == 'U') return n % 4 == 0;
  if (kind == 'c') return n % 8 == 0 && n >= 8 && n <= 32;
  uint32_t sizes = 0;
  if (kind == 'b') sizes = 1u << 1;
  else if (kind == 'i' || kind == 'u') sizes = 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8;
  else if (kind == 'f') sizes = 1u << 2 | 1u << 4 | 1u << 8 | 1u << 12 | 1u << 16;
  else if (kind == 'm' || kind == 'M') sizes = 1u << 8;
  return n < 32 && ((sizes >> n) & 1u) != 0;
}

// A unit is a non-empty run of letters and digits ("ns", "25s", "generic" is written without brackets).
bool unit_valid(span<const char> unit) noexcept {
  if (unit.empty()) return false;
  for (char c : unit) {
    if (!is_alnum(c)) return false;
  }
  return true;
}

}  // namespace

dtype_info dtype_parse(span<const char> text) noexcept {
  const dtype_info unknown;
  dtype_info info;
  size_t i = 0;
  const size_t n = text.size();
  if (i < n && is_byte_order(text[i])) info.byte_order = text[i++];
  else info.byte_order = '=';
  if (i >= n) return unknown;
  const char kind = text[i++];
  // Digits, at least one, held in 64 bits while they are read (a longer run is refused as soon as it is too big).
  uint64_t count = 0;
  const size_t digits_start = i;
  while (i < n && is_digit(text[i])) {
    count = count * 10 + static_cast<uint64_t>(text[i] - '0');
    if (count > UINT32_MAX) return unknown;
    ++i;
  }
  if (i == digits_start) return unknown;
  const uint64_t itemsize = kind == 'U' ? count * 4 : count;
  if (!itemsize_valid(kind, itemsize)) return unknown;
  if ((kind == 'm' || kind == 'M') && i < n && text[i] == '[') {
    size_t close = i + 1;
    while (close < n && text[close] != ']') ++close;
    if (close >= n) return unknown;
    const span<const char> unit = text.subspan(i + 1, close - i - 1);
    if (!unit_valid(unit)) return unknown;
    info.unit = unit;
    i = close + 1;
  }
  if (i != n) return unknown;
  info.kind = kind;
  info.itemsize = static_cast<uint32_t>(itemsize);
  info.known = true;
  return info;
}

result<size_t> dtype_format(char byte_order, char kind, uint32_t itemsize, span<char> out,
                            span<const char> unit) noexcept {
  if (!is_byte_order(byte_order)) return make_error(errc::invalid_argument, TESSERA_MSG("dtype: byte order is not < > | ="));
  if (!itemsize_valid(kind, itemsize)) {
    return make_error(errc::invalid_argument, TESSERA_MSG("dtype: no NumPy dtype of this kind and itemsize"));
  }
  if (!unit.empty() && kind != 'm' && kind != 'M') {
    return make_error(errc::invalid_argument, TESSERA_MSG("dtype: only m and M take a unit"));
  }
  if (!unit.empty() && !unit_valid(unit)) return make_error(errc::invalid_argument, TESSERA_MSG("dtype: unit is not alphanumeric"));

  // The number: itemsize, or characters for U. Digits are produced backwards.
  uint32_t number = kind == 'U' ? itemsize / 4 : itemsize;
  char digits[10];
  size_t ndigits = 0;
  do {
    digits[ndigits++] = static_cast<char>('0' + number % 10);
    number /= 10;
  } while (number != 0);

  const size_t unit_chars = unit.empty() ? 0 : unit.size() + 2;
  if (unit_chars > SIZE_MAX - 2 - ndigits) return make_error(errc::overflow, TESSERA_MSG("dtype: unit too long"));
  const size_t total = 2 + ndigits + unit_chars;
  if (out.size() < total || out.data() == nullptr) {
    return make_error(errc::buffer_too_small, TESSERA_MSG("dtype: the output buffer is too small"));
  }
  size_t p = 0;
  out[p++] = byte_order;
  out[p++] = kind;
  while (ndigits > 0) out[p++] = digits[--ndigits];
  if (!unit.empty()) {
    out[p++] = '[';
    for (char c : unit) out[p++] = c;
    out[p++] = ']';
  }
  return p;
}

}  // namespace tessera
