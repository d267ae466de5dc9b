/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests of the C API (tessera.h), written in C99 and compiled as C on every target: arrays in a fixed buffer
 * with the harness's arena allocator (no heap), reads and writes against a C-order model, metalayers,
 * vlmetalayers, error codes, reopening; on hosted targets also a file through a stdio storage. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tessera/tessera.h"

#include "capi_check.h"

#define ARENA_BYTES (6u * 1024u * 1024u)
static uint64_t g_arena_memory[ARENA_BYTES / 8];
static test_arena g_arena;

/* The arena, empty. */
static tessera_allocator arena_reset(void) { return test_arena_init(&g_arena, g_arena_memory, sizeof g_arena_memory); }


/* ---- Fixtures ----------------------------------------------------------------------------------------------- */

#define FRAME_BYTES (2u * 1024u * 1024u)
static uint8_t g_frame_memory[FRAME_BYTES];

/* splitmix64 */
static uint64_t g_rng = 0x5eed1234abcdULL;
static uint64_t rng_next(void) {
  uint64_t z = (g_rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static int64_t rng_range(int64_t lo, int64_t hi) { /* [lo, hi] */
  return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1));
}

#define MAX_ITEMS (64 * 64 * 16)
static int32_t g_model[MAX_ITEMS];
static int32_t g_out[MAX_ITEMS];
static int32_t g_src[MAX_ITEMS];

/* Items of the slice [start, stop) of a C-order array of `shape` into out (C order). Returns the count. */
static int64_t model_slice(const int32_t* model, int ndim, const int64_t* shape, const int64_t* start,
                           const int64_t* stop, int32_t* out) {
  int64_t idx[TESSERA_MAX_DIMS];
  int64_t n = 1;
  int d;
  for (d = 0; d < ndim; ++d) {
    if (stop[d] <= start[d]) return 0;
    n *= stop[d] - start[d];
    idx[d] = start[d];
  }
  {
    int64_t k;
    for (k = 0; k < n; ++k) {
      int64_t off = 0;
      for (d = 0; d < ndim; ++d) off = off * shape[d] + idx[d];
      out[k] = model[off];
      for (d = ndim - 1; d >= 0; --d) {
        if (++idx[d] < stop[d]) break;
        idx[d] = start[d];
      }
    }
  }
  return n;
}

/* The reverse: src (C order over the slice) into the model. */
static void model_write(int32_t* model, int ndim, const int64_t* shape, const int64_t* start, const int64_t* stop,
                        const int32_t* src) {
  int64_t idx[TESSERA_MAX_DIMS];
  int64_t n = 1, k;
  int d;
  for (d = 0; d < ndim; ++d) {
    if (stop[d] <= start[d]) return;
    n *= stop[d] - start[d];
    idx[d] = start[d];
  }
  for (k = 0; k < n; ++k) {
    int64_t off = 0;
    for (d = 0; d < ndim; ++d) off = off * shape[d] + idx[d];
    model[off] = src[k];
    for (d = ndim - 1; d >= 0; --d) {
      if (++idx[d] < stop[d]) break;
      idx[d] = start[d];
    }
  }
}

static void params_2d(tessera_array_params* p) {
  tessera_array_params_init(p);
  p->ndim = 2;
  p->shape[0] = 37;
  p->shape[1] = 53;
  p->chunkshape[0] = 10;
  p->chunkshape[1] = 16;
  p->blockshape[0] = 5;
  p->blockshape[1] = 8;
  p->dtype = "<i4";
  p->durable = 0;
}

/* ---- Cases -------------------------------------------------------------------------------------------------- */

/* g_model filled with i * mul + add, written by the C API into g_frame_memory (params_2d: 37 x 53 int32) through
 * *buf; *a receives the open array. */
static tessera_status model_array_create(tessera_allocator* al, tessera_buffer* buf, tessera_array** a, int32_t mul,
                                         int32_t add) {
  tessera_storage st;
  tessera_array_params p;
  tessera_fill fill;
  const int64_t n = 37 * 53;
  int64_t i;
  for (i = 0; i < n; ++i) g_model[i] = (int32_t)(i * mul + add);
  tessera_buffer_init(buf, g_frame_memory, sizeof(g_frame_memory), 0);
  st = tessera_buffer_storage(buf);
  params_2d(&p);
  fill.kind = TESSERA_FILL_BUFFER;
  fill.data = g_model;
  fill.size = (size_t)n * 4;
  return tessera_array_create(a, &st, al, &p, &fill);
}

