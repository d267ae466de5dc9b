// The C API (include/tessera/tessera.h): argument checks, conversions between the C structs and the C++ ones,
// and trampolines from tessera::storage to a caller's tessera_storage. The allocator needs none: its C struct
// has the very callbacks of tessera::allocator and is copied field by field.
#include "tessera/tessera.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "tessera/array.hpp"

namespace {

using tessera::errc;
using tessera::error;
using tessera::status;

static_assert(TESSERA_MAX_DIMS == tessera::kMaxDims, "tessera.h and config.hpp disagree on TESSERA_MAX_DIMS");
static_assert(TESSERA_MAX_FILTERS == tessera::kChunkMaxFilters, "filter slots");
static_assert(TESSERA_MAX_METALAYERS == tessera::kFrameMaxMetalayers - 1, "metalayers besides b2nd");
static_assert(static_cast<int32_t>(errc::corrupt) == TESSERA_ERR_CORRUPT, "error codes cross the C API unchanged");
static_assert(static_cast<int32_t>(errc::resource_limit) == TESSERA_ERR_RESOURCE_LIMIT, "error codes cross the C API unchanged");
static_assert(static_cast<int32_t>(errc::invalid_argument) == TESSERA_ERR_INVALID_ARGUMENT, "error codes");
static_assert(static_cast<int32_t>(errc::no_space) == TESSERA_ERR_NO_SPACE, "error codes");
static_assert(static_cast<int32_t>(errc::codec_unavailable) == TESSERA_ERR_CODEC_UNAVAILABLE, "error codes");

tessera_status to_c(const error& e) noexcept {
  tessera_status s;
  s.code = static_cast<int32_t>(e.code);
  s.message = e.message != nullptr ? e.message : "";
  return s;
}

tessera_status c_error(errc code, const char* message) noexcept { return to_c(tessera::make_error(code, message)); }

tessera_status c_ok() noexcept { return to_c(tessera::ok_status()); }

error from_c(const tessera_status& s) noexcept {
  return error(static_cast<errc>(s.code), s.message != nullptr ? s.message : "");
}

// A NUL-terminated string as a span, reading at most max + 1 bytes; false when NULL or longer than max.
bool c_string(const char* s, size_t max, tessera::span<const char>& out) noexcept {
  if (s == nullptr) return false;
  size_t n = 0;
  while (n <= max && s[n] != '\0') ++n;
  if (n > max) return false;
  out = tessera::span<const char>(s, n);
  return true;
}

// Metalayer names: the frame checks their length (1..31); reading stops a little past it.
constexpr size_t kNameScan = tessera::kFrameMetalayerNameMax + 1;

// ---- Storage trampolines: the C++ storage's context is the handle's copy of the caller's tessera_storage.

const tessera_storage& c_storage_of(void* context) noexcept { return *static_cast<const tessera_storage*>(context); }

status trampoline_read(void* context, uint64_t offset, tessera::bytes_mut dst) noexcept {
  const tessera_storage& s = c_storage_of(context);
  return from_c(s.read(s.context, offset, dst.data(), dst.size()));
}
status trampoline_write(void* context, uint64_t offset, tessera::bytes_view src) noexcept {
  const tessera_storage& s = c_storage_of(context);
  return from_c(s.write(s.context, offset, src.data(), src.size()));
}
status trampoline_size(void* context, uint64_t* out) noexcept {
  const tessera_storage& s = c_storage_of(context);
  return from_c(s.size(s.context, out));
}
status trampoline_truncate(void* context, uint64_t size) noexcept {
  const tessera_storage& s = c_storage_of(context);
  return from_c(s.truncate(s.context, size));
}
status trampoline_sync(void* context) noexcept {
  const tessera_storage& s = c_storage_of(context);
  return from_c(s.sync(s.context));
}
tessera::bytes_view trampoline_view(void* context) noexcept {
  const tessera_storage& s = c_storage_of(context);
  size_t n = 0;
  const uint8_t* p = s.view(s.context, &n);
  if (p == nullptr) return tessera::bytes_view();
  return tessera::bytes_view(p, n);
}

// Missing C callbacks stay missing (nullptr) in the C++ storage, so the core sees the same capabilities.
tessera::storage storage_over(const tessera_storage* c) noexcept {
  tessera::storage s;
  s.read = c->read != nullptr ? trampoline_read : nullptr;
  s.write = c->write != nullptr ? trampoline_write : nullptr;
  s.size = c->size != nullptr ? trampoline_size : nullptr;
  s.truncate = c->truncate != nullptr ? trampoline_truncate : nullptr;
  s.sync = c->sync != nullptr ? trampoline_sync : nullptr;
  s.view = c->view != nullptr ? trampoline_view : nullptr;
  s.context = const_cast<tessera_storage*>(c);
  return s;
}

// ---- The fixed buffer storage.

tessera_buffer& buffer_of(void* context) noexcept { return *static_cast<tessera_buffer*>(context); }

tessera_status buffer_read(void* context, uint64_t offset, uint8_t* dst, size_t size) {
  const tessera_buffer& b = buffer_of(context);
  if (offset > b.size || size > b.size - offset) return c_error(errc::truncated, "buffer: read past the end");
  if (size != 0) std::memcpy(dst, b.data + offset, size);
  return c_ok();
}

tessera_status buffer_write(void* context, uint64_t offset, const uint8_t* src, size_t size) {
  tessera_buffer& b = buffer_of(context);
  if (offset > b.capacity || size > b.capacity - offset) {
    return c_error(errc::no_space, "buffer: write past the capacity");
  }
  const size_t at = static_cast<size_t>(offset);
  if (at > b.size) std::memset(b.data + b.size, 0, at - b.size);  // a gap reads as zeros
  if (size != 0) std::memcpy(b.data + at, src, size);
  if (at + size > b.size) b.size = at + size;
  return c_ok();
}

tessera_status buffer_size(void* context, uint64_t* out) {
  *out = buffer_of(context).size;
  return c_ok();
}

tessera_status buffer_truncate(void* context, uint64_t size) {
  tessera_buffer& b = buffer_of(context);
  if (size > b.capacity) return c_error(errc::no_space, "buffer: truncate past the capacity");
  const size_t n = static_cast<size_t>(size);
  if (n > b.size) std::memset(b.data + b.size, 0, n - b.size);
  b.size = n;
  return c_ok();
}

const uint8_t* buffer_view(void* context, size_t* size) {
  const tessera_buffer& b = buffer_of(context);
  *size = b.size;
  return b.data;
}

bool codec_valid(int32_t c) noexcept {
  return c == TESSERA_CODEC_BLOSCLZ || c == TESSERA_CODEC_LZ4 || c == TESSERA_CODEC_LZ4HC || c == TESSERA_CODEC_ZLIB ||
         c == TESSERA_CODEC_ZSTD;
}

}  // namespace

