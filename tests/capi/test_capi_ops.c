/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests of the C API beyond create/read/write (tessera.h from "Executors" on, tessera_memory.h and, on hosted
 * targets, tessera_posix.h), written in C99 and run on every target: executors, sparse arrays on the memory
 * port's directory, readers that follow a writer, items and orthogonal selections (read and written), slices into
 * and from a larger buffer, insert, delete and resize at a position, new arrays
 * from arrays, chunk access; all checked against a C-order model of int32 items. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tessera/tessera.h"
#include "tessera/port/tessera_memory.h"
#ifdef TESSERA_TEST_POSIX
#include "tessera/port/tessera_posix.h"
#endif

#include "capi_check.h"

/* Host-order floats to little-endian ones and back (a byte swap on a big-endian host, nothing otherwise). */
static void floats_le(float* v, int n) {
  const uint16_t one = 1;
  int i;
  if (*(const uint8_t*)&one == 1) return;
  for (i = 0; i < n; ++i) {
    uint8_t b[4], t;
    memcpy(b, &v[i], 4);
    t = b[0], b[0] = b[3], b[3] = t;
    t = b[1], b[1] = b[2], b[2] = t;
    memcpy(&v[i], b, 4);
  }
}

/* ---- The harness: capi_check.h ------------------------------------------------------------------------------ */

#define ARENA_BYTES (4u * 1024u * 1024u)
static uint64_t g_arena_memory[ARENA_BYTES / 8];
static test_arena g_arena;

/* The arena, empty. */
static tessera_allocator arena_reset(void) { return test_arena_init(&g_arena, g_arena_memory, sizeof g_arena_memory); }

/* ---- Fixtures ----------------------------------------------------------------------------------------------- */

#define FRAME_BYTES (256u * 1024u)
static uint8_t g_frame_a[FRAME_BYTES];
static uint8_t g_frame_b[FRAME_BYTES];
static uint8_t g_frame_c[FRAME_BYTES];

#define MAX_ITEMS (40 * 40)
static int32_t g_model[MAX_ITEMS];
static int32_t g_model2[MAX_ITEMS];
static int32_t g_out[MAX_ITEMS];
static int32_t g_src[MAX_ITEMS];
static uint8_t g_chunk[64 * 1024];

/* A 2-D array of shape (r, c), chunks (4, 5), blocks (2, 5), "<i4", in-place layout, filled from model. */
static void params_grid(tessera_array_params* p, int64_t r, int64_t c) {
  tessera_array_params_init(p);
  p->ndim = 2;
  p->shape[0] = r;
  p->shape[1] = c;
  p->chunkshape[0] = 4;
  p->chunkshape[1] = 5;
  p->blockshape[0] = 2;
  p->blockshape[1] = 5;
  p->dtype = "<i4";
  p->durable = 0;
}

static tessera_fill fill_of(const int32_t* items, int64_t n) {
  tessera_fill f;
  f.kind = TESSERA_FILL_BUFFER;
  f.data = items;
  f.size = (size_t)n * 4;
  return f;
}

static void model_fill(int32_t* model, int64_t n, int32_t seed) {
  int64_t i;
  for (i = 0; i < n; ++i) model[i] = (int32_t)(i * 31 + seed);
}

/* Whether array a holds exactly the n items of model (and has that many). */
static int array_equals(tessera_array* a, const int32_t* model, int64_t n) {
  tessera_array_info info;
  tessera_status s = tessera_array_info_get(a, &info);
  if (s.code != TESSERA_OK || info.nitems != n || info.itemsize != 4) return 0;
  memset(g_out, 0x5a, sizeof(g_out));
  s = tessera_array_read(a, g_out, (size_t)n * 4);
  return s.code == TESSERA_OK && memcmp(g_out, model, (size_t)n * 4) == 0;
}

/* A serial executor that runs tasks in reverse order, alternating worker indices, and counts its runs. */
typedef struct test_executor_state {
  long runs;
  long tasks;
  uint32_t max_worker;
} test_executor_state;

static void test_executor_run(void* context, size_t ntasks, tessera_executor_task task, void* task_context) {
  test_executor_state* st = (test_executor_state*)context;
  size_t i;
  ++st->runs;
  for (i = ntasks; i > 0; --i) {
    uint32_t w = (uint32_t)(i % 2);
    if (w > st->max_worker) st->max_worker = w;
    ++st->tasks;
    task(task_context, i - 1, w);
  }
}

/* ---- Cases -------------------------------------------------------------------------------------------------- */

/* A sparse array on the memory port's directory, written with a C executor, reopened read-only. */
static void test_sparse_executor(void) {
  tessera_allocator al = arena_reset();
  tessera_memory_directory* md = NULL;
  tessera_storage_directory dir;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  tessera_array* b = NULL;
  tessera_open_options o = {0};
  tessera_array_info info;
  test_executor_state es = {0, 0, 0};
  tessera_executor ex;
  uint32_t count = 0;
  size_t size = 0;
  int64_t start[2] = {1, 2}, stop[2] = {9, 11};
  int64_t i, m;

  REQUIRE_OK(tessera_memory_directory_create(&md, &al, 64, (size_t)-1));
  dir = tessera_memory_directory_interface(md);
  ex.run = test_executor_run;
  ex.context = &es;
  ex.workers = 2;
  model_fill(g_model, 10 * 12, 7);
  params_grid(&p, 10, 12);
  p.executor = &ex;
  f = fill_of(g_model, 10 * 12);
  REQUIRE_OK(tessera_array_create_sparse(&a, &dir, &al, &p, &f));
  REQUIRE_OK(tessera_array_info_get(a, &info));
  CHECK(info.nchunks == 3 * 3);
  /* One entry per chunk and the index frame. */
  REQUIRE_OK(tessera_memory_directory_count(md, &count));
  CHECK(count == 9 + 1);
  REQUIRE_OK(tessera_memory_directory_entry_size(md, "chunks.b2frame", &size));
  CHECK(size > 0);
  CHECK_ERR(tessera_memory_directory_entry_size(md, "nothere", &size), TESSERA_ERR_IO);

  /* A write across chunks decodes and encodes on the executor. */
  es.runs = 0;
  m = (stop[0] - start[0]) * (stop[1] - start[1]);
  for (i = 0; i < m; ++i) g_src[i] = (int32_t)(5000 + i);
  REQUIRE_OK(tessera_array_slice_set(a, start, stop, g_src, (size_t)m * 4));
  {
    int64_t r, c, k = 0;
    for (r = start[0]; r < stop[0]; ++r)
      for (c = start[1]; c < stop[1]; ++c) g_model[r * 12 + c] = g_src[k++];
  }
  CHECK(array_equals(a, g_model, 10 * 12));
  CHECK(es.runs > 0 && es.tasks > 0 && es.max_worker == 1);
  REQUIRE_OK(tessera_array_close(a));

  /* Reopened read-only from the directory alone, with the executor. */
  tessera_open_options_init(&o);
  o.executor = &ex;
  es.runs = 0;
  REQUIRE_OK(tessera_array_open_sparse(&b, &dir, &al, &o));
  CHECK(array_equals(b, g_model, 10 * 12));
  CHECK(es.runs > 0);
  CHECK_ERR(tessera_array_slice_set(b, start, stop, g_src, (size_t)m * 4), TESSERA_ERR_READ_ONLY);
  REQUIRE_OK(tessera_array_close(b));

  /* Executors with no workers are refused. */
  ex.workers = 0;
  CHECK_ERR(tessera_array_open_sparse(&b, &dir, &al, &o), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(b == NULL);
  REQUIRE_OK(tessera_memory_directory_destroy(md));
  CHECK(g_arena.live == 0);
}

/* Plants entry name (one byte) in dir. */
static void plant(const tessera_storage_directory* dir, const char* name) {
  const tessera_storage* st = NULL;
  const uint8_t b = 1;
  REQUIRE_OK(dir->open(dir->context, name, TESSERA_STORAGE_OPEN_REPLACE, &st));
  REQUIRE_OK(st->write(st->context, 0, &b, 1));
  REQUIRE_OK(dir->close(dir->context, st));
}

static tessera_status count_visit(void* arg, const char* name) {
  tessera_status s = {TESSERA_OK, ""};
  (void)name;
  ++*(uint32_t*)arg;
  return s;
}

/* A writable open sweeps chunk entries no commit references through the directory's list; other names stay,
 * read-only opens and directories without list change nothing. */
static void test_sparse_sweep(void) {
  tessera_allocator al = arena_reset();
  tessera_memory_directory* md = NULL;
  tessera_storage_directory dir, unlisted;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  tessera_open_options o;
  uint32_t count = 0, visited = 0;
  size_t size = 0;

  REQUIRE_OK(tessera_memory_directory_create(&md, &al, 32, (size_t)-1));
  dir = tessera_memory_directory_interface(md);
  CHECK(dir.list != NULL);
  model_fill(g_model, 10 * 12, 3);
  params_grid(&p, 10, 12);
  f = fill_of(g_model, 10 * 12);
  REQUIRE_OK(tessera_array_create_sparse(&a, &dir, &al, &p, &f));
  REQUIRE_OK(tessera_array_close(a));
  plant(&dir, "0000ABCD.chunk"); /* a crash's leftover */
  plant(&dir, "notes.txt");
  REQUIRE_OK(dir.list(dir.context, count_visit, &visited));
  CHECK(visited == 9 + 1 + 2);

  tessera_open_options_init(&o);
  REQUIRE_OK(tessera_array_open_sparse(&a, &dir, &al, &o));
  REQUIRE_OK(tessera_array_close(a));
  unlisted = dir;
  unlisted.list = NULL;
  o.writable = 1;
  REQUIRE_OK(tessera_array_open_sparse(&a, &unlisted, &al, &o));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_memory_directory_count(md, &count));
  CHECK(count == 9 + 1 + 2);

  REQUIRE_OK(tessera_array_open_sparse(&a, &dir, &al, &o));
  CHECK(array_equals(a, g_model, 10 * 12));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_memory_directory_count(md, &count));
  CHECK(count == 9 + 1 + 1);
  CHECK_ERR(tessera_memory_directory_entry_size(md, "0000ABCD.chunk", &size), TESSERA_ERR_IO);
  REQUIRE_OK(tessera_memory_directory_entry_size(md, "notes.txt", &size));
  CHECK(size == 1);
  REQUIRE_OK(tessera_memory_directory_destroy(md));
  CHECK(g_arena.live == 0);
}

