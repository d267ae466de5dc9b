/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests of the C API (tessera.h) in C99, on every target: arrays of 9, 12 and 16 dimensions (or their refusal
 * by a build of fewer), the introspection of tessera_array_info (extchunkshape, cbytes, ratio, a NUL-terminated
 * dtype), params_get giving what create takes, the chunk decode size query, the version query and the layout
 * check, also from a translation unit compiled with another TESSERA_MAX_DIMS (test_capi_layout_other.c). Small
 * in RAM: a 2 MiB arena and two 128 KiB frame buffers, all static. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tessera/tessera.h"

#include "test_capi_layout_other.h"

#include "capi_check.h"

/* A 2 MiB arena, empty again whenever every block is freed (between cases). */
static uint64_t g_arena_memory[2u * 1024u * 1024u / 8u];
static test_arena g_arena;

static tessera_allocator arena(void) {
  tessera_allocator al;
  if (g_arena.base == NULL) (void)test_arena_init(&g_arena, g_arena_memory, sizeof g_arena_memory);
  al.allocate = test_arena_allocate;
  al.deallocate = test_arena_deallocate;
  al.context = &g_arena;
  return al;
}

static uint8_t g_frame[128u * 1024u];
static uint8_t g_frame2[128u * 1024u];

#define MAX_ITEMS 4096
static int32_t g_model[MAX_ITEMS];
static int32_t g_out[MAX_ITEMS];
static int32_t g_want[MAX_ITEMS];

/* Small extents in up to 16 dimensions: 3 or 2 in the first 10 (1 past them), chunks that split each of those
 * (3 -> 2 + 1, 2 -> 1 + 1) every third dimension, blocks that split every other chunk. */
static int64_t geometry(int ndim, int64_t* shape, int32_t* chunks, int32_t* blocks) {
  int64_t n = 1;
  int d;
  for (d = 0; d < ndim; ++d) {
    shape[d] = d >= 10 ? 1 : d % 4 == 0 ? 3 : 2;
    chunks[d] = (int32_t)(d % 3 == 0 && shape[d] > 1 ? shape[d] - 1 : shape[d]);
    blocks[d] = d % 2 == 0 && chunks[d] > 1 ? 1 : chunks[d];
    n *= shape[d];
  }
  return n;
}

/* The items of the slice [start, stop) of the C-order model of `shape` (C order), into out; returns the count. */
static int64_t model_slice(int ndim, const int64_t* shape, const int64_t* start, const int64_t* stop,
                           int32_t* out) {
  int64_t idx[TESSERA_MAX_DIMS];
  int64_t n = 0;
  int d;
  for (d = 0; d < ndim; ++d) {
    if (stop[d] <= start[d]) return 0;
    idx[d] = start[d];
  }
  for (;;) {
    int64_t lin = 0;
    for (d = 0; d < ndim; ++d) lin = lin * shape[d] + idx[d];
    out[n++] = g_model[lin];
    for (d = ndim - 1; d >= 0; --d) {
      if (++idx[d] < stop[d]) break;
      idx[d] = start[d];
    }
    if (d < 0) return n;
  }
}

