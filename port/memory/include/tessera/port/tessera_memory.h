/**
 * @file tessera_memory.h
 * @brief The memory port in C (C99): a directory of RAM buffers as a ::tessera_storage_directory, the home of
 * a sparse array without a filesystem (tests, RAM caches, firmware). Freestanding: every byte from the caller's
 * allocator. Link tessera::memory.
 */
#ifndef TESSERA_PORT_TESSERA_MEMORY_H
#define TESSERA_PORT_TESSERA_MEMORY_H

#include "tessera/tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A directory of up to max_entries growable buffers (opaque; from the allocator given at create). */
typedef struct tessera_memory_directory tessera_memory_directory;

/**
 * Makes an empty directory of at most max_entries entries, each at most max_entry_size bytes (SIZE_MAX: no
 * limit). alloc's context must outlive the directory.
 */
tessera_status tessera_memory_directory_create(tessera_memory_directory** out, const tessera_allocator* alloc,
                                               uint32_t max_entries, size_t max_entry_size);

/** Frees the directory and its entries (NULL is a no-op). Close the arrays on it first. */
tessera_status tessera_memory_directory_destroy(tessera_memory_directory* d);

/** The directory interface over d (its context is d: keep the returned struct while arrays use it). */
tessera_storage_directory tessera_memory_directory_interface(tessera_memory_directory* d);

/** The number of entries in *count. */
tessera_status tessera_memory_directory_count(const tessera_memory_directory* d, uint32_t* count);

/** Entry name's size in bytes in *size. Errors: IO (no such entry). */
tessera_status tessera_memory_directory_entry_size(const tessera_memory_directory* d, const char* name, size_t* size);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* TESSERA_PORT_TESSERA_MEMORY_H */
