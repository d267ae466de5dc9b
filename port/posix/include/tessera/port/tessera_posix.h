/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file tessera_posix.h
 * @brief The POSIX port in C (C99): arrays in files (contiguous frames) or directories (sparse frames) by path,
 * the malloc allocator, and a thread pool as a ::tessera_executor. Hosted only (Linux, macOS). Link
 * tessera::posix.
 */
#ifndef TESSERA_PORT_TESSERA_POSIX_H
#define TESSERA_PORT_TESSERA_POSIX_H

#include "tessera/tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The malloc-family allocator (posix_memalign for large alignments); stateless (context NULL), thread-safe. */
tessera_allocator tessera_posix_allocator(void);

/* ---- Thread pool ---------------------------------------------------------------------------------------- */

/** A fixed pool of threads (opaque, from malloc). */
typedef struct tessera_thread_pool tessera_thread_pool;

/** Starts workers - 1 threads (the caller of run works too); workers in 1..1024. */
tessera_status tessera_thread_pool_create(tessera_thread_pool** out, uint32_t workers);

/** Stops and joins the threads and frees the pool (NULL is a no-op). Close the arrays that use it first. */
tessera_status tessera_thread_pool_destroy(tessera_thread_pool* pool);

/**
 * The pool as an executor (its context is inside the pool; NULL pool: a serial executor). Keep the pool while
 * arrays use it. The library's calls that take it run the pool's C++ executor itself, so that a create's appends
 * of finished chunks run beside the next chunks' encodes, as from C++.
 */
tessera_executor tessera_thread_pool_executor(tessera_thread_pool* pool);

/** What a pool has done since it was created (for tests and benchmarks); see ::tessera_thread_pool_counts_get. */
typedef struct tessera_thread_pool_counts {
  uint64_t runs;         /**< runs handed to the pool's threads (not those a caller did alone, serially) */
  uint64_t runs_beside;  /**< of those, runs beside the caller's own work (a create's appends) */
  uint64_t sleeps;       /**< times a pool thread, finding no run for a while, went to sleep */
} tessera_thread_pool_counts;

/** The pool's counts (zeros for NULL). Safe while runs are in progress. */
tessera_thread_pool_counts tessera_thread_pool_counts_get(const tessera_thread_pool* pool);

/** The number of online processors (at least 1). */
uint32_t tessera_cpu_count(void);

/* ---- Files and directories ------------------------------------------------------------------------------- */

/** How ::tessera_posix_store_open opens a path. */
typedef enum tessera_posix_mode {
  /**
   * An existing file or directory, read-only. A file is mapped (posix_mapping): each array read takes a read
   * lease on it and decodes straight from the mapped pages, without the copy a read through pread makes; while
   * the lease is held, another program's open for writing or truncate waits for the read to end, so a shrinking
   * file never raises SIGBUS. Where no lease can be had (the file is open for writing, it is another user's, the
   * file system or the system has no leases) or the file is now shorter than the map, the read goes through
   * pread. A file that cannot be mapped (larger than a 32-bit address space) is read through pread.
   */
  TESSERA_POSIX_READ = 0,
  TESSERA_POSIX_READ_WRITE = 1,        /**< an existing file or directory */
  TESSERA_POSIX_REPLACE_FILE = 2,      /**< a file, created or emptied (a new contiguous frame) */
  TESSERA_POSIX_CREATE_DIRECTORY = 3,  /**< a directory, created with its parents when missing (a sparse frame) */
  /** As TESSERA_POSIX_READ, but a file that cannot be mapped is refused (::TESSERA_ERR_IO or ::TESSERA_ERR_OVERFLOW). */
  TESSERA_POSIX_READ_MAPPED = 4
} tessera_posix_mode;

/** An open file or directory that arrays live in (opaque, from malloc). */
typedef struct tessera_posix_store tessera_posix_store;

/** Opens path with a ::tessera_posix_mode; an existing path is a file or a directory, whichever it is. */
tessera_status tessera_posix_store_open(tessera_posix_store** out, const char* path, int32_t mode);

/**
 * Opens the array that an open store holds (its file's contiguous frame, or its directory's sparse frame), as
 * ::tessera_array_open and ::tessera_array_open_sparse do (options may be NULL: read-only). The store must
 * outlive the array.
 */
tessera_status tessera_posix_store_array_open(tessera_array** out, const tessera_posix_store* store,
                                              const tessera_allocator* alloc, const tessera_open_options* options);

/** Closes the file or directory and frees the store (NULL is a no-op). Close the arrays on it first. */
tessera_status tessera_posix_store_close(tessera_posix_store* store);

/** Nonzero when the store is a directory (sparse frames), zero for a file. */
int32_t tessera_posix_store_is_directory(const tessera_posix_store* store);

/** A target for the functions that make new arrays (tessera_array_copy, ...): the store's file or directory. */
tessera_array_target tessera_posix_store_target(const tessera_posix_store* store);

/**
 * Opens the array at path, a contiguous frame file or a sparse frame directory (options may be NULL:
 * read-only). *store receives what the array lives in: close it after the array (tessera_array_close, then
 * ::tessera_posix_store_close).
 */
tessera_status tessera_posix_array_open(tessera_array** out, tessera_posix_store** store, const char* path,
                                        const tessera_allocator* alloc, const tessera_open_options* options);

/**
 * Creates an array at path: a contiguous frame file (sparse zero; an existing file is replaced) or a sparse
 * frame directory (sparse nonzero; created when missing). *store as in ::tessera_posix_array_open.
 */
tessera_status tessera_posix_array_create(tessera_array** out, tessera_posix_store** store, const char* path,
                                          int32_t sparse, const tessera_allocator* alloc,
                                          const tessera_array_params* params, const tessera_fill* fill);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* TESSERA_PORT_TESSERA_POSIX_H */
