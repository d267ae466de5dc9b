// SPDX-License-Identifier: BSD-3-Clause
// The chunk encoder's dictionaries (use_dict; encoder.cpp's dict_build) reach a bare-metal image only through
// this pointer: the encoders that take a dictionary (LZ4 and LZ4HC with theirs, Zstd) link it with their
// codec_link_* function, so a program writing BloscLZ or plain LZ4 carries none of it.
#include "chunk/chunk_internal.hpp"

namespace tessera::detail {

const encoder_dict_fn encoder_dict_build = &encoder_dict_build_run;

void encoder_dict_link() noexcept {}

}  // namespace tessera::detail
