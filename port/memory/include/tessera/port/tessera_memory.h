/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file tessera_memory.h
 * @brief The memory port in C (C99): a RAM buffer that grows as a ::tessera_storage (an array serialized into
 * memory without guessing a capacity), and a directory of RAM buffers as a ::tessera_storage_directory, the home
 * of a sparse array without a filesystem (tests, RAM caches, firmware). Freestanding: every byte from the
 * caller's allocator. Link tessera::memory.
 */
#ifndef TESSERA_PORT_TESSERA_MEMORY_H
#define TESSERA_PORT_TESSERA_MEMORY_H

#include "tessera/tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A RAM buffer that grows through an allocator (opaque; tessera::growable_buffer). */
typedef struct tessera_memory_buffer tessera_memory_buffer;

/**
 * Makes an empty buffer that grows (geometrically) from alloc up to max_size bytes (SIZE_MAX: no limit; past
 * it writes fail with ::TESSERA_ERR_NO_SPACE). alloc's context must outlive the buffer and its taken bytes.
 */
tessera_status tessera_memory_buffer_create(tessera_memory_buffer** out, const tessera_allocator* alloc,
                                            size_t max_size);

/** Frees the buffer and the bytes it still holds (NULL is a no-op). Close the arrays on it first. */
void tessera_memory_buffer_destroy(tessera_memory_buffer* b);

/** The storage over b (its context is inside b: valid until destroy). Has a view: frames are read in place. */
tessera_storage tessera_memory_buffer_storage(tessera_memory_buffer* b);

/** b's content: *data (NULL when empty) and *size, valid until the next write to b, take or destroy. */
tessera_status tessera_memory_buffer_bytes(const tessera_memory_buffer* b, const uint8_t** data, size_t* size);

/** Bytes taken out of a buffer: the caller owns them and frees them with ::tessera_memory_bytes_free. */
typedef struct tessera_memory_bytes {
  uint8_t* data;            /**< the content (NULL when empty) */
  size_t size;              /**< bytes of content: e.g. a serialized array, the frame to send or store */
  size_t capacity;          /**< bytes allocated at data */
  tessera_allocator alloc;  /**< where they came from (they go back there) */
} tessera_memory_bytes;

/**
 * Moves b's content into *out without a copy; b is left empty (its storage then reads as empty: close the
 * arrays on it first).
 */
tessera_status tessera_memory_buffer_take(tessera_memory_buffer* b, tessera_memory_bytes* out);

/** Gives taken bytes back to their allocator; *bytes is left empty (NULL, or empty bytes: a no-op). */
void tessera_memory_bytes_free(tessera_memory_bytes* bytes);

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

/** The directory interface over d (its context is d: keep the returned struct while arrays use it); for NULL,
 * one with every callback NULL, which arrays refuse. */
tessera_storage_directory tessera_memory_directory_interface(tessera_memory_directory* d);

/** The number of entries in *count. */
tessera_status tessera_memory_directory_count(const tessera_memory_directory* d, uint32_t* count);

/** Entry name's size in bytes in *size. Errors: IO (no such entry). */
tessera_status tessera_memory_directory_entry_size(const tessera_memory_directory* d, const char* name, size_t* size);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* TESSERA_PORT_TESSERA_MEMORY_H */
