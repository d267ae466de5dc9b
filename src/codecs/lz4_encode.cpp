// LZ4 (fast) encoding: lz4_state_encoder over LZ4_compress_fast_extState, and with a dictionary as the reference
// does it (LZ4_loadDict into the state, then LZ4_compress_fast_continue).
#include "codecs/lz4_state_encoder.hpp"

#ifdef TESSERA_HAVE_LZ4
#include <lz4.h>

namespace {

int lz4_dict_compress(void* state, size_t, const char* dict, int dict_size, const char* src, char* dst, int n,
                      int cap, int accel) {
  auto* s = static_cast<LZ4_stream_t*>(state);
  LZ4_loadDict(s, dict, dict_size);  // (re)initializes the state
  return LZ4_compress_fast_continue(s, src, dst, n, cap, accel);
}

}  // namespace
#endif

TESSERA_LZ4_STATE_ENCODER(lz4_encoder, lz4_state, lz4_state_size, LZ4_sizeofState, LZ4_compress_fast_extState,
                          lz4_dict_compress)
