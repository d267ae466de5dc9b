// SPDX-License-Identifier: BSD-3-Clause
// The C API's core (include/tessera/tessera.h up to the metalayers): argument checks, the fixed buffer storage,
// creating, opening, reading and writing. The glue it shares with tessera_c_ops.cpp (status conversion, the
// handle, the storage and executor trampolines, the parameter conversion) is in capi_internal.hpp.
#include "tessera/tessera.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tessera/cxx.hpp"

#include "base/allocated.hpp"
#include "capi_internal.hpp"
#include "tessera/array.hpp"
#include "tessera/fixed_buffer.hpp"
#include "tessera/version.hpp"

namespace {

using namespace tessera::capi;  // NOLINT: the glue of capi_internal.hpp, used throughout
using tessera::errc;
using tessera::status;

// tessera_array_create's C++ parameters (the metalayer list they point at included).
struct create_params {
  tessera::array_params p;
  tessera::frame_metalayer_init metas[TESSERA_MAX_METALAYERS];
  tessera::array_target target;  // its storage and directory held by value: off the caller's stack too
  tessera::array_fill fill;
};

static_assert(TESSERA_MAX_DIMS == tessera::kMaxDims, "tessera.h and config.hpp disagree on TESSERA_MAX_DIMS");
static_assert(TESSERA_VERSION_MAJOR == tessera::kVersionMajor && TESSERA_VERSION_MINOR == tessera::kVersionMinor &&
                  TESSERA_VERSION_PATCH == tessera::kVersionPatch,
              "tessera.h and config.hpp disagree on the version");
static_assert(TESSERA_MAX_FILTERS == tessera::kChunkMaxFilters, "filter slots");
static_assert(TESSERA_MAX_METALAYERS == tessera::kFrameMaxMetalayers - 1, "metalayers besides b2nd");
static_assert(static_cast<int32_t>(errc::corrupt) == TESSERA_ERR_CORRUPT, "error codes cross the C API unchanged");
static_assert(static_cast<int32_t>(errc::resource_limit) == TESSERA_ERR_RESOURCE_LIMIT, "error codes cross the C API unchanged");
static_assert(static_cast<int32_t>(errc::invalid_argument) == TESSERA_ERR_INVALID_ARGUMENT, "error codes");
static_assert(static_cast<int32_t>(errc::uncommitted) == TESSERA_ERR_UNCOMMITTED, "error codes");
static_assert(static_cast<int32_t>(errc::no_space) == TESSERA_ERR_NO_SPACE, "error codes");
static_assert(static_cast<int32_t>(errc::codec_unavailable) == TESSERA_ERR_CODEC_UNAVAILABLE, "error codes");
static_assert(static_cast<int32_t>(errc::read_only) == TESSERA_ERR_READ_ONLY, "error codes");
static_assert(TESSERA_SPLIT_ALWAYS == static_cast<int32_t>(tessera::split_mode::always), "split modes");
static_assert(TESSERA_SPLIT_NEVER == static_cast<int32_t>(tessera::split_mode::never), "split modes");
static_assert(TESSERA_SPLIT_AUTO == static_cast<int32_t>(tessera::split_mode::automatic), "split modes");
static_assert(TESSERA_SPLIT_FORWARD_COMPAT == static_cast<int32_t>(tessera::split_mode::forward_compat), "split modes");
static_assert(TESSERA_CHUNK_SPECIAL_ZEROS == static_cast<int32_t>(tessera::chunk_special::zeros), "special kinds");
static_assert(TESSERA_CHUNK_SPECIAL_NAN == static_cast<int32_t>(tessera::chunk_special::nan), "special kinds");
static_assert(TESSERA_CHUNK_SPECIAL_VALUE == static_cast<int32_t>(tessera::chunk_special::value), "special kinds");
static_assert(TESSERA_CHUNK_SPECIAL_UNINIT == static_cast<int32_t>(tessera::chunk_special::uninit), "special kinds");
static_assert(TESSERA_USER_ID_FIRST == tessera::kChunkUserIdFirst, "user ids");
static_assert(TESSERA_USER_ID_PRIVATE == tessera::kChunkUserIdPrivate, "user ids");

// Metalayer names: the frame checks their length (1..31); reading stops a little past it.
constexpr size_t kNameScan = tessera::kFrameMetalayerNameMax + 1;

// ---- The fixed buffer storage: tessera_buffer is the C face of tessera::fixed_buffer. Each call runs the C++
// storage's callback on a fixed_buffer holding b's fields, then keeps the size it leaves.

tessera_buffer& buffer_of(void* context) noexcept { return *static_cast<tessera_buffer*>(context); }
tessera::fixed_buffer cxx_of(const tessera_buffer& b) noexcept { return {b.data, b.capacity, b.size}; }

tessera_status buffer_read(void* context, uint64_t offset, uint8_t* dst, size_t size) {
  tessera::fixed_buffer b = cxx_of(buffer_of(context));
  return to_c(tessera::fixed_buffer_storage(b).read(&b, offset, tessera::bytes_mut(dst, size)));
}

tessera_status buffer_write(void* context, uint64_t offset, const uint8_t* src, size_t size) {
  tessera::fixed_buffer b = cxx_of(buffer_of(context));
  const status s = tessera::fixed_buffer_storage(b).write(&b, offset, tessera::bytes_view(src, size));
  buffer_of(context).size = b.size;
  return to_c(s);
}

tessera_status buffer_size(void* context, uint64_t* out) {
  *out = buffer_of(context).size;
  return c_ok();
}

tessera_status buffer_truncate(void* context, uint64_t size) {
  tessera::fixed_buffer b = cxx_of(buffer_of(context));
  const status s = tessera::fixed_buffer_storage(b).truncate(&b, size);
  buffer_of(context).size = b.size;
  return to_c(s);
}

const uint8_t* buffer_view(void* context, size_t* size) {
  const tessera_buffer& b = buffer_of(context);
  *size = b.size;
  return b.data;
}

}  // namespace