/* Element get/set and orthogonal selections against the model. */
static void test_items(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  int64_t coords[2] = {7, 3};
  int32_t item = 0, v = -77;
  int64_t rows[4] = {9, 0, 4, 4};
  int64_t cols[3] = {11, 2, 5};
  const int64_t* idx[2];
  int64_t counts[2] = {4, 3};
  int k, j;

  tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
  st = tessera_buffer_storage(&buf);
  model_fill(g_model, 10 * 12, 1);
  params_grid(&p, 10, 12);
  f = fill_of(g_model, 10 * 12);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &f));
  REQUIRE_OK(tessera_array_element_get(a, coords, &item, sizeof item));
  CHECK(item == g_model[7 * 12 + 3]);
  REQUIRE_OK(tessera_array_element_set(a, coords, &v, sizeof v));
  g_model[7 * 12 + 3] = v;
  REQUIRE_OK(tessera_array_element_get(a, coords, &item, sizeof item));
  CHECK(item == v);
  CHECK(array_equals(a, g_model, 10 * 12));
  coords[0] = 10;
  CHECK_ERR(tessera_array_element_get(a, coords, &item, sizeof item), TESSERA_ERR_OUT_OF_RANGE);

  idx[0] = rows;
  idx[1] = cols;
  memset(g_out, 0, sizeof(g_out));
  REQUIRE_OK(tessera_array_orthogonal_get(a, idx, counts, g_out, 12 * 4));
  for (k = 0; k < 4; ++k)
    for (j = 0; j < 3; ++j) CHECK(g_out[k * 3 + j] == g_model[rows[k] * 12 + cols[j]]);
  CHECK_ERR(tessera_array_orthogonal_get(a, idx, counts, g_out, 11 * 4), TESSERA_ERR_BUFFER_TOO_SMALL);
  rows[0] = 10;
  CHECK_ERR(tessera_array_orthogonal_get(a, idx, counts, g_out, 12 * 4), TESSERA_ERR_OUT_OF_RANGE);
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
}

/* A storage's read bracket: every array read (slice, item, selection) calls reads_begin and reads_end once around
   itself; a storage with only one of the two gets neither. */
static int g_reads_begun = 0, g_reads_ended = 0;
static void count_reads_begin(void* context) {
  (void)context;
  ++g_reads_begun;
}
static void count_reads_end(void* context) {
  (void)context;
  ++g_reads_ended;
}

static void test_read_brackets(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  int64_t coords[2] = {3, 4};
  int64_t start[2] = {1, 2}, stop[2] = {9, 11};
  int64_t rows[2] = {0, 9};
  int64_t cols[2] = {1, 11};
  const int64_t* idx[2];
  int64_t counts[2] = {2, 2};
  int32_t item = 0;

  tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
  st = tessera_buffer_storage(&buf);
  model_fill(g_model, 10 * 12, 4);
  params_grid(&p, 10, 12);
  f = fill_of(g_model, 10 * 12);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &f));
  REQUIRE_OK(tessera_array_close(a));

  st.reads_begin = count_reads_begin;
  st.reads_end = count_reads_end;
  g_reads_begun = g_reads_ended = 0;
  REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL));
  REQUIRE_OK(tessera_array_element_get(a, coords, &item, sizeof item));
  CHECK(item == g_model[3 * 12 + 4]);
  CHECK(g_reads_begun == 1 && g_reads_ended == 1);
  REQUIRE_OK(tessera_array_slice_get(a, start, stop, g_out, 8 * 9 * 4));
  CHECK(g_reads_begun == 2 && g_reads_ended == 2);
  idx[0] = rows;
  idx[1] = cols;
  REQUIRE_OK(tessera_array_orthogonal_get(a, idx, counts, g_out, 4 * 4));
  CHECK(g_out[3] == g_model[9 * 12 + 11]);
  CHECK(g_reads_begun == 3 && g_reads_ended == 3);
  CHECK(array_equals(a, g_model, 10 * 12));
  CHECK(g_reads_begun == g_reads_ended && g_reads_begun > 3);
  REQUIRE_OK(tessera_array_close(a));

  st.reads_end = NULL; /* half a bracket would never close: neither is called */
  g_reads_begun = g_reads_ended = 0;
  REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL));
  CHECK(array_equals(a, g_model, 10 * 12));
  CHECK(g_reads_begun == 0 && g_reads_ended == 0);
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
}

/* Rewrites reuse space (a fixed buffer takes many more of them than the data's size), compaction, and closing
   with changes never committed says so (tessera_array_dirty tells beforehand). */
static void test_space(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  int64_t coords[2] = {3, 4};
  int32_t v = 5, item = 0;
  int k;

  tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
  st = tessera_buffer_storage(&buf);
  model_fill(g_model, 40 * 40, 3);
  params_grid(&p, 40, 40);
  p.durable = 1;
  f = fill_of(g_model, 40 * 40);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &f));
  CHECK(tessera_array_dirty(a) == 0);
  for (k = 0; k < 2000; ++k) {
    coords[0] = k % 40;
    coords[1] = (k * 7) % 40;
    v = k * 31;
    REQUIRE_OK(tessera_array_element_set(a, coords, &v, sizeof v));
    g_model[coords[0] * 40 + coords[1]] = v;
  }
  CHECK(buf.size < sizeof(g_frame_a) / 2);
  REQUIRE_OK(tessera_array_compact(a));
  CHECK(array_equals(a, g_model, 40 * 40));
  tessera_array_set_auto_commit(a, 0);
  v = -1;
  REQUIRE_OK(tessera_array_element_set(a, coords, &v, sizeof v));
  CHECK(tessera_array_dirty(a) != 0);
  CHECK_ERR(tessera_array_close(a), TESSERA_ERR_UNCOMMITTED);
  CHECK(g_arena.live == 0);
  REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL));
  REQUIRE_OK(tessera_array_element_get(a, coords, &item, sizeof item));
  CHECK(item == g_model[coords[0] * 40 + coords[1]]);
  CHECK(tessera_array_dirty(a) == 0);
  REQUIRE_OK(tessera_array_close(a));
  CHECK(tessera_array_dirty(NULL) == 0);
  CHECK(g_arena.live == 0);
}

/* Insert and delete whole chunks along both axes, and any count at the end. */
static void test_insert_delete(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  tessera_array_info info;
  int64_t r, c, k;

  tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
  st = tessera_buffer_storage(&buf);
  model_fill(g_model, 8 * 10, 3);
  params_grid(&p, 8, 10);
  f = fill_of(g_model, 8 * 10);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &f));

  /* Four rows before row 4: (12, 10). */
  for (k = 0; k < 4 * 10; ++k) g_src[k] = (int32_t)(-1 - k);
  REQUIRE_OK(tessera_array_insert(a, 0, 4, 4, g_src, 4 * 10 * 4));
  for (r = 0, k = 0; r < 12; ++r)
    for (c = 0; c < 10; ++c) g_model2[k++] = r < 4 ? g_model[r * 10 + c] : r < 8 ? g_src[(r - 4) * 10 + c] : g_model[(r - 4) * 10 + c];
  CHECK(array_equals(a, g_model2, 12 * 10));

  /* Five columns before column 5: (12, 15). */
  for (k = 0; k < 12 * 5; ++k) g_src[k] = (int32_t)(900 + k);
  REQUIRE_OK(tessera_array_insert(a, 1, 5, 5, g_src, 12 * 5 * 4));
  for (r = 0, k = 0; r < 12; ++r)
    for (c = 0; c < 15; ++c) g_model[k++] = c < 5 ? g_model2[r * 10 + c] : c < 10 ? g_src[r * 5 + c - 5] : g_model2[r * 10 + c - 5];
  CHECK(array_equals(a, g_model, 12 * 15));

  /* Not a chunk multiple in the middle: refused, nothing changes. */
  CHECK_ERR(tessera_array_insert(a, 0, 2, 4, g_src, 4 * 15 * 4), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_delete(a, 1, 5, 3), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(array_equals(a, g_model, 12 * 15));

  /* Delete rows 0..4, then 3 rows at the end (any count): (5, 15). */
  REQUIRE_OK(tessera_array_delete(a, 0, 0, 4));
  REQUIRE_OK(tessera_array_delete(a, 0, 5, 3));
  REQUIRE_OK(tessera_array_info_get(a, &info));
  CHECK(info.shape[0] == 5 && info.shape[1] == 15);
  CHECK(array_equals(a, g_model + 4 * 15, 5 * 15));

  /* Two columns at the end. */
  for (k = 0; k < 5 * 2; ++k) g_src[k] = (int32_t)(-500 - k);
  REQUIRE_OK(tessera_array_insert(a, 1, 15, 2, g_src, 5 * 2 * 4));
  for (r = 0, k = 0; r < 5; ++r)
    for (c = 0; c < 17; ++c) g_model2[k++] = c < 15 ? g_model[(r + 4) * 15 + c] : g_src[r * 2 + c - 15];
  CHECK(array_equals(a, g_model2, 5 * 17));
  REQUIRE_OK(tessera_array_close(a));

  /* The frame reopens with what was committed. */
  {
    tessera_storage st2 = tessera_buffer_storage(&buf);
    REQUIRE_OK(tessera_array_open(&a, &st2, &al, NULL));
    CHECK(array_equals(a, g_model2, 5 * 17));
    CHECK_ERR(tessera_array_delete(a, 0, 4, 1), TESSERA_ERR_READ_ONLY); /* read-only */
    REQUIRE_OK(tessera_array_close(a));
  }
  CHECK(g_arena.live == 0);
}

