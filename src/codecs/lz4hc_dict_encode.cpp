// SPDX-License-Identifier: BSD-3-Clause
// LZ4HC with a dictionary, as the reference does it: the level set, LZ4_loadDictHC into the state, then
// LZ4_compress_HC_continue. Its own object file, linked by a firmware only when it calls
// codec_link_lz4hc_dict_encoder.
#include "codecs/lz4_state_encoder.hpp"

#ifdef TESSERA_HAVE_LZ4
#include <lz4hc.h>

int tessera::detail::lz4hc_dict_compress(void* state, size_t state_size, const char* dict, int dict_size,
                                         const char* src, char* dst, int n, int cap, int level) {
  LZ4_streamHC_t* s = LZ4_initStreamHC(state, state_size);
  if (s == nullptr) return 0;
  LZ4_resetStreamHC_fast(s, level);
  LZ4_loadDictHC(s, dict, dict_size);  // keeps the level
  return LZ4_compress_HC_continue(s, src, dst, n, cap);
}
#endif

TESSERA_CODEC_LINK_ANCHORS_DICT(lz4hc_dict_encoder)