// ---- Errors, buffers, defaults --------------------------------------------------------------------------------

const char* tessera_errc_name(int32_t code) { return tessera::errc_name(static_cast<errc>(code)); }

const char* tessera_version(void) { return tessera::version_string(); }

int32_t tessera_version_number(void) { return TESSERA_VERSION_NUMBER; }

int32_t tessera_max_dims(void) { return tessera::kMaxDims; }

tessera_status tessera_layout_check(uint32_t layout) { return layout_check(layout); }

void tessera_buffer_init(tessera_buffer* b, void* data, size_t capacity, size_t size) {
  if (b == nullptr) return;
  tessera::fixed_buffer f;
  tessera::fixed_buffer_init(f, data, capacity, size);
  *b = tessera_buffer{f.data, f.capacity, f.size};
}

tessera_storage tessera_buffer_storage(tessera_buffer* b) {
  return tessera_storage{buffer_read, buffer_write, buffer_size, buffer_truncate, nullptr /* sync */, buffer_view, b, nullptr, nullptr};
}

void tessera_array_params_init_layout(tessera_array_params* p, uint32_t layout) {
  if (p == nullptr) return;
  if (layout != kLayout) {  // another layout: only the first member is at the same place
    p->layout = layout;
    return;
  }
  const tessera::array_params d;
  memset(p, 0, sizeof(*p));
  p->layout = layout;
  p->ndim = 0;
  p->dtype = nullptr;
  p->itemsize = 0;
  p->codec = static_cast<int32_t>(d.compressor);
  p->clevel = d.clevel;
  filters_copy(*p, d);
  p->splitmode = static_cast<int32_t>(d.split);
  p->metalayers = nullptr;
  p->nmetalayers = 0;
  p->base_offset = 0;
  p->durable = 1;
  p->keep_old_frames = 0;
  p->plugins = nullptr;
}

void tessera_open_options_init(tessera_open_options* o) {
  if (o == nullptr) return;
  o->base_offset = 0;
  o->writable = 0;
  o->durable = 1;
  o->executor = nullptr;
  o->keep_old_frames = 0;
  o->plugins = nullptr;
}

// ---- Creating, opening, closing -----------------------------------------------------------------------------