static void test_many_dims(void) {
  static const int kDims[3] = {9, 12, 16};
  int k;
  for (k = 0; k < 3; ++k) {
    const int ndim = kDims[k];
    tessera_allocator al = arena();
    tessera_buffer buf;
    tessera_storage st;
    tessera_array_params p;
    tessera_array_info info;
    tessera_fill fill;
    tessera_array* a = NULL;
    int64_t shape[16], start[16], stop[16], at[16];
    int32_t chunks[16], blocks[16];
    int64_t n, i, m, ext_items = 1, lin = 0;
    int32_t item = 0;
    int d;

    tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
    st = tessera_buffer_storage(&buf);
    tessera_array_params_init(&p);
    n = geometry(ndim, shape, chunks, blocks);
    if (ndim > tessera_max_dims()) { /* a build of fewer dimensions refuses the array */
      p.ndim = ndim;
      CHECK_ERR(tessera_array_create(&a, &st, &al, &p, NULL), TESSERA_ERR_INVALID_ARGUMENT);
      CHECK(a == NULL);
      continue;
    }
    REQUIRE(n <= MAX_ITEMS);
    p.ndim = ndim;
    for (d = 0; d < ndim; ++d) {
      p.shape[d] = shape[d];
      p.chunkshape[d] = chunks[d];
      p.blockshape[d] = blocks[d];
    }
    p.dtype = "<i4";
    for (i = 0; i < n; ++i) g_model[i] = (int32_t)(i * 3 + ndim);
    fill.kind = TESSERA_FILL_BUFFER;
    fill.data = g_model;
    fill.size = (size_t)n * 4;
    REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &fill));
    REQUIRE_OK(tessera_array_close(a));
    REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL));

    REQUIRE_OK(tessera_array_info_get(a, &info));
    CHECK(info.ndim == ndim && info.nitems == n && info.itemsize == 4);
    for (d = 0; d < ndim; ++d) {
      const int32_t ext = (chunks[d] + blocks[d] - 1) / blocks[d] * blocks[d];
      CHECK(info.shape[d] == shape[d] && info.chunkshape[d] == chunks[d] && info.blockshape[d] == blocks[d]);
      CHECK(info.extchunkshape[d] == ext);
      ext_items *= ext;
    }
    CHECK(info.dtype_len == 3 && strcmp(info.dtype, "<i4") == 0);
    CHECK(info.cbytes > 0 && info.chunks_nbytes == info.nchunks * ext_items * 4);
    CHECK(info.ratio > 0.0 && info.ratio * (double)info.cbytes > (double)info.chunks_nbytes - 0.5 &&
          info.ratio * (double)info.cbytes < (double)info.chunks_nbytes + 0.5);

    /* The whole array; a slice across the chunk boundary of every split dimension; elements. */
    REQUIRE_OK(tessera_array_read(a, g_out, sizeof g_out));
    CHECK(memcmp(g_out, g_model, (size_t)n * 4) == 0);
    for (d = 0; d < ndim; ++d) {
      start[d] = chunks[d] < shape[d] ? chunks[d] - 1 : 0;
      stop[d] = shape[d];
    }
    m = model_slice(ndim, shape, start, stop, g_want);
    REQUIRE_OK(tessera_array_slice_get(a, start, stop, g_out, (size_t)m * 4));
    CHECK(memcmp(g_out, g_want, (size_t)m * 4) == 0);
    for (d = 0; d < ndim; ++d) {
      at[d] = shape[d] - 1;
      lin = lin * shape[d] + at[d];
    }
    REQUIRE_OK(tessera_array_element_get(a, at, &item, sizeof item));
    CHECK(item == g_model[lin]);
    REQUIRE_OK(tessera_array_close(a));

    /* Resize (one more along dimension 0) through a writable handle; the new items read as zeros. */
    {
      tessera_open_options o;
      int64_t new_shape[16];
      tessera_open_options_init(&o);
      o.writable = 1;
      REQUIRE_OK(tessera_array_open(&a, &st, &al, &o));
      for (d = 0; d < ndim; ++d) new_shape[d] = shape[d];
      new_shape[0] += 1;
      REQUIRE_OK(tessera_array_resize(a, new_shape));
      REQUIRE_OK(tessera_array_info_get(a, &info));
      CHECK(info.shape[0] == shape[0] + 1 && info.nitems == n / shape[0] * (shape[0] + 1));
      for (d = 0; d < ndim; ++d) {
        start[d] = 0;
        stop[d] = new_shape[d];
      }
      start[0] = shape[0] - 1;
      REQUIRE_OK(tessera_array_slice_get(a, start, stop, g_out, (size_t)(2 * n / shape[0]) * 4));
      CHECK(memcmp(g_out, g_model + (shape[0] - 1) * (n / shape[0]), (size_t)(n / shape[0]) * 4) == 0);
      for (i = n / shape[0]; i < 2 * n / shape[0]; ++i) CHECK(g_out[i] == 0);
      REQUIRE_OK(tessera_array_close(a));
    }
    CHECK(g_arena.live == 0);
  }
}

