// LZ4HC encoding: lz4_state_encoder over LZ4_compress_HC_extStateHC.
#include "codecs/codec.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

#ifdef TESSERA_HAVE_LZ4
#include <lz4hc.h>

#include "codecs/lz4_state_encoder.hpp"
#endif

namespace tessera {

void codec_link_lz4hc_encoder() noexcept {}

namespace detail {

#ifdef TESSERA_HAVE_LZ4
extern const codec_encoder_impl lz4hc_encoder_impl =
    lz4_state_encoder<&codec_context::lz4hc_state, &codec_context::lz4hc_state_size, LZ4_sizeofStateHC, LZ4_compress_HC_extStateHC>::impl();
#else  // no liblz4
extern const codec_encoder_impl lz4hc_encoder_impl = {false, nullptr, nullptr, nullptr, nullptr};
#endif

}  // namespace detail
}  // namespace tessera

// The C API's twin (tessera/tessera.h), in this object file so that calling it links this codec alone.
extern "C" void tessera_codec_link_lz4hc_encoder(void) {}
