// SPDX-License-Identifier: BSD-3-Clause
// encoder_link_plugins: the chunk encoder's user codec and user filter calls (encoder.cpp) reach a bare-metal
// image only through this table, so only a program that calls it links them (and may give chunk_encode
// params.plugins with a user codec or filters).
#include "chunk/chunk_internal.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera {

const detail::encoder_plugin_ops detail::encoder_plugins = {&detail::encoder_user_codec_check,
                                                            &detail::encoder_user_filter_check,
                                                            &detail::encoder_user_compress, &detail::encoder_user_forward};

void encoder_link_plugins() noexcept {}

}  // namespace tessera

extern "C" void tessera_encoder_link_plugins(void) {}
