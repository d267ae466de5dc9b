// LZ4 and LZ4HC through liblz4. Decompression is stateless; compression uses a state from the allocator
// (LZ4_compress_fast_extState / LZ4_compress_HC_extStateHC), so liblz4 never calls malloc.
#include <limits>

#include "codecs/codec.hpp"

#ifdef TESSERA_HAVE_LZ4
#include <lz4.h>
#include <lz4hc.h>
#endif

namespace tessera::detail {

namespace {
constexpr size_t kIntMax = static_cast<size_t>(std::numeric_limits<int>::max());
constexpr size_t kStateAlign = alignof(void*) > 8 ? alignof(void*) : 8;
}  // namespace

#ifdef TESSERA_HAVE_LZ4

bool lz4_available() noexcept { return true; }

status lz4_decompress(bytes_view in, bytes_mut out, bytes_view dict) noexcept {
  if (in.size() > kIntMax || out.size() > kIntMax || dict.size() > kIntMax)
    return make_error(errc::malformed, TESSERA_MSG("lz4: stream larger than 2 GiB"));
  const auto* src = reinterpret_cast<const char*>(in.data());
  auto* dst = reinterpret_cast<char*>(out.data());
  int n;
  if (!dict.empty()) {
    n = LZ4_decompress_safe_usingDict(src, dst, static_cast<int>(in.size()), static_cast<int>(out.size()),
                                      reinterpret_cast<const char*>(dict.data()), static_cast<int>(dict.size()));
  } else {
    n = LZ4_decompress_safe(src, dst, static_cast<int>(in.size()), static_cast<int>(out.size()));
  }
  if (n < 0) return make_error(errc::corrupt, TESSERA_MSG("lz4: invalid compressed stream"));
  if (static_cast<size_t>(n) != out.size()) return make_error(errc::corrupt, TESSERA_MSG("lz4: stream decodes to a wrong size"));
  return ok_status();
}

namespace {

// Walks an LZ4 block's sequences without copying anything (the block format: a token, literal length, literals,
// then a 2-byte offset and match length, except in the last sequence) and checks that the stream ends exactly
// at its input's end, decodes to exactly `size` bytes and never refers before its start. A partial decode reads
// only the front of a stream; this keeps a broken tail from passing unseen, at the cost of a parse, not a decode.
bool lz4_stream_well_formed(bytes_view in, size_t size) noexcept {
  const uint8_t* p = in.data();
  const uint8_t* const end = p + in.size();
  size_t pos = 0;
  auto length = [&](size_t n) -> bool {  // adds the extension bytes of a length field
    uint8_t b = 255;
    while (b == 255) {
      if (p == end) return false;
      b = *p++;
      n += b;
      if (n > size) return false;
    }
    pos += n;
    return pos <= size;
  };
  while (p < end) {
    const uint8_t token = *p++;
    const size_t lit = token >> 4;
    const size_t before = pos;
    if (lit == 15 ? !length(15) : (pos += lit) > size) return false;
    const size_t nlit = pos - before;
    if (static_cast<size_t>(end - p) < nlit) return false;
    p += nlit;
    if (p == end) return pos == size;  // the last sequence: literals only
    if (end - p < 2) return false;
    const size_t offset = static_cast<size_t>(p[0]) | static_cast<size_t>(p[1]) << 8;
    p += 2;
    if (offset == 0 || offset > pos) return false;
    const size_t match = token & 15;
    if (match == 15 ? !length(15 + 4) : (pos += match + 4) > size) return false;
  }
  return false;  // an empty stream, or one that ends with a match
}

}  // namespace

status lz4_decompress_prefix(bytes_view in, bytes_mut out, size_t want) noexcept {
  if (want >= out.size()) return lz4_decompress(in, out, bytes_view{});
  if (in.size() > kIntMax || out.size() > kIntMax) return make_error(errc::malformed, TESSERA_MSG("lz4: stream larger than 2 GiB"));
  const int n = LZ4_decompress_safe_partial(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                                            static_cast<int>(in.size()), static_cast<int>(want),
                                            static_cast<int>(out.size()));
  if (n < 0) return make_error(errc::corrupt, TESSERA_MSG("lz4: invalid compressed stream"));
  if (static_cast<size_t>(n) < want) return make_error(errc::corrupt, TESSERA_MSG("lz4: stream shorter than the block"));
  if (!lz4_stream_well_formed(in, out.size()))
    return make_error(errc::corrupt, TESSERA_MSG("lz4: the stream's tail is broken or decodes to a wrong size"));
  return ok_status();
}

status lz4_encoder_prepare(codec_context& c, bool hc) noexcept {
  void*& state = hc ? c.lz4hc_state : c.lz4_state;
  if (state != nullptr) return ok_status();
  const size_t size = static_cast<size_t>(hc ? LZ4_sizeofStateHC() : LZ4_sizeofState());
  state = allocator_allocate(c.alloc, size, kStateAlign);
  if (state == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("lz4: allocator refused the compression state"));
  (hc ? c.lz4hc_state_size : c.lz4_state_size) = size;
  return ok_status();
}

result<size_t> lz4_compress(codec_context& c, bytes_view in, bytes_mut out, int acceleration) noexcept {
  if (in.size() > kIntMax) return make_error(errc::invalid_argument, TESSERA_MSG("lz4: input larger than 2 GiB"));
  if (c.lz4_state == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("lz4: compression state not prepared"));
  const int cap = static_cast<int>(out.size() > kIntMax ? kIntMax : out.size());
  const int n = LZ4_compress_fast_extState(c.lz4_state, reinterpret_cast<const char*>(in.data()),
                                           reinterpret_cast<char*>(out.data()), static_cast<int>(in.size()), cap,
                                           acceleration);
  return static_cast<size_t>(n > 0 ? n : 0);
}

result<size_t> lz4hc_compress(codec_context& c, bytes_view in, bytes_mut out, int clevel) noexcept {
  if (in.size() > kIntMax) return make_error(errc::invalid_argument, TESSERA_MSG("lz4hc: input larger than 2 GiB"));
  if (c.lz4hc_state == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("lz4hc: compression state not prepared"));
  const int cap = static_cast<int>(out.size() > kIntMax ? kIntMax : out.size());
  const int n = LZ4_compress_HC_extStateHC(c.lz4hc_state, reinterpret_cast<const char*>(in.data()),
                                           reinterpret_cast<char*>(out.data()), static_cast<int>(in.size()), cap,
                                           clevel);
  return static_cast<size_t>(n > 0 ? n : 0);
}

size_t lz4_encoder_state_estimate(bool hc) noexcept {
  return static_cast<size_t>(hc ? LZ4_sizeofStateHC() : LZ4_sizeofState()) + 64;
}

void lz4_context_release(codec_context& c) noexcept {
  if (c.lz4_state != nullptr) allocator_deallocate(c.alloc, c.lz4_state, c.lz4_state_size, kStateAlign);
  if (c.lz4hc_state != nullptr) allocator_deallocate(c.alloc, c.lz4hc_state, c.lz4hc_state_size, kStateAlign);
  c.lz4_state = nullptr;
  c.lz4hc_state = nullptr;
}

#else  // no liblz4

bool lz4_available() noexcept { return false; }
status lz4_encoder_prepare(codec_context&, bool) noexcept { return ok_status(); }

status lz4_decompress(bytes_view, bytes_mut, bytes_view) noexcept {
  return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs the LZ4 codec, which this build does not include"));
}
status lz4_decompress_prefix(bytes_view, bytes_mut, size_t) noexcept {
  return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs the LZ4 codec, which this build does not include"));
}
result<size_t> lz4_compress(codec_context&, bytes_view, bytes_mut, int) noexcept {
  return make_error(errc::codec_unavailable, TESSERA_MSG("LZ4 is not included in this build"));
}
result<size_t> lz4hc_compress(codec_context&, bytes_view, bytes_mut, int) noexcept {
  return make_error(errc::codec_unavailable, TESSERA_MSG("LZ4HC is not included in this build"));
}
void lz4_context_release(codec_context&) noexcept {}
size_t lz4_encoder_state_estimate(bool) noexcept { return 0; }

#endif

}  // namespace tessera::detail
