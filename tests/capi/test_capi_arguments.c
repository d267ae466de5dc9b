/* SPDX-License-Identifier: BSD-3-Clause */
/* The C API's argument checks, in C99 on every target: each call with each pointer argument NULL in turn (a
 * table of calls, one row per function) and with invalid values (parameters, targets, storages, allocators,
 * executors, chunks), asserting the exact status code, that the call leaves a frame it was given untouched, frees
 * what it allocated and clears its out handle. Small in RAM (the Cortex-M4 image): two 256 KiB arenas,
 * 8 KiB frames. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tessera/tessera.h"

#include "capi_check.h"


/* Two arenas: the fixture's (long-lived) and the calls' (empty again after each call, so that it never
 * fragments). Each fits an array that writes (BloscLZ's table alone is 64 KiB). */
#define ARENA_BYTES (256u * 1024u)
static uint64_t g_arena_memory[ARENA_BYTES / 8];
static uint64_t g_fixture_memory[ARENA_BYTES / 8];
static test_arena g_arena;
static test_arena g_fixture_arena;
static tessera_allocator g_al;
static tessera_allocator g_fixture_al;

/* ---- The fixture: a writable 8 x 10 "<i4" array in a buffer (chunks 4 x 5, blocks 2 x 5), a view over the same
 * frame, one of its chunks, and a second buffer for the calls that make arrays. ------------------------------- */

#define FRAME_BYTES (8u * 1024u)
#define ROWS 8
#define COLS 10
static uint8_t g_frame[FRAME_BYTES];
static uint8_t g_frame_before[FRAME_BYTES];
static uint8_t g_frame_b[FRAME_BYTES];
static tessera_buffer g_buf;
static tessera_buffer g_buf_b;
static tessera_storage g_st;
static tessera_storage g_st_b;
static tessera_array* g_a;
static tessera_array_view* g_v;
static int32_t g_items[ROWS * COLS];
static int32_t g_out[ROWS * COLS];
static uint8_t g_chunk[512];
static uint8_t g_chunk_b[512]; /* a chunk encoded by a case */
static size_t g_chunk_len;
static tessera_array* g_made; /* the out handle of the calls that make arrays */
static tessera_array_view* g_made_view;
static tessera_storage_directory g_dir; /* never reached: every row with it fails before the directory is used */

static void params_grid(tessera_array_params* p) {
  tessera_array_params_init(p);
  p->ndim = 2;
  p->shape[0] = ROWS;
  p->shape[1] = COLS;
  p->chunkshape[0] = 4;
  p->chunkshape[1] = 5;
  p->blockshape[0] = 2;
  p->blockshape[1] = 5;
  p->dtype = "<i4";
  p->durable = 0;
}

static void arena_reset(void) {
  g_al = test_arena_init(&g_arena, g_arena_memory, sizeof g_arena_memory);
  g_fixture_al = test_arena_init(&g_fixture_arena, g_fixture_memory, sizeof g_fixture_memory);
}

/* Builds the fixture; returns 0 (and records a failure) when it cannot. */
static int fixture_open(void) {
  tessera_array_params p;
  tessera_fill f;
  int i;
  tessera_status s;
  arena_reset();
  for (i = 0; i < ROWS * COLS; ++i) g_items[i] = i * 7 - 3;
  tessera_buffer_init(&g_buf, g_frame, sizeof g_frame, 0);
  g_st = tessera_buffer_storage(&g_buf);
  tessera_buffer_init(&g_buf_b, g_frame_b, sizeof g_frame_b, 0);
  g_st_b = tessera_buffer_storage(&g_buf_b);
  params_grid(&p);
  f.kind = TESSERA_FILL_BUFFER;
  f.data = g_items;
  f.size = sizeof g_items;
  s = tessera_array_create(&g_a, &g_st, &g_fixture_al, &p, &f);
  if (s.code == TESSERA_OK) s = tessera_array_chunk_read(g_a, 0, g_chunk, sizeof g_chunk, &g_chunk_len);
  if (s.code == TESSERA_OK) s = tessera_array_view_open(&g_v, g_frame, g_buf.size, &g_fixture_al, 0);
  if (s.code != TESSERA_OK) {
    printf("fixture: %s (%d): %s\n", tessera_errc_name(s.code), (int)s.code, s.message);
    ++g_case_failures;
    return 0;
  }
  memset(&g_dir, 0, sizeof g_dir);
  memcpy(g_frame_before, g_frame, sizeof g_frame);
  return 1;
}

static void fixture_close(void) {
  tessera_array_view_close(g_v);
  g_v = NULL;
  CHECK(tessera_array_close(g_a).code == TESSERA_OK);
  g_a = NULL;
  CHECK(g_arena.live == 0 && g_fixture_arena.live == 0);
}

/* The fixture's frame as it was built: same size, same bytes. */
static int frame_unchanged(void) {
  return g_buf.size != 0 && memcmp(g_frame, g_frame_before, sizeof g_frame) == 0;
}

/* ---- The table: one row per function taking pointers. A row's call passes NULL for its pointer argument number
 * `nul` (0 the first pointer argument, 1 the next, ...; NONE: none) and valid arguments otherwise. ------------ */

#define NONE 99u
#define P(i, valid) (nul == (i) ? NULL : (valid))

static const int64_t k_start[2] = {1, 2};
static const int64_t k_stop[2] = {3, 7};
static const int64_t k_coords[2] = {2, 3};
static const int64_t k_shape[2] = {ROWS, COLS};
static const int64_t k_rows[2] = {0, 5};
static const int64_t k_cols[3] = {9, 0, 4};
static const int64_t* const k_indices[2] = {k_rows, k_cols};
static const int64_t k_counts[2] = {2, 3};
static const uint8_t k_axes[3] = {1, 0, 0};
static const uint8_t k_meta[3] = {0x93, 0x01, 0x02};
static const int64_t k_buffer_shape[2] = {4, 6};
static const int64_t k_buffer_start[2] = {1, 1};

static tessera_array_target target_b(void) {
  tessera_buffer_init(&g_buf_b, g_frame_b, sizeof g_frame_b, 0);
  return tessera_array_target_contiguous(&g_st_b);
}

