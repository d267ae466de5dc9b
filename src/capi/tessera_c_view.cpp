// SPDX-License-Identifier: BSD-3-Clause
// The C face of the decode-only reader (tessera/array_view.hpp): its own object file, so that a C firmware that
// only reads links neither the array API nor the rest of the C API.
#include <stddef.h>
#include <stdint.h>
#include "tessera/cxx.hpp"

#include "capi_internal.hpp"
#include "tessera/array_view.hpp"
#include "tessera/capi_bridge.hpp"
#include "tessera/tessera.h"

struct tessera_array_view {
  tessera::allocator alloc{};
  tessera::array_view view;
};

namespace {

using namespace tessera::capi;  // NOLINT: the C API's glue
using tessera::errc;

void view_free(tessera_array_view* h) noexcept {
  const tessera::allocator a = h->alloc;
  h->~tessera_array_view();
  tessera::allocator_deallocate(a, h, sizeof(tessera_array_view), alignof(tessera_array_view));
}

}  // namespace

tessera_status tessera_array_view_open_layout(tessera_array_view** out, const void* frame, size_t frame_len,
                                              const tessera_allocator* alloc, uint64_t max_alloc, uint32_t layout) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null out"));
  *out = nullptr;
  const tessera_status lc = layout_check(layout);
  if (lc.code != TESSERA_OK) return lc;
  if (alloc == nullptr || alloc->allocate == nullptr || alloc->deallocate == nullptr)
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null allocator, allocate or deallocate"));
  if (frame == nullptr && frame_len != 0) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null frame"));
  const tessera::allocator a = tessera::allocator_from_c(*alloc);
  void* p = tessera::allocator_allocate(a, sizeof(tessera_array_view), alignof(tessera_array_view));
  if (p == nullptr) return c_error(errc::out_of_memory, TESSERA_MSG("capi: allocator refused the view handle"));
  tessera_array_view* h = new (tessera::cxx::place, p) tessera_array_view();
  h->alloc = a;
  tessera::array_view_options o;
  if (max_alloc != 0) o.max_alloc = max_alloc;
  const tessera::status s =
      tessera::array_view_open(h->view, tessera::bytes_view(static_cast<const uint8_t*>(frame), frame_len), a, o);
  if (!s.ok()) {
    view_free(h);
    return to_c(s);
  }
  *out = h;
  return c_ok();
}

tessera_status tessera_array_view_info_get_layout(const tessera_array_view* v, tessera_array_info* out,
                                                  uint32_t layout) {
  if (v == nullptr || out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null view or out"));
  const tessera_status lc = layout_check(layout);
  if (lc.code != TESSERA_OK) return lc;
  const tessera::array_view& w = v->view;
  info_fill(w.layout, w.itemsize, w.dtype, static_cast<int64_t>(w.chunks.size()), w.layout.nchunks * w.chunk_nbytes,
            out);
  return c_ok();
}

tessera_status tessera_array_view_slice_get(tessera_array_view* v, const int64_t* start, const int64_t* stop,
                                            void* out, size_t size) {
  if (v == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null view or out"));
  if ((start == nullptr || stop == nullptr) && v->view.layout.ndim != 0)
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null start or stop"));
  return to_c(tessera::array_view_slice_read(v->view, start, stop, tessera::bytes_mut(static_cast<uint8_t*>(out), size)));
}

tessera_status tessera_array_view_element_get(tessera_array_view* v, const int64_t* coords, void* out, size_t size) {
  if (v == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null view or out"));
  if (coords == nullptr && v->view.layout.ndim != 0) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null coords"));
  return to_c(tessera::array_view_element_read(v->view, coords, tessera::bytes_mut(static_cast<uint8_t*>(out), size)));
}

void tessera_array_view_close(tessera_array_view* v) {
  if (v == nullptr) return;
  tessera::array_view_close(v->view);
  view_free(v);
}
