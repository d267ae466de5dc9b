/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tiny user program in C99, built against an installed Tessera through its C API only (tessera/tessera.h and
 * the ports' C headers): by tests/consumer/package/ (find_package) and by ci/package.sh (find_package and a
 * plain `cc` with `pkg-config --cflags --libs`, against the installed Debian package). It checks that the
 * library is the one its headers describe (version, TESSERA_MAX_DIMS, struct layout), creates a 2-D int32 array
 * in memory with the best codec this build has, reads a slice back, compares, and prints one line the tests
 * check ("tessera consumer (C): OK ... with <codec>"). Optional parts, by compile definition:
 *   TESSERA_CONSUMER_MEMORY  the array goes into a growable buffer of the memory port (tessera_memory.h)
 *   TESSERA_CONSUMER_POSIX   the allocator is the POSIX port's malloc, and the array runs on its thread pool
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tessera/tessera.h"
#if defined(TESSERA_CONSUMER_MEMORY)
#include "tessera/port/tessera_memory.h"
#endif
#if defined(TESSERA_CONSUMER_POSIX)
#include "tessera/port/tessera_posix.h"
#endif

#define ROWS 64
#define COLS 48

#if !defined(TESSERA_CONSUMER_POSIX)
/* A bump allocator over a static buffer (when the POSIX port is not linked). */
typedef struct arena {
  uint8_t* base;
  size_t capacity;
  size_t used;
} arena;

static void* arena_allocate(void* context, size_t size, size_t alignment) {
  arena* a = (arena*)context;
  const uintptr_t base = (uintptr_t)a->base;
  const uintptr_t at = (base + a->used + (alignment - 1)) & ~(uintptr_t)(alignment - 1);
  if (at - base > a->capacity || size > a->capacity - (at - base)) return NULL;
  a->used = (size_t)(at - base) + size;
  return (void*)at;
}

static void arena_deallocate(void* context, void* block, size_t size, size_t alignment) {
  arena* a = (arena*)context;
  (void)alignment;
  if ((uint8_t*)block + size == a->base + a->used) a->used = (size_t)((uint8_t*)block - a->base);
}

static uint8_t g_arena[1024 * 1024];
#endif
#if !defined(TESSERA_CONSUMER_MEMORY)
static uint8_t g_frame[64 * 1024]; /* the array's home: a fixed buffer */
#endif
static int32_t g_items[ROWS * COLS];

static int fail(const char* what, tessera_status s) {
  printf("tessera consumer (C): FAILED at %s: %s (%s)\n", what, s.message, tessera_errc_name(s.code));
  return 1;
}

int main(void) {
  char want[32];
  sprintf(want, "%d.%d.%d", TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR, TESSERA_VERSION_PATCH);
  if (strcmp(tessera_version(), want) != 0) {
    printf("tessera consumer (C): FAILED: the library is %s, its headers say %s\n", tessera_version(), want);
    return 1;
  }
  tessera_status s = tessera_layout_check(TESSERA_LAYOUT);
  if (s.code != TESSERA_OK) return fail("tessera_layout_check", s);

#if defined(TESSERA_CONSUMER_POSIX)
  const tessera_allocator alloc = tessera_posix_allocator();
#else
  arena heap = {g_arena, sizeof g_arena, 0};
  tessera_allocator alloc;
  memset(&alloc, 0, sizeof alloc);
  alloc.allocate = arena_allocate;
  alloc.deallocate = arena_deallocate;
  alloc.context = &heap;
#endif

  for (int i = 0; i < ROWS * COLS; ++i) g_items[i] = i * 7 - 1000;

#if defined(TESSERA_CONSUMER_MEMORY)
  tessera_memory_buffer* mb = NULL;
  s = tessera_memory_buffer_create(&mb, &alloc, SIZE_MAX);
  if (s.code != TESSERA_OK) return fail("tessera_memory_buffer_create", s);
  tessera_storage st = tessera_memory_buffer_storage(mb);
#else
  tessera_buffer buf;
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  tessera_storage st = tessera_buffer_storage(&buf);
#endif

  tessera_array_params p;
  tessera_array_params_init(&p);
  p.ndim = 2;
  p.shape[0] = ROWS;
  p.shape[1] = COLS;
  p.chunkshape[0] = 32;
  p.chunkshape[1] = COLS;
  p.blockshape[0] = 8;
  p.blockshape[1] = 24;
  p.dtype = "<i4";
  /* The best codec of this build: the package's compile definitions say which libraries it has. */
#if defined(TESSERA_HAVE_ZSTD) && TESSERA_HAVE_ZSTD
  p.codec = TESSERA_CODEC_ZSTD;
  const char* codec = "zstd";
#elif defined(TESSERA_HAVE_LZ4) && TESSERA_HAVE_LZ4
  p.codec = TESSERA_CODEC_LZ4;
  const char* codec = "lz4";
#else
  p.codec = TESSERA_CODEC_BLOSCLZ;
  const char* codec = "blosclz";
#endif
  tessera_fill fill;
  memset(&fill, 0, sizeof fill);
  fill.kind = TESSERA_FILL_BUFFER;
  fill.data = g_items;
  fill.size = sizeof g_items;
#if defined(TESSERA_CONSUMER_POSIX)
  tessera_thread_pool* pool = NULL;
  s = tessera_thread_pool_create(&pool, 2);
  if (s.code != TESSERA_OK) return fail("tessera_thread_pool_create", s);
  const tessera_executor exec = tessera_thread_pool_executor(pool);
  p.executor = &exec;
#endif
  tessera_array* a = NULL;
  s = tessera_array_create(&a, &st, &alloc, &p, &fill);
  if (s.code != TESSERA_OK) return fail("tessera_array_create", s);

  /* A slice across a chunk boundary (row 32) and a block boundary (column 24). */
  const int64_t start[2] = {30, 20}, stop[2] = {35, 27};
  int32_t slice[5 * 7];
  s = tessera_array_slice_get(a, start, stop, slice, sizeof slice);
  if (s.code != TESSERA_OK) return fail("tessera_array_slice_get", s);
  int wrong = 0;
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 7; ++c) wrong += slice[r * 7 + c] != g_items[(30 + r) * COLS + 20 + c];
  tessera_array_info info;
  s = tessera_array_info_get(a, &info);
  if (s.code != TESSERA_OK) return fail("tessera_array_info_get", s);
  s = tessera_array_close(a);
  if (s.code != TESSERA_OK) return fail("tessera_array_close", s);
#if defined(TESSERA_CONSUMER_POSIX)
  s = tessera_thread_pool_destroy(pool);
  if (s.code != TESSERA_OK) return fail("tessera_thread_pool_destroy", s);
#endif
#if defined(TESSERA_CONSUMER_MEMORY)
  tessera_memory_buffer_destroy(mb);
#endif
  if (wrong != 0) {
    printf("tessera consumer (C): FAILED: %d items of the slice differ\n", wrong);
    return 1;
  }
  printf("tessera consumer (C): OK: tessera %s, max dims %d, %lld chunks, %lld -> %lld bytes with %s\n",
         tessera_version(), tessera_max_dims(), (long long)info.nchunks, (long long)sizeof g_items,
         (long long)info.cbytes, codec);
  return 0;
}