static tessera_status call_create(unsigned nul) {
  tessera_array_params p;
  tessera_buffer_init(&g_buf_b, g_frame_b, sizeof g_frame_b, 0);
  params_grid(&p);
  return tessera_array_create(P(0, &g_made), P(1, &g_st_b), P(2, &g_al), P(3, &p), NULL);
}
static tessera_status call_open(unsigned nul) {
  return tessera_array_open(P(0, &g_made), P(1, &g_st), P(2, &g_al), NULL);
}
static tessera_status call_create_sparse(unsigned nul) {
  tessera_array_params p;
  params_grid(&p);
  return tessera_array_create_sparse(P(0, &g_made), P(1, &g_dir), P(2, &g_al), P(3, &p), NULL);
}
static tessera_status call_open_sparse(unsigned nul) {
  return tessera_array_open_sparse(P(0, &g_made), P(1, &g_dir), P(2, &g_al), NULL);
}
static tessera_status call_open_again(unsigned nul) {
  return tessera_array_open_again(P(0, &g_made), P(1, g_a), P(2, &g_al), NULL);
}
static tessera_status call_commit(unsigned nul) { return tessera_array_commit(P(0, g_a)); }
static tessera_status call_compact(unsigned nul) { return tessera_array_compact(P(0, g_a)); }
static tessera_status call_refresh(unsigned nul) { return tessera_array_refresh(P(0, g_a)); }
static tessera_status call_info_get(unsigned nul) {
  tessera_array_info info;
  return tessera_array_info_get(P(0, g_a), P(1, &info));
}
static tessera_status call_read(unsigned nul) {
  return tessera_array_read(P(0, g_a), P(1, (void*)g_out), sizeof g_out);
}
static tessera_status call_slice_get(unsigned nul) {
  return tessera_array_slice_get(P(0, g_a), P(1, k_start), P(2, k_stop), P(3, (void*)g_out), 2 * 5 * 4);
}
static tessera_status call_slice_set(unsigned nul) {
  return tessera_array_slice_set(P(0, g_a), P(1, k_start), P(2, k_stop), P(3, (const void*)g_items), 2 * 5 * 4);
}
static tessera_status call_append(unsigned nul) {
  return tessera_array_append(P(0, g_a), 0, 1, P(1, (const void*)g_items), COLS * 4);
}
static tessera_status call_resize(unsigned nul) { return tessera_array_resize(P(0, g_a), P(1, k_shape)); }
static tessera_status call_meta_get(unsigned nul) {
  const void* content = NULL;
  size_t size = 0;
  return tessera_array_meta_get(P(0, g_a), P(1, "b2nd"), P(2, &content), P(3, &size));
}
static tessera_status call_meta_set(unsigned nul) {
  return tessera_array_meta_set(P(0, g_a), P(1, "b2nd"), P(2, (const void*)k_meta), sizeof k_meta);
}
static tessera_status call_vlmeta_size(unsigned nul) {
  size_t size = 0;
  return tessera_array_vlmeta_size(P(0, g_a), P(1, "missing"), P(2, &size));
}
static tessera_status call_vlmeta_get(unsigned nul) {
  return tessera_array_vlmeta_get(P(0, g_a), P(1, "missing"), P(2, (void*)g_out), sizeof g_out, NULL);
}
static tessera_status call_vlmeta_set(unsigned nul) {
  return tessera_array_vlmeta_set(P(0, g_a), P(1, "note"), P(2, (const void*)k_meta), sizeof k_meta);
}
static tessera_status call_vlmeta_delete(unsigned nul) { return tessera_array_vlmeta_delete(P(0, g_a), P(1, "note")); }
static tessera_status call_meta_count(unsigned nul) {
  uint32_t count = 0;
  return tessera_array_meta_count(P(0, g_a), P(1, &count));
}
static tessera_status call_meta_name(unsigned nul) {
  char name[32];
  return tessera_array_meta_name(P(0, g_a), 0, P(1, name), sizeof name, NULL);
}
static tessera_status call_meta_exists(unsigned nul) {
  int32_t exists = 0;
  return tessera_array_meta_exists(P(0, g_a), P(1, "b2nd"), P(2, &exists));
}
static tessera_status call_vlmeta_count(unsigned nul) {
  uint32_t count = 0;
  return tessera_array_vlmeta_count(P(0, g_a), P(1, &count));
}
static tessera_status call_vlmeta_name(unsigned nul) {
  char name[32];
  return tessera_array_vlmeta_name(P(0, g_a), 0, P(1, name), sizeof name, NULL);
}
static tessera_status call_vlmeta_exists(unsigned nul) {
  int32_t exists = 0;
  return tessera_array_vlmeta_exists(P(0, g_a), P(1, "note"), P(2, &exists));
}
static tessera_status call_element_get(unsigned nul) {
  return tessera_array_element_get(P(0, g_a), P(1, k_coords), P(2, (void*)g_out), 4);
}
static tessera_status call_element_set(unsigned nul) {
  return tessera_array_element_set(P(0, g_a), P(1, k_coords), P(2, (const void*)g_items), 4);
}
static tessera_status call_orthogonal_get(unsigned nul) {
  return tessera_array_orthogonal_get(P(0, g_a), P(1, k_indices), P(2, k_counts), P(3, (void*)g_out), 2 * 3 * 4);
}
static tessera_status call_orthogonal_set(unsigned nul) {
  return tessera_array_orthogonal_set(P(0, g_a), P(1, k_indices), P(2, k_counts), P(3, (const void*)g_items), 2 * 3 * 4);
}
/* The box [1, 3) x [2, 7) at (1, 1) of a 4 x 6 buffer; buffer_start may be NULL (the leading corner). */
static tessera_status call_slice_get_into(unsigned nul) {
  return tessera_array_slice_get_into(P(0, g_a), P(1, k_start), P(2, k_stop), P(3, (void*)g_out), 4 * 6 * 4,
                                      P(4, k_buffer_shape), k_buffer_start);
}
static tessera_status call_slice_set_from(unsigned nul) {
  return tessera_array_slice_set_from(P(0, g_a), P(1, k_start), P(2, k_stop), P(3, (const void*)g_items), 4 * 6 * 4,
                                      P(4, k_buffer_shape), k_buffer_start);
}
static tessera_status call_resize_at(unsigned nul) {
  return tessera_array_resize_at(P(0, g_a), P(1, k_shape), NULL); /* start NULL: at the ends */
}
static tessera_status call_insert(unsigned nul) {
  return tessera_array_insert(P(0, g_a), 0, 4, 4, P(1, (const void*)g_items), 4 * COLS * 4);
}
static tessera_status call_delete(unsigned nul) { return tessera_array_delete(P(0, g_a), 0, 4, 4); }
static tessera_status call_params_get(unsigned nul) {
  tessera_array_params p;
  return tessera_array_params_get(P(0, g_a), P(1, &p));
}
static tessera_status call_copy(unsigned nul) {
  tessera_array_target t = target_b();
  return tessera_array_copy(P(0, &g_made), P(1, &t), P(2, &g_al), P(3, g_a), NULL);
}
static tessera_status call_slice_copy(unsigned nul) {
  tessera_array_target t = target_b();
  return tessera_array_slice_copy(P(0, &g_made), P(1, &t), P(2, &g_al), P(3, g_a), P(4, k_start), P(5, k_stop), NULL);
}
static tessera_status call_concatenate(unsigned nul) {
  tessera_array_target t = target_b();
  return tessera_array_concatenate(P(0, &g_made), P(1, &t), P(2, &g_al), P(3, g_a), P(4, g_a), 0, NULL);
}
static tessera_status call_squeeze(unsigned nul) {
  tessera_array_target t = target_b();
  return tessera_array_squeeze(P(0, &g_made), P(1, &t), P(2, &g_al), P(3, g_a), NULL);
}
static tessera_status call_expand_dims(unsigned nul) {
  tessera_array_target t = target_b();
  return tessera_array_expand_dims(P(0, &g_made), P(1, &t), P(2, &g_al), P(3, g_a), P(4, k_axes), 3);
}
static tessera_status call_save(unsigned nul) {
  tessera_array_target t = target_b();
  return tessera_array_save(P(0, &g_made), P(1, &t), P(2, &g_al), P(3, g_a));
}
static tessera_status call_chunk_params_get(unsigned nul) {
  tessera_chunk_params cp;
  return tessera_array_chunk_params_get(P(0, g_a), P(1, &cp));
}
static tessera_status call_chunk_info_get(unsigned nul) {
  tessera_chunk_info ci;
  return tessera_chunk_info_get(P(0, (const void*)g_chunk), g_chunk_len, P(1, &ci));
}
static tessera_status call_chunk_encode(unsigned nul) {
  tessera_chunk_params cp;
  size_t written = 0;
  tessera_chunk_params_init(&cp);
  cp.typesize = 4;
  return tessera_chunk_encode(P(0, &g_al), P(1, &cp), P(2, (const void*)g_items), 4 * 5 * 4, P(3, (void*)g_out),
                              sizeof g_out, P(4, &written));
}
static tessera_status call_chunk_decode(unsigned nul) {
  return tessera_chunk_decode(P(0, &g_al), P(1, (const void*)g_chunk), g_chunk_len, P(2, (void*)g_out), sizeof g_out,
                              NULL);
}
static tessera_status call_array_chunk_read(unsigned nul) {
  size_t written = 0;
  return tessera_array_chunk_read(P(0, g_a), 1, P(1, (void*)g_out), sizeof g_out, P(2, &written));
}
static tessera_status call_array_chunk_decode(unsigned nul) {
  return tessera_array_chunk_decode(P(0, g_a), 1, P(1, (void*)g_out), sizeof g_out, NULL);
}
static tessera_status call_chunk_update(unsigned nul) {
  return tessera_array_chunk_update(P(0, g_a), 0, P(1, (const void*)g_chunk), g_chunk_len);
}
static tessera_status call_view_open(unsigned nul) {
  return tessera_array_view_open(P(0, &g_made_view), P(1, (const void*)g_frame), g_buf.size, P(2, &g_al), 0);
}
static tessera_status call_view_info_get(unsigned nul) {
  tessera_array_info info;
  return tessera_array_view_info_get(P(0, g_v), P(1, &info));
}
static tessera_status call_view_slice_get(unsigned nul) {
  return tessera_array_view_slice_get(P(0, g_v), P(1, k_start), P(2, k_stop), P(3, (void*)g_out), 2 * 5 * 4);
}
static tessera_status call_view_element_get(unsigned nul) {
  return tessera_array_view_element_get(P(0, g_v), P(1, k_coords), P(2, (void*)g_out), 4);
}

