// SPDX-License-Identifier: BSD-3-Clause
// Shared glue of the C API's sources (tessera_c.cpp, tessera_c_ops.cpp): status conversion, C strings, the
// trampolines from the C++ interfaces (storage, storage_directory, executor) to the caller's C structs, and the
// handle behind tessera_array*.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "base/on_demand.hpp"
#include "tessera/array.hpp"
#include "tessera/capi_bridge.hpp"
#include "tessera/tessera.h"

namespace tessera {
namespace detail {
// array_close without the frame's tidy (src/array/array_internal.hpp), for a failure right after a create.
status array_release(array& a) noexcept;
}  // namespace detail
namespace capi {

// The caller's user codecs and filters, copied from the handle's allocator: the C entries and the C++ entries
// whose contexts point at them (the trampolines call the C callbacks). `table` is what the array refers to.
struct plugin_tables {
  owned_array<tessera_user_codec> c_codecs;
  owned_array<chunk_user_codec> codecs;
  owned_array<tessera_user_filter> c_filters;
  owned_array<chunk_user_filter> filters;
  chunk_plugins table{};
  bool present = false;
};

}  // namespace capi
}  // namespace tessera

// The handle: copies of every C struct the array goes on using (the one ownership rule of tessera.h: the
// caller's structs may go away once a call returns), then the array, declared last so that it is destroyed
// first. Sparse arrays leave c_storage and st empty (the frame keeps its own copy of the directory interface,
// whose context is c_dir). dtype is a NUL-terminated copy of the array's dtype (the metalayer's string is not
// terminated), from alloc, dtype_size bytes: what params_get and info_get hand out.
struct tessera_array {
  tessera::allocator alloc{};
  tessera_storage c_storage{};
  tessera::storage st{};
  tessera_storage_directory c_dir{};
  tessera_executor c_exec{};
  tessera::capi::plugin_tables plugins;
  tessera::array arr;
  char* dtype = nullptr;
  size_t dtype_size = 0;
  tessera::chunk_nd_geometry geometry{};  // the blocks' shape, where tessera_array_chunk_params_get points
};

namespace tessera {
namespace capi {

inline tessera_status to_c(const error& e) noexcept { return status_to_c(e); }
inline tessera_status c_error(errc code, const char* message) noexcept { return to_c(make_error(code, message)); }
inline tessera_status c_ok() noexcept { return to_c(ok_status()); }
// r's value stored in *out (out may be null: the value is dropped), or r's error.
template <class T>
tessera_status value_to_c(const result<T>& r, T* out) noexcept {
  if (!r.ok()) return to_c(r.err());
  if (out != nullptr) *out = *r;
  return c_ok();
}
inline error from_c(const tessera_status& s) noexcept {
  return error(static_cast<errc>(s.code), s.message != nullptr ? s.message : "");
}

// The library's own struct layout (TESSERA_LAYOUT as compiled here), and the check of a caller's.
inline constexpr uint32_t kLayout = TESSERA_LAYOUT;
tessera_status layout_check(uint32_t layout) noexcept;

// A NUL-terminated string as a span, reading at most max + 1 bytes; false when NULL or longer than max.
bool c_string(const char* s, size_t max, span<const char>& out) noexcept;

// The C++ storage over a C one (its context is c, which must outlive it); missing callbacks stay missing.
storage storage_over(const tessera_storage* c) noexcept;
// The C++ directory over a C one (its context is c, which must outlive every copy of it).
storage_directory directory_over(const tessera_storage_directory* c) noexcept;
// The C++ executor over a copy of a C one kept in *keep (null, or run null: serial), or the C++ executor itself
// when executor_to_c made the C one. Errors: workers 0.
status executor_over(const tessera_executor* c, tessera_executor* keep, executor& out) noexcept;
// The run of the C executors executor_to_c makes (capi_executor.cpp; its context is the C++ executor). Referred
// to weakly on bare metal: only a port's C face links it (the POSIX pool's), so the C API's images do not carry it
// nor the calls through it that a stack analysis would have to follow.
void executor_to_c_run(void* context, size_t ntasks, tessera_executor_task task, void* task_context) TESSERA_ON_DEMAND;
// Copies the C plugin tables (null: none) into t, from alloc. Errors: invalid_argument (null tables with
// entries, ids below TESSERA_USER_ID_FIRST), out_of_memory.
status plugins_copy(plugin_tables& t, const tessera_plugins* c, const allocator& alloc) noexcept;
// What an array refers to: t's table, or null when there are none.
inline const chunk_plugins* plugins_of(const plugin_tables& t) noexcept { return t.present ? &t.table : nullptr; }

// A new handle from alloc holding a copy of storage (null: none, for sparse arrays); freed by handle_free.
// What an array is, for tessera_array_info_get and tessera_array_view_info_get.
// cbytes and chunks_nbytes: the frame's (compressed and decoded bytes of its chunks).
void info_fill(const array_layout& l, int64_t itemsize, span<const char> dtype, int64_t cbytes, int64_t chunks_nbytes,
               tessera_array_info* out) noexcept;
tessera_status handle_new(tessera_array** out, const tessera_storage* storage, const tessera_allocator* alloc) noexcept;
void handle_free(tessera_array* h) noexcept;
// Finishes a new-array call: on success keeps the dtype's NUL-terminated copy in h and hands h out in *out; on
// error (s, or no memory for the copy) closes and frees h.
tessera_status handle_finish(tessera_array** out, tessera_array* h, const status& s) noexcept;
// Null, or read or size missing: invalid_argument.
tessera_status check_storage(const tessera_storage* storage) noexcept;

// The filter pipeline's slots from one parameter struct to another, C or C++ (the same member names).
template <class To, class From>
void filters_copy(To& to, const From& from) noexcept {
  for (int i = 0; i < TESSERA_MAX_FILTERS; ++i) {
    to.filters[i] = from.filters[i];
    to.filters_meta[i] = from.filters_meta[i];
  }
}

// The C parameters as C++ ones. metas (TESSERA_MAX_METALAYERS entries) receives the metalayer list p points to;
// h keeps the copies of the executor and the plugins p refers to.
tessera_status params_from_c(const tessera_array_params* c, array_params& p, frame_metalayer_init* metas,
                             tessera_array* h) noexcept;
tessera_status fill_from_c(const tessera_fill* c, array_fill& f) noexcept;

}  // namespace capi
}  // namespace tessera
