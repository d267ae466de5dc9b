// SPDX-License-Identifier: BSD-3-Clause
// LZ4 and LZ4HC encode the same way: a state from the caller's allocator, made by prepare on the caller's thread,
// handed to liblz4's *_extState function, so liblz4 never calls malloc. One template serves both; each codec keeps
// its own object file (lz4_encode.cpp, lz4hc_encode.cpp) so a firmware links only the one it asks for.
#pragma once

#include "codecs/codec_link.hpp"

#ifdef TESSERA_HAVE_LZ4

#include <limits.h>

namespace tessera::detail {

using lz4_state_size_fn = int (*)();
using lz4_state_compress_fn = int (*)(void* state, const char* src, char* dst, int src_size, int dst_capacity,
                                      int level);
// Compresses against a dictionary: the stream may refer to it and nothing else (the reference loads the
// dictionary into the state before every stream). Their code is large (liblz4's dictionary modes), so they live
// in their own object files (lz4_dict_encode.cpp, lz4hc_dict_encode.cpp), referred to weakly on bare metal like
// the codecs: a firmware links them only when it calls codec_link_lz4*_dict_encoder.
int lz4_dict_compress(void* state, size_t state_size, const char* dict, int dict_size, const char* src, char* dst,
                      int src_size, int dst_capacity, int level) TESSERA_CODEC_LINK;
int lz4hc_dict_compress(void* state, size_t state_size, const char* dict, int dict_size, const char* src, char* dst,
                        int src_size, int dst_capacity, int level) TESSERA_CODEC_LINK;
using lz4_state_dict_compress_fn = int (*)(void* state, size_t state_size, const char* dict, int dict_size,
                                           const char* src, char* dst, int src_size, int dst_capacity, int level);
// The dictionary encoders as lz4_state_encoder's DictCompress: null when the program does not link them (a weak
// reference on bare metal is not a constant, so it is read at run time). Only the encoder that uses one refers
// to it.
inline lz4_state_dict_compress_fn lz4_dict_linked() noexcept { return &lz4_dict_compress; }
inline lz4_state_dict_compress_fn lz4hc_dict_linked() noexcept { return &lz4hc_dict_compress; }

// State and Size: the codec_context members holding this codec's state; SizeOf, Compress: liblz4's functions;
// DictCompress: the same with a dictionary (null when this program does not link it).
template <void* codec_context::*State, size_t codec_context::*Size, lz4_state_size_fn SizeOf,
          lz4_state_compress_fn Compress, lz4_state_dict_compress_fn (*DictCompress)()>
struct lz4_state_encoder {
  static constexpr size_t kIntMax = static_cast<size_t>(INT_MAX);
  static constexpr size_t kStateAlign = alignof(void*) > 8 ? alignof(void*) : 8;

  static status prepare(codec_context& c, int, size_t) noexcept {
    if (c.*State != nullptr) return ok_status();
    const size_t size = static_cast<size_t>(SizeOf());
    c.*State = allocator_allocate(c.alloc, size, kStateAlign);
    if (c.*State == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("lz4: allocator refused the compression state"));
    c.*Size = size;
    return ok_status();
  }

  static result<size_t> compress(codec_context& c, bytes_view in, bytes_mut out, int level, bytes_view dict) noexcept {
    // GCOVR_EXCL_BR_START: blocks are at most kChunkMaxBlocksize, and the chunk encoder prepares the state first.
    if (in.size() > kIntMax || dict.size() > kIntMax) return make_error(errc::invalid_argument, TESSERA_MSG("lz4: input larger than 2 GiB"));
    if (c.*State == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("lz4: compression state not prepared"));
    // GCOVR_EXCL_BR_STOP
    const int cap = static_cast<int>(out.size() > kIntMax ? kIntMax : out.size());
    const auto* src = reinterpret_cast<const char*>(in.data());
    auto* dst = reinterpret_cast<char*>(out.data());
    // GCOVR_EXCL_START: only bare metal's codecs on demand leave the dictionary encoder unlinked.
    if (!dict.empty() && DictCompress() == nullptr)
      return make_error(errc::codec_unavailable, TESSERA_MSG("lz4: this program does not link the dictionary encoder "
                                                             "(tessera::codec_link_lz4*_dict_encoder)"));
    // GCOVR_EXCL_STOP
    const int n = dict.empty() ? Compress(c.*State, src, dst, static_cast<int>(in.size()), cap, level)
                               : DictCompress()(c.*State, c.*Size, reinterpret_cast<const char*>(dict.data()),
                                                static_cast<int>(dict.size()), src, dst, static_cast<int>(in.size()),
                                                cap, level);
    return static_cast<size_t>(n > 0 ? n : 0);
  }

  static void release(codec_context& c) noexcept {
    if (c.*State != nullptr) allocator_deallocate(c.alloc, c.*State, c.*Size, kStateAlign);
    c.*State = nullptr;
    c.*Size = 0;
  }

  static size_t state_estimate(int, size_t) noexcept { return static_cast<size_t>(SizeOf()) + 64; }

  static constexpr codec_encoder_impl impl() noexcept { return {true, prepare, compress, release, state_estimate}; }
};

}  // namespace tessera::detail

#endif

// Defines the encoder <name>_impl (state and size: its codec_context members; size_of, compress: liblz4's
// functions; dict_compress: lz4_dict_linked or lz4hc_dict_linked), unavailable without liblz4, and its link anchors.
#ifdef TESSERA_HAVE_LZ4
#define TESSERA_LZ4_STATE_ENCODER(name, state, size, size_of, compress, dict_compress)                          \
  extern const tessera::detail::codec_encoder_impl tessera::detail::name##_impl =                              \
      tessera::detail::lz4_state_encoder<&tessera::detail::codec_context::state,                               \
                                         &tessera::detail::codec_context::size, size_of, compress,            \
                                         tessera::detail::dict_compress>::impl();                             \
  TESSERA_CODEC_LINK_ANCHORS(name)
#else
#define TESSERA_LZ4_STATE_ENCODER(name, state, size, size_of, compress, dict_compress)                          \
  extern const tessera::detail::codec_encoder_impl tessera::detail::name##_impl =                              \
      tessera::detail::kCodecEncoderUnavailable;                                                                \
  TESSERA_CODEC_LINK_ANCHORS(name)
#endif
