// SPDX-License-Identifier: BSD-3-Clause
// The POSIX port's C API (tessera/port/tessera_posix.h): the C faces of posix_allocator, thread_pool,
// posix_file, posix_mapping and posix_directory, and arrays by path on top of them. Storages are exposed to C
// through small adapters of the core (tessera/capi_bridge.hpp); a directory's open entries are boxes from
// posix_allocator.
#include "tessera/port/tessera_posix.h"

#include <sys/stat.h>

#include <cstdlib>
#include <new>

#include "tessera/capi_bridge.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_directory.hpp"
#include "tessera/port/posix_file.hpp"
#include "tessera/port/posix_mapping.hpp"
#include "tessera/port/thread_pool.hpp"

namespace {

using tessera::errc;
using tessera::status;
using tessera::status_to_c;

tessera_status c_ok() noexcept { return status_to_c(tessera::ok_status()); }
tessera_status c_error(errc code, const char* message) noexcept { return status_to_c(tessera::make_error(code, message)); }

template <class T>
T* malloc_new() noexcept {
  void* p = std::malloc(sizeof(T));
  return p != nullptr ? new (p) T() : nullptr;
}
template <class T>
void malloc_delete(T* p) noexcept {
  p->~T();
  std::free(p);
}

}  // namespace

struct tessera_posix_store {
  bool is_dir = false;
  bool mapped = false;  // the file is a posix_mapping (a read-only open), not a posix_file
  tessera::posix_file file{};
  tessera::posix_mapping mapping{};  // the storage's context: the store is malloc'ed and never moves
  tessera::posix_directory dir{};
  tessera::storage cxx_storage{};
  tessera::directory_to_c_state cxx_dir{};  // the directory interface, entries from the malloc allocator
  tessera_storage c_storage{};
  tessera_storage_directory c_dir{};
};

struct tessera_thread_pool {
  tessera::thread_pool pool;
  tessera::executor exec{};
};

tessera_allocator tessera_posix_allocator(void) {
  const tessera::allocator a = tessera::posix_allocator();
  tessera_allocator c;
  c.allocate = a.allocate;
  c.deallocate = a.deallocate;
  c.context = a.context;
  return c;
}

// ---- Thread pool ------------------------------------------------------------------------------------------------

tessera_status tessera_thread_pool_create(tessera_thread_pool** out, uint32_t workers) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("thread pool: null out"));
  *out = nullptr;
  tessera_thread_pool* p = malloc_new<tessera_thread_pool>();
  if (p == nullptr) return c_error(errc::out_of_memory, TESSERA_MSG("thread pool: malloc refused the pool"));
  const status s = tessera::thread_pool_init(p->pool, workers);
  if (!s.ok()) {
    malloc_delete(p);
    return status_to_c(s);
  }
  p->exec = tessera::thread_pool_executor(p->pool);
  *out = p;
  return c_ok();
}

tessera_status tessera_thread_pool_destroy(tessera_thread_pool* pool) {
  if (pool != nullptr) malloc_delete(pool);  // the destructor joins the threads
  return c_ok();
}

tessera_executor tessera_thread_pool_executor(tessera_thread_pool* pool) {
  // Over the pool's C++ executor (stable: the pool is malloc'ed): the core's C calls take it whole, run_beside too.
  return tessera::executor_to_c(pool != nullptr ? &pool->exec : nullptr);
}

tessera_thread_pool_counts tessera_thread_pool_counts_get(const tessera_thread_pool* pool) {
  tessera_thread_pool_counts c{};
  if (pool == nullptr) return c;
  const tessera::thread_pool_counts n = tessera::thread_pool_counts_get(pool->pool);
  c.runs = n.runs;
  c.runs_beside = n.runs_beside;
  c.sleeps = n.sleeps;
  return c;
}

uint32_t tessera_cpu_count(void) { return tessera::cpu_count(); }

// ---- Files and directories --------------------------------------------------------------------------------------