// The handle: the caller's allocator and storage (copied, so the caller's structs may go away) and the array.
struct tessera_array {
  tessera::allocator alloc{};
  tessera_storage c_storage{};
  tessera::storage st{};
  tessera::array arr;
};

namespace {

tessera_status handle_new(tessera_array** out, const tessera_storage* storage,
                          const tessera_allocator* alloc) noexcept {
  if (alloc->allocate == nullptr || alloc->deallocate == nullptr) {
    return c_error(errc::invalid_argument, "capi: allocator without allocate or deallocate");
  }
  tessera::allocator a;
  a.allocate = alloc->allocate;
  a.deallocate = alloc->deallocate;
  a.context = alloc->context;
  void* p = tessera::allocator_allocate(a, sizeof(tessera_array), alignof(tessera_array));
  if (p == nullptr) return c_error(errc::out_of_memory, "capi: allocator refused the array handle");
  tessera_array* h = new (p) tessera_array();
  h->alloc = a;
  h->c_storage = *storage;
  h->st = storage_over(&h->c_storage);
  *out = h;
  return c_ok();
}

void handle_free(tessera_array* h) noexcept {
  const tessera::allocator a = h->alloc;
  h->~tessera_array();
  tessera::allocator_deallocate(a, h, sizeof(tessera_array), alignof(tessera_array));
}

tessera_status check_storage(const tessera_storage* storage) noexcept {
  if (storage == nullptr) return c_error(errc::invalid_argument, "capi: null storage");
  if (storage->read == nullptr || storage->size == nullptr) {
    return c_error(errc::invalid_argument, "capi: storage without read or size");
  }
  return c_ok();
}

}  // namespace

// ---- Errors, buffers, defaults --------------------------------------------------------------------------------

const char* tessera_errc_name(int32_t code) { return tessera::errc_name(static_cast<errc>(code)); }

void tessera_buffer_init(tessera_buffer* b, void* data, size_t capacity, size_t size) {
  if (b == nullptr) return;
  b->data = static_cast<uint8_t*>(data);
  b->capacity = data != nullptr ? capacity : 0;
  b->size = size < b->capacity ? size : b->capacity;
}