/* What a row's first pointer argument is. */
enum makes_kind { MAKES_NOTHING, MAKES_ARRAY, MAKES_VIEW };

/* How a row's valid call (nul NONE) is checked after its NULL calls. */
enum valid_check {
  VALID_OK,       /* succeeds, reads only */
  VALID_MAKES,    /* succeeds, makes an array (or a view), closed at once */
  VALID_SKIPPED   /* changes the fixture's array, or needs a directory: covered by test_capi_ops.c */
};

typedef struct arg_row {
  const char* name;
  tessera_status (*call)(unsigned nul);
  unsigned npointers; /* pointer arguments the call passes, each NULL in turn */
  int makes;          /* MAKES_*: the first pointer argument is an out handle, cleared on error */
  int valid;          /* an enum valid_check */
} arg_row;

static const arg_row g_rows[] = {
    {"array_create", call_create, 4, MAKES_ARRAY, VALID_MAKES},
    {"array_open", call_open, 3, MAKES_ARRAY, VALID_MAKES},
    {"array_create_sparse", call_create_sparse, 4, MAKES_ARRAY, VALID_SKIPPED},
    {"array_open_sparse", call_open_sparse, 3, MAKES_ARRAY, VALID_SKIPPED},
    {"array_open_again", call_open_again, 3, MAKES_ARRAY, VALID_MAKES},
    {"array_commit", call_commit, 1, MAKES_NOTHING, VALID_OK},
    {"array_compact", call_compact, 1, MAKES_NOTHING, VALID_SKIPPED},
    {"array_refresh", call_refresh, 1, MAKES_NOTHING, VALID_SKIPPED},
    {"array_info_get", call_info_get, 2, MAKES_NOTHING, VALID_OK},
    {"array_read", call_read, 2, MAKES_NOTHING, VALID_OK},
    {"array_slice_get", call_slice_get, 4, MAKES_NOTHING, VALID_OK},
    {"array_slice_set", call_slice_set, 4, MAKES_NOTHING, VALID_SKIPPED},
    {"array_append", call_append, 2, MAKES_NOTHING, VALID_SKIPPED},
    {"array_resize", call_resize, 2, MAKES_NOTHING, VALID_SKIPPED},
    {"array_meta_get", call_meta_get, 4, MAKES_NOTHING, VALID_OK},
    {"array_meta_set", call_meta_set, 3, MAKES_NOTHING, VALID_SKIPPED},
    {"array_vlmeta_size", call_vlmeta_size, 3, MAKES_NOTHING, VALID_SKIPPED},
    {"array_vlmeta_get", call_vlmeta_get, 3, MAKES_NOTHING, VALID_SKIPPED},
    {"array_vlmeta_set", call_vlmeta_set, 3, MAKES_NOTHING, VALID_SKIPPED},
    {"array_vlmeta_delete", call_vlmeta_delete, 2, MAKES_NOTHING, VALID_SKIPPED},
    {"array_meta_count", call_meta_count, 2, MAKES_NOTHING, VALID_OK},
    {"array_meta_name", call_meta_name, 2, MAKES_NOTHING, VALID_OK},
    {"array_meta_exists", call_meta_exists, 3, MAKES_NOTHING, VALID_OK},
    {"array_vlmeta_count", call_vlmeta_count, 2, MAKES_NOTHING, VALID_OK},
    {"array_vlmeta_name", call_vlmeta_name, 2, MAKES_NOTHING, VALID_SKIPPED}, /* the fixture has none: values */
    {"array_vlmeta_exists", call_vlmeta_exists, 3, MAKES_NOTHING, VALID_OK},
    {"array_element_get", call_element_get, 3, MAKES_NOTHING, VALID_OK},
    {"array_element_set", call_element_set, 3, MAKES_NOTHING, VALID_SKIPPED},
    {"array_orthogonal_get", call_orthogonal_get, 4, MAKES_NOTHING, VALID_OK},
    {"array_orthogonal_set", call_orthogonal_set, 4, MAKES_NOTHING, VALID_SKIPPED},
    {"array_slice_get_into", call_slice_get_into, 5, MAKES_NOTHING, VALID_OK},
    {"array_slice_set_from", call_slice_set_from, 5, MAKES_NOTHING, VALID_SKIPPED},
    {"array_resize_at", call_resize_at, 2, MAKES_NOTHING, VALID_SKIPPED},
    {"array_insert", call_insert, 2, MAKES_NOTHING, VALID_SKIPPED},
    {"array_delete", call_delete, 1, MAKES_NOTHING, VALID_SKIPPED},
    {"array_params_get", call_params_get, 2, MAKES_NOTHING, VALID_OK},
    {"array_copy", call_copy, 4, MAKES_ARRAY, VALID_MAKES},
    {"array_slice_copy", call_slice_copy, 6, MAKES_ARRAY, VALID_MAKES},
    {"array_concatenate", call_concatenate, 5, MAKES_ARRAY, VALID_MAKES},
    {"array_squeeze", call_squeeze, 4, MAKES_ARRAY, VALID_MAKES},
    {"array_expand_dims", call_expand_dims, 5, MAKES_ARRAY, VALID_MAKES},
    {"array_save", call_save, 4, MAKES_ARRAY, VALID_MAKES},
    {"array_chunk_params_get", call_chunk_params_get, 2, MAKES_NOTHING, VALID_OK},
    {"chunk_info_get", call_chunk_info_get, 2, MAKES_NOTHING, VALID_OK},
    {"chunk_encode", call_chunk_encode, 5, MAKES_NOTHING, VALID_OK},
    {"chunk_decode", call_chunk_decode, 3, MAKES_NOTHING, VALID_OK},
    {"array_chunk_read", call_array_chunk_read, 3, MAKES_NOTHING, VALID_OK},
    {"array_chunk_decode", call_array_chunk_decode, 2, MAKES_NOTHING, VALID_OK},
    {"array_chunk_update", call_chunk_update, 2, MAKES_NOTHING, VALID_SKIPPED},
    {"array_view_open", call_view_open, 3, MAKES_VIEW, VALID_MAKES},
    {"array_view_info_get", call_view_info_get, 2, MAKES_NOTHING, VALID_OK},
    {"array_view_slice_get", call_view_slice_get, 4, MAKES_NOTHING, VALID_OK},
    {"array_view_element_get", call_view_element_get, 3, MAKES_NOTHING, VALID_OK},
};

/* Every row with each of its pointer arguments NULL: INVALID_ARGUMENT with a message, the fixture's frame and
 * the arena as they were, the out handle cleared; then the valid call, which must succeed. */
static void test_null_arguments(void) {
  size_t r;
  unsigned i;
  if (!fixture_open()) return;
  for (r = 0; r < sizeof(g_rows) / sizeof(g_rows[0]); ++r) {
    const arg_row* row = &g_rows[r];
    long live = g_arena.live;
    long fixture_live = g_fixture_arena.live;
    for (i = 0; i < row->npointers; ++i) {
      tessera_status s;
      g_made = (tessera_array*)g_out; /* not NULL: a call must clear it */
      g_made_view = (tessera_array_view*)g_out;
      s = row->call(i);
      if (s.code != TESSERA_ERR_INVALID_ARGUMENT || s.message == NULL || s.message[0] == '\0') {
        printf("  %s with pointer argument %u NULL -> %s (%d)\n", row->name, i, tessera_errc_name(s.code), (int)s.code);
        ++g_case_failures;
      }
      CHECK(frame_unchanged());
      CHECK(g_arena.live == live && g_fixture_arena.live == fixture_live);
      if (row->makes == MAKES_ARRAY && i != 0) CHECK(g_made == NULL);
      if (row->makes == MAKES_VIEW && i != 0) CHECK(g_made_view == NULL);
    }
    if (row->valid != VALID_SKIPPED) {
      tessera_status s;
      g_made = NULL;
      g_made_view = NULL;
      s = row->call(NONE);
      if (s.code != TESSERA_OK) {
        printf("  %s valid -> %s (%d): %s\n", row->name, tessera_errc_name(s.code), (int)s.code, s.message);
        ++g_case_failures;
      }
      if (row->valid == VALID_MAKES) CHECK(g_made != NULL || g_made_view != NULL);
      tessera_array_view_close(g_made_view);
      CHECK(tessera_array_close(g_made).code == TESSERA_OK);
      CHECK(frame_unchanged());
      CHECK(g_arena.live == live);
    }
  }
  fixture_close();
}

