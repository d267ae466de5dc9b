/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The C API (tessera/tessera.h, C99) with no heap: a 2-D float32 array is created in a caller's fixed buffer
 * (tessera_buffer), closed, reopened from the buffer's bytes alone, and a slice is read back and checked. Every
 * byte the library uses comes from an arena allocator over a static buffer. The serialized array (the first
 * buf.size bytes) is a Blosc2 cframe: sent or stored as it is, c-blosc2 and python-blosc2 open it.
 * Exit status 0 when the slice holds the values written.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tessera/tessera.h"

#define ROWS 40
#define COLS 30

/* A bump allocator over a static buffer: freeing the most recent block gives its bytes back. */
typedef struct arena {
  uint8_t* base;
  size_t capacity;
  size_t used;
  size_t high_water;
} arena;

static void* arena_allocate(void* context, size_t size, size_t alignment) {
  arena* a = (arena*)context;
  const uintptr_t base = (uintptr_t)a->base;
  uintptr_t at = (base + a->used + (alignment - 1)) & ~(uintptr_t)(alignment - 1);
  if (at - base > a->capacity || size > a->capacity - (at - base)) return NULL;
  a->used = (size_t)(at - base) + size;
  if (a->used > a->high_water) a->high_water = a->used;
  return (void*)at;
}

static void arena_deallocate(void* context, void* block, size_t size, size_t alignment) {
  arena* a = (arena*)context;
  (void)alignment;
  if ((uint8_t*)block + size == a->base + a->used) a->used = (size_t)((uint8_t*)block - a->base);
}

static uint8_t g_arena[512 * 1024]; /* the arena aligns each block itself */
static uint8_t g_frame[16 * 1024]; /* the array's home */
static float g_items[ROWS * COLS];

static int fail(const char* what, tessera_status s) {
  printf("buffer_roundtrip: %s: %s (%s)\n", what, s.message, tessera_errc_name(s.code));
  return 1;
}

int main(void) {
  arena heap = {g_arena, sizeof g_arena, 0, 0};
  tessera_allocator alloc;
  alloc.allocate = arena_allocate;
  alloc.deallocate = arena_deallocate;
  alloc.context = &heap;

  for (int i = 0; i < ROWS * COLS; ++i) g_items[i] = (float)(i % 97) * 0.5f - (float)(i / 97);

  /* Create: shape 40x30, chunks 16x30, blocks 8x15, in the fixed buffer. */
  tessera_buffer buf;
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  tessera_storage st = tessera_buffer_storage(&buf);
  tessera_array_params p;
  tessera_array_params_init(&p);
  p.ndim = 2;
  p.shape[0] = ROWS;
  p.shape[1] = COLS;
  p.chunkshape[0] = 16;
  p.chunkshape[1] = COLS;
  p.blockshape[0] = 8;
  p.blockshape[1] = 15;
  p.dtype = "<f4";
  p.durable = 0; /* the reference's compact in-place layout: the right choice for RAM */
  tessera_fill fill;
  fill.kind = TESSERA_FILL_BUFFER;
  fill.data = g_items;
  fill.size = sizeof g_items;
  tessera_array* a = NULL;
  tessera_status s = tessera_array_create(&a, &st, &alloc, &p, &fill);
  if (s.code != TESSERA_OK) return fail("create", s);
  s = tessera_array_close(a);
  if (s.code != TESSERA_OK) return fail("close", s);
  const size_t frame_len = buf.size;
  printf("serialized: %u bytes in the buffer (raw items: %u bytes); arena high water %u bytes\n",
         (unsigned)frame_len, (unsigned)sizeof g_items, (unsigned)heap.high_water);

  /* Reopen from the bytes alone: a new buffer struct over the same memory, holding frame_len bytes. */
  tessera_buffer again;
  tessera_buffer_init(&again, g_frame, sizeof g_frame, frame_len);
  tessera_storage st2 = tessera_buffer_storage(&again);
  s = tessera_array_open(&a, &st2, &alloc, NULL);
  if (s.code != TESSERA_OK) return fail("open", s);
  tessera_array_info info;
  s = tessera_array_info_get(a, &info);
  if (s.code != TESSERA_OK) return fail("info", s);
  printf("reopened: shape (%lld, %lld), dtype %.*s, %lld chunks\n", (long long)info.shape[0],
         (long long)info.shape[1], (int)info.dtype_len, info.dtype, (long long)info.nchunks);
  int wrong = info.ndim != 2 || info.shape[0] != ROWS || info.shape[1] != COLS || info.itemsize != 4 ||
              info.dtype_len != 3 || memcmp(info.dtype, "<f4", 3) != 0;

  /* The slice [14:19, 12:17]: crosses a chunk boundary (row 16) and a block boundary (column 15). */
  const int64_t start[2] = {14, 12}, stop[2] = {19, 17};
  float slice[5 * 5];
  s = tessera_array_slice_get(a, start, stop, slice, sizeof slice);
  if (s.code != TESSERA_OK) return fail("slice", s);
  for (int r = 0; r < 5; ++r) {
    printf("[%2d, 12:17]:", 14 + r);
    for (int c = 0; c < 5; ++c) {
      const float v = slice[r * 5 + c];
      printf(" %7.1f", (double)v);
      wrong += v != g_items[(14 + r) * COLS + 12 + c];
    }
    printf("\n");
  }
  s = tessera_array_close(a);
  if (s.code != TESSERA_OK) return fail("close", s);
  if (wrong != 0) printf("buffer_roundtrip: %d mismatches\n", wrong);
  return wrong == 0 ? 0 : 1;
}
