/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A logger's writes through the C API (tessera/tessera.h, C99) with no heap: a 2-D int16 array of zeros is
 * created in a caller's fixed buffer (tessera_buffer), a slice is written and rows are appended, committed
 * together (auto-commit off), and the array reopened from the buffer's bytes reads them back. Every byte the
 * library uses comes from an arena allocator over a static buffer. On bare metal, ci/stack.py measures this
 * image's writing entry points (tessera_array_slice_set, tessera_array_append, tessera_array_commit).
 * Exit status 0 when the values read back are the ones written.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tessera/tessera.h"

#define ROWS 24
#define COLS 16
#define MORE 8 /* rows appended */

/* A bump allocator over a static buffer: freeing the most recent block gives its bytes back. */
typedef struct arena {
  uint8_t* base;
  size_t capacity;
  size_t used;
} arena;

static void* arena_allocate(void* context, size_t size, size_t alignment) {
  arena* a = (arena*)context;
  const uintptr_t base = (uintptr_t)a->base;
  uintptr_t at = (base + a->used + (alignment - 1)) & ~(uintptr_t)(alignment - 1);
  if (at - base > a->capacity || size > a->capacity - (at - base)) return NULL;
  a->used = (size_t)(at - base) + size;
  return (void*)at;
}

static void arena_deallocate(void* context, void* block, size_t size, size_t alignment) {
  arena* a = (arena*)context;
  (void)alignment;
  if ((uint8_t*)block + size == a->base + a->used) a->used = (size_t)((uint8_t*)block - a->base);
}

static uint8_t g_arena[256 * 1024]; /* the arena aligns each block itself */
static uint8_t g_frame[16 * 1024];  /* the array's home */

static int fail(const char* what, tessera_status s) {
  printf("buffer_update: %s: %s (%s)\n", what, s.message, tessera_errc_name(s.code));
  return 1;
}

int main(void) {
  arena heap = {g_arena, sizeof g_arena, 0};
  tessera_allocator alloc;
  alloc.allocate = arena_allocate;
  alloc.deallocate = arena_deallocate;
  alloc.context = &heap;

  /* Create: shape 24x16 of zeros, chunks 8x16, blocks 4x16, in the fixed buffer. */
  tessera_buffer buf;
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  tessera_storage st = tessera_buffer_storage(&buf);
  tessera_array_params p;
  tessera_array_params_init(&p);
  p.ndim = 2;
  p.shape[0] = ROWS;
  p.shape[1] = COLS;
  p.chunkshape[0] = 8;
  p.chunkshape[1] = COLS;
  p.blockshape[0] = 4;
  p.blockshape[1] = COLS;
  p.dtype = "<i2";
  tessera_fill fill;
  fill.kind = TESSERA_FILL_ZEROS;
  fill.data = NULL;
  fill.size = 0;
  tessera_array* a = NULL;
  tessera_status s = tessera_array_create(&a, &st, &alloc, &p, &fill);
  if (s.code != TESSERA_OK) return fail("create", s);

  /* The writes, one commit for both: the slice [5:11, 3:9] (across a chunk boundary at row 8), then MORE rows. */
  tessera_array_set_auto_commit(a, 0);
  const int64_t start[2] = {5, 3}, stop[2] = {11, 9};
  int16_t patch[6 * 6];
  for (int i = 0; i < 6 * 6; ++i) patch[i] = (int16_t)(100 + i);
  s = tessera_array_slice_set(a, start, stop, patch, sizeof patch);
  if (s.code != TESSERA_OK) return fail("slice_set", s);
  int16_t rows[MORE * COLS];
  for (int i = 0; i < MORE * COLS; ++i) rows[i] = (int16_t)(-i);
  s = tessera_array_append(a, 0, MORE, rows, sizeof rows);
  if (s.code != TESSERA_OK) return fail("append", s);
  s = tessera_array_commit(a);
  if (s.code != TESSERA_OK) return fail("commit", s);
  s = tessera_array_close(a);
  if (s.code != TESSERA_OK) return fail("close", s);
  printf("written: %u bytes in the buffer\n", (unsigned)buf.size);

  /* Reopened from the bytes alone: the slice and the appended rows read back. */
  tessera_buffer again;
  tessera_buffer_init(&again, g_frame, sizeof g_frame, buf.size);
  tessera_storage st2 = tessera_buffer_storage(&again);
  s = tessera_array_open(&a, &st2, &alloc, NULL);
  if (s.code != TESSERA_OK) return fail("open", s);
  int wrong = 0;
  int16_t got[6 * 6];
  s = tessera_array_slice_get(a, start, stop, got, sizeof got);
  if (s.code != TESSERA_OK) return fail("slice_get", s);
  wrong += memcmp(got, patch, sizeof patch) != 0;
  const int64_t tail_start[2] = {ROWS, 0}, tail_stop[2] = {ROWS + MORE, COLS};
  int16_t tail[MORE * COLS];
  s = tessera_array_slice_get(a, tail_start, tail_stop, tail, sizeof tail);
  if (s.code != TESSERA_OK) return fail("slice_get", s);
  wrong += memcmp(tail, rows, sizeof rows) != 0;
  const int64_t zero_start[2] = {0, 0}, zero_stop[2] = {1, COLS};
  int16_t first[COLS];
  s = tessera_array_slice_get(a, zero_start, zero_stop, first, sizeof first);
  if (s.code != TESSERA_OK) return fail("slice_get", s);
  for (int c = 0; c < COLS; ++c) wrong += first[c] != 0;
  s = tessera_array_close(a);
  if (s.code != TESSERA_OK) return fail("close", s);
  printf("read back: the slice, %d appended rows and the zeros: %s\n", MORE, wrong == 0 ? "as written" : "WRONG");
  return wrong == 0 ? 0 : 1;
}
