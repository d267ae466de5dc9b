// SPDX-License-Identifier: BSD-3-Clause
// The formatter of messages that name values (message_format.hpp): its own object file, linked only by code
// that formats (never with messages compiled out).
#include "base/message_format.hpp"

namespace tessera::detail {

namespace {

// Appends c when there is room for it and the final NUL.
void put(char* buf, size_t cap, size_t& n, char c) noexcept {
  if (n + 1 < cap) buf[n++] = c;
}

// Appends v in decimal (INT64_MIN included: the digits are produced from the negative value).
void put_int(char* buf, size_t cap, size_t& n, int64_t v) noexcept {
  char digits[20];
  int k = 0;
  if (v < 0) put(buf, cap, n, '-');
  do {
    const int64_t q = v / 10;
    const int64_t r = v - q * 10;
    digits[k++] = static_cast<char>('0' + (r < 0 ? -r : r));
    v = q;
  } while (v != 0);
  while (k > 0) put(buf, cap, n, digits[--k]);
}

}  // namespace

const char* message_format(char* buf, size_t cap, const char* pattern, const int64_t* values, int n) noexcept {
  if (cap == 0) return buf;
  size_t len = 0;
  int next = 0;
  for (const char* p = pattern; *p != '\0'; ++p) {
    if (p[0] == '{' && p[1] == '}' && next < n) {
      put_int(buf, cap, len, values[next++]);
      ++p;
    } else {
      put(buf, cap, len, *p);
    }
  }
  buf[len] = '\0';
  return buf;
}

}  // namespace tessera::detail