static void test_create_read_reopen(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_array* a = NULL;
  tessera_array_info info;
  const int64_t n = 37 * 53;
  int64_t i;
  int64_t start[2] = {3, 5}, stop[2] = {29, 50};
  int64_t wstart[2] = {8, 14}, wstop[2] = {21, 40};
  size_t frame_len;

  REQUIRE_OK(model_array_create(&al, &buf, &a, 7, 3));
  REQUIRE(a != NULL);
  CHECK(buf.size > 0);

  REQUIRE_OK(tessera_array_info_get(a, &info));
  CHECK(info.ndim == 2);
  CHECK(info.shape[0] == 37 && info.shape[1] == 53);
  CHECK(info.chunkshape[0] == 10 && info.chunkshape[1] == 16);
  CHECK(info.blockshape[0] == 5 && info.blockshape[1] == 8);
  CHECK(info.itemsize == 4);
  CHECK(info.nitems == n);
  CHECK(info.nbytes == n * 4);
  CHECK(info.nchunks == 4 * 4);
  CHECK(info.dtype_len == 3 && memcmp(info.dtype, "<i4", 3) == 0);

  memset(g_out, 0, sizeof(g_out));
  REQUIRE_OK(tessera_array_read(a, g_out, (size_t)n * 4));
  CHECK(memcmp(g_out, g_model, (size_t)n * 4) == 0);

  {
    int64_t m = model_slice(g_model, 2, info.shape, start, stop, g_src);
    REQUIRE_OK(tessera_array_slice_get(a, start, stop, g_out, (size_t)m * 4));
    CHECK(memcmp(g_out, g_src, (size_t)m * 4) == 0);
  }

  /* A write across chunk boundaries, then the whole array against the model. */
  {
    int64_t m = (wstop[0] - wstart[0]) * (wstop[1] - wstart[1]);
    for (i = 0; i < m; ++i) g_src[i] = (int32_t)(-1000 - i);
    REQUIRE_OK(tessera_array_slice_set(a, wstart, wstop, g_src, (size_t)m * 4));
    model_write(g_model, 2, info.shape, wstart, wstop, g_src);
    REQUIRE_OK(tessera_array_read(a, g_out, (size_t)n * 4));
    CHECK(memcmp(g_out, g_model, (size_t)n * 4) == 0);
  }
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
  frame_len = buf.size;
  printf("  frame %lu bytes, allocator high water %lu bytes\n", (unsigned long)frame_len,
         (unsigned long)g_arena.high_water);

  /* The serialized array opens again from the bytes alone (read-only). */
  {
    tessera_buffer again;
    tessera_storage st2;
    tessera_open_options o;
    tessera_array* b = NULL;
    tessera_buffer_init(&again, g_frame_memory, sizeof(g_frame_memory), frame_len);
    st2 = tessera_buffer_storage(&again);
    tessera_open_options_init(&o);
    REQUIRE_OK(tessera_array_open(&b, &st2, &al, &o));
    REQUIRE_OK(tessera_array_info_get(b, &info));
    CHECK(info.ndim == 2 && info.shape[0] == 37 && info.shape[1] == 53 && info.itemsize == 4);
    memset(g_out, 0, sizeof(g_out));
    REQUIRE_OK(tessera_array_read(b, g_out, (size_t)n * 4));
    CHECK(memcmp(g_out, g_model, (size_t)n * 4) == 0);
    CHECK_ERR(tessera_array_slice_set(b, wstart, wstop, g_src, sizeof(g_src)), TESSERA_ERR_READ_ONLY);
    CHECK(again.size == frame_len); /* reading changes nothing */
    REQUIRE_OK(tessera_array_close(b));
    CHECK(g_arena.live == 0);
  }
}

static void test_random_slices(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill fill;
  tessera_array* a = NULL;
  int64_t shape[3] = {23, 31, 9};
  int64_t n = 23 * 31 * 9, i;
  int round;

  for (i = 0; i < n; ++i) g_model[i] = (int32_t)rng_next();
  tessera_buffer_init(&buf, g_frame_memory, sizeof(g_frame_memory), 0);
  st = tessera_buffer_storage(&buf);
  tessera_array_params_init(&p);
  p.ndim = 3;
  p.shape[0] = shape[0];
  p.shape[1] = shape[1];
  p.shape[2] = shape[2];
  p.chunkshape[0] = 7;
  p.chunkshape[1] = 10;
  p.chunkshape[2] = 9;
  p.blockshape[0] = 3;
  p.blockshape[1] = 4;
  p.blockshape[2] = 5;
  p.itemsize = 4;
  p.codec = TESSERA_CODEC_BLOSCLZ;
  p.clevel = 3;
  p.durable = 1; /* the crash-safe layout works in a buffer too */
  fill.kind = TESSERA_FILL_BUFFER;
  fill.data = g_model;
  fill.size = (size_t)n * 4;
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &fill));

  for (round = 0; round < 400; ++round) {
    int64_t start[3], stop[3], m = 1;
    int d;
    for (d = 0; d < 3; ++d) {
      start[d] = rng_range(0, shape[d]);
      stop[d] = rng_range(start[d], shape[d]);
      m *= stop[d] - start[d];
    }
    if (round % 4 == 3) {
      for (i = 0; i < m; ++i) g_src[i] = (int32_t)rng_next();
      REQUIRE_OK(tessera_array_slice_set(a, start, stop, g_src, (size_t)m * 4));
      model_write(g_model, 3, shape, start, stop, g_src);
    } else {
      model_slice(g_model, 3, shape, start, stop, g_src);
      REQUIRE_OK(tessera_array_slice_get(a, start, stop, g_out, (size_t)m * 4));
      if (memcmp(g_out, g_src, (size_t)m * 4) != 0) {
        printf("  round %d: slice [%d:%d, %d:%d, %d:%d] differs\n", round, (int)start[0], (int)stop[0],
               (int)start[1], (int)stop[1], (int)start[2], (int)stop[2]);
        ++g_case_failures;
        break;
      }
    }
  }
  REQUIRE_OK(tessera_array_read(a, g_out, (size_t)n * 4));
  CHECK(memcmp(g_out, g_model, (size_t)n * 4) == 0);
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);

  /* Reopen writable and read everything. */
  {
    tessera_buffer again;
    tessera_storage st2;
    tessera_open_options o;
    tessera_buffer_init(&again, g_frame_memory, sizeof(g_frame_memory), buf.size);
    st2 = tessera_buffer_storage(&again);
    tessera_open_options_init(&o);
    o.writable = 1;
    REQUIRE_OK(tessera_array_open(&a, &st2, &al, &o));
    memset(g_out, 0, sizeof(g_out));
    REQUIRE_OK(tessera_array_read(a, g_out, (size_t)n * 4));
    CHECK(memcmp(g_out, g_model, (size_t)n * 4) == 0);
    REQUIRE_OK(tessera_array_close(a));
    CHECK(g_arena.live == 0);
  }
}

