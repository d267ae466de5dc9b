// SPDX-License-Identifier: BSD-3-Clause
// LZ4HC encoding: lz4_state_encoder over LZ4_compress_HC_extStateHC; with a dictionary through
// lz4hc_dict_compress (lz4hc_dict_encode.cpp), when the program links it.
#include "codecs/lz4_state_encoder.hpp"

#ifdef TESSERA_HAVE_LZ4
#include <lz4hc.h>
#endif

TESSERA_LZ4_STATE_ENCODER(lz4hc_encoder, lz4hc_state, lz4hc_state_size, LZ4_sizeofStateHC, LZ4_compress_HC_extStateHC,
                          lz4hc_dict_linked)
