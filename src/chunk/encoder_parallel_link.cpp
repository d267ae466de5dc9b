// SPDX-License-Identifier: BSD-3-Clause
// encoder_link_parallel: the chunk encoder's parallel rounds (encoder.cpp) reach a bare-metal image only through
// this pointer, so only a program that calls it links them (and may give the encoder a parallel executor).
#include "chunk/chunk_internal.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera {

const detail::encoder_blocks_fn detail::encoder_parallel_blocks = &detail::encoder_parallel_blocks_run;

void encoder_link_parallel() noexcept {}

}  // namespace tessera

extern "C" void tessera_encoder_link_parallel(void) {}