tessera_status tessera_posix_store_open(tessera_posix_store** out, const char* path, int32_t mode) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("posix store: null out"));
  *out = nullptr;
  if (path == nullptr || path[0] == '\0') return c_error(errc::invalid_argument, TESSERA_MSG("posix store: empty path"));
  if (mode < TESSERA_POSIX_READ || mode > TESSERA_POSIX_READ_MAPPED) {
    return c_error(errc::invalid_argument, TESSERA_MSG("posix store: unknown mode"));
  }
  bool is_dir = mode == TESSERA_POSIX_CREATE_DIRECTORY;
  if (mode == TESSERA_POSIX_READ || mode == TESSERA_POSIX_READ_WRITE || mode == TESSERA_POSIX_READ_MAPPED) {
    struct stat sb;
    if (::stat(path, &sb) != 0) return c_error(errc::io, TESSERA_MSG("posix store: stat failed (missing path?)"));
    is_dir = S_ISDIR(sb.st_mode);
  }
  tessera_posix_store* s = malloc_new<tessera_posix_store>();
  if (s == nullptr) return c_error(errc::out_of_memory, TESSERA_MSG("posix store: malloc refused the store"));
  s->is_dir = is_dir;
  if (is_dir) {
    tessera::result<tessera::posix_directory> d = tessera::posix_directory_open(path, mode == TESSERA_POSIX_CREATE_DIRECTORY);
    if (!d.ok()) {
      malloc_delete(s);
      return status_to_c(d.err());
    }
    s->dir = *d;
    s->cxx_dir.dir = tessera::posix_directory_interface(s->dir);
    s->cxx_dir.alloc = tessera::posix_allocator();
    s->c_dir = tessera::directory_to_c(&s->cxx_dir);
  } else {
    // A read-only open maps the file (posix_mapping: touched only under a read lease, else pread). A file that
    // cannot be mapped (larger than a 32-bit address space, a device) is read through posix_file
    // (TESSERA_POSIX_READ) or refused (TESSERA_POSIX_READ_MAPPED).
    tessera::status st = tessera::ok_status();
    if (mode == TESSERA_POSIX_READ || mode == TESSERA_POSIX_READ_MAPPED) {
      tessera::result<tessera::posix_mapping> m = tessera::posix_mapping_open(path);
      if (m.ok()) {
        s->mapped = true;
        s->mapping = *m;
        s->cxx_storage = tessera::posix_mapping_storage(s->mapping);
      } else if (mode == TESSERA_POSIX_READ_MAPPED) {
        st = m.err();
      }
    }
    if (st.ok() && !s->mapped) {
      const tessera::posix_open fm = mode == TESSERA_POSIX_READ         ? tessera::posix_open::read
                                     : mode == TESSERA_POSIX_READ_WRITE ? tessera::posix_open::read_write
                                                                        : tessera::posix_open::replace;
      tessera::result<tessera::posix_file> f = tessera::posix_file_open(path, fm);
      if (f.ok()) {
        s->file = *f;
        s->cxx_storage = tessera::posix_file_storage(s->file);
      } else {
        st = f.err();
      }
    }
    if (!st.ok()) {
      malloc_delete(s);
      return status_to_c(st);
    }
    s->c_storage = tessera::storage_to_c(&s->cxx_storage);
  }
  *out = s;
  return c_ok();
}

tessera_status tessera_posix_store_close(tessera_posix_store* store) {
  if (store == nullptr) return c_ok();
  const status s = store->is_dir   ? tessera::posix_directory_close(store->dir)
                   : store->mapped ? tessera::posix_mapping_close(store->mapping)
                                   : tessera::posix_file_close(store->file);
  malloc_delete(store);
  return status_to_c(s);
}

int32_t tessera_posix_store_is_directory(const tessera_posix_store* store) {
  return store != nullptr && store->is_dir ? 1 : 0;
}

tessera_array_target tessera_posix_store_target(const tessera_posix_store* store) {
  if (store != nullptr && store->is_dir) return tessera_array_target_sparse(&store->c_dir);
  return tessera_array_target_contiguous(store != nullptr ? &store->c_storage : nullptr);
}

tessera_status tessera_posix_store_array_open(tessera_array** out, const tessera_posix_store* store,
                                              const tessera_allocator* alloc, const tessera_open_options* options) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("posix store: null out"));
  *out = nullptr;
  if (store == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("posix store: null store"));
  return store->is_dir ? tessera_array_open_sparse(out, &store->c_dir, alloc, options)
                       : tessera_array_open(out, &store->c_storage, alloc, options);
}

tessera_status tessera_posix_array_open(tessera_array** out, tessera_posix_store** store, const char* path,
                                        const tessera_allocator* alloc, const tessera_open_options* options) {
  if (out == nullptr || store == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("posix array: null out or store"));
  *out = nullptr;
  *store = nullptr;
  const bool writable = options != nullptr && options->writable != 0;
  tessera_posix_store* s = nullptr;
  tessera_status cs = tessera_posix_store_open(&s, path, writable ? TESSERA_POSIX_READ_WRITE : TESSERA_POSIX_READ);
  if (cs.code != TESSERA_OK) return cs;
  cs = tessera_posix_store_array_open(out, s, alloc, options);
  if (cs.code != TESSERA_OK) {
    (void)tessera_posix_store_close(s);
    return cs;
  }
  *store = s;
  return c_ok();
}

tessera_status tessera_posix_array_create(tessera_array** out, tessera_posix_store** store, const char* path,
                                          int32_t sparse, const tessera_allocator* alloc,
                                          const tessera_array_params* params, const tessera_fill* fill) {
  if (out == nullptr || store == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("posix array: null out or store"));
  *out = nullptr;
  *store = nullptr;
  tessera_posix_store* s = nullptr;
  tessera_status cs =
      tessera_posix_store_open(&s, path, sparse != 0 ? TESSERA_POSIX_CREATE_DIRECTORY : TESSERA_POSIX_REPLACE_FILE);
  if (cs.code != TESSERA_OK) return cs;
  // s is set whenever the status is OK, as above.
  cs = s->is_dir ? tessera_array_create_sparse(out, &s->c_dir, alloc, params, fill)  // NOLINT(clang-analyzer-core.NullDereference)
                 : tessera_array_create(out, &s->c_storage, alloc, params, fill);
  if (cs.code != TESSERA_OK) {
    (void)tessera_posix_store_close(s);
    return cs;
  }
  *store = s;
  return c_ok();
}