/* What params_get returns creates an array like the first: the same dtype (not "|V4"), a NUL-terminated copy. */
static void test_params_get_creates_the_same_dtype(void) {
  tessera_allocator al = arena();
  tessera_buffer buf, buf2;
  tessera_storage st, st2;
  tessera_array_params p, q;
  tessera_array_info info;
  tessera_array *a = NULL, *b = NULL;
  float items[6 * 5];
  int i;
  for (i = 0; i < 30; ++i) items[i] = (float)i * 0.5f;
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  st = tessera_buffer_storage(&buf);
  tessera_array_params_init(&p);
  p.ndim = 2;
  p.shape[0] = 6;
  p.shape[1] = 5;
  p.chunkshape[0] = 4;
  p.chunkshape[1] = 5;
  p.blockshape[0] = 2;
  p.blockshape[1] = 5;
  p.dtype = "<f4";
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, NULL));
  REQUIRE_OK(tessera_array_params_get(a, &q));
  REQUIRE(q.dtype != NULL);
  CHECK(strcmp(q.dtype, "<f4") == 0 && q.itemsize == 4 && q.ndim == 2 && q.shape[1] == 5);
  CHECK(q.chunkshape[0] == 4 && q.blockshape[0] == 2);

  tessera_buffer_init(&buf2, g_frame2, sizeof g_frame2, 0);
  st2 = tessera_buffer_storage(&buf2);
  {
    tessera_fill fill;
    fill.kind = TESSERA_FILL_BUFFER;
    fill.data = items;
    fill.size = sizeof items;
    REQUIRE_OK(tessera_array_create(&b, &st2, &al, &q, &fill));
  }
  REQUIRE_OK(tessera_array_info_get(b, &info));
  CHECK(info.dtype_len == 3 && strcmp(info.dtype, "<f4") == 0 && info.dtype[info.dtype_len] == '\0');
  CHECK(info.extchunkshape[0] == 4 && info.extchunkshape[1] == 5 && info.nchunks == 2);
  CHECK(info.cbytes > 0 && info.chunks_nbytes == 2 * 4 * 5 * 4);
  {
    float back[30];
    REQUIRE_OK(tessera_array_read(b, back, sizeof back));
    CHECK(memcmp(back, items, sizeof items) == 0);
  }

  /* chunk_decode's size query (as chunk_read's): out NULL and size 0 give the length, nothing decoded. */
  {
    size_t need = 0, written = 0;
    float chunk[4 * 5];
    CHECK_ERR(tessera_array_chunk_decode(b, 1, NULL, 0, &need), TESSERA_ERR_BUFFER_TOO_SMALL);
    CHECK(need == 4 * 5 * 4);
    CHECK_ERR(tessera_array_chunk_decode(b, 1, chunk, need - 1, &written), TESSERA_ERR_BUFFER_TOO_SMALL);
    CHECK(written == need);
    REQUIRE_OK(tessera_array_chunk_decode(b, 1, chunk, need, &written));
    CHECK(written == need && memcmp(chunk, items + 20, 10 * sizeof(float)) == 0);
    CHECK_ERR(tessera_array_chunk_decode(b, 2, NULL, 0, &need), TESSERA_ERR_OUT_OF_RANGE);
  }
  REQUIRE_OK(tessera_array_close(b));
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
}

static void test_version_and_layout(void) {
  char want[32];
  tessera_allocator al = arena();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_array* a = NULL;
  sprintf(want, "%d.%d.%d", TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR, TESSERA_VERSION_PATCH);
  CHECK(strcmp(tessera_version(), want) == 0);
  CHECK(tessera_version_number() == TESSERA_VERSION_NUMBER);
  CHECK(tessera_max_dims() == TESSERA_MAX_DIMS);
  REQUIRE_OK(tessera_layout_check(TESSERA_LAYOUT));
  CHECK_ERR(tessera_layout_check(TESSERA_LAYOUT ^ 1u), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_layout_check(TESSERA_LAYOUT + (1u << 8)), TESSERA_ERR_INVALID_ARGUMENT);

  /* Params that did not come from tessera_array_params_init are refused, not read. */
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  st = tessera_buffer_storage(&buf);
  memset(&p, 0, sizeof p);
  p.ndim = 1;
  p.shape[0] = 4;
  p.codec = TESSERA_CODEC_LZ4;
  p.splitmode = 4;
  CHECK_ERR(tessera_array_create(&a, &st, &al, &p, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(a == NULL && buf.size == 0);
  {
    /* ... and named as such (not as another TESSERA_MAX_DIMS), where the build keeps its messages. */
    const tessera_status s = tessera_array_create(&a, &st, &al, &p, NULL);
    const tessera_status other = tessera_layout_check(TESSERA_LAYOUT ^ 1u);
    CHECK(strstr(s.message, "not initialized") != NULL || strcmp(s.message, "invalid_argument") == 0);
    CHECK(strstr(other.message, "TESSERA_MAX_DIMS") != NULL || strcmp(other.message, "invalid_argument") == 0);
  }
}

/* A caller compiled with another TESSERA_MAX_DIMS (test_capi_layout_other.c) gets errors, never a crash or a
 * write past its structs. */
static void test_other_layout(void) {
  tessera_allocator al = arena();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_array* a = NULL;
  int failures;
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  st = tessera_buffer_storage(&buf);
  tessera_array_params_init(&p);
  p.ndim = 1;
  p.shape[0] = 10;
  p.chunkshape[0] = 10; /* explicit: bare metal links the automatic partition only on request */
  p.blockshape[0] = 5;
  p.dtype = "<i4";
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, NULL));
  failures = other_layout_run(a, &st, &al, buf.data, buf.size);
  CHECK(failures == 0);
  CHECK(other_layout_max_dims() != TESSERA_MAX_DIMS);
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
}

int main(void) {
  static const test_case tests[] = {
      {"many_dims", test_many_dims},
      {"params_get_creates_the_same_dtype", test_params_get_creates_the_same_dtype},
      {"version_and_layout", test_version_and_layout},
      {"other_layout", test_other_layout},
  };
  return capi_cases_run("capi_dims", tests, sizeof tests / sizeof tests[0]);
}
