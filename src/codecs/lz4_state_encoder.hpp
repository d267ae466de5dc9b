// LZ4 and LZ4HC encode the same way: a state from the caller's allocator, made by prepare on the caller's thread,
// handed to liblz4's *_extState function, so liblz4 never calls malloc. One template serves both; each codec keeps
// its own object file (lz4_encode.cpp, lz4hc_encode.cpp) so a firmware links only the one it asks for.
#pragma once

#ifdef TESSERA_HAVE_LZ4

#include <limits>

#include "codecs/codec.hpp"

namespace tessera::detail {

using lz4_state_size_fn = int (*)();
using lz4_state_compress_fn = int (*)(void* state, const char* src, char* dst, int src_size, int dst_capacity,
                                      int level);

// State and Size: the codec_context members holding this codec's state; SizeOf, Compress: liblz4's functions.
template <void* codec_context::*State, size_t codec_context::*Size, lz4_state_size_fn SizeOf,
          lz4_state_compress_fn Compress>
struct lz4_state_encoder {
  static constexpr size_t kIntMax = static_cast<size_t>(std::numeric_limits<int>::max());
  static constexpr size_t kStateAlign = alignof(void*) > 8 ? alignof(void*) : 8;

  static status prepare(codec_context& c, int, size_t) noexcept {
    if (c.*State != nullptr) return ok_status();
    const size_t size = static_cast<size_t>(SizeOf());
    c.*State = allocator_allocate(c.alloc, size, kStateAlign);
    if (c.*State == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("lz4: allocator refused the compression state"));
    c.*Size = size;
    return ok_status();
  }

  static result<size_t> compress(codec_context& c, bytes_view in, bytes_mut out, int level) noexcept {
    if (in.size() > kIntMax) return make_error(errc::invalid_argument, TESSERA_MSG("lz4: input larger than 2 GiB"));
    if (c.*State == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("lz4: compression state not prepared"));
    const int cap = static_cast<int>(out.size() > kIntMax ? kIntMax : out.size());
    const int n = Compress(c.*State, reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                           static_cast<int>(in.size()), cap, level);
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
