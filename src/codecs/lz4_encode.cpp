// SPDX-License-Identifier: BSD-3-Clause
// LZ4 (fast) encoding: lz4_state_encoder over LZ4_compress_fast_extState; with a dictionary through
// lz4_dict_compress (lz4_dict_encode.cpp), when the program links it.
#include "codecs/lz4_state_encoder.hpp"

#ifdef TESSERA_HAVE_LZ4
#include <lz4.h>
#endif

TESSERA_LZ4_STATE_ENCODER(lz4_encoder, lz4_state, lz4_state_size, LZ4_sizeofState, LZ4_compress_fast_extState,
                          lz4_dict_linked)