tessera_storage tessera_buffer_storage(tessera_buffer* b) {
  tessera_storage s;
  s.read = buffer_read;
  s.write = buffer_write;
  s.size = buffer_size;
  s.truncate = buffer_truncate;
  s.sync = nullptr;
  s.view = buffer_view;
  s.context = b;
  return s;
}

void tessera_array_params_init(tessera_array_params* p) {
  if (p == nullptr) return;
  const tessera::array_params d;
  std::memset(p, 0, sizeof(*p));
  p->ndim = 0;
  p->dtype = nullptr;
  p->itemsize = 0;
  p->codec = static_cast<int32_t>(d.compressor);
  p->clevel = d.clevel;
  for (int i = 0; i < TESSERA_MAX_FILTERS; ++i) {
    p->filters[i] = d.filters[i];
    p->filters_meta[i] = d.filters_meta[i];
  }
  p->splitmode = static_cast<int32_t>(d.split);
  p->metalayers = nullptr;
  p->nmetalayers = 0;
  p->base_offset = 0;
  p->durable = 1;
}

void tessera_open_options_init(tessera_open_options* o) {
  if (o == nullptr) return;
  o->base_offset = 0;
  o->writable = 0;
  o->durable = 1;
}

// ---- Creating, opening, closing -----------------------------------------------------------------------------

tessera_status tessera_array_create(tessera_array** out, const tessera_storage* storage,
                                    const tessera_allocator* alloc, const tessera_array_params* params,
                                    const tessera_fill* fill) {
  if (out == nullptr) return c_error(errc::invalid_argument, "capi: null out");
  *out = nullptr;
  if (alloc == nullptr || params == nullptr) return c_error(errc::invalid_argument, "capi: null allocator or params");
  tessera_status cs = check_storage(storage);
  if (cs.code != TESSERA_OK) return cs;
  if (storage->write == nullptr) return c_error(errc::invalid_argument, "capi: creating on a read-only storage");

  tessera::array_params p;
  if (params->ndim < 0 || params->ndim > tessera::kMaxDims) {
    return c_error(errc::invalid_argument, "capi: ndim outside 0..TESSERA_MAX_DIMS");
  }
  p.ndim = params->ndim;
  for (int d = 0; d < p.ndim; ++d) {
    p.shape[d] = params->shape[d];
    p.chunkshape[d] = params->chunkshape[d];
    p.blockshape[d] = params->blockshape[d];
  }
  if (params->dtype != nullptr && !c_string(params->dtype, tessera::kArrayMaxDtypeLen, p.dtype)) {
    return c_error(errc::invalid_argument, "capi: dtype longer than 255 bytes");
  }
  p.itemsize = params->itemsize;
  if (!codec_valid(params->codec)) return c_error(errc::invalid_argument, "capi: unknown codec");
  p.compressor = static_cast<tessera::codec>(params->codec);
  p.clevel = params->clevel;
  for (int i = 0; i < TESSERA_MAX_FILTERS; ++i) {
    p.filters[i] = params->filters[i];
    p.filters_meta[i] = params->filters_meta[i];
  }
  if (params->splitmode < 1 || params->splitmode > 4) {
    return c_error(errc::invalid_argument, "capi: splitmode not 1..4");
  }
  p.split = static_cast<tessera::split_mode>(params->splitmode);

  tessera::frame_metalayer_init metas[TESSERA_MAX_METALAYERS];
  if (params->nmetalayers > TESSERA_MAX_METALAYERS) return c_error(errc::invalid_argument, "capi: too many metalayers");
  if (params->nmetalayers > 0 && params->metalayers == nullptr) {
    return c_error(errc::invalid_argument, "capi: null metalayers");
  }
  for (uint32_t i = 0; i < params->nmetalayers; ++i) {
    const tessera_metalayer& m = params->metalayers[i];
    if (!c_string(m.name, kNameScan, metas[i].name)) return c_error(errc::invalid_argument, "capi: bad metalayer name");
    if (m.content == nullptr && m.size != 0) return c_error(errc::invalid_argument, "capi: null metalayer content");
    metas[i].content = tessera::bytes_view(static_cast<const uint8_t*>(m.content), m.size);
  }
  p.metalayers = params->nmetalayers > 0 ? metas : nullptr;
  p.nmetalayers = params->nmetalayers;

  tessera::array_fill f = tessera::array_fill_zeros();
  if (fill != nullptr) {
    if (fill->data == nullptr && fill->size != 0) return c_error(errc::invalid_argument, "capi: null fill data");
    const tessera::bytes_view bytes(static_cast<const uint8_t*>(fill->data), fill->size);
    switch (fill->kind) {
      case TESSERA_FILL_ZEROS: f = tessera::array_fill_zeros(); break;
      case TESSERA_FILL_UNINIT: f = tessera::array_fill_uninit(); break;
      case TESSERA_FILL_NANS: f = tessera::array_fill_nans(); break;
      case TESSERA_FILL_VALUE: f = tessera::array_fill_full(bytes); break;
      case TESSERA_FILL_BUFFER: f = tessera::array_fill_buffer(bytes); break;
      default: return c_error(errc::invalid_argument, "capi: unknown fill kind");
    }
  }

  tessera_array* h = nullptr;
  cs = handle_new(&h, storage, alloc);
  if (cs.code != TESSERA_OK) return cs;
  tessera::array_target target = tessera::array_target_contiguous(h->st, params->durable != 0);
  target.options.base_offset = params->base_offset;
  const status s = tessera::array_create(h->arr, target, h->alloc, p, f);
  if (!s.ok()) {
    handle_free(h);
    return to_c(s);
  }
  *out = h;
  return c_ok();
}

