// SPDX-License-Identifier: BSD-3-Clause
// The C API beyond creating, reading and writing (tessera.h, from "Executors" on): executors, sparse frames on a
// caller's directory, readers that follow a writer, items and selections, shape changes, new arrays from arrays,
// chunk access. Also the shared glue of capi_internal.hpp.
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tessera/cxx.hpp"

#include "capi_internal.hpp"
#include "tessera/array.hpp"
#include "tessera/b2nd_meta.hpp"
#include "tessera/tessera.h"

using tessera::errc;
using tessera::status;
using tessera::capi::c_error;
using tessera::capi::c_ok;
using tessera::capi::from_c;
using tessera::capi::to_c;

static_assert(TESSERA_STORAGE_NAME_MAX == tessera::kStorageNameMax, "entry names");
static_assert(TESSERA_STORAGE_OPEN_READ == static_cast<int32_t>(tessera::storage_open::read), "open modes");
static_assert(TESSERA_STORAGE_OPEN_READ_WRITE == static_cast<int32_t>(tessera::storage_open::read_write), "modes");
static_assert(TESSERA_STORAGE_OPEN_REPLACE == static_cast<int32_t>(tessera::storage_open::replace), "open modes");
static_assert(TESSERA_CHUNK_ENCODE_BOUND(0) == tessera::chunk_encode_bound(0), "chunk bound");