/* Copies (rechunked, recompressed, sparse), slices, concatenation, squeeze and expand_dims, save. */
static void test_new_arrays(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer ba, bb, bc;
  tessera_storage sa, sb, sc;
  tessera_array_target tb, tc;
  tessera_array_params p, q;
  tessera_fill f;
  tessera_array* a = NULL;
  tessera_array* b = NULL;
  tessera_array* c = NULL;
  tessera_array_info info;
  test_executor_state es = {0, 0, 0};
  tessera_executor ex;
  int64_t r, k;

  tessera_buffer_init(&ba, g_frame_a, sizeof(g_frame_a), 0);
  tessera_buffer_init(&bb, g_frame_b, sizeof(g_frame_b), 0);
  tessera_buffer_init(&bc, g_frame_c, sizeof(g_frame_c), 0);
  sa = tessera_buffer_storage(&ba);
  sb = tessera_buffer_storage(&bb);
  sc = tessera_buffer_storage(&bc);
  tb = tessera_array_target_contiguous(&sb);
  tb.durable = 0;
  tc = tessera_array_target_contiguous(&sc);
  tc.durable = 0;
  model_fill(g_model, 10 * 12, 11);
  params_grid(&p, 10, 12);
  f = fill_of(g_model, 10 * 12);
  p.compcode_meta = 256;
  CHECK_ERR(tessera_array_create(&a, &sa, &al, &p, &f), TESSERA_ERR_INVALID_ARGUMENT);
  p.compcode_meta = 7; /* a codec's parameter (ZFP's rate, say): kept by every copy */
  REQUIRE_OK(tessera_array_create(&a, &sa, &al, &p, &f));

  /* params_get reflects the array. */
  REQUIRE_OK(tessera_array_params_get(a, &q));
  CHECK(q.ndim == 2 && q.shape[0] == 10 && q.shape[1] == 12 && q.itemsize == 4);
  CHECK(q.chunkshape[0] == 4 && q.chunkshape[1] == 5 && q.blockshape[0] == 2 && q.blockshape[1] == 5);
  CHECK(q.codec == TESSERA_CODEC_BLOSCLZ && q.clevel == 5 && q.filters[5] == TESSERA_FILTER_SHUFFLE);
  CHECK(q.compcode_meta == 7);

  /* Rechunk and recompress (zlib level 1 when the build has it is not assumed: BloscLZ level 9) on a C
   * executor. */
  ex.run = test_executor_run;
  ex.context = &es;
  ex.workers = 2;
  q.chunkshape[0] = 10;
  q.chunkshape[1] = 6;
  q.blockshape[0] = 5;
  q.blockshape[1] = 3;
  q.clevel = 9;
  q.executor = &ex;
  REQUIRE_OK(tessera_array_copy(&b, &tb, &al, a, &q));
  REQUIRE_OK(tessera_array_info_get(b, &info));
  CHECK(info.chunkshape[0] == 10 && info.chunkshape[1] == 6 && info.blockshape[0] == 5 && info.blockshape[1] == 3);
  CHECK(info.nchunks == 2);
  CHECK(info.dtype_len == 3 && memcmp(info.dtype, "<i4", 3) == 0);
  CHECK(array_equals(b, g_model, 10 * 12));
  CHECK(es.runs > 0);
  {
    tessera_array_params g;
    tessera_chunk_params cp;
    REQUIRE_OK(tessera_array_params_get(b, &g));
    CHECK(g.clevel == 9);
    CHECK(g.compcode_meta == 7); /* params_get + a re-chunking copy keep the codec meta */
    REQUIRE_OK(tessera_array_chunk_params_get(b, &cp));
    CHECK(cp.compcode_meta == 7);
  }
  REQUIRE_OK(tessera_array_close(b));

  /* A slice copy with the source's parameters. */
  {
    int64_t start[2] = {3, 4}, stop[2] = {9, 11};
    REQUIRE_OK(tessera_array_slice_copy(&b, &tb, &al, a, start, stop, NULL));
    for (r = 3, k = 0; r < 9; ++r) {
      int64_t cc;
      for (cc = 4; cc < 11; ++cc) g_model2[k++] = g_model[r * 12 + cc];
    }
    REQUIRE_OK(tessera_array_info_get(b, &info));
    CHECK(info.shape[0] == 6 && info.shape[1] == 7 && info.chunkshape[0] == 4 && info.chunkshape[1] == 5);
    CHECK(array_equals(b, g_model2, 6 * 7));
    REQUIRE_OK(tessera_array_close(b));
  }

  /* a then a (again) along axis 0: (20, 12). */
  REQUIRE_OK(tessera_array_concatenate(&b, &tb, &al, a, a, 0, NULL));
  memcpy(g_model2, g_model, 120 * 4);
  memcpy(g_model2 + 120, g_model, 120 * 4);
  CHECK(array_equals(b, g_model2, 20 * 12));
  REQUIRE_OK(tessera_array_close(b));
  CHECK_ERR(tessera_array_concatenate(&b, &tb, &al, a, a, 2, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(b == NULL);

  /* expand_dims to (1, 10, 1, 12), then squeeze back to (10, 12). */
  {
    const uint8_t axes[4] = {1, 0, 1, 0};
    REQUIRE_OK(tessera_array_expand_dims(&b, &tb, &al, a, axes, 4));
    REQUIRE_OK(tessera_array_info_get(b, &info));
    CHECK(info.ndim == 4 && info.shape[0] == 1 && info.shape[1] == 10 && info.shape[2] == 1 && info.shape[3] == 12);
    CHECK(array_equals(b, g_model, 120));
    REQUIRE_OK(tessera_array_squeeze(&c, &tc, &al, b, NULL));
    REQUIRE_OK(tessera_array_info_get(c, &info));
    CHECK(info.ndim == 2 && info.shape[0] == 10 && info.shape[1] == 12);
    CHECK(array_equals(c, g_model, 120));
    REQUIRE_OK(tessera_array_close(c));
    {
      const uint8_t only[4] = {0, 0, 1, 0};
      REQUIRE_OK(tessera_array_squeeze(&c, &tc, &al, b, only));
      REQUIRE_OK(tessera_array_info_get(c, &info));
      CHECK(info.ndim == 3 && info.shape[0] == 1 && info.shape[1] == 10 && info.shape[2] == 12);
      REQUIRE_OK(tessera_array_close(c));
      {
        const uint8_t wide[4] = {0, 1, 0, 0}; /* extent 10 */
        CHECK_ERR(tessera_array_squeeze(&c, &tc, &al, b, wide), TESSERA_ERR_INVALID_ARGUMENT);
      }
    }
    REQUIRE_OK(tessera_array_close(b));
  }

  /* save: a vlmetalayer travels with the chunks; the copy reopens from its bytes. */
  REQUIRE_OK(tessera_array_vlmeta_set(a, "note", "hello", 5));
  REQUIRE_OK(tessera_array_save(&b, &tb, &al, a));
  REQUIRE_OK(tessera_array_close(b));
  {
    tessera_storage s2 = tessera_buffer_storage(&bb);
    char note[8] = {0};
    size_t n = 0;
    REQUIRE_OK(tessera_array_open(&b, &s2, &al, NULL));
    CHECK(array_equals(b, g_model, 120));
    REQUIRE_OK(tessera_array_vlmeta_get(b, "note", note, sizeof note, &n));
    CHECK(n == 5 && memcmp(note, "hello", 5) == 0);
    REQUIRE_OK(tessera_array_close(b));
  }

  /* A sparse target. */
  {
    tessera_memory_directory* md = NULL;
    tessera_storage_directory dir;
    tessera_array_target ts;
    uint32_t count = 0;
    REQUIRE_OK(tessera_memory_directory_create(&md, &al, 32, (size_t)-1));
    dir = tessera_memory_directory_interface(md);
    ts = tessera_array_target_sparse(&dir);
    REQUIRE_OK(tessera_array_copy(&b, &ts, &al, a, NULL));
    CHECK(array_equals(b, g_model, 120));
    REQUIRE_OK(tessera_memory_directory_count(md, &count));
    CHECK(count == 9 + 1);
    REQUIRE_OK(tessera_array_close(b));
    REQUIRE_OK(tessera_memory_directory_destroy(md));
  }

  /* Bad targets. */
  {
    tessera_array_target none = tessera_array_target_contiguous(NULL);
    CHECK_ERR(tessera_array_copy(&b, &none, &al, a, NULL), TESSERA_ERR_INVALID_ARGUMENT);
    CHECK_ERR(tessera_array_copy(&b, NULL, &al, a, NULL), TESSERA_ERR_INVALID_ARGUMENT);
    CHECK_ERR(tessera_array_copy(&b, &tb, &al, NULL, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  }
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
}

/* A writer and readers opened again from it: readers see commits after refresh, and only then. */
static void test_readers(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* w = NULL;
  tessera_array* r1 = NULL;
  tessera_array* r2 = NULL;
  tessera_array* ro = NULL;
  tessera_array_info info;
  test_executor_state es = {0, 0, 0};
  tessera_executor ex;
  tessera_open_options o = {0};
  int64_t k;

  tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
  st = tessera_buffer_storage(&buf);
  model_fill(g_model, 8 * 10, 5);
  params_grid(&p, 8, 10);
  p.durable = 1; /* readers follow the crash-safe commit order */
  p.keep_old_frames = 1; /* and read the frame they opened until they refresh */
  f = fill_of(g_model, 8 * 10);
  tessera_open_options_init(&o);
  o.writable = 1;
  REQUIRE_OK(tessera_array_create(&w, &st, &al, &p, &f));
  ex.run = test_executor_run;
  ex.context = &es;
  ex.workers = 2;
  REQUIRE_OK(tessera_array_open_again(&r1, w, &al, &ex));
  REQUIRE_OK(tessera_array_open_again(&r2, w, &al, NULL));
  CHECK(array_equals(r1, g_model, 80));
  CHECK(es.runs > 0);
  CHECK(array_equals(r2, g_model, 80));

  /* The writer appends 4 rows and changes an item. */
  for (k = 0; k < 40; ++k) g_src[k] = (int32_t)(7000 + k);
  REQUIRE_OK(tessera_array_append(w, 0, 4, g_src, 40 * 4));
  {
    int64_t at[2] = {0, 0};
    int32_t v = 42;
    REQUIRE_OK(tessera_array_element_set(w, at, &v, 4));
    memcpy(g_model2, g_model, 80 * 4);
    memcpy(g_model2 + 80, g_src, 40 * 4);
    g_model2[0] = 42;
  }
  /* Before refresh: the old array. */
  REQUIRE_OK(tessera_array_info_get(r1, &info));
  CHECK(info.shape[0] == 8);
  CHECK(array_equals(r2, g_model, 80));
  /* After: the new one. */
  REQUIRE_OK(tessera_array_refresh(r1));
  REQUIRE_OK(tessera_array_refresh(r2));
  CHECK(array_equals(r1, g_model2, 120));
  CHECK(array_equals(r2, g_model2, 120));
  CHECK_ERR(tessera_array_refresh(w), TESSERA_ERR_INVALID_ARGUMENT); /* the writer is its own writer */
  CHECK_ERR(tessera_array_element_set(r1, NULL, &k, 4), TESSERA_ERR_INVALID_ARGUMENT);

  /* A reader opened again from a reader. */
  REQUIRE_OK(tessera_array_open_again(&ro, r1, &al, NULL));
  CHECK(array_equals(ro, g_model2, 120));
  REQUIRE_OK(tessera_array_close(ro));
  REQUIRE_OK(tessera_array_close(r2));
  REQUIRE_OK(tessera_array_close(r1));
  REQUIRE_OK(tessera_array_close(w));
  CHECK_ERR(tessera_array_open_again(&ro, NULL, &al, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(g_arena.live == 0);
}

/* Compressed chunks out of an array, decoded, re-encoded and put back. */
static void test_chunks(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  tessera_chunk_params cp;
  tessera_chunk_info ci;
  size_t n = 0, n2 = 0, need = 0;
  int64_t r, c;
  int32_t* dec = g_src;
  static int32_t dec2[4 * 5];

  tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
  st = tessera_buffer_storage(&buf);
  model_fill(g_model, 10 * 12, 9);
  params_grid(&p, 10, 12);
  f = fill_of(g_model, 10 * 12);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &f));

  REQUIRE_OK(tessera_array_chunk_params_get(a, &cp));
  CHECK(cp.typesize == 4 && cp.blocksize == 2 * 5 * 4 && cp.clevel == 5 && cp.codec == TESSERA_CODEC_BLOSCLZ);

  /* Chunk 4 is rows 4..7, columns 5..9; its size first. */
  CHECK_ERR(tessera_array_chunk_read(a, 4, NULL, 0, &need), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK(need > 16);
  REQUIRE_OK(tessera_array_chunk_read(a, 4, g_chunk, sizeof g_chunk, &n));
  CHECK(n == need);
  REQUIRE_OK(tessera_chunk_info_get(g_chunk, n, &ci));
  CHECK(ci.nbytes == 4 * 5 * 4 && ci.cbytes == (int32_t)n && ci.typesize == 4 && ci.special == 0);
  REQUIRE_OK(tessera_chunk_decode(&al, g_chunk, n, dec, 4 * 5 * 4, &n2));
  CHECK(n2 == 80);
  for (r = 0; r < 4; ++r)
    for (c = 0; c < 5; ++c) CHECK(dec[r * 5 + c] == g_model[(4 + r) * 12 + 5 + c]);
  REQUIRE_OK(tessera_array_chunk_decode(a, 4, dec2, sizeof dec2, &n2));
  CHECK(n2 == 80 && memcmp(dec, dec2, 80) == 0);
  CHECK_ERR(tessera_chunk_decode(&al, g_chunk, n, dec, 79, &n2), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_chunk_read(a, 9, g_chunk + n, sizeof g_chunk - n, &need), TESSERA_ERR_OUT_OF_RANGE);

  /* Encoding the same items with the array's parameters gives the same chunk (the encoder is the reference's). */
  {
    static uint8_t again[TESSERA_CHUNK_ENCODE_BOUND(80)];
    size_t m = 0;
    REQUIRE_OK(tessera_chunk_encode(&al, &cp, dec, 80, again, sizeof again, &m));
    CHECK(m == n && memcmp(again, g_chunk, n) == 0);
    CHECK_ERR(tessera_chunk_encode(&al, &cp, dec, 80, again, 8, &m), TESSERA_ERR_BUFFER_TOO_SMALL);
  }

  /* New items for chunk 4 and for the edge chunk 8 (rows 8..9, columns 10..11 of a padded 4 x 5 chunk). */
  {
    static uint8_t enc[TESSERA_CHUNK_ENCODE_BOUND(80)];
    size_t m = 0;
    for (r = 0; r < 20; ++r) dec[r] = (int32_t)(-100 * r);
    REQUIRE_OK(tessera_chunk_encode(&al, &cp, dec, 80, enc, sizeof enc, &m));
    REQUIRE_OK(tessera_array_chunk_update(a, 4, enc, m));
    for (r = 0; r < 4; ++r)
      for (c = 0; c < 5; ++c) g_model[(4 + r) * 12 + 5 + c] = dec[r * 5 + c];
    CHECK(array_equals(a, g_model, 120));
    for (r = 0; r < 20; ++r) dec[r] = (int32_t)(3 + r);
    REQUIRE_OK(tessera_chunk_encode(&al, &cp, dec, 80, enc, sizeof enc, &m));
    REQUIRE_OK(tessera_array_chunk_update(a, 8, enc, m));
    for (r = 0; r < 2; ++r)
      for (c = 0; c < 2; ++c) g_model[(8 + r) * 12 + 10 + c] = dec[r * 5 + c];
    CHECK(array_equals(a, g_model, 120));
    /* A chunk of another size, a chunk number outside the array, a truncated chunk. */
    REQUIRE_OK(tessera_chunk_encode(&al, &cp, dec, 40, enc, sizeof enc, &m));
    CHECK_ERR(tessera_array_chunk_update(a, 4, enc, m), TESSERA_ERR_INVALID_ARGUMENT);
    REQUIRE_OK(tessera_chunk_encode(&al, &cp, dec, 80, enc, sizeof enc, &m));
    CHECK_ERR(tessera_array_chunk_update(a, 9, enc, m), TESSERA_ERR_OUT_OF_RANGE);
    CHECK_ERR(tessera_array_chunk_update(a, 4, enc, 10), TESSERA_ERR_TRUNCATED);
    CHECK(array_equals(a, g_model, 120));
    REQUIRE_OK(tessera_array_close(a));

    /* Committed: the frame reopens with the new chunks; a read-only array takes no chunk. */
    REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL));
    CHECK(array_equals(a, g_model, 120));
    CHECK_ERR(tessera_array_chunk_update(a, 4, enc, m), TESSERA_ERR_READ_ONLY);
  }

  /* Special chunks: a zero-filled array stores none; reading builds a 32-byte zeros chunk. */
  REQUIRE_OK(tessera_array_close(a));
  {
    tessera_buffer zb;
    tessera_storage zs;
    tessera_buffer_init(&zb, g_frame_b, sizeof(g_frame_b), 0);
    zs = tessera_buffer_storage(&zb);
    REQUIRE_OK(tessera_array_create(&a, &zs, &al, &p, NULL));
    REQUIRE_OK(tessera_array_chunk_read(a, 0, g_chunk, sizeof g_chunk, &n));
    REQUIRE_OK(tessera_chunk_info_get(g_chunk, n, &ci));
    CHECK(n == 32 && ci.special == 1 && ci.nbytes == 80);
    memset(dec, 1, 80);
    REQUIRE_OK(tessera_chunk_decode(&al, g_chunk, n, dec, 80, &n2));
    for (r = 0; r < 20; ++r) CHECK(dec[r] == 0);
    REQUIRE_OK(tessera_array_close(a));
  }
  CHECK_ERR(tessera_chunk_info_get(g_chunk, 8, &ci), TESSERA_ERR_TRUNCATED);
  tessera_chunk_params_init(&cp);
  cp.typesize = 0;
  CHECK_ERR(tessera_chunk_encode(&al, &cp, dec, 80, g_chunk, sizeof g_chunk, &n), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(g_arena.live == 0);
}

/* tessera_array_create and tessera_array_open run on the executor of their params and options. */
static void test_contiguous_executor(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  tessera_open_options o;
  test_executor_state es = {0, 0, 0};
  tessera_executor ex;

  memset(&o, 0xff, sizeof o);
  tessera_open_options_init(&o);
  CHECK(o.executor == NULL);
  tessera_array_params_init(&p);
  CHECK(p.executor == NULL);
  ex.run = test_executor_run;
  ex.context = &es;
  ex.workers = 2;
  tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
  st = tessera_buffer_storage(&buf);
  model_fill(g_model, 10 * 12, 17);
  params_grid(&p, 10, 12);
  p.executor = &ex;
  f = fill_of(g_model, 10 * 12);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &f));
  CHECK(es.runs > 0);
  REQUIRE_OK(tessera_array_close(a));
  es.runs = 0;
  o.executor = &ex;
  REQUIRE_OK(tessera_array_open(&a, &st, &al, &o));
  CHECK(array_equals(a, g_model, 120));
  CHECK(es.runs > 0 && es.max_worker == 1);
  REQUIRE_OK(tessera_array_close(a));
  ex.workers = 0;
  CHECK_ERR(tessera_array_open(&a, &st, &al, &o), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_create(&a, &st, &al, &p, &f), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(a == NULL);
  CHECK(g_arena.live == 0);
}

#ifdef TESSERA_TEST_POSIX
/* Arrays by path (a file and a directory) with the malloc allocator and a thread pool executor. */
static void test_posix(void) {
  tessera_allocator al = tessera_posix_allocator();
  tessera_thread_pool* pool = NULL;
  tessera_executor ex;
  tessera_posix_store* fs = NULL;
  tessera_posix_store* ds = NULL;
  tessera_posix_store* cs = NULL;
  tessera_array* a = NULL;
  tessera_array* b = NULL;
  tessera_array_params p;
  tessera_fill f;
  tessera_open_options o = {0};
  tessera_array_target t;
  const char* file = TESSERA_TEST_TMPDIR "/c_api.b2nd";
  const char* sdir = TESSERA_TEST_TMPDIR "/c_api_sparse.b2nd";
  const char* cdir = TESSERA_TEST_TMPDIR "/c_api_copy.b2nd";

  CHECK(tessera_cpu_count() >= 1);
  REQUIRE_OK(tessera_thread_pool_create(&pool, 3));
  ex = tessera_thread_pool_executor(pool);
  CHECK(ex.workers == 3 && ex.run != NULL);
  model_fill(g_model, 40 * 40, 13);
  params_grid(&p, 40, 40);
  p.chunkshape[0] = 20;
  p.chunkshape[1] = 20;
  p.blockshape[0] = 4;
  p.blockshape[1] = 10;
  p.durable = 1;
  p.executor = &ex;
  f = fill_of(g_model, 40 * 40);

  /* A sparse directory (created with its parents), then a file next to it. */
  REQUIRE_OK(tessera_posix_array_create(&a, &ds, sdir, 1, &al, &p, &f));
  CHECK(tessera_posix_store_is_directory(ds) == 1);
  CHECK(array_equals(a, g_model, 1600));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_posix_store_close(ds));
  REQUIRE_OK(tessera_posix_array_create(&a, &fs, file, 0, &al, &p, &f));
  CHECK(tessera_posix_store_is_directory(fs) == 0);
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_posix_store_close(fs));

  /* Both reopen by path, read on the pool; the file writable. */
  tessera_open_options_init(&o);
  o.executor = &ex;
  REQUIRE_OK(tessera_posix_array_open(&a, &ds, sdir, &al, &o));
  CHECK(tessera_posix_store_is_directory(ds) == 1);
  CHECK(array_equals(a, g_model, 1600));
  o.writable = 1;
  REQUIRE_OK(tessera_posix_array_open(&b, &fs, file, &al, &o));
  CHECK(array_equals(b, g_model, 1600));
  {
    int64_t at[2] = {39, 39};
    int32_t v = -9;
    REQUIRE_OK(tessera_array_element_set(b, at, &v, 4));
  }
  REQUIRE_OK(tessera_array_close(b));
  REQUIRE_OK(tessera_posix_store_close(fs));

  /* The sparse array copied into another directory, rechunked; the file reopens with its change. */
  REQUIRE_OK(tessera_posix_store_open(&cs, cdir, TESSERA_POSIX_CREATE_DIRECTORY));
  t = tessera_posix_store_target(cs);
  CHECK(t.directory != NULL && t.storage == NULL);
  {
    tessera_array_params q;
    REQUIRE_OK(tessera_array_params_get(a, &q));
    q.chunkshape[0] = 10;
    q.chunkshape[1] = 40;
    q.blockshape[0] = 5;
    q.blockshape[1] = 8;
    q.executor = &ex;
    REQUIRE_OK(tessera_array_copy(&b, &t, &al, a, &q));
  }
  REQUIRE_OK(tessera_array_close(b));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_posix_store_close(ds));
  REQUIRE_OK(tessera_posix_store_close(cs));
  o.writable = 0;
  REQUIRE_OK(tessera_posix_array_open(&a, &cs, cdir, &al, &o));
  {
    tessera_array_info info;
    REQUIRE_OK(tessera_array_info_get(a, &info));
    CHECK(info.chunkshape[0] == 10 && info.chunkshape[1] == 40 && info.nchunks == 4);
  }
  CHECK(array_equals(a, g_model, 1600));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_posix_store_close(cs));
  g_model[1599] = -9;
  REQUIRE_OK(tessera_posix_array_open(&a, &fs, file, &al, NULL));
  CHECK(array_equals(a, g_model, 1600));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_posix_store_close(fs));

  /* A read-only open maps the file: its storage brackets reads, and its view (the file's bytes) is given only
   * inside a bracket (when the system grants the lease; else none, and reads go through pread). */
  REQUIRE_OK(tessera_posix_store_open(&fs, file, TESSERA_POSIX_READ));
  {
    const tessera_array_target t = tessera_posix_store_target(fs);
    const tessera_storage* st = t.storage;
    size_t n = 1;
    uint64_t size = 0;
    const uint8_t* v;
    uint8_t head[4];
    REQUIRE(st != NULL && st->view != NULL && st->reads_begin != NULL && st->reads_end != NULL);
    CHECK(st->view(st->context, &n) == NULL);
    REQUIRE_OK(st->size(st->context, &size));
    REQUIRE_OK(st->read(st->context, 0, head, 4));
    st->reads_begin(st->context);
    v = st->view(st->context, &n);
    if (v != NULL) CHECK(n == size && memcmp(v, head, 4) == 0);
    st->reads_end(st->context);
    CHECK(st->view(st->context, &n) == NULL);
    CHECK(head[1] == 0xa8 && memcmp(head + 2, "b2", 2) == 0); /* a frame's header: its "b2frame" magic */
  }
  REQUIRE_OK(tessera_posix_store_array_open(&a, fs, &al, NULL));
  CHECK(array_equals(a, g_model, 1600));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_posix_store_close(fs));

  /* The file mapped (read in place, on the pool and serially), and the directory through the same mode: both
   * read-only, so a writable open is refused. */
  REQUIRE_OK(tessera_posix_store_open(&fs, file, TESSERA_POSIX_READ_MAPPED));
  CHECK(tessera_posix_store_is_directory(fs) == 0);
  o.writable = 0;
  o.executor = &ex;
  REQUIRE_OK(tessera_posix_store_array_open(&a, fs, &al, &o));
  CHECK(array_equals(a, g_model, 1600));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_posix_store_array_open(&a, fs, &al, NULL));
  CHECK(array_equals(a, g_model, 1600));
  {
    int64_t at[2] = {0, 0};
    int32_t v = 5;
    CHECK(tessera_array_element_set(a, at, &v, 4).code != TESSERA_OK);
  }
  REQUIRE_OK(tessera_array_close(a));
  o.writable = 1;
  CHECK(tessera_posix_store_array_open(&a, fs, &al, &o).code != TESSERA_OK);
  CHECK(a == NULL);
  o.writable = 0;
  REQUIRE_OK(tessera_posix_store_close(fs));
  model_fill(g_model, 40 * 40, 13); /* the copy was made before the file's change */
  REQUIRE_OK(tessera_posix_store_open(&cs, cdir, TESSERA_POSIX_READ_MAPPED));
  CHECK(tessera_posix_store_is_directory(cs) == 1);
  REQUIRE_OK(tessera_posix_store_array_open(&a, cs, &al, &o));
  CHECK(array_equals(a, g_model, 1600));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_posix_store_close(cs));

  CHECK_ERR(tessera_posix_array_open(&a, &fs, TESSERA_TEST_TMPDIR "/missing.b2nd", &al, NULL), TESSERA_ERR_IO);
  CHECK(a == NULL && fs == NULL);
  {
    tessera_thread_pool* none = NULL;
    CHECK_ERR(tessera_thread_pool_create(&none, 0), TESSERA_ERR_INVALID_ARGUMENT);
    CHECK(none == NULL);
  }
  REQUIRE_OK(tessera_thread_pool_destroy(pool));
}