static void test_append(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_array* a = NULL;
  tessera_array_info info;
  int64_t rows = 4, i, r;
  const int64_t cols = 6;

  tessera_buffer_init(&buf, g_frame_memory, sizeof(g_frame_memory), 0);
  st = tessera_buffer_storage(&buf);
  tessera_array_params_init(&p);
  p.ndim = 2;
  p.shape[0] = rows;
  p.shape[1] = cols;
  p.chunkshape[0] = 4;
  p.chunkshape[1] = 6;
  p.blockshape[0] = 2;
  p.blockshape[1] = 6;
  p.dtype = "<i4";
  p.durable = 0;
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, NULL)); /* zeros */
  for (i = 0; i < rows * cols; ++i) g_model[i] = 0;

  /* Whole chunks along axis 0, then a partial one. */
  for (r = 0; r < 6; ++r) {
    int64_t count = r == 5 ? 3 : 4;
    for (i = 0; i < count * cols; ++i) {
      g_src[i] = (int32_t)(r * 1000 + i);
      g_model[rows * cols + i] = g_src[i];
    }
    REQUIRE_OK(tessera_array_append(a, 0, count, g_src, (size_t)(count * cols) * 4));
    rows += count;
  }
  REQUIRE_OK(tessera_array_info_get(a, &info));
  CHECK(info.shape[0] == rows && info.shape[1] == cols);
  CHECK(info.nchunks == (rows + 3) / 4);
  REQUIRE_OK(tessera_array_read(a, g_out, (size_t)(rows * cols) * 4));
  CHECK(memcmp(g_out, g_model, (size_t)(rows * cols) * 4) == 0);
  /* A source of the wrong size is refused. */
  CHECK_ERR(tessera_array_append(a, 0, 2, g_src, (size_t)(2 * cols) * 4 - 4), TESSERA_ERR_BUFFER_TOO_SMALL);

  /* Resize: shrink axis 1, check the kept items. */
  {
    int64_t ns[2];
    int64_t start[2] = {0, 0}, stop[2];
    ns[0] = rows;
    ns[1] = 4;
    stop[0] = rows;
    stop[1] = 4;
    REQUIRE_OK(tessera_array_resize(a, ns));
    model_slice(g_model, 2, info.shape, start, stop, g_src);
    REQUIRE_OK(tessera_array_read(a, g_out, (size_t)(rows * 4) * 4));
    CHECK(memcmp(g_out, g_src, (size_t)(rows * 4) * 4) == 0);
  }
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
}