/* The calls that ignore NULL or report without failing. */
static void test_null_no_ops(void) {
  size_t written = 7;
  arena_reset();
  CHECK(tessera_array_close(NULL).code == TESSERA_OK);
  tessera_array_view_close(NULL);
  tessera_array_set_auto_commit(NULL, 1);
  CHECK(tessera_array_dirty(NULL) == 0);
  tessera_buffer_init(NULL, g_frame, sizeof g_frame, 0);
  tessera_array_params_init(NULL);
  tessera_open_options_init(NULL);
  tessera_chunk_params_init(NULL);
  CHECK(strcmp(tessera_errc_name(TESSERA_ERR_CORRUPT), "corrupt") == 0);
  CHECK(strcmp(tessera_errc_name(9999), "unknown") == 0);
  CHECK(strcmp(tessera_errc_name(-1), "unknown") == 0);
  /* NULL with size 0 is an empty buffer, not an error: an empty chunk is truncated. */
  CHECK_ERR(tessera_chunk_info_get(NULL, 0, (tessera_chunk_info*)g_out), TESSERA_ERR_TRUNCATED);
  CHECK_ERR(tessera_chunk_decode(&g_al, NULL, 0, NULL, 0, &written), TESSERA_ERR_TRUNCATED);
  CHECK(written == 0);
}

/* ---- Invalid values ----------------------------------------------------------------------------------------- */

typedef struct params_row {
  const char* name;
  void (*spoil)(tessera_array_params* p);
  int copies_check; /* the copies check it too (they ignore ndim and dtype) */
} params_row;

static char g_long_name[48];
static tessera_metalayer g_metas[TESSERA_MAX_METALAYERS + 1];
static tessera_executor g_idle_executor;

static void run_never(void* context, size_t ntasks, tessera_executor_task task, void* task_context) {
  (void)context;
  (void)ntasks;
  (void)task;
  (void)task_context;
}

static void spoil_ndim_low(tessera_array_params* p) { p->ndim = -1; }
static void spoil_ndim_high(tessera_array_params* p) { p->ndim = TESSERA_MAX_DIMS + 1; }
static char g_long_dtype[300];
static void spoil_dtype(tessera_array_params* p) { p->dtype = g_long_dtype; }
static void spoil_codec(tessera_array_params* p) { p->codec = 3; }
static void spoil_codec_high(tessera_array_params* p) { p->codec = 20; } /* below the user ids (32..255) */
static void spoil_split_low(tessera_array_params* p) { p->splitmode = 0; }
static void spoil_split_high(tessera_array_params* p) { p->splitmode = 5; }
static void spoil_nmeta(tessera_array_params* p) {
  p->metalayers = g_metas;
  p->nmetalayers = TESSERA_MAX_METALAYERS + 1;
}
static void spoil_meta_null(tessera_array_params* p) { p->nmetalayers = 1; }
static void spoil_meta_name_null(tessera_array_params* p) {
  g_metas[0].name = NULL;
  p->metalayers = g_metas;
  p->nmetalayers = 1;
}
static void spoil_meta_name_long(tessera_array_params* p) {
  g_metas[0].name = g_long_name;
  p->metalayers = g_metas;
  p->nmetalayers = 1;
}
static void spoil_meta_content(tessera_array_params* p) {
  g_metas[0].name = "extra";
  g_metas[0].content = NULL;
  g_metas[0].size = 3;
  p->metalayers = g_metas;
  p->nmetalayers = 1;
}
static void spoil_executor(tessera_array_params* p) { p->executor = &g_idle_executor; }

static const params_row g_params_rows[] = {
    {"ndim -1", spoil_ndim_low, 0},
    {"ndim past TESSERA_MAX_DIMS", spoil_ndim_high, 0},
    {"dtype of 299 bytes", spoil_dtype, 0},
    {"codec 3", spoil_codec, 1},
    {"codec 20", spoil_codec_high, 1},
    {"splitmode 0", spoil_split_low, 1},
    {"splitmode 5", spoil_split_high, 1},
    {"16 metalayers", spoil_nmeta, 1},
    {"metalayers NULL", spoil_meta_null, 1},
    {"metalayer name NULL", spoil_meta_name_null, 1},
    {"metalayer name of 40 bytes", spoil_meta_name_long, 1},
    {"metalayer content NULL", spoil_meta_content, 1},
    {"executor of 0 workers", spoil_executor, 1},
};

/* Each spoilt parameter: INVALID_ARGUMENT from create, create_sparse and (what they check) the copies. */
static void test_params(void) {
  size_t r;
  memset(g_long_dtype, 'x', sizeof g_long_dtype - 1);
  memset(g_long_name, 'n', sizeof g_long_name - 1);
  g_idle_executor.run = run_never;
  g_idle_executor.context = NULL;
  g_idle_executor.workers = 0;
  if (!fixture_open()) return;
  for (r = 0; r < sizeof(g_params_rows) / sizeof(g_params_rows[0]); ++r) {
    const params_row* row = &g_params_rows[r];
    tessera_array_params p;
    tessera_array_target t = target_b();
    long live = g_arena.live;
    tessera_status s[3];
    int k;
    memset(g_metas, 0, sizeof g_metas);
    params_grid(&p);
    row->spoil(&p);
    g_made = (tessera_array*)g_out;
    s[0] = tessera_array_create(&g_made, &g_st_b, &g_al, &p, NULL);
    CHECK(g_made == NULL);
    g_made = (tessera_array*)g_out;
    s[1] = tessera_array_create_sparse(&g_made, &g_dir, &g_al, &p, NULL);
    CHECK(g_made == NULL);
    s[2].code = TESSERA_ERR_INVALID_ARGUMENT;
    if (row->copies_check) s[2] = tessera_array_copy(&g_made, &t, &g_al, g_a, &p);
    for (k = 0; k < 3; ++k) {
      if (s[k].code != TESSERA_ERR_INVALID_ARGUMENT) {
        printf("  params %s, call %d -> %s (%d)\n", row->name, k, tessera_errc_name(s[k].code), (int)s[k].code);
        ++g_case_failures;
      }
    }
    CHECK(g_made == NULL);
    CHECK(g_buf_b.size == 0);
    CHECK(g_arena.live == live);
  }
  CHECK(frame_unchanged());
  fixture_close();
}

