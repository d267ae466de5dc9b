// SPDX-License-Identifier: BSD-3-Clause
// LZ4 (fast) with a dictionary, as the reference does it: LZ4_loadDict into the state, then
// LZ4_compress_fast_continue. Its own object file: liblz4's dictionary modes are large, and a firmware links
// them only when it calls codec_link_lz4_dict_encoder.
#include "codecs/lz4_state_encoder.hpp"

#ifdef TESSERA_HAVE_LZ4
#include <lz4.h>

int tessera::detail::lz4_dict_compress(void* state, size_t, const char* dict, int dict_size, const char* src,
                                       char* dst, int n, int cap, int accel) {
  auto* s = static_cast<LZ4_stream_t*>(state);
  LZ4_loadDict(s, dict, dict_size);  // (re)initializes the state
  return LZ4_compress_fast_continue(s, src, dst, n, cap, accel);
}
#endif

TESSERA_CODEC_LINK_ANCHORS_DICT(lz4_dict_encoder)