tessera_status tessera_array_create(tessera_array** out, const tessera_storage* storage,
                                    const tessera_allocator* alloc, const tessera_array_params* params,
                                    const tessera_fill* fill) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null out"));
  *out = nullptr;
  if (alloc == nullptr || params == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null allocator or params"));
  tessera_status cs = check_storage(storage);
  if (cs.code != TESSERA_OK) return cs;
  if (storage->write == nullptr) return c_error(errc::read_only, TESSERA_MSG("capi: creating on a read-only storage"));

  tessera_array* h = nullptr;
  cs = handle_new(&h, storage, alloc);
  if (cs.code != TESSERA_OK) return cs;
  // The C++ parameters, their metalayer list, the target and the fill (about 700 bytes) from the allocator,
  // not the caller's stack.
  tessera::detail::allocated<create_params> cp;
  const status made = cp.make(h->alloc);
  cs = made.ok() ? params_from_c(params, cp->p, cp->metas, h) : to_c(made);
  if (cs.code == TESSERA_OK) cs = fill_from_c(fill, cp->fill);
  if (cs.code != TESSERA_OK) {
    cp.reset();
    handle_free(h);
    return cs;
  }
  cp->target.st = h->st;  // set in place: a returned target would be a temporary on this frame
  cp->target.options.durable = params->durable != 0;
  cp->target.options.base_offset = params->base_offset;
  cp->target.options.keep_old_frames = params->keep_old_frames != 0;
  const status s = tessera::array_create(h->arr, cp->target, h->alloc, cp->p, cp->fill);
  cp.reset();
  return handle_finish(out, h, s);
}

tessera_status tessera_array_open_layout(tessera_array** out, const tessera_storage* storage,
                                         const tessera_allocator* alloc, const tessera_open_options* options,
                                         uint32_t layout) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null out"));
  *out = nullptr;
  tessera_status lc = layout_check(layout);
  if (lc.code != TESSERA_OK) return lc;
  if (alloc == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null allocator"));
  tessera_status cs = check_storage(storage);
  if (cs.code != TESSERA_OK) return cs;
  tessera_open_options o;
  tessera_open_options_init(&o);
  if (options != nullptr) o = *options;
  if (o.writable != 0 && storage->write == nullptr) {
    return c_error(errc::read_only, TESSERA_MSG("capi: writable open of a read-only storage"));
  }

  tessera_array* h = nullptr;
  cs = handle_new(&h, storage, alloc);
  if (cs.code != TESSERA_OK) return cs;
  tessera::array_open_options ao;
  ao.frame.base_offset = o.base_offset;
  ao.frame.writable = o.writable != 0;
  ao.frame.durable = o.durable != 0;
  ao.frame.keep_old_frames = o.keep_old_frames != 0;
  status s = executor_over(o.executor, &h->c_exec, ao.exec);
  if (s.ok()) s = plugins_copy(h->plugins, o.plugins, h->alloc);
  ao.plugins = plugins_of(h->plugins);
  if (s.ok()) s = tessera::array_open(h->arr, h->st, h->alloc, ao);
  return handle_finish(out, h, s);
}

tessera_status tessera_array_close(tessera_array* a) {
  if (a == nullptr) return c_ok();
  const status s = tessera::array_close(a->arr);
  handle_free(a);
  return to_c(s);
}

void tessera_array_set_auto_commit(tessera_array* a, int32_t on) {
  if (a != nullptr) a->arr.auto_commit = on != 0;
}