/* Storages, allocators, fills, options, targets and executors that are not usable. */
static void test_handles(void) {
  tessera_array_params p;
  tessera_storage st;
  tessera_allocator al;
  tessera_open_options o;
  tessera_fill f;
  tessera_array_target t;
  tessera_storage_directory dir;
  tessera_executor ex;
  tessera_array* h = NULL;
  if (!fixture_open()) return;
  params_grid(&p);
  ex.run = run_never;
  ex.context = NULL;
  ex.workers = 0;

  /* Storages without read or size; creating on one without write; opening one without write writable. */
  st = g_st_b;
  st.read = NULL;
  CHECK_ERR(tessera_array_create(&h, &st, &g_al, &p, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_open(&h, &st, &g_al, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  st = g_st_b;
  st.size = NULL;
  CHECK_ERR(tessera_array_create(&h, &st, &g_al, &p, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  st = g_st;
  st.write = NULL;
  CHECK_ERR(tessera_array_create(&h, &st, &g_al, &p, NULL), TESSERA_ERR_READ_ONLY);
  tessera_open_options_init(&o);
  o.writable = 1;
  CHECK_ERR(tessera_array_open(&h, &st, &g_al, &o), TESSERA_ERR_READ_ONLY);
  CHECK(h == NULL);

  /* Allocators without a callback, and one that refuses: the handle is the first thing allocated. */
  al = g_al;
  al.allocate = NULL;
  CHECK_ERR(tessera_array_open(&h, &g_st, &al, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_view_open(&g_made_view, g_frame, g_buf.size, &al, 0), TESSERA_ERR_INVALID_ARGUMENT);
  al = g_al;
  al.deallocate = NULL;
  CHECK_ERR(tessera_array_open_again(&h, g_a, &al, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_view_open(&g_made_view, g_frame, g_buf.size, &al, 0), TESSERA_ERR_INVALID_ARGUMENT);
  g_arena.refuse = 1;
  CHECK_ERR(tessera_array_open(&h, &g_st, &g_al, NULL), TESSERA_ERR_OUT_OF_MEMORY);
  CHECK_ERR(tessera_array_view_open(&g_made_view, g_frame, g_buf.size, &g_al, 0), TESSERA_ERR_OUT_OF_MEMORY);
  CHECK_ERR(tessera_array_create_sparse(&h, &g_dir, &g_al, &p, NULL), TESSERA_ERR_OUT_OF_MEMORY);
  CHECK_ERR(tessera_array_open_sparse(&h, &g_dir, &g_al, NULL), TESSERA_ERR_OUT_OF_MEMORY);
  CHECK_ERR(tessera_array_open_again(&h, g_a, &g_al, NULL), TESSERA_ERR_OUT_OF_MEMORY);
  t = target_b();
  CHECK_ERR(tessera_array_copy(&h, &t, &g_al, g_a, NULL), TESSERA_ERR_OUT_OF_MEMORY);
  g_arena.refuse = 0;
  CHECK(h == NULL && g_made_view == NULL);

  /* Fills: an unknown kind, data NULL with a size. */
  f.kind = 99;
  f.data = g_items;
  f.size = 4;
  CHECK_ERR(tessera_array_create(&h, &g_st_b, &g_al, &p, &f), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_create_sparse(&h, &g_dir, &g_al, &p, &f), TESSERA_ERR_INVALID_ARGUMENT);
  f.kind = TESSERA_FILL_VALUE;
  f.data = NULL;
  CHECK_ERR(tessera_array_create(&h, &g_st_b, &g_al, &p, &f), TESSERA_ERR_INVALID_ARGUMENT);

  /* Executors of 0 workers, wherever one is passed. */
  tessera_open_options_init(&o);
  o.executor = &ex;
  CHECK_ERR(tessera_array_open(&h, &g_st, &g_al, &o), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_open_sparse(&h, &g_dir, &g_al, &o), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_open_again(&h, g_a, &g_al, &ex), TESSERA_ERR_INVALID_ARGUMENT);

  /* Targets: both a storage and a directory, neither, a read-only storage, a storage without size. */
  memset(&dir, 0, sizeof dir);
  t = target_b();
  t.directory = &dir;
  CHECK_ERR(tessera_array_copy(&h, &t, &g_al, g_a, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  t.storage = NULL;
  t.directory = NULL;
  CHECK_ERR(tessera_array_save(&h, &t, &g_al, g_a), TESSERA_ERR_INVALID_ARGUMENT);
  st = g_st_b;
  st.write = NULL;
  t = tessera_array_target_contiguous(&st);
  CHECK_ERR(tessera_array_copy(&h, &t, &g_al, g_a, NULL), TESSERA_ERR_READ_ONLY);
  st = g_st_b;
  st.size = NULL;
  CHECK_ERR(tessera_array_copy(&h, &t, &g_al, g_a, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  t = tessera_array_target_sparse(&dir);
  CHECK(t.storage == NULL && t.directory == &dir && t.durable == 1);

  /* expand_dims: new_ndim outside 0..TESSERA_MAX_DIMS. */
  t = target_b();
  CHECK_ERR(tessera_array_expand_dims(&h, &t, &g_al, g_a, k_axes, -1), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_expand_dims(&h, &t, &g_al, g_a, k_axes, TESSERA_MAX_DIMS + 1), TESSERA_ERR_INVALID_ARGUMENT);

  CHECK(h == NULL);
  CHECK(g_buf_b.size == 0);
  CHECK(frame_unchanged());
  fixture_close();
}

/* Metalayer names too long, chunk parameters out of range, chunks that do not fit the array. */
static void test_values(void) {
  tessera_chunk_params cp;
  size_t n = 0, written = 0;
  const void* content = NULL;
  uint8_t small[16];
  uint8_t chunk[600];
  if (!fixture_open()) return;
  memset(g_long_name, 'n', sizeof g_long_name - 1);

  CHECK_ERR(tessera_array_meta_get(g_a, g_long_name, &content, &n), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_meta_set(g_a, g_long_name, k_meta, sizeof k_meta), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_vlmeta_size(g_a, g_long_name, &n), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_vlmeta_get(g_a, g_long_name, g_out, sizeof g_out, &n), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_vlmeta_set(g_a, g_long_name, k_meta, sizeof k_meta), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_vlmeta_delete(g_a, g_long_name), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_vlmeta_delete(g_a, NULL), TESSERA_ERR_INVALID_ARGUMENT);

  /* Listings: an index past the last metalayer, a name buffer without room for the NUL (*len says what is
   * needed), a bad name (*exists cleared). */
  {
    uint32_t count = 0;
    int32_t exists = 7;
    char name[4];
    REQUIRE_OK(tessera_array_meta_count(g_a, &count));
    CHECK(count == 1);
    REQUIRE_OK(tessera_array_vlmeta_count(g_a, &count));
    CHECK(count == 0);
    CHECK_ERR(tessera_array_meta_name(g_a, 1, name, sizeof name, &n), TESSERA_ERR_OUT_OF_RANGE);
    CHECK_ERR(tessera_array_vlmeta_name(g_a, 0, name, sizeof name, &n), TESSERA_ERR_OUT_OF_RANGE);
    CHECK_ERR(tessera_array_meta_name(g_a, 0, name, sizeof name, &n), TESSERA_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 4);
    CHECK_ERR(tessera_array_meta_name(g_a, 0, NULL, 0, &n), TESSERA_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 4);
    CHECK_ERR(tessera_array_meta_exists(g_a, g_long_name, &exists), TESSERA_ERR_INVALID_ARGUMENT);
    CHECK(exists == 0);
    exists = 7;
    CHECK_ERR(tessera_array_vlmeta_exists(g_a, NULL, &exists), TESSERA_ERR_INVALID_ARGUMENT);
    CHECK(exists == 0);
    REQUIRE_OK(tessera_array_meta_exists(g_a, "b2nd", &exists));
    CHECK(exists == 1);
    REQUIRE_OK(tessera_array_meta_exists(g_a, "b2ne", &exists));
    CHECK(exists == 0);
  }

  /* Slices through a larger buffer: the box outside buffer_shape, a negative extent, a buffer smaller than
   * buffer_shape; orthogonal writes with an index outside the array and a negative count; resize_at with start
   * past the shape. Each is refused before anything changes. */
  {
    const int64_t small_shape[2] = {2, 5}, negative_shape[2] = {-4, 6}, outside_start[2] = {3, 0};
    const int64_t far_rows[1] = {ROWS}, one_col[1] = {0};
    const int64_t* const far_indices[2] = {far_rows, one_col};
    const int64_t one_each[2] = {1, 1}, negative_count[2] = {-1, 1};
    const int64_t grown[2] = {ROWS + 4, COLS}, past_start[2] = {ROWS + 1, 0};
    CHECK_ERR(tessera_array_slice_get_into(g_a, k_start, k_stop, g_out, sizeof g_out, k_buffer_shape, outside_start),
              TESSERA_ERR_OUT_OF_RANGE);
    CHECK_ERR(tessera_array_slice_get_into(g_a, k_start, k_stop, g_out, sizeof g_out, negative_shape, NULL),
              TESSERA_ERR_INVALID_ARGUMENT);
    CHECK_ERR(tessera_array_slice_get_into(g_a, k_start, k_stop, g_out, 4 * 6 * 4 - 1, k_buffer_shape, NULL),
              TESSERA_ERR_BUFFER_TOO_SMALL);
    CHECK_ERR(tessera_array_slice_set_from(g_a, k_start, k_stop, g_items, sizeof g_items, small_shape, k_buffer_start),
              TESSERA_ERR_OUT_OF_RANGE);
    CHECK_ERR(tessera_array_orthogonal_set(g_a, far_indices, one_each, g_items, 4), TESSERA_ERR_OUT_OF_RANGE);
    CHECK_ERR(tessera_array_orthogonal_set(g_a, k_indices, negative_count, g_items, 4), TESSERA_ERR_INVALID_ARGUMENT);
    CHECK_ERR(tessera_array_orthogonal_set(g_a, k_indices, k_counts, g_items, 2 * 3 * 4 - 1),
              TESSERA_ERR_BUFFER_TOO_SMALL);
    CHECK_ERR(tessera_array_resize_at(g_a, grown, past_start), TESSERA_ERR_OUT_OF_RANGE);
  }

  /* Chunk encoding parameters: typesize, codec and split mode out of range; *written stays 0. */
  tessera_chunk_params_init(&cp);
  cp.typesize = 0;
  written = 5;
  CHECK_ERR(tessera_chunk_encode(&g_al, &cp, g_items, 80, chunk, sizeof chunk, &written), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(written == 0);
  cp.typesize = 256;
  CHECK_ERR(tessera_chunk_encode(&g_al, &cp, g_items, 80, chunk, sizeof chunk, &written), TESSERA_ERR_INVALID_ARGUMENT);
  tessera_chunk_params_init(&cp);
  cp.codec = 3;
  CHECK_ERR(tessera_chunk_encode(&g_al, &cp, g_items, 80, chunk, sizeof chunk, &written), TESSERA_ERR_INVALID_ARGUMENT);
  tessera_chunk_params_init(&cp);
  cp.splitmode = 0;
  CHECK_ERR(tessera_chunk_encode(&g_al, &cp, g_items, 80, chunk, sizeof chunk, &written), TESSERA_ERR_INVALID_ARGUMENT);
  cp.splitmode = 5;
  CHECK_ERR(tessera_chunk_encode(&g_al, &cp, g_items, 80, chunk, sizeof chunk, &written), TESSERA_ERR_INVALID_ARGUMENT);

  /* A chunk out smaller than the chunk: BUFFER_TOO_SMALL and the length needed (also with out NULL, size 0). */
  CHECK_ERR(tessera_array_chunk_read(g_a, 0, small, sizeof small, &written), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK(written == g_chunk_len);
  written = 0;
  CHECK_ERR(tessera_array_chunk_read(g_a, 0, NULL, 0, &written), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK(written == g_chunk_len);
  CHECK_ERR(tessera_array_chunk_read(g_a, 4, g_out, sizeof g_out, &written), TESSERA_ERR_OUT_OF_RANGE);
  CHECK_ERR(tessera_array_chunk_decode(g_a, -1, g_out, sizeof g_out, &written), TESSERA_ERR_OUT_OF_RANGE);

  /* chunk_update: a chunk of another size, a size that is not its cbytes, a chunk number outside the array, a
   * header that is cut. */
  tessera_chunk_params_init(&cp);
  cp.typesize = 4;
  REQUIRE_OK(tessera_chunk_encode(&g_al, &cp, g_items, 40, chunk, sizeof chunk, &n));
  CHECK_ERR(tessera_array_chunk_update(g_a, 0, chunk, n), TESSERA_ERR_INVALID_ARGUMENT);
  memcpy(chunk, g_chunk, g_chunk_len);
  CHECK_ERR(tessera_array_chunk_update(g_a, 0, chunk, g_chunk_len + 1), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_chunk_update(g_a, -1, chunk, g_chunk_len), TESSERA_ERR_OUT_OF_RANGE);
  CHECK_ERR(tessera_array_chunk_update(g_a, 4, chunk, g_chunk_len), TESSERA_ERR_OUT_OF_RANGE);
  CHECK_ERR(tessera_array_chunk_update(g_a, 0, chunk, 10), TESSERA_ERR_TRUNCATED);

  CHECK(tessera_array_dirty(g_a) == 0);
  CHECK(frame_unchanged());
  fixture_close();
}

/* ---- A scalar (ndim 0): its calls take NULL coordinates, indices, shapes and starts ------------------------ */

static void test_scalar(void) {
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  float item = 0.0f, got = 1.0f;
  uint32_t bits;
  arena_reset();
  tessera_buffer_init(&g_buf_b, g_frame_b, sizeof g_frame_b, 0);
  tessera_array_params_init(&p);
  p.ndim = 0;
  p.dtype = "<f4";
  p.durable = 0;
  f.kind = TESSERA_FILL_NANS;
  f.data = NULL;
  f.size = 0;
  REQUIRE_OK(tessera_array_create(&a, &g_st_b, &g_al, &p, &f));
  REQUIRE_OK(tessera_array_element_get(a, NULL, &got, sizeof got));
  {
    /* "<f4": the item's bytes are little-endian whatever the host's order */
    unsigned char le[4];
    memcpy(le, &got, sizeof le);
    bits = (uint32_t)le[0] | (uint32_t)le[1] << 8 | (uint32_t)le[2] << 16 | (uint32_t)le[3] << 24;
  }
  CHECK((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0); /* a NaN */
  item = 2.5f;
  REQUIRE_OK(tessera_array_element_set(a, NULL, &item, sizeof item));
  got = 0.0f;
  REQUIRE_OK(tessera_array_orthogonal_get(a, NULL, NULL, &got, sizeof got));
  CHECK(got == 2.5f);
  item = -1.0f;
  REQUIRE_OK(tessera_array_orthogonal_set(a, NULL, NULL, &item, sizeof item));
  REQUIRE_OK(tessera_array_slice_get_into(a, NULL, NULL, &got, sizeof got, NULL, NULL));
  CHECK(got == -1.0f);
  item = 4.0f;
  REQUIRE_OK(tessera_array_slice_set_from(a, NULL, NULL, &item, sizeof item, NULL, NULL));
  REQUIRE_OK(tessera_array_resize_at(a, NULL, NULL));
  REQUIRE_OK(tessera_array_read(a, &got, sizeof got));
  CHECK(got == 4.0f);
  /* An out pointer NULL with size 0 is an empty buffer: too small, not a null argument. */
  CHECK_ERR(tessera_array_element_get(a, NULL, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_orthogonal_get(a, NULL, NULL, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_slice_get_into(a, NULL, NULL, NULL, 0, NULL, NULL), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK(tessera_array_close(a).code == TESSERA_OK);
  /* Created uninitialized, it reads whatever it holds, without error. */
  f.kind = TESSERA_FILL_UNINIT;
  tessera_buffer_init(&g_buf_b, g_frame_b, sizeof g_frame_b, 0);
  REQUIRE_OK(tessera_array_create(&a, &g_st_b, &g_al, &p, &f));
  REQUIRE_OK(tessera_array_element_get(a, NULL, &got, sizeof got));
  CHECK(tessera_array_close(a).code == TESSERA_OK);
  CHECK(g_arena.live == 0);
}

/* ---- A directory whose storages lack read, and one that fails to open ---------------------------------------- */

typedef struct test_dir_state {
  tessera_storage st;
  int opens;
  int closes;
  int fail;
} test_dir_state;

static tessera_status dir_status(int32_t code, const char* message) {
  tessera_status s;
  s.code = code;
  s.message = message;
  return s;
}
static tessera_status test_dir_open(void* context, const char* name, int32_t mode, const tessera_storage** out) {
  test_dir_state* d = (test_dir_state*)context;
  (void)name;
  (void)mode;
  if (d->fail) return dir_status(TESSERA_ERR_IO, "test directory: open fails");
  ++d->opens;
  *out = &d->st;
  return dir_status(TESSERA_OK, "");
}
static tessera_status test_dir_close(void* context, const tessera_storage* s) {
  test_dir_state* d = (test_dir_state*)context;
  CHECK(s == &d->st);
  ++d->closes;
  return dir_status(TESSERA_OK, "");
}
static tessera_status test_dir_remove(void* context, const char* name) {
  (void)context;
  (void)name;
  return dir_status(TESSERA_ERR_IO, "test directory: no entries");
}
static tessera_status test_dir_rename(void* context, const char* from, const char* to) {
  (void)context;
  (void)from;
  (void)to;
  return dir_status(TESSERA_ERR_IO, "test directory: no entries");
}

/* The directory's storage must have read and size; a failing open's status comes back unchanged. */
static void test_directory(void) {
  test_dir_state ds;
  tessera_storage_directory dir;
  tessera_array_params p;
  tessera_array* h = NULL;
  arena_reset();
  memset(&ds, 0, sizeof ds);
  ds.st = tessera_buffer_storage(&g_buf_b);
  ds.st.read = NULL;
  dir.open = test_dir_open;
  dir.close = test_dir_close;
  dir.remove = test_dir_remove;
  dir.rename = test_dir_rename;
  dir.context = &ds;
  params_grid(&p);
  CHECK_ERR(tessera_array_create_sparse(&h, &dir, &g_al, &p, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(ds.opens >= 1 && ds.closes == ds.opens);
  ds.st = tessera_buffer_storage(&g_buf_b);
  ds.st.size = NULL;
  CHECK_ERR(tessera_array_open_sparse(&h, &dir, &g_al, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(ds.closes == ds.opens);
  ds.fail = 1;
  CHECK_ERR(tessera_array_open_sparse(&h, &dir, &g_al, NULL), TESSERA_ERR_IO);
  CHECK_ERR(tessera_array_create_sparse(&h, &dir, &g_al, &p, NULL), TESSERA_ERR_IO);
  CHECK(h == NULL);
  CHECK(g_arena.live == 0);
}

/* A NULL buffer with size 0 is an empty buffer, not a null argument: the call goes on and refuses the size (or
 * does nothing when nothing is asked); arrays of 0 dimensions need no coordinates, start, stop or shape. */
static void test_empty_buffers_and_no_dims(void) {
  size_t n = 7;
  tessera_array* z = NULL;
  tessera_array_view* zv = NULL;
  tessera_array_params p;
  tessera_fill f;
  int32_t v = 41;
  int32_t got = 0;
  if (!fixture_open()) return;
  CHECK_ERR(tessera_array_read(g_a, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_slice_get(g_a, k_start, k_stop, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_slice_set(g_a, k_start, k_stop, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_append(g_a, 0, 1, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_element_get(g_a, k_coords, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_element_set(g_a, k_coords, NULL, 0), TESSERA_ERR_INVALID_ARGUMENT); /* not an item */
  CHECK_ERR(tessera_array_orthogonal_get(g_a, k_indices, k_counts, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_orthogonal_set(g_a, k_indices, k_counts, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_slice_get_into(g_a, k_start, k_stop, NULL, 0, k_buffer_shape, NULL), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_slice_set_from(g_a, k_start, k_stop, NULL, 0, k_buffer_shape, NULL), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_insert(g_a, 0, 0, 4, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_vlmeta_name(g_a, 0, NULL, 0, &n), TESSERA_ERR_OUT_OF_RANGE);
  CHECK_ERR(tessera_array_vlmeta_get(g_a, "none", NULL, 0, &n), TESSERA_ERR_OUT_OF_RANGE);
  CHECK_ERR(tessera_array_view_slice_get(g_v, k_start, k_stop, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_view_element_get(g_v, k_coords, NULL, 0), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK(frame_unchanged());

  /* One item, no dimensions: written and read with NULL coordinates, in an array and through a view. */
  tessera_array_params_init(&p);
  p.ndim = 0;
  p.dtype = "<i4";
  f.kind = TESSERA_FILL_VALUE;
  f.data = &v;
  f.size = sizeof v;
  REQUIRE_OK(tessera_array_create(&z, &g_st_b, &g_al, &p, &f));
  REQUIRE_OK(tessera_array_slice_get(z, NULL, NULL, &got, sizeof got));
  CHECK(got == 41);
  v = 42;
  REQUIRE_OK(tessera_array_slice_set(z, NULL, NULL, &v, sizeof v));
  REQUIRE_OK(tessera_array_resize(z, NULL));
  REQUIRE_OK(tessera_array_close(z));
  REQUIRE_OK(tessera_array_view_open(&zv, g_frame_b, g_buf_b.size, &g_al, 0));
  got = 0;
  REQUIRE_OK(tessera_array_view_slice_get(zv, NULL, NULL, &got, sizeof got));
  CHECK(got == 42);
  got = 0;
  REQUIRE_OK(tessera_array_view_element_get(zv, NULL, &got, sizeof got));
  CHECK(got == 42);
  tessera_array_view_close(zv);
  fixture_close();
}

/* Each allocation of the calls that make handles refused in turn (open, open_again, a copy, create, a view): each
 * returns OUT_OF_MEMORY with *out NULL and every block freed, until the call succeeds without meeting the refusal;
 * the array it then makes reads as the fixture. */
static tessera_status make_one(int which, void** out) {
  tessera_array_target t = target_b();
  tessera_array_params p;
  tessera_fill f;
  switch (which) {
    case 0: return tessera_array_open((tessera_array**)out, &g_st, &g_al, NULL);
    case 1: return tessera_array_open_again((tessera_array**)out, g_a, &g_al, NULL);
    case 2: return tessera_array_copy((tessera_array**)out, &t, &g_al, g_a, NULL);
    case 3:
      params_grid(&p);
      f.kind = TESSERA_FILL_BUFFER;
      f.data = g_items;
      f.size = sizeof g_items;
      return tessera_array_create((tessera_array**)out, &g_st_b, &g_al, &p, &f);
    default: return tessera_array_view_open((tessera_array_view**)out, g_frame, g_buf.size, &g_al, 0);
  }
}

static void test_refused_allocations(void) {
  int which;
  if (!fixture_open()) return;
  for (which = 0; which < 5; ++which) {
    long n;
    int done = 0, refused = 0;
    for (n = 1; n < 200 && !done; ++n) {
      void* made = g_out;
      tessera_status s;
      tessera_buffer_init(&g_buf_b, g_frame_b, sizeof g_frame_b, 0);
      g_arena.requests = 0;
      g_arena.refuse_at = n;
      s = make_one(which, &made);
      g_arena.refuse_at = 0;
      if (s.code == TESSERA_OK) {
        done = g_arena.requests < n; /* the refused request never came */
        memset(g_out, 0, sizeof g_out);
        if (which == 4) {
          const int64_t zero[2] = {0, 0};
          CHECK(tessera_array_view_slice_get((tessera_array_view*)made, zero, k_shape, g_out, sizeof g_out).code ==
                TESSERA_OK);
          CHECK(memcmp(g_out, g_items, sizeof g_items) == 0);
          tessera_array_view_close((tessera_array_view*)made);
        } else {
          CHECK(tessera_array_read((tessera_array*)made, g_out, sizeof g_out).code == TESSERA_OK);
          CHECK(memcmp(g_out, g_items, sizeof g_items) == 0);
          CHECK(tessera_array_close((tessera_array*)made).code == TESSERA_OK);
        }
      } else {
        ++refused;
        if (s.code != TESSERA_ERR_OUT_OF_MEMORY || made != NULL) {
          printf("  call %d, refusal %ld -> %s (%d), out %s\n", which, n, tessera_errc_name(s.code), (int)s.code,
                 made == NULL ? "NULL" : "set");
          ++g_case_failures;
        }
      }
      CHECK(g_arena.live == 0);
      if (g_case_failures > 0) break;
    }
    CHECK(done && refused > 0);
  }
  CHECK(frame_unchanged());
  fixture_close();
}


/* ---- The copies' own params, the chunk calls' edges and their refused allocations ------------------------- */

/* One chunk call on the calls' arena: 0 encode, 1 decode, 2 an array chunk decoded (the fixture's allocator). */
static tessera_status chunk_call(int which, size_t* written) {
  tessera_chunk_params cp;
  tessera_chunk_params_init(&cp);
  cp.typesize = 4;
  switch (which) {
    case 0: return tessera_chunk_encode(&g_al, &cp, g_items, 4 * 5 * 4, g_out, sizeof g_out, written);
    case 1: return tessera_chunk_decode(&g_al, g_chunk, g_chunk_len, g_out, sizeof g_out, written);
    default: return tessera_array_chunk_decode(g_a, 0, g_out, sizeof g_out, written);
  }
}

static void test_copy_params_and_chunk_calls(void) {
  tessera_array_params bad, p;
  tessera_array_target t;
  tessera_chunk_params cp;
  tessera_metalayer empty_meta;
  tessera_fill f;
  size_t written;
  int which;
  if (!fixture_open()) return;

  /* A copy's params are checked (their ndim, outside 0..TESSERA_MAX_DIMS, is ignored): the refusal leaves no
   * handle, no frame and nothing allocated. */
  params_grid(&bad);
  bad.ndim = -1;
  bad.codec = 3;
  t = target_b();
  g_made = (tessera_array*)g_out;
  CHECK_ERR(tessera_array_copy(&g_made, &t, &g_al, g_a, &bad), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(g_made == NULL && g_buf_b.size == 0 && g_arena.live == 0);
  bad.ndim = TESSERA_MAX_DIMS + 1;
  g_made = (tessera_array*)g_out;
  CHECK_ERR(tessera_array_slice_copy(&g_made, &t, &g_al, g_a, k_start, k_stop, &bad), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(g_made == NULL && g_buf_b.size == 0 && g_arena.live == 0);
  g_made = (tessera_array*)g_out;
  CHECK_ERR(tessera_array_concatenate(&g_made, &t, &g_al, g_a, g_a, 0, &bad), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(g_made == NULL && g_buf_b.size == 0 && g_arena.live == 0);

  /* A metalayer with no content and size 0 is an empty metalayer, not a refusal. */
  params_grid(&p);
  empty_meta.name = "empty";
  empty_meta.content = NULL;
  empty_meta.size = 0;
  p.metalayers = &empty_meta;
  p.nmetalayers = 1;
  f.kind = TESSERA_FILL_BUFFER;
  f.data = g_items;
  f.size = sizeof g_items;
  tessera_buffer_init(&g_buf_b, g_frame_b, sizeof g_frame_b, 0);
  REQUIRE_OK(tessera_array_create(&g_made, &g_st_b, &g_al, &p, &f));
  memset(g_out, 0, sizeof g_out);
  CHECK(tessera_array_read(g_made, g_out, sizeof g_out).code == TESSERA_OK);
  CHECK(memcmp(g_out, g_items, sizeof g_items) == 0);
  /* So is a vlmetalayer set with no content and size 0. */
  {
    size_t vl_size = 7;
    CHECK(tessera_array_vlmeta_set(g_made, "empty", NULL, 0).code == TESSERA_OK);
    CHECK(tessera_array_vlmeta_size(g_made, "empty", &vl_size).code == TESSERA_OK);
    CHECK(vl_size == 0);
  }
  CHECK(tessera_array_close(g_made).code == TESSERA_OK);
  g_made = NULL;

  /* A view of no frame (NULL, 0) is a frame cut short; a view with its own max_alloc opens and reads. */
  g_made_view = (tessera_array_view*)g_out;
  CHECK_ERR(tessera_array_view_open(&g_made_view, NULL, 0, &g_al, 0), TESSERA_ERR_TRUNCATED);
  CHECK(g_made_view == NULL && g_arena.live == 0);
  REQUIRE_OK(tessera_array_view_open(&g_made_view, g_frame, g_buf.size, &g_al, 1024u * 1024u));
  {
    const int64_t zero[2] = {0, 0};
    memset(g_out, 0, sizeof g_out);
    CHECK(tessera_array_view_slice_get(g_made_view, zero, k_shape, g_out, sizeof g_out).code == TESSERA_OK);
    CHECK(memcmp(g_out, g_items, sizeof g_items) == 0);
  }
  tessera_array_view_close(g_made_view);
  g_made_view = NULL;

  /* Codec ids: 256 is none; the library's codecs pass the check (at clevel 0, a copy: no codec state to fit in
   * the arena; a build without the codec refuses it as unavailable). */
  tessera_chunk_params_init(&cp);
  cp.typesize = 4;
  cp.codec = 256;
  CHECK_ERR(tessera_chunk_encode(&g_al, &cp, g_items, 80, g_out, sizeof g_out, &written), TESSERA_ERR_INVALID_ARGUMENT);
  {
    static const int32_t codecs[3] = {TESSERA_CODEC_LZ4HC, TESSERA_CODEC_ZLIB, TESSERA_CODEC_ZSTD};
    cp.clevel = 0;
    for (which = 0; which < 3; ++which) {
      tessera_status s;
      cp.codec = codecs[which];
      s = tessera_chunk_encode(&g_al, &cp, g_items, 80, g_chunk_b, sizeof g_chunk_b, &written);
      CHECK(s.code == TESSERA_OK || s.code == TESSERA_ERR_CODEC_UNAVAILABLE);
      if (s.code == TESSERA_OK) {
        size_t n = 0;
        memset(g_out, 0, sizeof g_out);
        CHECK(tessera_chunk_decode(&g_al, g_chunk_b, written, g_out, 80, &n).code == TESSERA_OK);
        CHECK(n == 80 && memcmp(g_out, g_items, 80) == 0);
      }
    }
  }
  /* A negative blocksize is refused by the block size computation. */
  tessera_chunk_params_init(&cp);
  cp.typesize = 4;
  cp.blocksize = -1;
  written = 5;
  CHECK_ERR(tessera_chunk_encode(&g_al, &cp, g_items, 80, g_out, sizeof g_out, &written), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(written == 0);
  /* No source and no out, both of size 0: not null-pointer refusals; an empty chunk still needs its header. */
  tessera_chunk_params_init(&cp);
  CHECK_ERR(tessera_chunk_encode(&g_al, &cp, NULL, 0, NULL, 0, &written), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK(written == 0);
  /* An array chunk decoded into too small an out with no written: refused all the same. */
  CHECK_ERR(tessera_array_chunk_decode(g_a, 0, g_out, 4, NULL), TESSERA_ERR_BUFFER_TOO_SMALL);
  /* An update with no chunk and size 0: a header cut short. */
  CHECK_ERR(tessera_array_chunk_update(g_a, 0, NULL, 0), TESSERA_ERR_TRUNCATED);

  /* Each chunk call with its Nth allocation refused, for every N until one is not needed: OUT_OF_MEMORY, nothing
   * written, nothing left allocated; then the call succeeds with the chunk's bytes. */
  for (which = 0; which < 3; ++which) {
    test_arena* arena = which == 2 ? &g_fixture_arena : &g_arena;
    long n, live_before = arena->live;
    int done = 0, refused = 0;
    for (n = 1; n < 50 && !done; ++n) {
      tessera_status s;
      written = 5;
      arena->requests = 0;
      arena->refuse_at = n;
      s = chunk_call(which, &written);
      arena->refuse_at = 0;
      if (s.code == TESSERA_OK) {
        done = arena->requests < n;
        CHECK(which == 0 ? written > 32 && written <= sizeof g_out : written == (size_t)(4 * 5 * 4));
        if (which != 0) CHECK(memcmp(g_out, g_items, 5 * 4) == 0); /* the first chunk's first row */
      } else {
        ++refused;
        CHECK(s.code == TESSERA_ERR_OUT_OF_MEMORY && written == 0);
      }
      CHECK(arena->live == live_before);
    }
    CHECK(done && refused > 0);
  }

  CHECK(tessera_array_dirty(g_a) == 0);
  CHECK(frame_unchanged());
  fixture_close();
}

static const test_case g_cases[] = {
    {"null_arguments", test_null_arguments},
    {"null_no_ops", test_null_no_ops},
    {"params", test_params},
    {"handles", test_handles},
    {"values", test_values},
    {"directory", test_directory},
    {"scalar", test_scalar},
    {"refused_allocations", test_refused_allocations},
    {"empty_buffers_and_no_dims", test_empty_buffers_and_no_dims},
    {"copy_params_and_chunk_calls", test_copy_params_and_chunk_calls},
};

int main(void) {
  tessera_codec_link_all(); /* bare metal links on request what the valid calls use */
  tessera_filter_link_all();
  tessera_partition_link_auto();
  tessera_encoder_link_parallel();
  return capi_cases_run("capi_arguments", g_cases, sizeof(g_cases) / sizeof(g_cases[0]));
}