tessera_status tessera_array_open(tessera_array** out, const tessera_storage* storage,
                                  const tessera_allocator* alloc, const tessera_open_options* options) {
  if (out == nullptr) return c_error(errc::invalid_argument, "capi: null out");
  *out = nullptr;
  if (alloc == nullptr) return c_error(errc::invalid_argument, "capi: null allocator");
  tessera_status cs = check_storage(storage);
  if (cs.code != TESSERA_OK) return cs;
  tessera_open_options o;
  tessera_open_options_init(&o);
  if (options != nullptr) o = *options;
  if (o.writable != 0 && storage->write == nullptr) {
    return c_error(errc::invalid_argument, "capi: writable open of a read-only storage");
  }

  tessera_array* h = nullptr;
  cs = handle_new(&h, storage, alloc);
  if (cs.code != TESSERA_OK) return cs;
  tessera::array_open_options ao;
  ao.frame.base_offset = o.base_offset;
  ao.frame.writable = o.writable != 0;
  ao.frame.durable = o.durable != 0;
  const status s = tessera::array_open(h->arr, h->st, h->alloc, ao);
  if (!s.ok()) {
    handle_free(h);
    return to_c(s);
  }
  *out = h;
  return c_ok();
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
  if (a == nullptr) return c_error(errc::invalid_argument, "capi: null array");
  return to_c(tessera::array_commit(a->arr));
}

tessera_status tessera_array_info_get(const tessera_array* a, tessera_array_info* out) {
  if (a == nullptr || out == nullptr) return c_error(errc::invalid_argument, "capi: null array or out");
  std::memset(out, 0, sizeof(*out));
  const tessera::array_layout& l = tessera::array_layout_get(a->arr);
  out->ndim = l.ndim;
  for (int d = 0; d < l.ndim; ++d) {
    out->shape[d] = l.shape[d];
    out->chunkshape[d] = static_cast<int32_t>(l.chunkshape[d]);  // int32 in the metalayer
    out->blockshape[d] = static_cast<int32_t>(l.blockshape[d]);
  }
  out->itemsize = tessera::array_itemsize(a->arr);
  out->nitems = l.nitems;
  out->nbytes = tessera::array_nbytes(a->arr);
  out->nchunks = l.nchunks;
  const tessera::span<const char> dt = tessera::array_dtype(a->arr);
  out->dtype = dt.data() != nullptr ? dt.data() : "";
  out->dtype_len = dt.size();
  return c_ok();
}

// ---- Reading and writing --------------------------------------------------------------------------------------

tessera_status tessera_array_read(tessera_array* a, void* out, size_t size) {
  if (a == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, "capi: null array or out");
  return to_c(tessera::array_read(a->arr, tessera::bytes_mut(static_cast<uint8_t*>(out), size)));
}

tessera_status tessera_array_slice_get(tessera_array* a, const int64_t* start, const int64_t* stop, void* out,
                                       size_t size) {
  if (a == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, "capi: null array or out");
  if ((start == nullptr || stop == nullptr) && tessera::array_layout_get(a->arr).ndim != 0) {
    return c_error(errc::invalid_argument, "capi: null start or stop");
  }
  return to_c(tessera::array_slice_read(a->arr, start, stop, tessera::bytes_mut(static_cast<uint8_t*>(out), size)));
}

