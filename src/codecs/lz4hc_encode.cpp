// LZ4HC encoding through liblz4 with a state from the caller's allocator (LZ4_compress_HC_extStateHC), made on the caller's
// thread: liblz4 never calls malloc.
#include <limits>

#include "codecs/codec.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

#ifdef TESSERA_HAVE_LZ4
#include <lz4hc.h>
#endif

namespace tessera {

void codec_link_lz4hc_encoder() noexcept {}

namespace detail {

#ifdef TESSERA_HAVE_LZ4

namespace {

constexpr size_t kIntMax = static_cast<size_t>(std::numeric_limits<int>::max());
constexpr size_t kStateAlign = alignof(void*) > 8 ? alignof(void*) : 8;

status prepare(codec_context& c, int, size_t) noexcept {
  if (c.lz4hc_state != nullptr) return ok_status();
  const size_t size = static_cast<size_t>(LZ4_sizeofStateHC());
  c.lz4hc_state = allocator_allocate(c.alloc, size, kStateAlign);
  if (c.lz4hc_state == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("lz4hc: allocator refused the compression state"));
  c.lz4hc_state_size = size;
  return ok_status();
}

result<size_t> compress(codec_context& c, bytes_view in, bytes_mut out, int clevel) noexcept {
  if (in.size() > kIntMax) return make_error(errc::invalid_argument, TESSERA_MSG("lz4hc: input larger than 2 GiB"));
  if (c.lz4hc_state == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("lz4hc: compression state not prepared"));
  const int cap = static_cast<int>(out.size() > kIntMax ? kIntMax : out.size());
  const int n = LZ4_compress_HC_extStateHC(c.lz4hc_state, reinterpret_cast<const char*>(in.data()),
                      reinterpret_cast<char*>(out.data()), static_cast<int>(in.size()), cap, clevel);
  return static_cast<size_t>(n > 0 ? n : 0);
}

void release(codec_context& c) noexcept {
  if (c.lz4hc_state != nullptr) allocator_deallocate(c.alloc, c.lz4hc_state, c.lz4hc_state_size, kStateAlign);
  c.lz4hc_state = nullptr;
  c.lz4hc_state_size = 0;
}

size_t state_estimate(int, size_t) noexcept { return static_cast<size_t>(LZ4_sizeofStateHC()) + 64; }

}  // namespace

extern const codec_encoder_impl lz4hc_encoder_impl = {true, prepare, compress, release, state_estimate};

#else  // no liblz4

extern const codec_encoder_impl lz4hc_encoder_impl = {false, nullptr, nullptr, nullptr, nullptr};

#endif

}  // namespace detail
}  // namespace tessera

// The C API's twin (tessera/tessera.h), in this object file so that calling it links this codec alone.
extern "C" void tessera_codec_link_lz4hc_encoder(void) {}
