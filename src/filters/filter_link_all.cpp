// SPDX-License-Identifier: BSD-3-Clause
// filter_link_all: its own object file, so that only a program that calls it links every filter.
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera {

void filter_link_all() noexcept {
  filter_link_bitshuffle();
  filter_link_delta();
  filter_link_bytedelta();
  filter_link_trunc();
  filter_link_ndcell();
  filter_link_ndmean();
}

}  // namespace tessera

extern "C" void tessera_filter_link_all(void) { tessera::filter_link_all(); }
