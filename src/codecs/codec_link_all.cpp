// SPDX-License-Identifier: BSD-3-Clause
// codec_link_all: its own object file, so that only a program that calls it links every codec library.
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera {

void codec_link_all() noexcept {
  codec_link_lz4_decoder();
  codec_link_lz4_encoder();
  codec_link_lz4hc_encoder();
  codec_link_lz4_dict_encoder();
  codec_link_lz4hc_dict_encoder();
  codec_link_zlib_decoder();
  codec_link_zlib_encoder();
  codec_link_zstd_decoder();
  codec_link_zstd_encoder();
  codec_link_ndlz_decoder();
  codec_link_ndlz_encoder();
}

}  // namespace tessera

extern "C" void tessera_codec_link_all(void) { tessera::codec_link_all(); }