/* A C task: counts its run in items[index] (bits 0-7) and records worker 1 (bit 8). */
static void count_task(void* context, size_t index, uint32_t worker) {
  int32_t* items = (int32_t*)context;
  items[index] += 1 + (worker == 1 ? (1 << 8) : 0) + (worker > 1 ? (1 << 16) : 0);
}

/* A create through the pool's C executor takes the pool's C++ executor whole: its chunks' appends run beside the
 * next chunks' encodes (the pool counts runs beside), and the bytes are those of a create through a plain C
 * executor of as many workers (which has no run_beside: the appends then run between the encodes). */
static void test_posix_pool_create(void) {
  tessera_allocator al = tessera_posix_allocator();
  tessera_thread_pool* pool = NULL;
  tessera_executor ex, plain;
  test_executor_state es = {0, 0, 0};
  tessera_thread_pool_counts before, after;
  tessera_buffer ba, bb;
  tessera_storage sa, sb;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;

  REQUIRE_OK(tessera_thread_pool_create(&pool, 2));
  ex = tessera_thread_pool_executor(pool);
  CHECK(ex.workers == 2 && ex.run != NULL);
  /* Its run, called from C, runs C tasks on the pool: each once, with worker indices below 2. */
  {
    int32_t i;
    for (i = 0; i < 64; ++i) g_out[i] = 0;
    ex.run(ex.context, 64, count_task, g_out);
    for (i = 0; i < 64; ++i) CHECK(g_out[i] == 1 || g_out[i] == 1 + (1 << 8));
  }
  plain.run = test_executor_run;
  plain.context = &es;
  plain.workers = 2;
  model_fill(g_model, 40 * 40, 17);
  params_grid(&p, 40, 40);
  p.chunkshape[0] = 8; /* 25 chunks: several rounds of encodes */
  p.chunkshape[1] = 8;
  p.blockshape[0] = 4;
  p.blockshape[1] = 4;
  f = fill_of(g_model, 40 * 40);

  tessera_buffer_init(&ba, g_frame_a, sizeof(g_frame_a), 0);
  tessera_buffer_init(&bb, g_frame_b, sizeof(g_frame_b), 0);
  sa = tessera_buffer_storage(&ba);
  sb = tessera_buffer_storage(&bb);
  before = tessera_thread_pool_counts_get(pool);
  p.executor = &ex;
  REQUIRE_OK(tessera_array_create(&a, &sa, &al, &p, &f));
  CHECK(array_equals(a, g_model, 40 * 40));
  REQUIRE_OK(tessera_array_close(a));
  after = tessera_thread_pool_counts_get(pool);
  CHECK(after.runs > before.runs);
  CHECK(after.runs_beside > before.runs_beside);
  CHECK(after.runs_beside <= after.runs);

  p.executor = &plain;
  REQUIRE_OK(tessera_array_create(&a, &sb, &al, &p, &f));
  REQUIRE_OK(tessera_array_close(a));
  CHECK(es.runs > 0 && es.max_worker == 1);
  CHECK(ba.size > 0 && ba.size == bb.size && memcmp(g_frame_a, g_frame_b, ba.size) == 0);

  /* The plain executor's runs did not reach the pool. */
  before = tessera_thread_pool_counts_get(pool);
  CHECK(before.runs == after.runs && before.runs_beside == after.runs_beside);
  before = tessera_thread_pool_counts_get(NULL);
  CHECK(before.runs == 0 && before.runs_beside == 0 && before.sleeps == 0);
  REQUIRE_OK(tessera_thread_pool_destroy(pool));
}

