// SPDX-License-Identifier: BSD-3-Clause
// The version and limits the library was built with (tessera/version.hpp), for callers built with other headers.
#include "tessera/version.hpp"

namespace tessera {

namespace {

// "MAJOR.MINOR.PATCH" from the constants, at compile time (each part below 100).
constexpr char digit(int v) noexcept { return static_cast<char>('0' + v); }
static_assert(kVersionMajor < 100 && kVersionMinor < 100 && kVersionPatch < 100, "two digits per part at most");

struct version_text {
  char text[9] = {};
  constexpr version_text() noexcept {
    int n = 0;
    const int parts[3] = {kVersionMajor, kVersionMinor, kVersionPatch};
    for (int i = 0; i < 3; ++i) {
      if (i > 0) text[n++] = '.';
      if (parts[i] >= 10) text[n++] = digit(parts[i] / 10);
      text[n++] = digit(parts[i] % 10);
    }
    text[n] = '\0';
  }
};

constexpr version_text kText{};

}  // namespace

const char* version_string() noexcept { return kText.text; }

int version_max_dims() noexcept { return kMaxDims; }

}  // namespace tessera
