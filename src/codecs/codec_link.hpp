// SPDX-License-Identifier: BSD-3-Clause
// What every codec wrapper's object file (lz4_decode.cpp, zstd_encode.cpp, ...) shares besides its library calls:
// its two link anchors and, for a build without its library, the interface marked unavailable.
#pragma once

#include "chunk/chunk_internal.hpp"
#include "codecs/codec.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera::detail {

// A codec's interface in a build without its library (the chunk code reports codec_unavailable).
inline constexpr codec_decoder_impl kCodecDecoderUnavailable = {false, nullptr, nullptr, nullptr, nullptr};
inline constexpr codec_encoder_impl kCodecEncoderUnavailable = {false, nullptr, nullptr, nullptr, nullptr};

}  // namespace tessera::detail

// Defines tessera::codec_link_<name> (tessera/codecs.hpp) and its C twin tessera_codec_link_<name> (tessera.h).
// Use it once, in the object file that defines the codec's impl: calling either anchor is what links that file,
// and so that codec alone, into a bare-metal image (TESSERA_CODECS_ON_DEMAND).
#define TESSERA_CODEC_LINK_ANCHORS(name)          \
  void tessera::codec_link_##name() noexcept {}   \
  extern "C" void tessera_codec_link_##name(void) {}
// The same for an encoder that takes dictionaries (use_dict): its anchors link the chunk encoder's dictionary
// code too (chunk/encoder_dict_link.cpp), which no other program carries.
#define TESSERA_CODEC_LINK_ANCHORS_DICT(name)                                           \
  void tessera::codec_link_##name() noexcept { tessera::detail::encoder_dict_link(); } \
  extern "C" void tessera_codec_link_##name(void) { tessera::detail::encoder_dict_link(); }