tessera_status tessera_array_slice_set(tessera_array* a, const int64_t* start, const int64_t* stop,
                                       const void* src, size_t size) {
  if (a == nullptr || (src == nullptr && size != 0)) return c_error(errc::invalid_argument, "capi: null array or src");
  if ((start == nullptr || stop == nullptr) && tessera::array_layout_get(a->arr).ndim != 0) {
    return c_error(errc::invalid_argument, "capi: null start or stop");
  }
  return to_c(
      tessera::array_slice_write(a->arr, start, stop, tessera::bytes_view(static_cast<const uint8_t*>(src), size)));
}

tessera_status tessera_array_append(tessera_array* a, int32_t axis, int64_t count, const void* src, size_t size) {
  if (a == nullptr || (src == nullptr && size != 0)) return c_error(errc::invalid_argument, "capi: null array or src");
  return to_c(
      tessera::array_append(a->arr, axis, count, tessera::bytes_view(static_cast<const uint8_t*>(src), size)));
}

tessera_status tessera_array_resize(tessera_array* a, const int64_t* new_shape) {
  if (a == nullptr) return c_error(errc::invalid_argument, "capi: null array");
  if (new_shape == nullptr && tessera::array_layout_get(a->arr).ndim != 0) {
    return c_error(errc::invalid_argument, "capi: null shape");
  }
  return to_c(tessera::array_resize(a->arr, new_shape));
}

// ---- Metalayers -----------------------------------------------------------------------------------------------

tessera_status tessera_array_meta_get(const tessera_array* a, const char* name, const void** content,
                                      size_t* size) {
  tessera::span<const char> n;
  if (a == nullptr || content == nullptr || size == nullptr) {
    return c_error(errc::invalid_argument, "capi: null array, content or size");
  }
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, "capi: bad metalayer name");
  tessera::result<tessera::bytes_view> r = tessera::array_meta_find(a->arr, n);
  if (!r.ok()) return to_c(r.err());
  *content = r->data();
  *size = r->size();
  return c_ok();
}

tessera_status tessera_array_meta_set(tessera_array* a, const char* name, const void* content, size_t size) {
  tessera::span<const char> n;
  if (a == nullptr || (content == nullptr && size != 0)) {
    return c_error(errc::invalid_argument, "capi: null array or content");
  }
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, "capi: bad metalayer name");
  return to_c(tessera::array_meta_update(a->arr, n, tessera::bytes_view(static_cast<const uint8_t*>(content), size)));
}

tessera_status tessera_array_vlmeta_size(const tessera_array* a, const char* name, size_t* size) {
  tessera::span<const char> n;
  if (a == nullptr || size == nullptr) return c_error(errc::invalid_argument, "capi: null array or size");
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, "capi: bad vlmetalayer name");
  tessera::result<size_t> r = tessera::array_vlmeta_nbytes(a->arr, n);
  if (!r.ok()) return to_c(r.err());
  *size = *r;
  return c_ok();
}

tessera_status tessera_array_vlmeta_get(tessera_array* a, const char* name, void* out, size_t size,
                                        size_t* written) {
  tessera::span<const char> n;
  if (written != nullptr) *written = 0;
  if (a == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, "capi: null array or out");
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, "capi: bad vlmetalayer name");
  tessera::result<size_t> r =
      tessera::array_vlmeta_read(a->arr, n, tessera::bytes_mut(static_cast<uint8_t*>(out), size));
  if (!r.ok()) return to_c(r.err());
  if (written != nullptr) *written = *r;
  return c_ok();
}

tessera_status tessera_array_vlmeta_set(tessera_array* a, const char* name, const void* content, size_t size) {
  tessera::span<const char> n;
  if (a == nullptr || (content == nullptr && size != 0)) {
    return c_error(errc::invalid_argument, "capi: null array or content");
  }
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, "capi: bad vlmetalayer name");
  return to_c(tessera::array_vlmeta_write(a->arr, n, tessera::bytes_view(static_cast<const uint8_t*>(content), size)));
}

tessera_status tessera_array_vlmeta_delete(tessera_array* a, const char* name) {
  tessera::span<const char> n;
  if (a == nullptr) return c_error(errc::invalid_argument, "capi: null array");
  if (!c_string(name, kNameScan, n)) return c_error(errc::invalid_argument, "capi: bad vlmetalayer name");
  return to_c(tessera::array_vlmeta_delete(a->arr, n));
}