/* The POSIX face's refusals, each with its code, leaving nothing open: null or empty arguments, unknown modes,
 * paths the system refuses, and files that are no array (the store opened for them is closed again). */
static void test_posix_refusals(void) {
  tessera_allocator al = tessera_posix_allocator();
  tessera_posix_store* s = NULL;
  tessera_array* a = NULL;
  tessera_array_params p;
  tessera_fill f;
  tessera_array_target t;
  tessera_executor ex;
  const char* file = TESSERA_TEST_TMPDIR "/c_api_not_an_array.b2nd";
  const char* nodir = TESSERA_TEST_TMPDIR "/missing_dir/x.b2nd";

  CHECK_ERR(tessera_posix_store_open(NULL, file, TESSERA_POSIX_READ), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_posix_store_open(&s, NULL, TESSERA_POSIX_READ), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_posix_store_open(&s, "", TESSERA_POSIX_READ), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_posix_store_open(&s, file, -1), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_posix_store_open(&s, file, TESSERA_POSIX_READ_MAPPED + 1), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_posix_store_open(&s, TESSERA_TEST_TMPDIR "/missing.b2nd", TESSERA_POSIX_READ_MAPPED), TESSERA_ERR_IO);
  CHECK_ERR(tessera_posix_store_open(&s, "/dev/null", TESSERA_POSIX_READ_MAPPED), TESSERA_ERR_IO); /* not a file */
  CHECK_ERR(tessera_posix_store_open(&s, nodir, TESSERA_POSIX_REPLACE_FILE), TESSERA_ERR_IO);
  CHECK(s == NULL);
  /* An empty file: no directory can be made over it, and it holds no array. */
  REQUIRE_OK(tessera_posix_store_open(&s, file, TESSERA_POSIX_REPLACE_FILE));
  CHECK(tessera_posix_store_is_directory(s) == 0);
  REQUIRE_OK(tessera_posix_store_close(s));
  s = NULL;
  CHECK(tessera_posix_store_open(&s, file, TESSERA_POSIX_CREATE_DIRECTORY).code != TESSERA_OK);
  CHECK(s == NULL);
  CHECK(tessera_posix_array_open(&a, &s, file, &al, NULL).code != TESSERA_OK);
  CHECK(a == NULL && s == NULL);
  /* The empty file mapped (nothing is mapped): a store, but no array in it. */
  REQUIRE_OK(tessera_posix_store_open(&s, file, TESSERA_POSIX_READ_MAPPED));
  CHECK(tessera_posix_store_array_open(&a, s, &al, NULL).code != TESSERA_OK);
  CHECK(a == NULL);
  REQUIRE_OK(tessera_posix_store_close(s));
  s = NULL;
  CHECK_ERR(tessera_posix_store_array_open(NULL, s, &al, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_posix_store_array_open(&a, NULL, &al, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(a == NULL);
  /* Parameters the array refuses, after the store was made. */
  tessera_array_params_init(&p);
  p.ndim = -1;
  f.kind = TESSERA_FILL_ZEROS;
  f.data = NULL;
  f.size = 0;
  CHECK_ERR(tessera_posix_array_create(&a, &s, file, 0, &al, &p, &f), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(a == NULL && s == NULL);
  CHECK_ERR(tessera_posix_array_create(NULL, &s, file, 0, &al, &p, &f), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_posix_array_create(&a, NULL, file, 0, &al, &p, &f), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_posix_array_create(&a, &s, nodir, 0, &al, &p, &f), TESSERA_ERR_IO);
  CHECK_ERR(tessera_posix_array_open(NULL, &s, file, &al, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_posix_array_open(&a, NULL, file, &al, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  /* No store, no pool. */
  REQUIRE_OK(tessera_posix_store_close(NULL));
  CHECK(tessera_posix_store_is_directory(NULL) == 0);
  t = tessera_posix_store_target(NULL);
  CHECK(t.storage == NULL && t.directory == NULL);
  CHECK_ERR(tessera_thread_pool_create(NULL, 2), TESSERA_ERR_INVALID_ARGUMENT);
  ex = tessera_thread_pool_executor(NULL);
  CHECK(ex.run == NULL && ex.workers == 1);
  REQUIRE_OK(tessera_thread_pool_destroy(NULL));
}
#endif

/* ---- The runner --------------------------------------------------------------------------------------------- */

/* Dictionaries through the C API: use_dict on chunk parameters puts one in the chunk (the header's dictionary
 * flag), the chunk decodes exactly, and a codec without dictionaries is refused. */
static void test_dict_chunks(void) {
  tessera_allocator al = arena_reset();
  static int64_t items[2048];
  static uint8_t enc[TESSERA_CHUNK_ENCODE_BOUND(sizeof items)];
  static int64_t back[2048];
  tessera_chunk_params cp;
  size_t n = 0, m = 0, i;
  tessera_status s;
  for (i = 0; i < 2048; ++i) items[i] = (int64_t)(1000000 + i / 3 + (i % 17) * 5);
  tessera_chunk_params_init(&cp);
  cp.typesize = 8;
  cp.codec = TESSERA_CODEC_LZ4;
  cp.blocksize = 2048;
  cp.use_dict = 1;
  s = tessera_chunk_encode(&al, &cp, items, sizeof items, enc, sizeof enc, &n);
  if (s.code == TESSERA_ERR_CODEC_UNAVAILABLE) return; /* a build without LZ4 */
  REQUIRE_OK(s);
  CHECK((enc[31] & 0x01) != 0);
  REQUIRE_OK(tessera_chunk_decode(&al, enc, n, back, sizeof back, &m));
  CHECK(m == sizeof items && memcmp(back, items, sizeof items) == 0);
  cp.use_dict = 0;
  REQUIRE_OK(tessera_chunk_encode(&al, &cp, items, sizeof items, enc, sizeof enc, &n));
  CHECK((enc[31] & 0x01) == 0);
  cp.use_dict = 1;
  cp.codec = TESSERA_CODEC_BLOSCLZ;
  CHECK_ERR(tessera_chunk_encode(&al, &cp, items, sizeof items, enc, sizeof enc, &n), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(g_arena.live == 0);
}

/* An image-like byte grid of (rows, cols): 8x8 cells drawn from a few patterns, so that NDLZ finds repeats. */
static void nd_image(uint8_t* img, int rows, int cols) {
  int r, c;
  for (r = 0; r < rows; ++r)
    for (c = 0; c < cols; ++c) {
      const int cell = (r / 8 * 5 + c / 8 * 3) % 7;
      img[r * cols + c] = (uint8_t)(cell == 6 ? (r * 31 + c * 17) & 0xff : cell * 40 + (r % 8) * 5 + c % 8);
    }
}

/* Chunk-level NDLZ, NDCELL and NDMEAN from C: the blocks' n-d shape in tessera_chunk_params (nd_ndim,
 * nd_blockshape) and tessera_chunk_decode_nd; without it the chunk is refused with UNSUPPORTED, naming what is
 * missing; an array's chunk parameters carry its own, and encode its chunk as the array wrote it. */
static void test_nd_chunks(void) {
  tessera_allocator al = arena_reset();
  static uint8_t img[2 * 32 * 48], back[sizeof img];
  static uint8_t enc[TESSERA_CHUNK_ENCODE_BOUND(sizeof img)], enc2[sizeof enc];
  const int32_t blockshape[2] = {32, 48};
  static const int32_t bad_shape[2] = {0, 48};
  tessera_chunk_params cp;
  tessera_chunk_info ci;
  tessera_status s;
  size_t n = 0, m = 0;
  nd_image(img, 2 * 32, 48); /* two blocks of 32x48 */

  tessera_chunk_params_init(&cp);
  CHECK(cp.nd_ndim == 0 && cp.nd_blockshape == NULL);
  cp.codec = TESSERA_CODEC_NDLZ;
  cp.compcode_meta = 4;
  cp.filters[TESSERA_MAX_FILTERS - 1] = TESSERA_FILTER_NONE;
  cp.blocksize = 32 * 48;
  /* No geometry: refused, nothing written, and the message says what is missing. */
  n = 7;
  s = tessera_chunk_encode(&al, &cp, img, sizeof img, enc, sizeof enc, &n);
  CHECK(s.code == TESSERA_ERR_UNSUPPORTED && n == 0);
  /* (a build without the messages' texts, bare metal's default, gives the code's name) */
  CHECK(s.message != NULL &&
        (strstr(s.message, "nd_blockshape") != NULL || strcmp(s.message, tessera_errc_name(s.code)) == 0));
  /* Bad geometries. */
  cp.nd_ndim = 2;
  CHECK_ERR(tessera_chunk_encode(&al, &cp, img, sizeof img, enc, sizeof enc, &n), TESSERA_ERR_INVALID_ARGUMENT);
  cp.nd_blockshape = bad_shape;
  CHECK_ERR(tessera_chunk_encode(&al, &cp, img, sizeof img, enc, sizeof enc, &n), TESSERA_ERR_INVALID_ARGUMENT);
  cp.nd_ndim = TESSERA_MAX_DIMS + 1;
  cp.nd_blockshape = blockshape;
  CHECK_ERR(tessera_chunk_encode(&al, &cp, img, sizeof img, enc, sizeof enc, &n), TESSERA_ERR_INVALID_ARGUMENT);
  cp.nd_ndim = 1; /* NDLZ codes 2-D blocks only */
  CHECK_ERR(tessera_chunk_encode(&al, &cp, img, sizeof img, enc, sizeof enc, &n), TESSERA_ERR_UNSUPPORTED);
  cp.nd_ndim = 2;
  cp.compcode_meta = 5; /* cells of 4 or 8 */
  CHECK_ERR(tessera_chunk_encode(&al, &cp, img, sizeof img, enc, sizeof enc, &n), TESSERA_ERR_UNSUPPORTED);

  /* NDLZ, cells of 4 and of 8: smaller than the image, and decoded back (NDLZ reads without the geometry). */
  cp.compcode_meta = 4;
  REQUIRE_OK(tessera_chunk_encode(&al, &cp, img, sizeof img, enc, sizeof enc, &n));
  REQUIRE_OK(tessera_chunk_info_get(enc, n, &ci));
  CHECK(ci.nbytes == (int32_t)sizeof img && ci.blocksize == 32 * 48 && n < sizeof img * 3 / 4);
  REQUIRE_OK(tessera_chunk_decode(&al, enc, n, back, sizeof back, &m));
  CHECK(m == sizeof img && memcmp(back, img, sizeof img) == 0);
  cp.compcode_meta = 8;
  REQUIRE_OK(tessera_chunk_encode(&al, &cp, img, sizeof img, enc2, sizeof enc2, &m));
  CHECK(m < sizeof img * 3 / 4 && (m != n || memcmp(enc, enc2, n) != 0));
  memset(back, 0, sizeof back);
  REQUIRE_OK(tessera_chunk_decode(&al, enc2, m, back, sizeof back, &m));
  CHECK(m == sizeof img && memcmp(back, img, sizeof img) == 0);

  /* NDCELL before NDLZ: reading needs the geometry too (tessera_chunk_decode_nd). */
  cp.compcode_meta = 4;
  cp.filters[TESSERA_MAX_FILTERS - 1] = TESSERA_FILTER_NDCELL;
  cp.filters_meta[TESSERA_MAX_FILTERS - 1] = 4;
  REQUIRE_OK(tessera_chunk_encode(&al, &cp, img, sizeof img, enc, sizeof enc, &n));
  CHECK_ERR(tessera_chunk_decode(&al, enc, n, back, sizeof back, &m), TESSERA_ERR_UNSUPPORTED);
  memset(back, 0, sizeof back);
  REQUIRE_OK(tessera_chunk_decode_nd(&al, 2, blockshape, enc, n, back, sizeof back, &m));
  CHECK(m == sizeof img && memcmp(back, img, sizeof img) == 0);
  CHECK_ERR(tessera_chunk_decode_nd(&al, 2, NULL, enc, n, back, sizeof back, &m), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_chunk_decode_nd(&al, -1, blockshape, enc, n, back, sizeof back, &m), TESSERA_ERR_INVALID_ARGUMENT);

  /* NDMEAN on float32: each 4x4 cell of a block becomes its mean (lossy), the same written and read back. Its
     items are the file's: little-endian floats (floats_le turns host order into that and back). */
  {
    static float f[32 * 48], fb[32 * 48];
    int i, k;
    for (i = 0; i < 32 * 48; ++i) f[i] = (float)(img[i] % 16) * 0.5f;
    floats_le(f, 32 * 48);
    tessera_chunk_params_init(&cp);
    cp.typesize = 4;
    cp.codec = TESSERA_CODEC_BLOSCLZ;
    cp.blocksize = 32 * 48 * 4;
    cp.filters[TESSERA_MAX_FILTERS - 1] = TESSERA_FILTER_NDMEAN;
    cp.filters_meta[TESSERA_MAX_FILTERS - 1] = 4;
    CHECK_ERR(tessera_chunk_encode(&al, &cp, f, sizeof f, enc, sizeof enc, &n), TESSERA_ERR_UNSUPPORTED);
    cp.nd_ndim = 2;
    cp.nd_blockshape = blockshape;
    REQUIRE_OK(tessera_chunk_encode(&al, &cp, f, sizeof f, enc, sizeof enc, &n));
    REQUIRE_OK(tessera_chunk_decode_nd(&al, 2, blockshape, enc, n, fb, sizeof fb, &m));
    CHECK(m == sizeof f);
    floats_le(f, 32 * 48);
    floats_le(fb, 32 * 48);
    for (i = 0; i < 32 * 48; i += 4 * 48 + 5) { /* the cell of item i: its mean */
      const int r0 = i / 48 / 4 * 4, c0 = i % 48 / 4 * 4;
      float sum = 0.0f;
      for (k = 0; k < 16; ++k) sum += f[(r0 + k / 4) * 48 + c0 + k % 4];
      CHECK(fb[i] == sum / 16.0f);
    }
  }

  /* An NDLZ array's chunk parameters carry its block shape: its one chunk (one block) encodes as it wrote it. */
  {
    tessera_buffer buf;
    tessera_storage st;
    tessera_array_params p;
    tessera_fill f;
    tessera_array* a = NULL;
    tessera_array_params_init(&p);
    p.ndim = 2;
    p.shape[0] = 32, p.shape[1] = 48;
    p.chunkshape[0] = 32, p.chunkshape[1] = 48;
    p.blockshape[0] = 32, p.blockshape[1] = 48;
    p.dtype = "|u1";
    p.durable = 0;
    p.codec = TESSERA_CODEC_NDLZ;
    p.compcode_meta = 8;
    p.filters[TESSERA_MAX_FILTERS - 1] = TESSERA_FILTER_NONE;
    f.kind = TESSERA_FILL_BUFFER;
    f.data = img;
    f.size = 32 * 48;
    tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
    st = tessera_buffer_storage(&buf);
    REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &f));
    REQUIRE_OK(tessera_array_chunk_params_get(a, &cp));
    CHECK(cp.codec == TESSERA_CODEC_NDLZ && cp.compcode_meta == 8 && cp.nd_ndim == 2 && cp.nd_blockshape != NULL);
    if (cp.nd_blockshape != NULL) CHECK(cp.nd_blockshape[0] == 32 && cp.nd_blockshape[1] == 48);
    REQUIRE_OK(tessera_chunk_encode(&al, &cp, img, 32 * 48, enc, sizeof enc, &n));
    REQUIRE_OK(tessera_array_chunk_read(a, 0, enc2, sizeof enc2, &m));
    CHECK(m == n && memcmp(enc, enc2, n) == 0);
    REQUIRE_OK(tessera_array_close(a));
  }
  CHECK(g_arena.live == 0);
}

/* The code a slice write gets on a's array when a is read-only (the one every write on it must get). */
static int32_t read_only_code(tessera_array* a) {
  int64_t start[2] = {0, 0}, stop[2] = {1, 1};
  int32_t v = 0;
  return tessera_array_slice_set(a, start, stop, &v, sizeof v).code;
}

/* Orthogonal writes against the model: across chunk boundaries, repeats (the last listed wins), an empty
   selection, refused selections that change nothing, a read-only array. */
static void test_orthogonal_set(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  int64_t rows[5] = {9, 0, 4, 4, 5};
  int64_t cols[4] = {11, 2, 5, 6};
  int64_t urows[3] = {7, 1, 8};
  const int64_t* idx[2];
  int64_t counts[2] = {5, 4};
  int64_t k, j;
  int32_t code;

  tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
  st = tessera_buffer_storage(&buf);
  model_fill(g_model, 10 * 12, 5);
  params_grid(&p, 10, 12);
  f = fill_of(g_model, 10 * 12);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &f));

  idx[0] = rows;
  idx[1] = cols;
  for (k = 0; k < 5 * 4; ++k) g_src[k] = (int32_t)(-1000 - k);
  REQUIRE_OK(tessera_array_orthogonal_set(a, idx, counts, g_src, 5 * 4 * 4));
  for (k = 0; k < 5; ++k) /* in C order of src: a repeated row takes its last listing */
    for (j = 0; j < 4; ++j) g_model[rows[k] * 12 + cols[j]] = g_src[k * 4 + j];
  CHECK(array_equals(a, g_model, 10 * 12));
  CHECK(g_model[4 * 12 + 2] == g_src[3 * 4 + 1]);

  /* Unique indices read back what was written. */
  idx[0] = urows;
  counts[0] = 3;
  for (k = 0; k < 3 * 4; ++k) g_src[k] = (int32_t)(5000 + k);
  REQUIRE_OK(tessera_array_orthogonal_set(a, idx, counts, g_src, 3 * 4 * 4));
  memset(g_out, 0, sizeof(g_out));
  REQUIRE_OK(tessera_array_orthogonal_get(a, idx, counts, g_out, 3 * 4 * 4));
  CHECK(memcmp(g_out, g_src, 3 * 4 * 4) == 0);
  for (k = 0; k < 3; ++k)
    for (j = 0; j < 4; ++j) g_model[urows[k] * 12 + cols[j]] = g_src[k * 4 + j];
  CHECK(array_equals(a, g_model, 10 * 12));

  /* An empty selection writes nothing; refused selections change nothing. */
  counts[0] = 0;
  REQUIRE_OK(tessera_array_orthogonal_set(a, idx, counts, g_src, 0));
  counts[0] = 3;
  urows[1] = 10;
  CHECK_ERR(tessera_array_orthogonal_set(a, idx, counts, g_src, 3 * 4 * 4), TESSERA_ERR_OUT_OF_RANGE);
  urows[1] = -1;
  CHECK_ERR(tessera_array_orthogonal_set(a, idx, counts, g_src, 3 * 4 * 4), TESSERA_ERR_OUT_OF_RANGE);
  urows[1] = 1;
  CHECK_ERR(tessera_array_orthogonal_set(a, idx, counts, g_src, 3 * 4 * 4 - 1), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_orthogonal_set(a, NULL, counts, g_src, 3 * 4 * 4), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_orthogonal_set(NULL, idx, counts, g_src, 3 * 4 * 4), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(array_equals(a, g_model, 10 * 12));
  CHECK(tessera_array_dirty(a) == 0);
  REQUIRE_OK(tessera_array_close(a));

  /* Reopened read-only: what was committed, and writes refused as slice writes are. */
  {
    tessera_storage st2 = tessera_buffer_storage(&buf);
    REQUIRE_OK(tessera_array_open(&a, &st2, &al, NULL));
    CHECK(array_equals(a, g_model, 10 * 12));
    code = read_only_code(a);
    CHECK(code != TESSERA_OK);
    CHECK(tessera_array_orthogonal_set(a, idx, counts, g_src, 3 * 4 * 4).code == code);
    CHECK(array_equals(a, g_model, 10 * 12));
    REQUIRE_OK(tessera_array_close(a));
  }
  CHECK(g_arena.live == 0);
}

/* Slices into and from a box of a larger caller buffer: the box gets the slice, the rest stays as it was;
   boxes outside the buffer and short buffers are refused. */
static void test_slice_buffer(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  int64_t start[2] = {3, 4}, stop[2] = {7, 11};
  int64_t bshape[2] = {6, 9}, bstart[2] = {1, 2};
  int64_t r, c;
  int32_t code;

  tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
  st = tessera_buffer_storage(&buf);
  model_fill(g_model, 10 * 12, 9);
  params_grid(&p, 10, 12);
  f = fill_of(g_model, 10 * 12);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &f));

  /* [3, 7) x [4, 11) into the box at (1, 2) of a (6, 9) buffer. */
  for (r = 0; r < 6 * 9; ++r) g_out[r] = -7;
  REQUIRE_OK(tessera_array_slice_get_into(a, start, stop, g_out, 6 * 9 * 4, bshape, bstart));
  for (r = 0; r < 6; ++r)
    for (c = 0; c < 9; ++c) {
      const int in_box = r >= 1 && r < 5 && c >= 2 && c < 9;
      CHECK(g_out[r * 9 + c] == (in_box ? g_model[(r - 1 + 3) * 12 + (c - 2 + 4)] : -7));
    }
  /* NULL buffer_start: the leading corner. */
  for (r = 0; r < 6 * 9; ++r) g_out[r] = -7;
  REQUIRE_OK(tessera_array_slice_get_into(a, start, stop, g_out, 6 * 9 * 4, bshape, NULL));
  for (r = 0; r < 6; ++r)
    for (c = 0; c < 9; ++c) CHECK(g_out[r * 9 + c] == (r < 4 && c < 7 ? g_model[(r + 3) * 12 + c + 4] : -7));

  /* Refused: the box past the buffer's edge, a short buffer, a negative or overflowing shape, a slice outside. */
  bstart[0] = 3;
  CHECK_ERR(tessera_array_slice_get_into(a, start, stop, g_out, 6 * 9 * 4, bshape, bstart), TESSERA_ERR_OUT_OF_RANGE);
  bstart[0] = 1;
  CHECK_ERR(tessera_array_slice_get_into(a, start, stop, g_out, 6 * 9 * 4 - 1, bshape, bstart),
            TESSERA_ERR_BUFFER_TOO_SMALL);
  bshape[1] = -9;
  CHECK_ERR(tessera_array_slice_get_into(a, start, stop, g_out, 6 * 9 * 4, bshape, bstart),
            TESSERA_ERR_INVALID_ARGUMENT);
  bshape[1] = INT64_MAX;
  CHECK_ERR(tessera_array_slice_get_into(a, start, stop, g_out, 6 * 9 * 4, bshape, bstart), TESSERA_ERR_OVERFLOW);
  bshape[1] = 9;
  stop[0] = 11;
  CHECK_ERR(tessera_array_slice_get_into(a, start, stop, g_out, 6 * 9 * 4, bshape, bstart), TESSERA_ERR_OUT_OF_RANGE);
  CHECK_ERR(tessera_array_slice_get_into(a, start, stop, g_out, 6 * 9 * 4, NULL, bstart), TESSERA_ERR_INVALID_ARGUMENT);

  /* [5, 9) x [1, 8) written from the box at (2, 1) of a (6, 9) buffer; refused writes change nothing. */
  for (r = 0; r < 6 * 9; ++r) g_src[r] = (int32_t)(-100 - r);
  start[0] = 5;
  start[1] = 1;
  stop[0] = 9;
  stop[1] = 8;
  bstart[0] = 2;
  bstart[1] = 1;
  REQUIRE_OK(tessera_array_slice_set_from(a, start, stop, g_src, 6 * 9 * 4, bshape, bstart));
  for (r = 5; r < 9; ++r)
    for (c = 1; c < 8; ++c) g_model[r * 12 + c] = g_src[(r - 5 + 2) * 9 + (c - 1 + 1)];
  CHECK(array_equals(a, g_model, 10 * 12));
  bstart[1] = 3;
  CHECK_ERR(tessera_array_slice_set_from(a, start, stop, g_src, 6 * 9 * 4, bshape, bstart), TESSERA_ERR_OUT_OF_RANGE);
  bstart[1] = 1;
  CHECK_ERR(tessera_array_slice_set_from(a, start, stop, g_src, 6 * 8 * 4, bshape, bstart), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK(array_equals(a, g_model, 10 * 12));
  REQUIRE_OK(tessera_array_close(a));

  {
    tessera_storage st2 = tessera_buffer_storage(&buf);
    REQUIRE_OK(tessera_array_open(&a, &st2, &al, NULL));
    CHECK(array_equals(a, g_model, 10 * 12));
    code = read_only_code(a);
    CHECK(code != TESSERA_OK);
    CHECK(tessera_array_slice_set_from(a, start, stop, g_src, 6 * 9 * 4, bshape, bstart).code == code);
    REQUIRE_OK(tessera_array_close(a));
  }
  CHECK(g_arena.live == 0);
}

/* Resizing at a position: zero rows and columns inserted inside, items removed from the start, the end's rule
   kept; misplaced changes refused with nothing changed. */
static void test_resize_at(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill f;
  tessera_array* a = NULL;
  tessera_array_info info;
  int64_t shape[2] = {12, 15}, start[2] = {4, 5};
  int64_t r, c, k;

  tessera_buffer_init(&buf, g_frame_a, sizeof(g_frame_a), 0);
  st = tessera_buffer_storage(&buf);
  model_fill(g_model, 8 * 10, 11);
  params_grid(&p, 8, 10);
  f = fill_of(g_model, 8 * 10);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &f));

  /* (8, 10) -> (12, 15): four zero rows before row 4, five zero columns before column 5. */
  REQUIRE_OK(tessera_array_resize_at(a, shape, start));
  for (r = 0, k = 0; r < 12; ++r)
    for (c = 0; c < 15; ++c, ++k)
      g_model2[k] = (r >= 4 && r < 8) || (c >= 5 && c < 10) ? 0 : g_model[(r < 8 ? r : r - 4) * 10 + (c < 10 ? c : c - 5)];
  CHECK(array_equals(a, g_model2, 12 * 15));

  /* (12, 15) -> (8, 13): rows 0..3 removed, two columns at the end. */
  shape[0] = 8;
  shape[1] = 13;
  start[0] = 0;
  start[1] = 13;
  REQUIRE_OK(tessera_array_resize_at(a, shape, start));
  for (r = 0, k = 0; r < 8; ++r)
    for (c = 0; c < 13; ++c) g_model[k++] = g_model2[(r + 4) * 15 + c];
  CHECK(array_equals(a, g_model, 8 * 13));

  /* Refused, nothing changed: inside but not on a chunk boundary, a change not a chunk multiple, start past
     the extent, removed items past the end. */
  shape[0] = 12;
  start[0] = 2;
  CHECK_ERR(tessera_array_resize_at(a, shape, start), TESSERA_ERR_INVALID_ARGUMENT);
  shape[0] = 10;
  start[0] = 4;
  CHECK_ERR(tessera_array_resize_at(a, shape, start), TESSERA_ERR_INVALID_ARGUMENT);
  start[0] = 9;
  CHECK_ERR(tessera_array_resize_at(a, shape, start), TESSERA_ERR_OUT_OF_RANGE);
  shape[0] = 4;
  start[0] = 8;
  CHECK_ERR(tessera_array_resize_at(a, shape, start), TESSERA_ERR_OUT_OF_RANGE);
  CHECK_ERR(tessera_array_resize_at(a, NULL, start), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(array_equals(a, g_model, 8 * 13));

  /* NULL start: at the ends, as tessera_array_resize. */
  shape[0] = 9;
  shape[1] = 11;
  REQUIRE_OK(tessera_array_resize_at(a, shape, NULL));
  for (r = 0, k = 0; r < 9; ++r)
    for (c = 0; c < 11; ++c) g_model2[k++] = r < 8 && c < 13 ? g_model[r * 13 + c] : 0;
  CHECK(array_equals(a, g_model2, 9 * 11));
  REQUIRE_OK(tessera_array_close(a));

  {
    tessera_storage st2 = tessera_buffer_storage(&buf);
    REQUIRE_OK(tessera_array_open(&a, &st2, &al, NULL));
    REQUIRE_OK(tessera_array_info_get(a, &info));
    CHECK(info.shape[0] == 9 && info.shape[1] == 11);
    CHECK(array_equals(a, g_model2, 9 * 11));
    CHECK(tessera_array_resize_at(a, shape, start).code == read_only_code(a));
    REQUIRE_OK(tessera_array_close(a));
  }
  CHECK(g_arena.live == 0);
}

static const test_case g_cases[] = {
    {"sparse_executor", test_sparse_executor},
    {"sparse_sweep", test_sparse_sweep},
    {"items", test_items},
    {"read_brackets", test_read_brackets},
    {"insert_delete", test_insert_delete},
    {"orthogonal_set", test_orthogonal_set},
    {"slice_buffer", test_slice_buffer},
    {"resize_at", test_resize_at},
    {"space", test_space},
    {"new_arrays", test_new_arrays},
    {"readers", test_readers},
    {"chunks", test_chunks},
    {"contiguous_executor", test_contiguous_executor},
    {"dict_chunks", test_dict_chunks},
    {"nd_chunks", test_nd_chunks},
#ifdef TESSERA_TEST_POSIX
    {"posix", test_posix},
    {"posix_refusals", test_posix_refusals},
    {"posix_pool_create", test_posix_pool_create},
#endif
};

int main(void) {
  tessera_codec_link_all(); /* the tests use every codec and filter of the build */
  tessera_filter_link_all();
  tessera_partition_link_auto();
  tessera_encoder_link_parallel();
  return capi_cases_run("capi_ops", g_cases, sizeof(g_cases) / sizeof(g_cases[0]));
}
