// SPDX-License-Identifier: BSD-3-Clause
// tessera.h compiled as C++ on its own (first include, no C++ headers before it): the build fails if it is not
// valid C++ or warns.
#include "tessera/tessera.h"

extern "C" int tessera_capi_header_cxx_probe(void);
int tessera_capi_header_cxx_probe(void) {
  tessera_array_params p;
  tessera_array_params_init(&p);
  return p.clevel;
}