static void test_metalayers(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_array* a = NULL;
  tessera_metalayer metas[2];
  static const uint8_t m1[5] = {0x93, 0x01, 0x02, 0x03, 0xc0};
  static const uint8_t m1b[5] = {0x93, 0x07, 0x08, 0x09, 0xc3};
  static const uint8_t m2[3] = {0xa2, 'h', 'i'};
  static uint8_t vl[300];
  static uint8_t vl_out[300];
  const void* content = NULL;
  size_t size = 0, written = 0, i;

  for (i = 0; i < sizeof(vl); ++i) vl[i] = (uint8_t)(i * 13 + 1);
  tessera_buffer_init(&buf, g_frame_memory, sizeof(g_frame_memory), 0);
  st = tessera_buffer_storage(&buf);
  params_2d(&p);
  metas[0].name = "meta1";
  metas[0].content = m1;
  metas[0].size = sizeof(m1);
  metas[1].name = "other";
  metas[1].content = m2;
  metas[1].size = sizeof(m2);
  p.metalayers = metas;
  p.nmetalayers = 2;
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, NULL));

  REQUIRE_OK(tessera_array_meta_get(a, "meta1", &content, &size));
  CHECK(size == sizeof(m1) && memcmp(content, m1, sizeof(m1)) == 0);
  REQUIRE_OK(tessera_array_meta_get(a, "other", &content, &size));
  CHECK(size == sizeof(m2) && memcmp(content, m2, sizeof(m2)) == 0);
  REQUIRE_OK(tessera_array_meta_get(a, "b2nd", &content, &size));
  CHECK(size > 0);
  CHECK_ERR(tessera_array_meta_get(a, "missing", &content, &size), TESSERA_ERR_OUT_OF_RANGE);
  CHECK_ERR(tessera_array_meta_get(a, NULL, &content, &size), TESSERA_ERR_INVALID_ARGUMENT);
  REQUIRE_OK(tessera_array_meta_set(a, "meta1", m1b, sizeof(m1b)));
  REQUIRE_OK(tessera_array_meta_get(a, "meta1", &content, &size));
  CHECK(size == sizeof(m1b) && memcmp(content, m1b, sizeof(m1b)) == 0);
  CHECK_ERR(tessera_array_meta_set(a, "meta1", m2, sizeof(m2)), TESSERA_ERR_INVALID_ARGUMENT); /* other size */
  CHECK_ERR(tessera_array_meta_set(a, "b2nd", m1, sizeof(m1)), TESSERA_ERR_INVALID_ARGUMENT);

  REQUIRE_OK(tessera_array_vlmeta_set(a, "vl1", vl, sizeof(vl)));
  REQUIRE_OK(tessera_array_vlmeta_set(a, "vl2", "abc", 3));
  REQUIRE_OK(tessera_array_vlmeta_size(a, "vl1", &size));
  CHECK(size == sizeof(vl));
  REQUIRE_OK(tessera_array_vlmeta_get(a, "vl1", vl_out, sizeof(vl_out), &written));
  CHECK(written == sizeof(vl) && memcmp(vl_out, vl, sizeof(vl)) == 0);
  CHECK_ERR(tessera_array_vlmeta_get(a, "vl1", vl_out, 10, &written), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_vlmeta_size(a, "nope", &size), TESSERA_ERR_OUT_OF_RANGE);
  REQUIRE_OK(tessera_array_vlmeta_set(a, "vl2", "abcdef", 6)); /* replace */
  REQUIRE_OK(tessera_array_vlmeta_delete(a, "vl1"));
  CHECK_ERR(tessera_array_vlmeta_size(a, "vl1", &size), TESSERA_ERR_OUT_OF_RANGE);
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);

  /* Everything is in the buffer. */
  {
    tessera_buffer again;
    tessera_storage st2;
    tessera_buffer_init(&again, g_frame_memory, sizeof(g_frame_memory), buf.size);
    st2 = tessera_buffer_storage(&again);
    REQUIRE_OK(tessera_array_open(&a, &st2, &al, NULL));
    REQUIRE_OK(tessera_array_meta_get(a, "meta1", &content, &size));
    CHECK(size == sizeof(m1b) && memcmp(content, m1b, sizeof(m1b)) == 0);
    REQUIRE_OK(tessera_array_vlmeta_get(a, "vl2", vl_out, sizeof(vl_out), &written));
    CHECK(written == 6 && memcmp(vl_out, "abcdef", 6) == 0);
    CHECK_ERR(tessera_array_vlmeta_size(a, "vl1", &size), TESSERA_ERR_OUT_OF_RANGE);
    CHECK_ERR(tessera_array_vlmeta_set(a, "vl3", "x", 1), TESSERA_ERR_READ_ONLY); /* read-only */
    REQUIRE_OK(tessera_array_close(a));
    CHECK(g_arena.live == 0);
  }
}