tessera_status tessera_array_commit(tessera_array* a) {
  if (a == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array"));
  return to_c(tessera::array_commit(a->arr));
}

int32_t tessera_array_dirty(const tessera_array* a) { return a != nullptr && tessera::array_dirty(a->arr) ? 1 : 0; }

tessera_status tessera_array_compact(tessera_array* a) {
  if (a == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array"));
  return to_c(tessera::array_compact(a->arr));
}

tessera_status tessera_array_info_get_layout(const tessera_array* a, tessera_array_info* out, uint32_t layout) {
  if (a == nullptr || out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or out"));
  const tessera_status lc = layout_check(layout);
  if (lc.code != TESSERA_OK) return lc;
  const tessera::array_layout& l = tessera::array_layout_get(a->arr);
  const int64_t itemsize = tessera::array_itemsize(a->arr);
  const tessera::frame_info* fi = tessera::frame_info_get(tessera::array_frame(a->arr));  // the header's cbytes
  const int64_t cbytes = fi != nullptr ? fi->cbytes : 0;
  info_fill(l, itemsize, tessera::array_dtype(a->arr), cbytes, l.nchunks * l.extchunk_nitems * itemsize, out);
  out->dtype = a->dtype;  // the handle's NUL-terminated copy
  return c_ok();
}

// ---- Reading and writing --------------------------------------------------------------------------------------

tessera_status tessera_array_read(tessera_array* a, void* out, size_t size) {
  if (a == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or out"));
  return to_c(tessera::array_read(a->arr, tessera::bytes_mut(static_cast<uint8_t*>(out), size)));
}

tessera_status tessera_array_slice_get(tessera_array* a, const int64_t* start, const int64_t* stop, void* out,
                                       size_t size) {
  if (a == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or out"));
  if ((start == nullptr || stop == nullptr) && tessera::array_layout_get(a->arr).ndim != 0) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null start or stop"));
  }
  return to_c(tessera::array_slice_read(a->arr, start, stop, tessera::bytes_mut(static_cast<uint8_t*>(out), size)));
}

tessera_status tessera_array_slice_set(tessera_array* a, const int64_t* start, const int64_t* stop,
                                       const void* src, size_t size) {
  if (a == nullptr || (src == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or src"));
  if ((start == nullptr || stop == nullptr) && tessera::array_layout_get(a->arr).ndim != 0) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null start or stop"));
  }
  return to_c(
      tessera::array_slice_write(a->arr, start, stop, tessera::bytes_view(static_cast<const uint8_t*>(src), size)));
}

tessera_status tessera_array_append(tessera_array* a, int32_t axis, int64_t count, const void* src, size_t size) {
  if (a == nullptr || (src == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or src"));
  return to_c(
      tessera::array_append(a->arr, axis, count, tessera::bytes_view(static_cast<const uint8_t*>(src), size)));
}

tessera_status tessera_array_resize(tessera_array* a, const int64_t* new_shape) {
  if (a == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array"));
  if (new_shape == nullptr && tessera::array_layout_get(a->arr).ndim != 0) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null shape"));
  }
  return to_c(tessera::array_resize(a->arr, new_shape));
}

// ---- Metalayers -----------------------------------------------------------------------------------------------

namespace {

// Setting a metalayer or a vlmetalayer: the same checks, then `write` (array_meta_update or array_vlmeta_write).
using meta_write_fn = status (*)(tessera::array&, tessera::span<const char>, tessera::bytes_view) noexcept;
tessera_status meta_write(tessera_array* a, const char* name, const void* content, size_t size, meta_write_fn write) {
  tessera::span<const char> n;
  if (a == nullptr || (content == nullptr && size != 0)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or content"));
  }
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: bad metalayer name"));
  return to_c(write(a->arr, n, tessera::bytes_view(static_cast<const uint8_t*>(content), size)));
}

}  // namespace

tessera_status tessera_array_meta_get(const tessera_array* a, const char* name, const void** content,
                                      size_t* size) {
  tessera::span<const char> n;
  if (a == nullptr || content == nullptr || size == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array, content or size"));
  }
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: bad metalayer name"));
  tessera::result<tessera::bytes_view> r = tessera::array_meta_find(a->arr, n);
  if (!r.ok()) return to_c(r.err());
  *content = r->data();
  *size = r->size();
  return c_ok();
}

tessera_status tessera_array_meta_set(tessera_array* a, const char* name, const void* content, size_t size) {
  return meta_write(a, name, content, size, tessera::array_meta_update);
}

tessera_status tessera_array_meta_add(tessera_array* a, const char* name, const void* content, size_t size) {
  return meta_write(a, name, content, size, tessera::array_meta_add);
}

namespace {

// A name from a listing into the caller's buffer, NUL-terminated.
tessera_status name_out(const tessera::result<tessera::span<const char>>& r, char* name, size_t size, size_t* len) {
  if (!r.ok()) return to_c(r.err());
  if (len != nullptr) *len = r->size();
  if (name == nullptr || size < r->size() + 1) return c_error(errc::buffer_too_small, TESSERA_MSG("capi: name buffer smaller than the name and its NUL"));
  if (!r->empty()) memcpy(name, r->data(), r->size());
  name[r->size()] = '\0';
  return c_ok();
}

using exists_fn = bool (*)(const tessera::array&, tessera::span<const char>) noexcept;
tessera_status meta_exists(const tessera_array* a, const char* name, int32_t* exists, exists_fn fn) {
  tessera::span<const char> n;
  if (exists != nullptr) *exists = 0;
  if (a == nullptr || exists == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or exists"));
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: bad metalayer name"));
  *exists = fn(a->arr, n) ? 1 : 0;
  return c_ok();
}

}  // namespace

tessera_status tessera_array_meta_count(const tessera_array* a, uint32_t* count) {
  if (a == nullptr || count == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or count"));
  *count = tessera::array_meta_count(a->arr);
  return c_ok();
}

tessera_status tessera_array_meta_name(const tessera_array* a, uint32_t i, char* name, size_t size, size_t* len) {
  if (len != nullptr) *len = 0;
  if (a == nullptr || (name == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or name"));
  return name_out(tessera::array_meta_name(a->arr, i), name, size, len);
}

tessera_status tessera_array_meta_exists(const tessera_array* a, const char* name, int32_t* exists) {
  return meta_exists(a, name, exists, tessera::array_meta_exists);
}

tessera_status tessera_array_vlmeta_count(const tessera_array* a, uint32_t* count) {
  if (a == nullptr || count == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or count"));
  *count = tessera::array_vlmeta_count(a->arr);
  return c_ok();
}

tessera_status tessera_array_vlmeta_name(const tessera_array* a, uint32_t i, char* name, size_t size, size_t* len) {
  if (len != nullptr) *len = 0;
  if (a == nullptr || (name == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or name"));
  return name_out(tessera::array_vlmeta_name(a->arr, i), name, size, len);
}

tessera_status tessera_array_vlmeta_exists(const tessera_array* a, const char* name, int32_t* exists) {
  return meta_exists(a, name, exists, tessera::array_vlmeta_exists);
}

tessera_status tessera_array_vlmeta_size(const tessera_array* a, const char* name, size_t* size) {
  tessera::span<const char> n;
  if (a == nullptr || size == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or size"));
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: bad vlmetalayer name"));
  return value_to_c(tessera::array_vlmeta_nbytes(a->arr, n), size);
}

tessera_status tessera_array_vlmeta_get(tessera_array* a, const char* name, void* out, size_t size,
                                        size_t* written) {
  tessera::span<const char> n;
  if (written != nullptr) *written = 0;
  if (a == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or out"));
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: bad vlmetalayer name"));
  const tessera::bytes_mut dst(static_cast<uint8_t*>(out), size);
  const tessera_status s = value_to_c(tessera::array_vlmeta_read(a->arr, n, dst), written);
  if (s.code == TESSERA_ERR_BUFFER_TOO_SMALL && written != nullptr) {
    // The size it needs, as tessera_chunk_read reports it: a caller grows its buffer and calls again.
    const tessera::result<size_t> need = tessera::array_vlmeta_nbytes(a->arr, n);
    if (need.ok()) *written = *need;
  }
  return s;
}

tessera_status tessera_array_vlmeta_set(tessera_array* a, const char* name, const void* content, size_t size) {
  return meta_write(a, name, content, size, tessera::array_vlmeta_write);
}

tessera_status tessera_array_vlmeta_delete(tessera_array* a, const char* name) {
  tessera::span<const char> n;
  if (a == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array"));
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: bad vlmetalayer name"));
  return to_c(tessera::array_vlmeta_delete(a->arr, n));
}
