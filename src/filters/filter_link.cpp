// SPDX-License-Identifier: BSD-3-Clause
// Which filters the program links (filters.hpp): on bare metal a weak reference is null unless the program
// called the filter's filter_link_* function (tessera/codecs.hpp), which lives in the filter's own object file.
#include "filters/filters.hpp"

namespace tessera::detail {

bool filter_linked(filter_id f) noexcept {
#if TESSERA_CODECS_ON_DEMAND
  switch (f) {
    case filter_id::bitshuffle: return &bitshuffle_scalar != nullptr && &bitunshuffle_scalar != nullptr;
    case filter_id::delta: return &delta_decode != nullptr;
    case filter_id::bytedelta: return &bytedelta_decode != nullptr;
    case filter_id::ndcell: return &ndcell_backward != nullptr;
    case filter_id::ndmean: return &ndmean_backward != nullptr;
    case filter_id::trunc_prec:
    case filter_id::int_trunc: return &trunc_prec_encode != nullptr && &int_trunc_encode != nullptr;
    case filter_id::none:
    case filter_id::shuffle: return true;
  }
  return false;
#else
  (void)f;
  return true;
#endif
}

// GCOVR_EXCL_START: only bare metal's filters on demand leave a filter unlinked (filter_linked above).
detail::code_status filter_unlinked_error(filter_id f) noexcept {
  const char* what = TESSERA_MSG("chunk: trunc_prec and int_trunc are not linked into this program (call tessera::filter_link_trunc)");
  if (f == filter_id::bitshuffle)
    what = TESSERA_MSG("chunk: bitshuffle is not linked into this program (call tessera::filter_link_bitshuffle)");
  else if (f == filter_id::delta)
    what = TESSERA_MSG("chunk: delta is not linked into this program (call tessera::filter_link_delta)");
  else if (f == filter_id::bytedelta)
    what = TESSERA_MSG("chunk: bytedelta is not linked into this program (call tessera::filter_link_bytedelta)");
  else if (f == filter_id::ndcell)
    what = TESSERA_MSG("chunk: ndcell is not linked into this program (call tessera::filter_link_ndcell)");
  else if (f == filter_id::ndmean)
    what = TESSERA_MSG("chunk: ndmean is not linked into this program (call tessera::filter_link_ndmean)");
  return make_error(errc::unsupported, what);
}
// GCOVR_EXCL_STOP

}  // namespace tessera::detail