static void test_errors(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill fill;
  tessera_array* a = NULL;
  int64_t start[2], stop[2];

  CHECK(strcmp(tessera_errc_name(TESSERA_OK), "ok") == 0);
  CHECK(strcmp(tessera_errc_name(TESSERA_ERR_TRUNCATED), "truncated") == 0);
  CHECK(tessera_errc_name(9999) != NULL);

  tessera_buffer_init(&buf, g_frame_memory, sizeof(g_frame_memory), 0);
  st = tessera_buffer_storage(&buf);

  /* Bad parameters. */
  params_2d(&p);
  p.ndim = TESSERA_MAX_DIMS + 1;
  CHECK_ERR(tessera_array_create(&a, &st, &al, &p, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(a == NULL);
  params_2d(&p);
  p.shape[1] = -3;
  CHECK_ERR(tessera_array_create(&a, &st, &al, &p, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  params_2d(&p);
  p.codec = 3;
  CHECK_ERR(tessera_array_create(&a, &st, &al, &p, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  params_2d(&p);
  p.blockshape[0] = 20; /* larger than the chunk */
  {
    tessera_status s = tessera_array_create(&a, &st, &al, &p, NULL);
    CHECK(s.code != TESSERA_OK);
  }
  params_2d(&p);
  fill.kind = TESSERA_FILL_BUFFER;
  fill.data = g_model;
  fill.size = 37 * 53 * 4 - 1;
  CHECK_ERR(tessera_array_create(&a, &st, &al, &p, &fill), TESSERA_ERR_BUFFER_TOO_SMALL);
  fill.kind = TESSERA_FILL_VALUE; /* one item is itemsize bytes */
  fill.size = 3;
  CHECK_ERR(tessera_array_create(&a, &st, &al, &p, &fill), TESSERA_ERR_INVALID_ARGUMENT);
  fill.kind = 77;
  CHECK_ERR(tessera_array_create(&a, &st, &al, &p, &fill), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_create(NULL, &st, &al, &p, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_create(&a, NULL, &al, &p, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(g_arena.live == 0);

  /* A storage buffer too small for the frame. */
  {
    static uint8_t tiny[64];
    tessera_buffer tb;
    tessera_storage ts;
    tessera_buffer_init(&tb, tiny, sizeof(tiny), 0);
    ts = tessera_buffer_storage(&tb);
    CHECK_ERR(tessera_array_create(&a, &ts, &al, &p, NULL), TESSERA_ERR_NO_SPACE);
    CHECK(a == NULL);
    CHECK(g_arena.live == 0);
  }

  /* An allocator that refuses: the handle first, then later requests. */
  {
    long k;
    g_arena.refuse_at = 1;
    g_arena.requests = 0;
    CHECK_ERR(tessera_array_create(&a, &st, &al, &p, NULL), TESSERA_ERR_OUT_OF_MEMORY);
    CHECK(g_arena.live == 0);
    for (k = 1; k < 6; ++k) {
      tessera_status s;
      tessera_buffer_init(&buf, g_frame_memory, sizeof(g_frame_memory), 0);
      g_arena.refuse_at = k + 1;
      g_arena.requests = 0;
      s = tessera_array_create(&a, &st, &al, &p, NULL);
      if (s.code == TESSERA_OK) {
        CHECK(tessera_array_close(a).code == TESSERA_OK);
      } else {
        CHECK(s.code == TESSERA_ERR_OUT_OF_MEMORY);
        CHECK(a == NULL);
      }
      CHECK(g_arena.live == 0);
    }
    g_arena.refuse_at = 0;
  }

  /* Bad slices and buffers on a good array. */
  tessera_buffer_init(&buf, g_frame_memory, sizeof(g_frame_memory), 0);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, NULL));
  start[0] = 0;
  start[1] = 0;
  stop[0] = 38;
  stop[1] = 10;
  CHECK_ERR(tessera_array_slice_get(a, start, stop, g_out, sizeof(g_out)), TESSERA_ERR_OUT_OF_RANGE);
  start[0] = 5;
  stop[0] = 4;
  CHECK_ERR(tessera_array_slice_get(a, start, stop, g_out, sizeof(g_out)), TESSERA_ERR_OUT_OF_RANGE);
  start[0] = -1;
  stop[0] = 4;
  CHECK_ERR(tessera_array_slice_get(a, start, stop, g_out, sizeof(g_out)), TESSERA_ERR_OUT_OF_RANGE);
  start[0] = 0;
  stop[0] = 10;
  CHECK_ERR(tessera_array_slice_get(a, start, stop, g_out, 10 * 10 * 4 - 1), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_slice_get(a, NULL, stop, g_out, sizeof(g_out)), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_array_read(a, g_out, 37 * 53 * 4 - 4), TESSERA_ERR_BUFFER_TOO_SMALL);
  stop[0] = 40;
  CHECK_ERR(tessera_array_slice_set(a, start, stop, g_src, 40 * 10 * 4), TESSERA_ERR_OUT_OF_RANGE);
  stop[0] = 10;
  CHECK_ERR(tessera_array_slice_set(a, start, stop, g_src, 10 * 10 * 4 - 4), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK_ERR(tessera_array_info_get(NULL, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  REQUIRE_OK(tessera_array_close(a));
  CHECK(tessera_array_close(NULL).code == TESSERA_OK);
  CHECK(g_arena.live == 0);

  /* Opening what is not a frame. */
  {
    static uint8_t junk[256];
    tessera_buffer jb;
    tessera_storage js;
    tessera_status s;
    size_t i;
    for (i = 0; i < sizeof(junk); ++i) junk[i] = (uint8_t)(i * 31 + 7);
    tessera_buffer_init(&jb, junk, sizeof(junk), sizeof(junk));
    js = tessera_buffer_storage(&jb);
    s = tessera_array_open(&a, &js, &al, NULL);
    CHECK(s.code != TESSERA_OK && s.message != NULL && s.message[0] != '\0');
    CHECK(a == NULL);
    tessera_buffer_init(&jb, junk, sizeof(junk), 0);
    CHECK_ERR(tessera_array_open(&a, &js, &al, NULL), TESSERA_ERR_TRUNCATED);
    CHECK(g_arena.live == 0);
  }
  /* A frame cut short. */
  {
    tessera_buffer cut;
    tessera_storage cs;
    tessera_status s;
    REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, NULL));
    REQUIRE_OK(tessera_array_close(a));
    tessera_buffer_init(&cut, g_frame_memory, sizeof(g_frame_memory), buf.size - 10);
    cs = tessera_buffer_storage(&cut);
    s = tessera_array_open(&a, &cs, &al, NULL);
    CHECK(s.code != TESSERA_OK);
    CHECK(a == NULL);
    CHECK(g_arena.live == 0);
  }
}

/* ---- A file through stdio (hosted targets) ------------------------------------------------------------------ */
#ifndef TESSERA_TEST_BAREMETAL
static tessera_status status_make(int32_t code, const char* message) {
  tessera_status s;
  s.code = code;
  s.message = message;
  return s;
}
static tessera_status file_read(void* context, uint64_t offset, uint8_t* dst, size_t size) {
  FILE* f = (FILE*)context;
  if (fseek(f, (long)offset, SEEK_SET) != 0) return status_make(TESSERA_ERR_IO, "fseek failed");
  if (fread(dst, 1, size, f) != size) return status_make(TESSERA_ERR_TRUNCATED, "fread short");
  return status_make(TESSERA_OK, "");
}
static tessera_status file_write(void* context, uint64_t offset, const uint8_t* src, size_t size) {
  FILE* f = (FILE*)context;
  if (fseek(f, (long)offset, SEEK_SET) != 0) return status_make(TESSERA_ERR_IO, "fseek failed");
  if (fwrite(src, 1, size, f) != size) return status_make(TESSERA_ERR_IO, "fwrite failed");
  return status_make(TESSERA_OK, "");
}
static tessera_status file_size(void* context, uint64_t* out) {
  FILE* f = (FILE*)context;
  long n;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) return status_make(TESSERA_ERR_IO, "ftell failed");
  *out = (uint64_t)n;
  return status_make(TESSERA_OK, "");
}
static tessera_status file_sync(void* context) {
  return fflush((FILE*)context) == 0 ? status_make(TESSERA_OK, "") : status_make(TESSERA_ERR_IO, "fflush failed");
}

static void test_stdio_file(void) {
  tessera_allocator al = arena_reset();
  tessera_storage st;
  tessera_array_params p;
  tessera_fill fill;
  tessera_array* a = NULL;
  const int64_t n = 37 * 53;
  int64_t i;
  FILE* f = tmpfile();
  REQUIRE(f != NULL);
  memset(&st, 0, sizeof(st));
  st.read = file_read;
  st.write = file_write;
  st.size = file_size;
  st.sync = file_sync;
  st.context = f; /* no truncate, no view */

  for (i = 0; i < n; ++i) g_model[i] = (int32_t)(i * 11 - 5);
  params_2d(&p);
  p.durable = 1;
  p.codec = TESSERA_CODEC_ZLIB; /* any available codec works through the C API */
  fill.kind = TESSERA_FILL_BUFFER;
  fill.data = g_model;
  fill.size = (size_t)n * 4;
  {
    tessera_status s = tessera_array_create(&a, &st, &al, &p, &fill);
    if (s.code == TESSERA_ERR_CODEC_UNAVAILABLE) {
      p.codec = TESSERA_CODEC_BLOSCLZ;
      s = tessera_array_create(&a, &st, &al, &p, &fill);
    }
    REQUIRE(s.code == TESSERA_OK);
  }
  {
    int32_t v = 42;
    int64_t c0[2] = {36, 52}, c1[2] = {37, 53};
    REQUIRE_OK(tessera_array_slice_set(a, c0, c1, &v, 4));
    g_model[n - 1] = 42;
  }
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL));
  REQUIRE_OK(tessera_array_read(a, g_out, (size_t)n * 4));
  CHECK(memcmp(g_out, g_model, (size_t)n * 4) == 0);
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
  fclose(f);
}

/* Reads a whole file into buf (at most cap bytes); returns its size, or -1. */
static long file_slurp(const char* path, void* buf, size_t cap) {
  FILE* f = fopen(path, "rb");
  size_t n;
  if (f == NULL) return -1;
  n = fread(buf, 1, cap, f);
  if (!feof(f) && n == cap) n = (size_t)-1; /* larger than cap */
  fclose(f);
  return n == (size_t)-1 ? -1 : (long)n;
}

/* An array the reference wrote (golden/b2nd/with-metalayers: <i4, shape 50x60, chunks 20x20, blocks 5x5, lz4,
 * shuffle, fixed metalayer "units" = msgpack [1, 2], vlmetalayer "note" = msgpack "hello"): read through a stdio
 * storage, then written again through the C API from its items, which must give the reference's bytes. */
static void test_golden_file(void) {
  tessera_allocator al = arena_reset();
  tessera_storage st;
  tessera_array* a = NULL;
  tessera_array_info info;
  const void* content = NULL;
  size_t size = 0, written = 0;
  static const uint8_t units[3] = {0x92, 0x01, 0x02};
  static const uint8_t note[6] = {0xa5, 'h', 'e', 'l', 'l', 'o'};
  uint8_t vl[16];
  long raw_len, golden_len;
  FILE* f = fopen(TESSERA_TEST_DATA_DIR "/golden/b2nd/with-metalayers.b2nd", "rb");
  REQUIRE(f != NULL); /* a missing golden file fails */
  raw_len = file_slurp(TESSERA_TEST_DATA_DIR "/golden/b2nd/with-metalayers.raw", g_model, sizeof(g_model));
  REQUIRE(raw_len == 50 * 60 * 4);
  memset(&st, 0, sizeof(st));
  st.read = file_read;
  st.size = file_size;
  st.context = f; /* read-only: no write */
  REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL));
  REQUIRE_OK(tessera_array_info_get(a, &info));
  CHECK(info.ndim == 2 && info.shape[0] == 50 && info.shape[1] == 60);
  CHECK(info.chunkshape[0] == 20 && info.chunkshape[1] == 20 && info.blockshape[0] == 5 && info.blockshape[1] == 5);
  CHECK(info.itemsize == 4 && info.dtype_len == 3 && memcmp(info.dtype, "<i4", 3) == 0);
  REQUIRE_OK(tessera_array_read(a, g_out, (size_t)raw_len));
  CHECK(memcmp(g_out, g_model, (size_t)raw_len) == 0);
  {
    int64_t start[2] = {13, 7}, stop[2] = {44, 59};
    int64_t m = model_slice(g_model, 2, info.shape, start, stop, g_src);
    REQUIRE_OK(tessera_array_slice_get(a, start, stop, g_out, (size_t)m * 4));
    CHECK(memcmp(g_out, g_src, (size_t)m * 4) == 0);
  }
  REQUIRE_OK(tessera_array_meta_get(a, "units", &content, &size));
  CHECK(size == sizeof(units) && memcmp(content, units, sizeof(units)) == 0);
  REQUIRE_OK(tessera_array_vlmeta_get(a, "note", vl, sizeof(vl), &written));
  CHECK(written == sizeof(note) && memcmp(vl, note, sizeof(note)) == 0);
  CHECK_ERR(tessera_array_slice_set(a, NULL, NULL, g_src, 4), TESSERA_ERR_INVALID_ARGUMENT);
  REQUIRE_OK(tessera_array_close(a));
  fclose(f);
  CHECK(g_arena.live == 0);

  /* The same array written through the C API into a buffer: the reference's bytes. */
  golden_len = file_slurp(TESSERA_TEST_DATA_DIR "/golden/b2nd/with-metalayers.b2nd", g_src, sizeof(g_src));
  REQUIRE(golden_len > 0);
  {
    tessera_buffer buf;
    tessera_storage bst;
    tessera_array_params p;
    tessera_fill fill;
    tessera_metalayer meta;
    tessera_buffer_init(&buf, g_frame_memory, sizeof(g_frame_memory), 0);
    bst = tessera_buffer_storage(&buf);
    params_2d(&p);
    p.shape[0] = 50;
    p.shape[1] = 60;
    p.chunkshape[0] = 20;
    p.chunkshape[1] = 20;
    p.blockshape[0] = 5;
    p.blockshape[1] = 5;
    p.codec = TESSERA_CODEC_LZ4;
    meta.name = "units";
    meta.content = units;
    meta.size = sizeof(units);
    p.metalayers = &meta;
    p.nmetalayers = 1;
    fill.kind = TESSERA_FILL_BUFFER;
    fill.data = g_model;
    fill.size = (size_t)raw_len;
    REQUIRE_OK(tessera_array_create(&a, &bst, &al, &p, &fill));
    REQUIRE_OK(tessera_array_vlmeta_set(a, "note", note, sizeof(note)));
    REQUIRE_OK(tessera_array_close(a));
    CHECK(buf.size == (size_t)golden_len);
    CHECK(memcmp(g_frame_memory, g_src, buf.size < (size_t)golden_len ? buf.size : (size_t)golden_len) == 0);
    CHECK(g_arena.live == 0);
  }
}
#endif

/* ---- The fixed buffer's callbacks, called straight from C ---------------------------------------------------- */

/* tessera_buffer is tessera::fixed_buffer seen from C: every callback must keep b.size as the C++ one leaves it. */
static void test_buffer_callbacks(void) {
  uint8_t mem[16];
  uint8_t got[16];
  uint64_t n = 0;
  size_t vn = 0;
  size_t i;
  tessera_buffer b;
  tessera_storage st;
  memset(mem, 0xEE, sizeof mem);
  tessera_buffer_init(&b, mem, sizeof mem, 20); /* a size past the capacity is clamped */
  CHECK(b.size == 16 && b.capacity == 16);
  tessera_buffer_init(&b, NULL, sizeof mem, 4); /* no memory: no capacity */
  CHECK(b.size == 0 && b.capacity == 0);
  tessera_buffer_init(&b, mem, sizeof mem, 0);
  st = tessera_buffer_storage(&b);
  REQUIRE(st.sync == NULL && st.view != NULL && st.context == &b);
  REQUIRE_OK(st.write(st.context, 4, (const uint8_t*)"abc", 3)); /* the gap 0..3 reads as zeros */
  CHECK(b.size == 7);
  REQUIRE_OK(st.read(st.context, 0, got, 7));
  CHECK(memcmp(got, "\0\0\0\0abc", 7) == 0);
  CHECK_ERR(st.read(st.context, 5, got, 3), TESSERA_ERR_TRUNCATED);
  REQUIRE_OK(st.read(st.context, 7, NULL, 0)); /* nothing at the end, with no buffer */
  CHECK_ERR(st.write(st.context, 14, (const uint8_t*)"xyz", 3), TESSERA_ERR_NO_SPACE);
  CHECK(b.size == 7 && mem[14] == 0xEE); /* nothing written */
  REQUIRE_OK(st.write(st.context, 5, mem + 4, 3)); /* overlapping source: "abc" moves one byte on */
  REQUIRE_OK(st.read(st.context, 4, got, 4));
  CHECK(memcmp(got, "aabc", 4) == 0 && b.size == 8);
  REQUIRE_OK(st.truncate(st.context, 12)); /* grows with zeros */
  REQUIRE_OK(st.size(st.context, &n));
  CHECK(n == 12 && b.size == 12);
  for (i = 8; i < 12; ++i) CHECK(mem[i] == 0);
  CHECK_ERR(st.truncate(st.context, 17), TESSERA_ERR_NO_SPACE);
  REQUIRE_OK(st.truncate(st.context, 2));
  CHECK(st.view(st.context, &vn) == mem && vn == 2 && b.size == 2);
}

/* ---- The runner --------------------------------------------------------------------------------------------- */

/* The decode-only reader over the frame's bytes: what the array API wrote reads back in place, item for item;
 * a cut frame is an error; every byte allocated is given back. */
static void test_view(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_array* a = NULL;
  tessera_array_view* v = NULL;
  tessera_array_info info;
  int round;

  REQUIRE_OK(model_array_create(&al, &buf, &a, 13, -500));
  REQUIRE_OK(tessera_array_close(a));

  CHECK_ERR(tessera_array_view_open(&v, g_frame_memory, buf.size - 1, &al, 0), TESSERA_ERR_TRUNCATED);
  CHECK(v == NULL);
  REQUIRE_OK(tessera_array_view_open(&v, g_frame_memory, buf.size, &al, 0));
  REQUIRE_OK(tessera_array_view_info_get(v, &info));
  CHECK(info.ndim == 2 && info.shape[0] == 37 && info.shape[1] == 53 && info.itemsize == 4);
  CHECK(info.chunkshape[0] == 10 && info.blockshape[1] == 8 && info.nchunks == 16);
  CHECK(info.dtype_len == 3 && memcmp(info.dtype, "<i4", 3) == 0);
  for (round = 0; round < 20; ++round) {
    int64_t start[2], stop[2], m;
    start[0] = rng_range(0, 36);
    start[1] = rng_range(0, 52);
    stop[0] = rng_range(start[0] + 1, 37);
    stop[1] = rng_range(start[1] + 1, 53);
    m = model_slice(g_model, 2, info.shape, start, stop, g_src);
    REQUIRE_OK(tessera_array_view_slice_get(v, start, stop, g_out, (size_t)m * 4));
    CHECK(memcmp(g_out, g_src, (size_t)m * 4) == 0);
    {
      int32_t item = 0;
      REQUIRE_OK(tessera_array_view_element_get(v, start, &item, sizeof item));
      CHECK(item == g_model[start[0] * 53 + start[1]]);
    }
  }
  {
    int64_t outside[2] = {37, 0};
    int32_t item;
    CHECK_ERR(tessera_array_view_element_get(v, outside, &item, sizeof item), TESSERA_ERR_OUT_OF_RANGE);
  }
  tessera_array_view_close(v);
  CHECK(g_arena.live == 0);
}

static const test_case g_cases[] = {
    {"create_read_reopen", test_create_read_reopen},
    {"random_slices", test_random_slices},
    {"append", test_append},
    {"metalayers", test_metalayers},
    {"errors", test_errors},
    {"buffer_callbacks", test_buffer_callbacks},
    {"view", test_view},
#ifndef TESSERA_TEST_BAREMETAL
    {"stdio_file", test_stdio_file},
    {"golden_file", test_golden_file},
#endif
};

int main(void) {
  tessera_codec_link_all(); /* the tests use every codec and filter of the build */
  tessera_filter_link_all();
  tessera_partition_link_auto();
  tessera_encoder_link_parallel();
  return capi_cases_run("capi", g_cases, sizeof(g_cases) / sizeof(g_cases[0]));
}
