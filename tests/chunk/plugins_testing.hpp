// SPDX-License-Identifier: BSD-3-Clause
// A user codec and a user filter for the plugin tests: byte run-length coding XORed with compcode_meta (id 200)
// and a filter adding its meta to every byte (id 170). Each counts its calls in its context, so a test sees
// that the library ran them; none allocates.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/chunk.hpp"

namespace plugins_test {

using namespace tessera;

inline constexpr uint8_t kRleId = 200;
inline constexpr uint8_t kAddId = 170;

struct calls {
  size_t encodes = 0;
  size_t decodes = 0;
};

// (count 1..255, byte ^ meta) pairs. Written 0 when the pairs do not fit out (the stream is then stored raw).
inline status rle_encode(void* context, bytes_view in, bytes_mut out, uint8_t meta, size_t* written) noexcept {
  ++static_cast<calls*>(context)->encodes;
  size_t o = 0;
  for (size_t i = 0; i < in.size();) {
    size_t n = 1;
    while (i + n < in.size() && n < 255 && in[i + n] == in[i]) ++n;
    if (o + 2 > out.size()) {
      *written = 0;
      return ok_status();
    }
    out[o] = static_cast<uint8_t>(n);
    out[o + 1] = static_cast<uint8_t>(in[i] ^ meta);
    o += 2;
    i += n;
  }
  *written = o;
  return ok_status();
}

inline status rle_decode(void* context, bytes_view in, bytes_mut out, uint8_t meta, size_t* written) noexcept {
  ++static_cast<calls*>(context)->decodes;
  if (in.size() % 2 != 0) return make_error(errc::corrupt, "rle: odd stream");
  size_t o = 0;
  for (size_t i = 0; i < in.size(); i += 2) {
    const size_t n = in[i];
    if (n == 0 || n > out.size() - o) return make_error(errc::corrupt, "rle: run past the output");
    for (size_t k = 0; k < n; ++k) out[o + k] = static_cast<uint8_t>(in[i + 1] ^ meta);
    o += n;
  }
  *written = o;
  return ok_status();
}

inline status add_forward(void* context, bytes_view in, bytes_mut out, uint8_t meta, uint8_t) noexcept {
  ++static_cast<calls*>(context)->encodes;
  if (in.size() != out.size()) return make_error(errc::invalid_argument, "add: sizes differ");
  for (size_t i = 0; i < in.size(); ++i) out[i] = static_cast<uint8_t>(in[i] + meta);
  return ok_status();
}

inline status add_backward(void* context, bytes_view in, bytes_mut out, uint8_t meta, uint8_t) noexcept {
  ++static_cast<calls*>(context)->decodes;
  if (in.size() != out.size()) return make_error(errc::invalid_argument, "add: sizes differ");
  for (size_t i = 0; i < in.size(); ++i) out[i] = static_cast<uint8_t>(in[i] - meta);
  return ok_status();
}

// The tables an application would keep: both plugins, or only the codec.
struct registry {
  calls codec_calls;
  calls filter_calls;
  chunk_user_codec codec{kRleId, rle_encode, rle_decode, &codec_calls};
  chunk_user_filter filter{kAddId, add_forward, add_backward, &filter_calls};
  chunk_plugins both{&codec, 1, &filter, 1};
  chunk_plugins codec_only{&codec, 1, nullptr, 0};
};

}  // namespace plugins_test