namespace tessera {
namespace capi {

namespace {

// Metalayer names: the frame checks their length (1..31); reading stops a little past it.
constexpr size_t kNameScan = kFrameMetalayerNameMax + 1;

// ---- Storage trampolines: the C++ storage's context is a C tessera_storage.

const tessera_storage& c_storage_of(void* context) noexcept { return *static_cast<const tessera_storage*>(context); }

status storage_read(void* context, uint64_t offset, bytes_mut dst) noexcept {
  const tessera_storage& s = c_storage_of(context);
  return from_c(s.read(s.context, offset, dst.data(), dst.size()));
}
status storage_write(void* context, uint64_t offset, bytes_view src) noexcept {
  const tessera_storage& s = c_storage_of(context);
  return from_c(s.write(s.context, offset, src.data(), src.size()));
}
status storage_size(void* context, uint64_t* out) noexcept {
  const tessera_storage& s = c_storage_of(context);
  return from_c(s.size(s.context, out));
}
status storage_truncate(void* context, uint64_t size) noexcept {
  const tessera_storage& s = c_storage_of(context);
  return from_c(s.truncate(s.context, size));
}
status storage_sync(void* context) noexcept {
  const tessera_storage& s = c_storage_of(context);
  return from_c(s.sync(s.context));
}
void storage_reads_begin(void* context) noexcept {
  const tessera_storage& s = c_storage_of(context);
  s.reads_begin(s.context);
}
void storage_reads_end(void* context) noexcept {
  const tessera_storage& s = c_storage_of(context);
  s.reads_end(s.context);
}
bytes_view storage_view(void* context) noexcept {
  const tessera_storage& s = c_storage_of(context);
  size_t n = 0;
  const uint8_t* p = s.view(s.context, &n);
  if (p == nullptr) return bytes_view();
  return bytes_view(p, n);
}

// ---- Directory trampolines: the C++ directory's context is a C tessera_storage_directory; each storage it
// opens is the C++ storage over the C storage the directory keeps until close.

const tessera_storage_directory& c_dir_of(void* context) noexcept {
  return *static_cast<const tessera_storage_directory*>(context);
}

status dir_open(void* context, const char* name, storage_open mode, storage* out) noexcept {
  const tessera_storage_directory& d = c_dir_of(context);
  const tessera_storage* c = nullptr;
  const status s = from_c(d.open(d.context, name, static_cast<int32_t>(mode), &c));
  if (!s.ok()) return s;
  if (c == nullptr || c->read == nullptr || c->size == nullptr) {
    if (c != nullptr) (void)d.close(d.context, c);
    return make_error(errc::invalid_argument, TESSERA_MSG("capi: directory opened a storage without read or size"));
  }
  *out = storage_over(c);
  return ok_status();
}
status dir_close(void* context, storage* s) noexcept {
  const tessera_storage_directory& d = c_dir_of(context);
  return from_c(d.close(d.context, static_cast<const tessera_storage*>(s->context)));
}
status dir_remove(void* context, const char* name) noexcept {
  const tessera_storage_directory& d = c_dir_of(context);
  return from_c(d.remove(d.context, name));
}
status dir_rename(void* context, const char* from, const char* to) noexcept {
  const tessera_storage_directory& d = c_dir_of(context);
  return from_c(d.rename(d.context, from, to));
}

// A C listing forwards each name to the C++ visit through this pair (on the caller's stack for the listing).
struct c_visit_pair {
  storage_directory_visit visit;
  void* arg;
};
tessera_status c_visit(void* arg, const char* name) {
  const c_visit_pair& p = *static_cast<const c_visit_pair*>(arg);
  return status_to_c(p.visit(p.arg, name));
}
status dir_list(void* context, storage_directory_visit visit, void* arg) noexcept {
  const tessera_storage_directory& d = c_dir_of(context);
  c_visit_pair p{visit, arg};
  return from_c(d.list(d.context, c_visit, &p));
}

// ---- The executor trampoline: the C++ executor's context is the C tessera_executor.

void executor_trampoline(void* context, size_t ntasks, executor_task task, void* task_context) noexcept {
  const tessera_executor& e = *static_cast<const tessera_executor*>(context);
  e.run(e.context, ntasks, task, task_context);  // a noexcept function converts to the C task type
}

// The trampoline f when the C struct has the callback c: a missing C callback stays missing in C++.
template <class C, class F>
F if_present(C c, F f) noexcept {
  return c != nullptr ? f : nullptr;
}

// A library codec, or a user codec's id (the encoder checks that the plugins implement it).
bool codec_valid(int32_t c) noexcept {
  return c == TESSERA_CODEC_BLOSCLZ || c == TESSERA_CODEC_LZ4 || c == TESSERA_CODEC_LZ4HC || c == TESSERA_CODEC_ZLIB ||
         c == TESSERA_CODEC_ZSTD || (c >= TESSERA_USER_ID_FIRST && c <= 255);
}

// ---- User codec and filter trampolines: each C++ entry's context is the handle's copy of the C entry.

status user_encode(void* context, bytes_view in, bytes_mut out, uint8_t meta, size_t* written) noexcept {
  const tessera_user_codec& c = *static_cast<const tessera_user_codec*>(context);
  return from_c(c.encode(c.context, in.data(), in.size(), out.data(), out.size(), meta, written));
}
status user_decode(void* context, bytes_view in, bytes_mut out, uint8_t meta, size_t* written) noexcept {
  const tessera_user_codec& c = *static_cast<const tessera_user_codec*>(context);
  return from_c(c.decode(c.context, in.data(), in.size(), out.data(), out.size(), meta, written));
}
status user_forward(void* context, bytes_view in, bytes_mut out, uint8_t meta, uint8_t typesize) noexcept {
  const tessera_user_filter& f = *static_cast<const tessera_user_filter*>(context);
  if (in.size() != out.size()) return make_error(errc::invalid_argument, TESSERA_MSG("capi: user filter sizes differ"));
  return from_c(f.forward(f.context, in.data(), out.data(), out.size(), meta, typesize));
}
status user_backward(void* context, bytes_view in, bytes_mut out, uint8_t meta, uint8_t typesize) noexcept {
  const tessera_user_filter& f = *static_cast<const tessera_user_filter*>(context);
  if (in.size() != out.size()) return make_error(errc::invalid_argument, TESSERA_MSG("capi: user filter sizes differ"));
  return from_c(f.backward(f.context, in.data(), out.data(), out.size(), meta, typesize));
}

}  // namespace

bool c_string(const char* s, size_t max, span<const char>& out) noexcept {
  if (s == nullptr) return false;
  size_t n = 0;
  while (n <= max && s[n] != '\0') ++n;
  if (n > max) return false;
  out = span<const char>(s, n);
  return true;
}

storage storage_over(const tessera_storage* c) noexcept {
  storage s{if_present(c->read, storage_read),   if_present(c->write, storage_write),
            if_present(c->size, storage_size),   if_present(c->truncate, storage_truncate),
            if_present(c->sync, storage_sync),   if_present(c->view, storage_view),
            const_cast<tessera_storage*>(c)};
  // Both or neither: a bracket half present would never close.
  if (c->reads_begin != nullptr && c->reads_end != nullptr) {
    s.reads_begin = storage_reads_begin;
    s.reads_end = storage_reads_end;
  }
  return s;
}

storage_directory directory_over(const tessera_storage_directory* c) noexcept {
  return storage_directory{if_present(c->open, dir_open), if_present(c->close, dir_close),
                           if_present(c->remove, dir_remove), if_present(c->rename, dir_rename),
                           const_cast<tessera_storage_directory*>(c), if_present(c->list, dir_list)};
}

status executor_over(const tessera_executor* c, tessera_executor* keep, executor& out) noexcept {
  out = executor_serial();
  if (c == nullptr || c->run == nullptr) return ok_status();
  if (c->workers < 1) return make_error(errc::invalid_argument, TESSERA_MSG("capi: executor with 0 workers"));
  bool made_by_executor_to_c = c->run == executor_to_c_run;
#if TESSERA_CODECS_ON_DEMAND
  // The address is null where executor_to_c is not linked (bare metal): no C executor made by it reaches here.
  made_by_executor_to_c = &executor_to_c_run != nullptr && made_by_executor_to_c;
#endif
  if (made_by_executor_to_c && c->context != nullptr) {
    // A C++ executor behind the C struct (executor_to_c): itself, run_beside included.
    out = *static_cast<const executor*>(c->context);
    if (out.run == nullptr) out = executor_serial();
    return ok_status();
  }
  *keep = *c;
  out.run = executor_trampoline;
  out.context = keep;
  out.workers = keep->workers;
  return ok_status();
}

status plugins_copy(plugin_tables& t, const tessera_plugins* c, const allocator& alloc) noexcept {
  t.present = false;
  t.table = chunk_plugins{};
  if (c == nullptr) return ok_status();
  if ((c->codecs == nullptr && c->ncodecs != 0) || (c->filters == nullptr && c->nfilters != 0)) {
    return make_error(errc::invalid_argument, TESSERA_MSG("capi: plugins with null codecs or filters"));
  }
  for (size_t i = 0; i < c->ncodecs; ++i)
    if (c->codecs[i].id < TESSERA_USER_ID_FIRST)
      return make_error(errc::invalid_argument, TESSERA_MSG("capi: a user codec's id is below 32 (TESSERA_USER_ID_FIRST)"));
  for (size_t i = 0; i < c->nfilters; ++i)
    if (c->filters[i].id < TESSERA_USER_ID_FIRST)
      return make_error(errc::invalid_argument, TESSERA_MSG("capi: a user filter's id is below 32 (TESSERA_USER_ID_FIRST)"));
  TESSERA_TRY(t.c_codecs.allocate(alloc, c->ncodecs));
  TESSERA_TRY(t.codecs.allocate(alloc, c->ncodecs));
  TESSERA_TRY(t.c_filters.allocate(alloc, c->nfilters));
  TESSERA_TRY(t.filters.allocate(alloc, c->nfilters));
  for (size_t i = 0; i < c->ncodecs; ++i) {
    t.c_codecs[i] = c->codecs[i];
    chunk_user_codec* e = new (tessera::cxx::place, &t.codecs[i]) chunk_user_codec();
    e->id = c->codecs[i].id;
    e->encode = if_present(c->codecs[i].encode, user_encode);
    e->decode = if_present(c->codecs[i].decode, user_decode);
    e->context = &t.c_codecs[i];
  }
  for (size_t i = 0; i < c->nfilters; ++i) {
    t.c_filters[i] = c->filters[i];
    chunk_user_filter* e = new (tessera::cxx::place, &t.filters[i]) chunk_user_filter();
    e->id = c->filters[i].id;
    e->forward = if_present(c->filters[i].forward, user_forward);
    e->backward = if_present(c->filters[i].backward, user_backward);
    e->context = &t.c_filters[i];
  }
  t.table = chunk_plugins{t.codecs.data(), c->ncodecs, t.filters.data(), c->nfilters};
  t.present = true;
  return ok_status();
}

tessera_status layout_check(uint32_t layout) noexcept {
  if (layout == kLayout) return c_ok();
  // A layout some build could have made: TESSERA_MAX_DIMS 1..64 and both struct sizes set. Anything else is a
  // struct that tessera_array_params_init (or tessera_open_options_init) never saw.
  const uint32_t dims = layout & 0xffu, params_size = (layout >> 8) & 0xfffu, info_size = layout >> 20;
  if (dims == 0 || dims > 64 || params_size == 0 || info_size == 0) {
    return c_error(errc::invalid_argument,
                   TESSERA_MSG("capi: params not initialized: call tessera_array_params_init (or tessera_open_options_init) first"));
  }
  if (dims != static_cast<uint32_t>(kMaxDims)) {
    return c_error(errc::invalid_argument,
                   TESSERA_MSG("capi: the caller was compiled with another TESSERA_MAX_DIMS than the library (tessera_max_dims)"));
  }
  return c_error(errc::invalid_argument, TESSERA_MSG("capi: the caller's tessera.h structs differ from the library's"));
}

void info_fill(const array_layout& l, int64_t itemsize, span<const char> dtype, int64_t cbytes, int64_t chunks_nbytes,
               tessera_array_info* out) noexcept {
  *out = tessera_array_info{};
  out->ndim = l.ndim;
  for (int d = 0; d < l.ndim; ++d) {
    out->shape[d] = l.shape[d];
    out->chunkshape[d] = static_cast<int32_t>(l.chunkshape[d]);  // int32 in the metalayer
    out->blockshape[d] = static_cast<int32_t>(l.blockshape[d]);
    out->extchunkshape[d] = static_cast<int32_t>(l.extchunkshape[d]);  // at most 2 * chunkshape, checked at open
  }
  out->cbytes = cbytes;
  out->chunks_nbytes = chunks_nbytes;
  out->ratio = cbytes > 0 ? static_cast<double>(chunks_nbytes) / static_cast<double>(cbytes) : 0.0;
  out->itemsize = static_cast<int32_t>(itemsize);
  out->nitems = l.nitems;
  out->nbytes = l.nitems * itemsize;
  out->nchunks = l.nchunks;
  out->dtype = dtype.data() != nullptr ? dtype.data() : "";
  out->dtype_len = dtype.size();
}

tessera_status handle_new(tessera_array** out, const tessera_storage* storage, const tessera_allocator* alloc) noexcept {
  if (alloc->allocate == nullptr || alloc->deallocate == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: allocator without allocate or deallocate"));
  }
  const allocator a = allocator_from_c(*alloc);
  void* p = allocator_allocate(a, sizeof(tessera_array), alignof(tessera_array));
  if (p == nullptr) return c_error(errc::out_of_memory, TESSERA_MSG("capi: allocator refused the array handle"));
  tessera_array* h = new (tessera::cxx::place, p) tessera_array();
  h->alloc = a;
  if (storage != nullptr) {
    h->c_storage = *storage;
    h->st = storage_over(&h->c_storage);
  }
  *out = h;
  return c_ok();
}

void handle_free(tessera_array* h) noexcept {
  const allocator a = h->alloc;
  if (h->dtype != nullptr) allocator_deallocate(a, h->dtype, h->dtype_size, 1);
  h->~tessera_array();
  allocator_deallocate(a, h, sizeof(tessera_array), alignof(tessera_array));
}

tessera_status check_storage(const tessera_storage* storage) noexcept {
  if (storage == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null storage"));
  if (storage->read == nullptr || storage->size == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: storage without read or size"));
  }
  return c_ok();
}

// Finishes a new-array call: hands out the handle (with its dtype's copy), or frees it.
tessera_status handle_finish(tessera_array** out, tessera_array* h, const status& s) noexcept {
  if (!s.ok()) {
    handle_free(h);
    return to_c(s);
  }
  const span<const char> dtype = array_dtype(h->arr);
  h->dtype_size = dtype.size() + 1;
  h->dtype = static_cast<char*>(allocator_allocate(h->alloc, h->dtype_size, 1));
  if (h->dtype == nullptr) {
    (void)detail::array_release(h->arr);  // committed by the call that made it: nothing is dropped
    handle_free(h);
    return c_error(errc::out_of_memory, TESSERA_MSG("capi: allocator refused the dtype's copy"));
  }
  if (!dtype.empty()) memcpy(h->dtype, dtype.data(), dtype.size());
  h->dtype[dtype.size()] = '\0';
  h->geometry = array_chunk_geometry(array_layout_get(h->arr));
  *out = h;
  return c_ok();
}

tessera_status params_from_c(const tessera_array_params* c, array_params& p, frame_metalayer_init* metas,
                             tessera_array* h) noexcept {
  const tessera_status layout = layout_check(c->layout);
  if (layout.code != TESSERA_OK) return layout;
  if (c->ndim < 0 || c->ndim > kMaxDims) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: ndim outside 0..TESSERA_MAX_DIMS"));
  }
  p.ndim = c->ndim;
  for (int d = 0; d < p.ndim; ++d) {
    p.shape[d] = c->shape[d];
    p.chunkshape[d] = c->chunkshape[d];
    p.blockshape[d] = c->blockshape[d];
  }
  if (c->dtype != nullptr && !c_string(c->dtype, kArrayMaxDtypeLen, p.dtype)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: dtype longer than 255 bytes"));
  }
  p.itemsize = c->itemsize;
  if (!codec_valid(c->codec)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: unknown codec"));
  p.compressor = static_cast<codec>(c->codec);
  p.clevel = c->clevel;
  filters_copy(p, *c);
  if (c->splitmode < 1 || c->splitmode > 4) return c_error(errc::invalid_argument, TESSERA_MSG("capi: splitmode not 1..4"));
  p.split = static_cast<split_mode>(c->splitmode);
  p.use_dict = c->use_dict != 0;
  if (c->compcode_meta < 0 || c->compcode_meta > 255) return c_error(errc::invalid_argument, TESSERA_MSG("capi: compcode_meta not 0..255"));
  p.compcode_meta = static_cast<uint8_t>(c->compcode_meta);
  if (c->nmetalayers > TESSERA_MAX_METALAYERS) return c_error(errc::invalid_argument, TESSERA_MSG("capi: too many metalayers"));
  if (c->nmetalayers > 0 && c->metalayers == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null metalayers"));
  }
  for (uint32_t i = 0; i < c->nmetalayers; ++i) {
    const tessera_metalayer& m = c->metalayers[i];
    if (!c_string(m.name, kNameScan, metas[i].name)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: bad metalayer name"));
    if (m.content == nullptr && m.size != 0) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null metalayer content"));
    metas[i].content = bytes_view(static_cast<const uint8_t*>(m.content), m.size);
  }
  p.metalayers = c->nmetalayers > 0 ? metas : nullptr;
  p.nmetalayers = c->nmetalayers;
  tessera_status cs = to_c(plugins_copy(h->plugins, c->plugins, h->alloc));
  if (cs.code != TESSERA_OK) return cs;
  p.plugins = plugins_of(h->plugins);
  return to_c(executor_over(c->executor, &h->c_exec, p.exec));
}

tessera_status fill_from_c(const tessera_fill* c, array_fill& f) noexcept {
  f = array_fill_zeros();
  if (c == nullptr) return c_ok();
  if (c->data == nullptr && c->size != 0) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null fill data"));
  const bytes_view bytes(static_cast<const uint8_t*>(c->data), c->size);
  switch (c->kind) {
    case TESSERA_FILL_ZEROS: f = array_fill_zeros(); break;
    case TESSERA_FILL_UNINIT: f = array_fill_uninit(); break;
    case TESSERA_FILL_NANS: f = array_fill_nans(); break;
    case TESSERA_FILL_VALUE: f = array_fill_full(bytes); break;
    case TESSERA_FILL_BUFFER: f = array_fill_buffer(bytes); break;
    default: return c_error(errc::invalid_argument, TESSERA_MSG("capi: unknown fill kind"));
  }
  return c_ok();
}

}  // namespace capi
}  // namespace tessera

namespace {

using namespace tessera::capi;  // NOLINT: the glue above, used throughout

tessera_status null_array() noexcept { return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array")); }

bool ndim_zero(const tessera_array* a) noexcept { return tessera::array_layout_get(a->arr).ndim == 0; }

tessera::bytes_mut mut_of(void* p, size_t n) noexcept { return tessera::bytes_mut(static_cast<uint8_t*>(p), n); }
tessera::bytes_view view_of(const void* p, size_t n) noexcept {
  return tessera::bytes_view(static_cast<const uint8_t*>(p), n);
}

// A handle for a new array at target; out receives the C++ target (over the handle's storage copy, or over the
// handle's copy of the C directory). Frees nothing on error (there is nothing yet).
tessera_status target_handle(tessera_array** h, const tessera_array_target* target, const tessera_allocator* alloc,
                             tessera::array_target& out) noexcept {
  if (target == nullptr || alloc == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null target or allocator"));
  if ((target->storage == nullptr) == (target->directory == nullptr)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: a target needs a storage or a directory (one of them)"));
  }
  if (target->storage != nullptr) {
    tessera_status cs = check_storage(target->storage);
    if (cs.code != TESSERA_OK) return cs;
    if (target->storage->write == nullptr) return c_error(errc::read_only, TESSERA_MSG("capi: target storage is read-only"));
    cs = handle_new(h, target->storage, alloc);
    if (cs.code != TESSERA_OK) return cs;
    out = tessera::array_target_contiguous((*h)->st, target->durable != 0);
    out.options.base_offset = target->base_offset;
    return c_ok();
  }
  tessera_status cs = handle_new(h, nullptr, alloc);
  if (cs.code != TESSERA_OK) return cs;
  (*h)->c_dir = *target->directory;
  out = tessera::array_target_sparse(directory_over(&(*h)->c_dir));
  out.options.durable = target->durable != 0;
  return c_ok();
}

// Optional params of the copies: null keeps the source's (and its plugins: the new array then refers to the
// source's tables, see tessera.h). h keeps the copies of what the params refer to.
tessera_status copy_params(const tessera_array_params* c, tessera::array_params& p, tessera::frame_metalayer_init* metas,
                           const tessera::array_params*& use, tessera_array* h) noexcept {
  use = nullptr;
  if (c == nullptr) return c_ok();
  tessera_array_params cc = *c;
  cc.ndim = c->ndim >= 0 && c->ndim <= TESSERA_MAX_DIMS ? c->ndim : 0;  // ignored by the copies, but checked here
  cc.dtype = nullptr;
  const tessera_status cs = params_from_c(&cc, p, metas, h);
  if (cs.code == TESSERA_OK) use = &p;
  return cs;
}

tessera_status check_src(tessera_array** out, const tessera_array* src) noexcept {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null out"));
  *out = nullptr;
  if (src == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null source array"));
  return c_ok();
}

}  // namespace

// ---- Sparse frames ----------------------------------------------------------------------------------------------

tessera_status tessera_array_create_sparse(tessera_array** out, const tessera_storage_directory* dir,
                                           const tessera_allocator* alloc, const tessera_array_params* params,
                                           const tessera_fill* fill) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null out"));
  *out = nullptr;
  if (dir == nullptr || alloc == nullptr || params == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null directory, allocator or params"));
  }
  tessera_array* h = nullptr;
  tessera_status cs = handle_new(&h, nullptr, alloc);
  if (cs.code != TESSERA_OK) return cs;
  tessera::array_params p;
  tessera::frame_metalayer_init metas[TESSERA_MAX_METALAYERS];
  cs = params_from_c(params, p, metas, h);
  tessera::array_fill f;
  if (cs.code == TESSERA_OK) cs = fill_from_c(fill, f);
  if (cs.code != TESSERA_OK) return handle_finish(out, h, from_c(cs));
  h->c_dir = *dir;
  const tessera::storage_directory d = directory_over(&h->c_dir);
  return handle_finish(out, h, tessera::array_create(h->arr, tessera::array_target_sparse(d), h->alloc, p, f));
}

tessera_status tessera_array_open_sparse_layout(tessera_array** out, const tessera_storage_directory* dir,
                                                const tessera_allocator* alloc, const tessera_open_options* options,
                                                uint32_t layout) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null out"));
  *out = nullptr;
  const tessera_status lc = layout_check(layout);
  if (lc.code != TESSERA_OK) return lc;
  if (dir == nullptr || alloc == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null directory or allocator"));
  tessera_array* h = nullptr;
  const tessera_status cs = handle_new(&h, nullptr, alloc);
  if (cs.code != TESSERA_OK) return cs;
  tessera::array_open_options ao;
  if (options != nullptr) {
    ao.frame.writable = options->writable != 0;
    ao.frame.durable = options->durable != 0;
    status s = executor_over(options->executor, &h->c_exec, ao.exec);
    if (s.ok()) s = plugins_copy(h->plugins, options->plugins, h->alloc);
    if (!s.ok()) return handle_finish(out, h, s);
    ao.plugins = plugins_of(h->plugins);
  }
  h->c_dir = *dir;
  const tessera::storage_directory d = directory_over(&h->c_dir);
  return handle_finish(out, h, tessera::array_open_sparse(h->arr, d, h->alloc, ao));
}

// ---- Readers ----------------------------------------------------------------------------------------------------

tessera_status tessera_array_open_again(tessera_array** out, const tessera_array* a, const tessera_allocator* alloc,
                                        const tessera_executor* exec) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null out"));
  *out = nullptr;
  if (a == nullptr || alloc == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or allocator"));
  tessera_array* h = nullptr;
  const tessera_status cs = handle_new(&h, nullptr, alloc);  // the new frame reads through a's storage adapter
  if (cs.code != TESSERA_OK) return cs;
  tessera::executor e;
  const status s = executor_over(exec, &h->c_exec, e);
  if (!s.ok()) return handle_finish(out, h, s);
  return handle_finish(out, h, tessera::array_open_again(h->arr, a->arr, h->alloc, e));
}

tessera_status tessera_array_refresh(tessera_array* a) {
  if (a == nullptr) return null_array();
  return to_c(tessera::array_refresh(a->arr));
}

// ---- Items, selections, shape changes ---------------------------------------------------------------------------

tessera_status tessera_array_element_get(tessera_array* a, const int64_t* coords, void* out, size_t size) {
  if (a == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or out"));
  if (coords == nullptr && !ndim_zero(a)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null coords"));
  return to_c(tessera::array_element_read(a->arr, coords, mut_of(out, size)));
}

tessera_status tessera_array_element_set(tessera_array* a, const int64_t* coords, const void* item, size_t size) {
  if (a == nullptr || (item == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or item"));
  if (coords == nullptr && !ndim_zero(a)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null coords"));
  return to_c(tessera::array_element_write(a->arr, coords, view_of(item, size)));
}

tessera_status tessera_array_orthogonal_get(tessera_array* a, const int64_t* const* indices, const int64_t* counts,
                                            void* out, size_t size) {
  if (a == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or out"));
  if ((indices == nullptr || counts == nullptr) && !ndim_zero(a)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null indices or counts"));
  }
  return to_c(tessera::array_orthogonal_read(a->arr, indices, counts, mut_of(out, size)));
}

tessera_status tessera_array_orthogonal_set(tessera_array* a, const int64_t* const* indices, const int64_t* counts,
                                            const void* src, size_t size) {
  if (a == nullptr || (src == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or src"));
  if ((indices == nullptr || counts == nullptr) && !ndim_zero(a)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null indices or counts"));
  }
  return to_c(tessera::array_orthogonal_write(a->arr, indices, counts, view_of(src, size)));
}

tessera_status tessera_array_slice_get_into(tessera_array* a, const int64_t* start, const int64_t* stop, void* buffer,
                                            size_t size, const int64_t* buffer_shape, const int64_t* buffer_start) {
  if (a == nullptr || (buffer == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or buffer"));
  if ((start == nullptr || stop == nullptr || buffer_shape == nullptr) && !ndim_zero(a)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null start, stop or buffer_shape"));
  }
  return to_c(tessera::array_slice_read_into(a->arr, start, stop, mut_of(buffer, size), buffer_shape, buffer_start));
}

tessera_status tessera_array_slice_set_from(tessera_array* a, const int64_t* start, const int64_t* stop,
                                            const void* buffer, size_t size, const int64_t* buffer_shape,
                                            const int64_t* buffer_start) {
  if (a == nullptr || (buffer == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or buffer"));
  if ((start == nullptr || stop == nullptr || buffer_shape == nullptr) && !ndim_zero(a)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null start, stop or buffer_shape"));
  }
  return to_c(tessera::array_slice_write_from(a->arr, start, stop, view_of(buffer, size), buffer_shape, buffer_start));
}

tessera_status tessera_array_insert(tessera_array* a, int32_t axis, int64_t pos, int64_t count, const void* src,
                                    size_t size) {
  if (a == nullptr || (src == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or src"));
  return to_c(tessera::array_insert(a->arr, axis, pos, count, view_of(src, size)));
}

tessera_status tessera_array_delete(tessera_array* a, int32_t axis, int64_t pos, int64_t count) {
  if (a == nullptr) return null_array();
  return to_c(tessera::array_delete(a->arr, axis, pos, count));
}

tessera_status tessera_array_resize_at(tessera_array* a, const int64_t* new_shape, const int64_t* start) {
  if (a == nullptr) return null_array();
  if (new_shape == nullptr && !ndim_zero(a)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null shape"));
  return to_c(tessera::array_resize_at(a->arr, new_shape, start));
}

// ---- New arrays from arrays -------------------------------------------------------------------------------------

// Targets: storage, directory, base_offset, durable.
tessera_array_target tessera_array_target_contiguous(const tessera_storage* storage) {
  return tessera_array_target{storage, nullptr, 0, 1};
}

tessera_array_target tessera_array_target_sparse(const tessera_storage_directory* dir) {
  return tessera_array_target{nullptr, dir, 0, 1};
}

tessera_status tessera_array_params_get_layout(const tessera_array* a, tessera_array_params* out, uint32_t layout) {
  if (a == nullptr || out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or out"));
  const tessera_status lc = layout_check(layout);
  if (lc.code != TESSERA_OK) return lc;
  tessera_array_params_init(out);
  const tessera::array_params p = tessera::array_params_get(a->arr);
  out->ndim = p.ndim;
  for (int d = 0; d < p.ndim; ++d) {
    out->shape[d] = p.shape[d];
    out->chunkshape[d] = p.chunkshape[d];
    out->blockshape[d] = p.blockshape[d];
  }
  out->dtype = a->dtype;  // the handle's NUL-terminated copy
  out->itemsize = p.itemsize;
  out->codec = static_cast<int32_t>(p.compressor);
  out->clevel = p.clevel;
  filters_copy(*out, p);
  out->splitmode = static_cast<int32_t>(p.split);
  out->use_dict = p.use_dict ? 1 : 0;
  out->compcode_meta = p.compcode_meta;
  out->executor = nullptr;
  return c_ok();
}

// Each copy: checks, a handle at the target, (for those with params) the optional params, the C++ call, the
// handle out or freed.
#define TESSERA_CAPI_COPY_PROLOGUE(src_expr)                                                  \
  tessera_status cs = check_src(out, src_expr);                                               \
  if (cs.code != TESSERA_OK) return cs;                                                       \
  tessera_array* h = nullptr;                                                                 \
  tessera::array_target t;                                                                    \
  cs = target_handle(&h, target, alloc, t);                                                   \
  if (cs.code != TESSERA_OK) return cs

// ... and, for the copies that take params, the params checked and copied into the handle.
#define TESSERA_CAPI_COPY_PARAMS()                                                            \
  tessera::array_params p;                                                                    \
  tessera::frame_metalayer_init metas[TESSERA_MAX_METALAYERS];                                \
  const tessera::array_params* use = nullptr;                                                 \
  cs = copy_params(params, p, metas, use, h);                                                 \
  if (cs.code != TESSERA_OK) return handle_finish(out, h, from_c(cs))

tessera_status tessera_array_copy(tessera_array** out, const tessera_array_target* target,
                                  const tessera_allocator* alloc, tessera_array* src,
                                  const tessera_array_params* params) {
  TESSERA_CAPI_COPY_PROLOGUE(src);
  TESSERA_CAPI_COPY_PARAMS();
  return handle_finish(out, h, tessera::array_copy(h->arr, t, h->alloc, src->arr, use));
}

tessera_status tessera_array_slice_copy(tessera_array** out, const tessera_array_target* target,
                                        const tessera_allocator* alloc, tessera_array* src, const int64_t* start,
                                        const int64_t* stop, const tessera_array_params* params) {
  if (out != nullptr) *out = nullptr;  // on every error, as the other calls that make arrays
  if (src != nullptr && (start == nullptr || stop == nullptr) && !ndim_zero(src)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null start or stop"));
  }
  TESSERA_CAPI_COPY_PROLOGUE(src);
  TESSERA_CAPI_COPY_PARAMS();
  return handle_finish(out, h, tessera::array_slice_copy(h->arr, t, h->alloc, src->arr, start, stop, use));
}

tessera_status tessera_array_concatenate(tessera_array** out, const tessera_array_target* target,
                                         const tessera_allocator* alloc, tessera_array* src1, tessera_array* src2,
                                         int32_t axis, const tessera_array_params* params) {
  if (out != nullptr) *out = nullptr;  // on every error, as the other calls that make arrays
  if (src2 == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null source array"));
  TESSERA_CAPI_COPY_PROLOGUE(src1);
  TESSERA_CAPI_COPY_PARAMS();
  return handle_finish(out, h, tessera::array_concatenate(h->arr, t, h->alloc, src1->arr, src2->arr, axis, use));
}

tessera_status tessera_array_squeeze(tessera_array** out, const tessera_array_target* target,
                                     const tessera_allocator* alloc, tessera_array* src, const uint8_t* axes) {
  TESSERA_CAPI_COPY_PROLOGUE(src);
  bool flags[tessera::kMaxDims] = {};
  const int ndim = tessera::array_layout_get(src->arr).ndim;
  for (int d = 0; axes != nullptr && d < ndim; ++d) flags[d] = axes[d] != 0;
  return handle_finish(out, h, tessera::array_squeeze(h->arr, t, h->alloc, src->arr, axes != nullptr ? flags : nullptr));
}

tessera_status tessera_array_expand_dims(tessera_array** out, const tessera_array_target* target,
                                         const tessera_allocator* alloc, tessera_array* src, const uint8_t* axes,
                                         int32_t new_ndim) {
  if (out != nullptr) *out = nullptr;  // on every error, as the other calls that make arrays
  if (axes == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null axes"));
  if (new_ndim < 0 || new_ndim > TESSERA_MAX_DIMS) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: new_ndim outside 0..TESSERA_MAX_DIMS"));
  }
  TESSERA_CAPI_COPY_PROLOGUE(src);
  bool flags[tessera::kMaxDims] = {};
  for (int d = 0; d < new_ndim; ++d) flags[d] = axes[d] != 0;
  return handle_finish(out, h, tessera::array_expand_dims(h->arr, t, h->alloc, src->arr, flags, new_ndim));
}

tessera_status tessera_array_save(tessera_array** out, const tessera_array_target* target,
                                  const tessera_allocator* alloc, tessera_array* src) {
  TESSERA_CAPI_COPY_PROLOGUE(src);
  return handle_finish(out, h, tessera::array_save(h->arr, t, h->alloc, src->arr));
}

#undef TESSERA_CAPI_COPY_PROLOGUE
#undef TESSERA_CAPI_COPY_PARAMS

// ---- Chunks -----------------------------------------------------------------------------------------------------

void tessera_chunk_params_init(tessera_chunk_params* p) {
  if (p == nullptr) return;
  const tessera::chunk_encode_params d;
  memset(p, 0, sizeof(*p));
  p->typesize = d.typesize;
  p->clevel = d.clevel;
  p->codec = static_cast<int32_t>(d.compressor);
  filters_copy(*p, d);
  p->splitmode = static_cast<int32_t>(d.split);
  p->blocksize = d.blocksize;
}

tessera_status tessera_array_chunk_params_get(const tessera_array* a, tessera_chunk_params* out) {
  if (a == nullptr || out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or out"));
  tessera_chunk_params_init(out);
  const tessera::array_params p = tessera::array_params_get(a->arr);
  const tessera::array_layout& l = tessera::array_layout_get(a->arr);
  const int32_t itemsize = tessera::array_itemsize(a->arr);
  out->typesize = tessera::chunk_typesize_of(itemsize);
  out->clevel = p.clevel;
  out->codec = static_cast<int32_t>(p.compressor);
  filters_copy(*out, p);
  out->splitmode = static_cast<int32_t>(p.split);
  out->use_dict = p.use_dict ? 1 : 0;
  out->compcode_meta = p.compcode_meta;
  out->blocksize = static_cast<int32_t>(l.block_nitems * itemsize);  // fits: checked when the array opened
  out->nd_ndim = a->geometry.ndim;
  out->nd_blockshape = a->geometry.blockshape;
  return c_ok();
}

tessera_status tessera_chunk_info_get(const void* chunk, size_t size, tessera_chunk_info* out) {
  if ((chunk == nullptr && size != 0) || out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null chunk or out"));
  const tessera::result<tessera::chunk_header> r = tessera::chunk_header_read(view_of(chunk, size));
  if (!r.ok()) return to_c(r.err());
  out->nbytes = r->nbytes;
  out->cbytes = r->cbytes;
  out->blocksize = r->blocksize;
  out->typesize = r->typesize;
  out->special = static_cast<int32_t>(r->special);
  return c_ok();
}

namespace {

// The n-d geometry a C caller gives (nd_ndim items at nd_blockshape; 0 and NULL: none).
tessera_status geometry_from_c(int32_t ndim, const int32_t* blockshape, tessera::chunk_nd_geometry& g) noexcept {
  g = tessera::chunk_nd_geometry{};
  if (ndim == 0) return c_ok();
  if (ndim < 0 || ndim > tessera::kMaxDims) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: nd_ndim outside 0..TESSERA_MAX_DIMS"));
  }
  if (blockshape == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: nd_ndim set but nd_blockshape NULL"));
  }
  for (int32_t d = 0; d < ndim; ++d) {
    if (blockshape[d] < 1) {
      return c_error(errc::invalid_argument, TESSERA_MSG("capi: nd_blockshape has an entry below 1"));
    }
    g.blockshape[d] = blockshape[d];
  }
  g.ndim = static_cast<int8_t>(ndim);
  return c_ok();
}

}  // namespace

tessera_status tessera_chunk_encode(const tessera_allocator* alloc, const tessera_chunk_params* params,
                                    const void* src, size_t size, void* out, size_t out_size, size_t* written) {
  if (written != nullptr) *written = 0;
  if (alloc == nullptr || params == nullptr || written == nullptr || (src == nullptr && size != 0) ||
      (out == nullptr && out_size != 0)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null allocator, params, src, out or written"));
  }
  if (params->typesize < 1 || params->typesize > 255) return c_error(errc::invalid_argument, TESSERA_MSG("capi: typesize not 1..255"));
  if (!codec_valid(params->codec)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: unknown codec"));
  if (params->splitmode < 1 || params->splitmode > 4) return c_error(errc::invalid_argument, TESSERA_MSG("capi: splitmode not 1..4"));
  if (params->compcode_meta < 0 || params->compcode_meta > 255) return c_error(errc::invalid_argument, TESSERA_MSG("capi: compcode_meta not 0..255"));
  tessera::chunk_encode_params p;
  p.compcode_meta = static_cast<uint8_t>(params->compcode_meta);
  p.typesize = static_cast<uint8_t>(params->typesize);
  p.clevel = params->clevel;
  p.compressor = static_cast<tessera::codec>(params->codec);
  filters_copy(p, *params);
  p.split = static_cast<tessera::split_mode>(params->splitmode);
  p.blocksize = params->blocksize;
  p.use_dict = params->use_dict != 0;
  const tessera_status gs = geometry_from_c(params->nd_ndim, params->nd_blockshape, p.geometry);
  if (gs.code != TESSERA_OK) return gs;
  const tessera::result<int32_t> bs = tessera::chunk_blocksize_compute(p, size);
  if (!bs.ok()) return to_c(bs.err());
  tessera::chunk_encoder_options eo;
  eo.max_blocksize = *bs > 0 ? static_cast<size_t>(*bs) : 1;  // scratch for exactly this chunk's blocks
  tessera::chunk_encoder e;
  const status s = tessera::chunk_encoder_init(e, tessera::allocator_from_c(*alloc), eo);
  if (!s.ok()) return to_c(s);
  return value_to_c(tessera::chunk_encode(e, p, view_of(src, size), mut_of(out, out_size)), written);
}

namespace {

// A decoder whose scratch fits this chunk's blocks (1 byte for special chunks, which have none).
status decoder_for(tessera::chunk_decoder& d, const tessera::allocator& alloc, tessera::bytes_view chunk,
                   const tessera::executor& exec, const tessera::chunk_nd_geometry& geometry = {}) noexcept {
  tessera::chunk_decoder_options o;
  o.exec = exec;
  o.geometry = geometry;
  o.max_blocksize = 1;
  const tessera::result<tessera::chunk_header> h = tessera::chunk_header_read(chunk);
  if (h.ok() && !h->vlblocks && h->blocksize > 0) o.max_blocksize = static_cast<size_t>(h->blocksize);
  return tessera::chunk_decoder_init(d, alloc, o);
}

}  // namespace

tessera_status tessera_chunk_decode(const tessera_allocator* alloc, const void* chunk, size_t chunk_size, void* out,
                                    size_t size, size_t* written) {
  if (written != nullptr) *written = 0;
  if (alloc == nullptr || (chunk == nullptr && chunk_size != 0) || (out == nullptr && size != 0)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null allocator, chunk or out"));
  }
  tessera::chunk_decoder d;
  const status s = decoder_for(d, tessera::allocator_from_c(*alloc), view_of(chunk, chunk_size), tessera::executor_serial());
  if (!s.ok()) return to_c(s);
  return value_to_c(tessera::chunk_decode(d, view_of(chunk, chunk_size), mut_of(out, size)), written);
}

tessera_status tessera_chunk_decode_nd(const tessera_allocator* alloc, int32_t nd_ndim, const int32_t* nd_blockshape,
                                       const void* chunk, size_t chunk_size, void* out, size_t size,
                                       size_t* written) {
  if (written != nullptr) *written = 0;
  if (alloc == nullptr || (chunk == nullptr && chunk_size != 0) || (out == nullptr && size != 0)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null allocator, chunk or out"));
  }
  tessera::chunk_nd_geometry g;
  const tessera_status gs = geometry_from_c(nd_ndim, nd_blockshape, g);
  if (gs.code != TESSERA_OK) return gs;
  tessera::chunk_decoder d;
  const status s =
      decoder_for(d, tessera::allocator_from_c(*alloc), view_of(chunk, chunk_size), tessera::executor_serial(), g);
  if (!s.ok()) return to_c(s);
  return value_to_c(tessera::chunk_decode(d, view_of(chunk, chunk_size), mut_of(out, size)), written);
}

tessera_status tessera_array_chunk_read(tessera_array* a, int64_t nchunk, void* out, size_t size, size_t* written) {
  if (a == nullptr || written == nullptr || (out == nullptr && size != 0)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array, out or written"));
  }
  *written = 0;
  tessera::owned_array<uint8_t> buffer;
  const tessera::result<tessera::bytes_view> r = tessera::frame_chunk_read(tessera::array_frame(a->arr), nchunk, buffer);
  if (!r.ok()) return to_c(r.err());
  const size_t n = r->size();
  *written = n;
  if (n > size) return c_error(errc::buffer_too_small, TESSERA_MSG("capi: chunk larger than out"));
  if (n != 0) memcpy(out, r->data(), n);
  return c_ok();
}

tessera_status tessera_array_chunk_decode(tessera_array* a, int64_t nchunk, void* out, size_t size,
                                          size_t* written) {
  if (written != nullptr) *written = 0;
  if (a == nullptr || (out == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or out"));
  tessera::frame& f = tessera::array_frame(a->arr);
  const tessera::result<tessera::frame_chunk_ref> ref = tessera::frame_chunk_locate(f, nchunk);
  if (!ref.ok()) return to_c(ref.err());
  // Every chunk of a b2nd array decodes to the same length: a size query needs no decoding.
  const int64_t nbytes = tessera::array_layout_get(a->arr).extchunk_nitems * tessera::array_itemsize(a->arr);
  if (static_cast<uint64_t>(nbytes) > size) {  // also the size query (out NULL, size 0), as chunk_read's
    if (written != nullptr) *written = static_cast<size_t>(nbytes);
    return c_error(errc::buffer_too_small, TESSERA_MSG("capi: out smaller than the decoded chunk"));
  }
  tessera::chunk_decoder_options o;
  const tessera::array_params ap = tessera::array_params_get(a->arr);
  o.exec = ap.exec;
  o.plugins = ap.plugins;
  o.geometry = tessera::array_chunk_geometry(tessera::array_layout_get(a->arr));
  o.max_blocksize = ref->blocksize > 0 ? static_cast<size_t>(ref->blocksize) : 1;
  tessera::chunk_decoder d;
  const status s = tessera::chunk_decoder_init(d, a->alloc, o);
  if (!s.ok()) return to_c(s);
  return value_to_c(tessera::frame_chunk_decode(f, d, nchunk, mut_of(out, size)), written);
}

tessera_status tessera_array_chunk_update(tessera_array* a, int64_t nchunk, const void* chunk, size_t size) {
  if (a == nullptr || (chunk == nullptr && size != 0)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: null array or chunk"));
  const tessera::array_layout& l = tessera::array_layout_get(a->arr);
  const tessera::result<tessera::chunk_header> h = tessera::chunk_header_read(view_of(chunk, size));
  if (!h.ok()) return to_c(h.err());
  if (static_cast<int64_t>(h->nbytes) != l.extchunk_nitems * tessera::array_itemsize(a->arr)) {
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: chunk size is not the array's chunk size"));
  }
  if (static_cast<size_t>(h->cbytes) != size) return c_error(errc::invalid_argument, TESSERA_MSG("capi: size is not the chunk's cbytes"));
  if (nchunk < 0 || nchunk >= l.nchunks) return c_error(errc::out_of_range, TESSERA_MSG("capi: chunk number outside the array"));
  tessera::frame& f = tessera::array_frame(a->arr);
  const status s = tessera::frame_chunk_update(f, nchunk, view_of(chunk, size));
  if (!s.ok()) return to_c(s);
  if (a->arr.auto_commit) return to_c(tessera::array_commit(a->arr));
  return c_ok();
}

// ---- The b2nd metalayer -------------------------------------------------------------------------------------

tessera_status tessera_b2nd_meta_serialize(int32_t ndim, const int64_t* shape, const int32_t* chunkshape,
                                           const int32_t* blockshape, const char* dtype, int32_t dtype_format,
                                           void* out, size_t size, size_t* written) {
  if (written != nullptr) *written = 0;
  if (written == nullptr || dtype == nullptr || (out == nullptr && size != 0) ||
      (ndim > 0 && (shape == nullptr || chunkshape == nullptr || blockshape == nullptr)))
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null geometry, dtype, out or written"));
  if (ndim < 0 || ndim > tessera::kMaxDims) return c_error(errc::invalid_argument, TESSERA_MSG("capi: ndim outside 0..TESSERA_MAX_DIMS"));
  if (dtype_format < 0 || dtype_format > 127) return c_error(errc::invalid_argument, TESSERA_MSG("capi: dtype_format not 0..127"));
  tessera::b2nd_meta m;
  m.ndim = static_cast<int8_t>(ndim);
  for (int d = 0; d < ndim; ++d) {
    m.shape[d] = shape[d];
    m.chunkshape[d] = chunkshape[d];
    m.blockshape[d] = blockshape[d];
  }
  m.dtype_format = static_cast<int8_t>(dtype_format);
  if (!c_string(dtype, tessera::kArrayMaxDtypeLen, m.dtype)) return c_error(errc::invalid_argument, TESSERA_MSG("capi: dtype longer than 255 bytes"));
  m.has_dtype = true;
  const size_t need = tessera::b2nd_meta_encoded_size(m);
  if (need != 0 && need > size) {
    *written = need;
    return c_error(errc::buffer_too_small, TESSERA_MSG("capi: out cannot hold the metalayer"));
  }
  return value_to_c(tessera::b2nd_meta_encode(m, mut_of(out, size)), written);
}

tessera_status tessera_b2nd_meta_deserialize(const void* meta, size_t size, int32_t capacity, int32_t* ndim,
                                             int64_t* shape, int32_t* chunkshape, int32_t* blockshape,
                                             const char** dtype, size_t* dtype_len, int32_t* dtype_format) {
  if ((meta == nullptr && size != 0) || ndim == nullptr || dtype == nullptr || dtype_len == nullptr ||
      dtype_format == nullptr || (capacity > 0 && (shape == nullptr || chunkshape == nullptr || blockshape == nullptr)))
    return c_error(errc::invalid_argument, TESSERA_MSG("capi: null meta or outputs"));
  const tessera::result<tessera::b2nd_meta> m = tessera::b2nd_meta_decode(view_of(meta, size));
  if (!m.ok()) return to_c(m.err());
  if (m->ndim > capacity) return c_error(errc::buffer_too_small, TESSERA_MSG("capi: the metalayer has more dimensions than capacity"));
  *ndim = m->ndim;
  for (int d = 0; d < m->ndim; ++d) {
    shape[d] = m->shape[d];
    chunkshape[d] = m->chunkshape[d];
    blockshape[d] = m->blockshape[d];
  }
  const tessera::span<const char> dt = tessera::b2nd_meta_dtype_or_default(*m);
  *dtype = dt.data();
  *dtype_len = dt.size();
  *dtype_format = m->dtype_format;
  return c_ok();
}
