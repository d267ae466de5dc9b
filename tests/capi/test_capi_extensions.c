/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests of what makes the C API whole beyond the array calls (tessera.h, tessera_memory.h), in C99 on every
 * target: user codecs and filters passed from C (written, read back, refused without them), metalayer and
 * vlmetalayer listings, the memory port's growable buffer, the read-only error code and messages that name
 * values, the split and special-chunk constants, and the structs a call copies. Small in RAM (the Cortex-M4). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tessera/tessera.h"
#include "tessera/port/tessera_memory.h"
#include "capi_check.h"

/* ---- The harness: capi_check.h ------------------------------------------------------------------------------ */

#define ARENA_BYTES (512u * 1024u)
static uint64_t g_arena_memory[ARENA_BYTES / 8];
static test_arena g_arena;

/* The arena, empty. */
static tessera_allocator arena_reset(void) { return test_arena_init(&g_arena, g_arena_memory, sizeof g_arena_memory); }


/* ---- Fixtures ----------------------------------------------------------------------------------------------- */

#define FRAME_BYTES (64u * 1024u)
static uint8_t g_frame[FRAME_BYTES];
static uint8_t g_frame2[FRAME_BYTES];

#define ROWS 20
#define COLS 20
#define NITEMS (ROWS * COLS)
static int32_t g_items[NITEMS];
static int32_t g_out[NITEMS];
static uint8_t g_chunk[8 * 1024];

/* A (20, 20) "<i4" array, chunks (10, 10), blocks (5, 10), in-place layout; items i % 7 (compressible). */
static void params_grid(tessera_array_params* p) {
  int i;
  tessera_array_params_init(p);
  p->ndim = 2;
  p->shape[0] = ROWS;
  p->shape[1] = COLS;
  p->chunkshape[0] = 10;
  p->chunkshape[1] = 10;
  p->blockshape[0] = 5;
  p->blockshape[1] = 10;
  p->dtype = "<i4";
  p->durable = 0;
  for (i = 0; i < NITEMS; ++i) g_items[i] = i % 7;
}

static tessera_fill fill_items(void) {
  tessera_fill f;
  f.kind = TESSERA_FILL_BUFFER;
  f.data = g_items;
  f.size = sizeof g_items;
  return f;
}

/* ---- A toy user codec (id 200) and filter (id 170) ---------------------------------------------------------- */

#define TOY_CODEC 200
#define TOY_FILTER 170
#define TOY_MAGIC 0xC7

typedef struct toy_counts {
  long encodes;
  long decodes;
  long forwards;
  long backwards;
} toy_counts;

static tessera_status toy_ok(void) {
  tessera_status s;
  s.code = TESSERA_OK;
  s.message = "";
  return s;
}

static tessera_status toy_error(const char* message) {
  tessera_status s;
  s.code = TESSERA_ERR_CORRUPT;
  s.message = message;
  return s;
}

/* A byte-XOR run-length "compressor": a magic byte, then (run, byte ^ 0x5a) pairs. Output that would not fit
 * reports 0 (stored raw, as the format allows). */
static tessera_status toy_encode(void* context, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size,
                                 uint8_t meta, size_t* written) {
  size_t i = 0, n = 0;
  (void)meta;
  ++((toy_counts*)context)->encodes;
  *written = 0;
  if (out_size < 1) return toy_ok();
  out[n++] = TOY_MAGIC;
  while (i < in_size) {
    size_t run = 1;
    while (i + run < in_size && run < 255 && in[i + run] == in[i]) ++run;
    if (n + 2 > out_size) {
      *written = 0; /* does not shrink: stored raw */
      return toy_ok();
    }
    out[n++] = (uint8_t)run;
    out[n++] = (uint8_t)(in[i] ^ 0x5a);
    i += run;
  }
  *written = n;
  return toy_ok();
}

static tessera_status toy_decode(void* context, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size,
                                 uint8_t meta, size_t* written) {
  size_t i = 1, n = 0;
  (void)meta;
  ++((toy_counts*)context)->decodes;
  if (in_size < 1 || in[0] != TOY_MAGIC) return toy_error("toy codec: no magic byte");
  while (i + 1 < in_size) {
    size_t run = in[i], k;
    if (run > out_size - n) return toy_error("toy codec: run past the output");
    for (k = 0; k < run; ++k) out[n++] = (uint8_t)(in[i + 1] ^ 0x5a);
    i += 2;
  }
  if (i != in_size || n != out_size) return toy_error("toy codec: stream and output sizes disagree");
  *written = n;
  return toy_ok();
}

static tessera_status toy_forward(void* context, const uint8_t* in, uint8_t* out, size_t size, uint8_t meta,
                                  uint8_t typesize) {
  size_t i;
  (void)typesize;
  ++((toy_counts*)context)->forwards;
  for (i = 0; i < size; ++i) out[i] = (uint8_t)(in[i] + 1 + meta);
  return toy_ok();
}

static tessera_status toy_backward(void* context, const uint8_t* in, uint8_t* out, size_t size, uint8_t meta,
                                   uint8_t typesize) {
  size_t i;
  (void)typesize;
  ++((toy_counts*)context)->backwards;
  for (i = 0; i < size; ++i) out[i] = (uint8_t)(in[i] - 1 - meta);
  return toy_ok();
}

static toy_counts g_toy;

/* Fills *codec and *filter with the toy plugins and *plugins with the tables (either may be left out). */
static void toy_plugins(tessera_plugins* plugins, tessera_user_codec* codec, tessera_user_filter* filter,
                        int with_codec, int with_filter) {
  codec->id = TOY_CODEC;
  codec->encode = toy_encode;
  codec->decode = toy_decode;
  codec->context = &g_toy;
  filter->id = TOY_FILTER;
  filter->forward = toy_forward;
  filter->backward = toy_backward;
  filter->context = &g_toy;
  plugins->codecs = with_codec ? codec : NULL;
  plugins->ncodecs = with_codec ? 1 : 0;
  plugins->filters = with_filter ? filter : NULL;
  plugins->nfilters = with_filter ? 1 : 0;
}

/* Opens the toy array in g_frame[0, len) with the plugins given (NULL: none) and reads it into g_out. */
static tessera_status toy_open_read(size_t len, const tessera_plugins* plugins, const tessera_allocator* al) {
  tessera_buffer buf;
  tessera_storage st;
  tessera_open_options o;
  tessera_array* a = NULL;
  tessera_status s;
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, len);
  st = tessera_buffer_storage(&buf);
  tessera_open_options_init(&o);
  o.plugins = plugins;
  s = tessera_array_open(&a, &st, al, &o);
  if (s.code != TESSERA_OK) return s;
  memset(g_out, 0, sizeof g_out);
  s = tessera_array_read(a, g_out, sizeof g_out);
  if (s.code == TESSERA_OK) return tessera_array_close(a);
  (void)tessera_array_close(a);
  return s;
}

static void test_user_codec_and_filter(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill fill;
  tessera_array* a = NULL;
  tessera_plugins plugins;
  tessera_user_codec codec;
  tessera_user_filter filter;
  tessera_chunk_params cp;
  size_t n = 0, len;

  memset(&g_toy, 0, sizeof g_toy);
  params_grid(&p);
  p.codec = TOY_CODEC;
  p.filters[4] = TOY_FILTER;
  p.filters_meta[4] = 3;
  toy_plugins(&plugins, &codec, &filter, 1, 1);
  p.plugins = &plugins;
  fill = fill_items();
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  st = tessera_buffer_storage(&buf);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &fill));
  /* The tables were copied: the caller's structs may change (ownership rule). */
  memset(&plugins, 0, sizeof plugins);
  memset(&codec, 0, sizeof codec);
  memset(&filter, 0, sizeof filter);
  CHECK(g_toy.encodes > 0 && g_toy.forwards > 0);

  /* The chunks carry the user codec (format 6, udcodec 200) and the filter in its slot, as c-blosc2 writes. */
  REQUIRE_OK(tessera_array_chunk_read(a, 0, g_chunk, sizeof g_chunk, &n));
  REQUIRE(n >= 32);
  CHECK((g_chunk[2] >> 5) == 6);
  CHECK(g_chunk[22] == TOY_CODEC);
  CHECK(g_chunk[20] == TOY_FILTER && g_chunk[28] == 3);
  CHECK((size_t)n < sizeof(int32_t) * 100); /* the toy codec shrank the chunk */
  REQUIRE_OK(tessera_array_chunk_params_get(a, &cp));
  CHECK(cp.codec == TOY_CODEC);

  /* Reads through the handle that wrote. */
  memset(g_out, 0, sizeof g_out);
  REQUIRE_OK(tessera_array_read(a, g_out, sizeof g_out));
  CHECK(memcmp(g_out, g_items, sizeof g_items) == 0);
  CHECK(g_toy.decodes > 0 && g_toy.backwards > 0);
  REQUIRE_OK(tessera_array_close(a));
  len = buf.size;

  /* Without the plugins the reader says which kind is missing: the filter is met first (unsupported), then the
   * codec (codec_unavailable). */
  CHECK_ERR(toy_open_read(len, NULL, &al), TESSERA_ERR_UNSUPPORTED);
  toy_plugins(&plugins, &codec, &filter, 1, 0);
  CHECK_ERR(toy_open_read(len, &plugins, &al), TESSERA_ERR_UNSUPPORTED);
  toy_plugins(&plugins, &codec, &filter, 0, 1);
  CHECK_ERR(toy_open_read(len, &plugins, &al), TESSERA_ERR_CODEC_UNAVAILABLE);

  /* With both it reads exactly. */
  toy_plugins(&plugins, &codec, &filter, 1, 1);
  g_toy.decodes = 0;
  REQUIRE_OK(toy_open_read(len, &plugins, &al));
  CHECK(memcmp(g_out, g_items, sizeof g_items) == 0);
  CHECK(g_toy.decodes > 0);

  /* Ids below 32 are the library's, never a plugin's. */
  codec.id = 5;
  CHECK_ERR(toy_open_read(len, &plugins, &al), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(g_arena.live == 0);
}

/* A copy with its own params turns the user-codec array into a standard one that reads without plugins. */
static void test_user_codec_copy(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf, buf2;
  tessera_storage st, st2;
  tessera_array_params p, cp;
  tessera_fill fill;
  tessera_array *a = NULL, *c = NULL;
  tessera_plugins plugins;
  tessera_user_codec codec;
  tessera_user_filter filter;
  tessera_array_target t;
  tessera_open_options o;

  params_grid(&p);
  p.codec = TOY_CODEC;
  p.filters[4] = TOY_FILTER;
  toy_plugins(&plugins, &codec, &filter, 1, 1);
  p.plugins = &plugins;
  fill = fill_items();
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  st = tessera_buffer_storage(&buf);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &fill));
  tessera_buffer_init(&buf2, g_frame2, sizeof g_frame2, 0);
  st2 = tessera_buffer_storage(&buf2);
  t = tessera_array_target_contiguous(&st2);
  t.durable = 0;
  REQUIRE_OK(tessera_array_params_get(a, &cp));
  CHECK(cp.codec == TOY_CODEC && cp.filters[4] == TOY_FILTER);
  cp.codec = TESSERA_CODEC_BLOSCLZ; /* in every build (bare-metal ones may have no LZ4) */
  cp.filters[4] = TESSERA_FILTER_NONE;
  REQUIRE_OK(tessera_array_copy(&c, &t, &al, a, &cp));
  REQUIRE_OK(tessera_array_close(c));
  REQUIRE_OK(tessera_array_close(a));
  tessera_open_options_init(&o);
  REQUIRE_OK(tessera_array_open(&c, &st2, &al, &o));
  memset(g_out, 0, sizeof g_out);
  REQUIRE_OK(tessera_array_read(c, g_out, sizeof g_out));
  CHECK(memcmp(g_out, g_items, sizeof g_items) == 0);
  REQUIRE_OK(tessera_array_close(c));
  CHECK(g_arena.live == 0);
}

/* ---- Metalayer listings ------------------------------------------------------------------------------------ */

static void test_metalayer_listing(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill fill;
  tessera_array* a = NULL;
  tessera_metalayer metas[2];
  const uint8_t m1[3] = {0x93, 1, 2};
  const uint8_t m2[1] = {0xc0};
  uint32_t count = 99;
  int32_t exists = -1;
  char name[32];
  size_t len = 0;

  params_grid(&p);
  metas[0].name = "first";
  metas[0].content = m1;
  metas[0].size = sizeof m1;
  metas[1].name = "second";
  metas[1].content = m2;
  metas[1].size = sizeof m2;
  p.metalayers = metas;
  p.nmetalayers = 2;
  fill = fill_items();
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  st = tessera_buffer_storage(&buf);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &fill));

  REQUIRE_OK(tessera_array_meta_count(a, &count));
  CHECK(count == 3); /* "b2nd" and the two */
  REQUIRE_OK(tessera_array_meta_name(a, 0, name, sizeof name, &len));
  CHECK(strcmp(name, "b2nd") == 0 && len == 4);
  REQUIRE_OK(tessera_array_meta_name(a, 2, name, sizeof name, NULL));
  CHECK(strcmp(name, "second") == 0);
  CHECK_ERR(tessera_array_meta_name(a, 3, name, sizeof name, &len), TESSERA_ERR_OUT_OF_RANGE);
  CHECK_ERR(tessera_array_meta_name(a, 1, name, 5, &len), TESSERA_ERR_BUFFER_TOO_SMALL); /* "first" + NUL */
  CHECK(len == 5);
  REQUIRE_OK(tessera_array_meta_exists(a, "second", &exists));
  CHECK(exists == 1);
  REQUIRE_OK(tessera_array_meta_exists(a, "third", &exists));
  CHECK(exists == 0);
  CHECK_ERR(tessera_array_meta_exists(a, NULL, &exists), TESSERA_ERR_INVALID_ARGUMENT);

  REQUIRE_OK(tessera_array_vlmeta_count(a, &count));
  CHECK(count == 0);
  REQUIRE_OK(tessera_array_vlmeta_set(a, "alpha", "abc", 3));
  REQUIRE_OK(tessera_array_vlmeta_set(a, "beta", "de", 2));
  REQUIRE_OK(tessera_array_vlmeta_count(a, &count));
  CHECK(count == 2);
  REQUIRE_OK(tessera_array_vlmeta_name(a, 1, name, sizeof name, &len));
  CHECK(strcmp(name, "beta") == 0 && len == 4);
  REQUIRE_OK(tessera_array_vlmeta_exists(a, "alpha", &exists));
  CHECK(exists == 1);
  REQUIRE_OK(tessera_array_vlmeta_delete(a, "alpha"));
  REQUIRE_OK(tessera_array_vlmeta_exists(a, "alpha", &exists));
  CHECK(exists == 0);
  REQUIRE_OK(tessera_array_vlmeta_count(a, &count));
  CHECK(count == 1);
  REQUIRE_OK(tessera_array_vlmeta_name(a, 0, name, sizeof name, NULL));
  CHECK(strcmp(name, "beta") == 0);
  CHECK_ERR(tessera_array_vlmeta_name(a, 1, name, sizeof name, NULL), TESSERA_ERR_OUT_OF_RANGE);
  REQUIRE_OK(tessera_array_close(a));

  /* The listings survive a reopen (they are read from the frame). */
  REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL));
  REQUIRE_OK(tessera_array_vlmeta_count(a, &count));
  CHECK(count == 1);
  REQUIRE_OK(tessera_array_meta_count(a, &count));
  CHECK(count == 3);
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
}

/* What a C programmer porting b2nd code meets: a vlmetalayer read into a short buffer reports the size it needs,
 * b2nd's selection idiom (int64_t* sel[]) compiles without a warning (the tests build with -Werror), the
 * "b2nd" metalayer serializes and parses on its own, and a fixed metalayer is added to an array with chunks. */
static void test_b2nd_idioms(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill fill;
  tessera_array* a = NULL;
  char small[4];
  char big[16];
  size_t written = 0;
  int64_t rows[2] = {1, 0}, cols[3] = {2, 0, 1};
  int64_t* sel[2];
  int64_t counts[2] = {2, 3};
  int32_t got[6], again[6];
  const int64_t* csel[2];
  int k;

  params_grid(&p);
  fill = fill_items();
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  st = tessera_buffer_storage(&buf);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &fill));
  /* Seven bytes: below the vlmetalayer's typesize of 8, stored as they are (bare-metal images link no encoder). */
  REQUIRE_OK(tessera_array_vlmeta_set(a, "note", "hello!!", 7));
  CHECK_ERR(tessera_array_vlmeta_get(a, "note", small, sizeof small, &written), TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK(written == 7);
  REQUIRE_OK(tessera_array_vlmeta_get(a, "note", big, written, &written));
  CHECK(written == 7 && memcmp(big, "hello!!", 7) == 0);

  sel[0] = rows;
  sel[1] = cols;
  REQUIRE_OK(tessera_array_orthogonal_get_b2nd(a, sel, counts, got, sizeof got));
  csel[0] = rows;
  csel[1] = cols;
  REQUIRE_OK(tessera_array_orthogonal_get(a, csel, counts, again, sizeof again));
  for (k = 0; k < 6; ++k) CHECK(got[k] == again[k]);
  for (k = 0; k < 6; ++k) got[k] = -k;
  REQUIRE_OK(tessera_array_orthogonal_set_b2nd(a, sel, counts, got, sizeof got));
  REQUIRE_OK(tessera_array_orthogonal_get(a, csel, counts, again, sizeof again));
  for (k = 0; k < 6; ++k) CHECK(again[k] == -k);

  /* b2nd_serialize_meta / b2nd_deserialize_meta: the bytes the array's own "b2nd" metalayer holds. */
  {
    const void* stored = NULL;
    size_t stored_size = 0;
    uint8_t meta[128];
    int32_t ndim = -1, format = -1;
    int64_t shape[TESSERA_MAX_DIMS];
    int32_t chunks[TESSERA_MAX_DIMS], blocks[TESSERA_MAX_DIMS];
    const char* dtype = NULL;
    size_t dtype_len = 0;
    REQUIRE_OK(tessera_array_meta_get(a, "b2nd", &stored, &stored_size));
    CHECK_ERR(tessera_b2nd_meta_serialize(p.ndim, p.shape, p.chunkshape, p.blockshape, p.dtype, 0, meta, 8, &written),
              TESSERA_ERR_BUFFER_TOO_SMALL);
    CHECK(written == stored_size);
    REQUIRE_OK(tessera_b2nd_meta_serialize(p.ndim, p.shape, p.chunkshape, p.blockshape, p.dtype, 0, meta, sizeof meta,
                                           &written));
    CHECK(written == stored_size && memcmp(meta, stored, written) == 0);
    REQUIRE_OK(tessera_b2nd_meta_deserialize(stored, stored_size, TESSERA_MAX_DIMS, &ndim, shape, chunks, blocks, &dtype,
                                             &dtype_len, &format));
    CHECK(ndim == 2 && shape[0] == ROWS && shape[1] == COLS && chunks[0] == 10 && blocks[0] == 5 && format == 0);
    CHECK(dtype_len == 3 && memcmp(dtype, "<i4", 3) == 0);
    CHECK_ERR(tessera_b2nd_meta_deserialize(stored, stored_size, 1, &ndim, shape, chunks, blocks, &dtype, &dtype_len,
                                            &format), TESSERA_ERR_BUFFER_TOO_SMALL);
    CHECK_ERR(tessera_b2nd_meta_deserialize(stored, stored_size - 1, TESSERA_MAX_DIMS, &ndim, shape, chunks, blocks,
                                            &dtype, &dtype_len, &format), TESSERA_ERR_TRUNCATED);
    CHECK_ERR(tessera_b2nd_meta_serialize(-1, p.shape, p.chunkshape, p.blockshape, p.dtype, 0, meta, sizeof meta,
                                          &written), TESSERA_ERR_INVALID_ARGUMENT);
  }

  /* blosc2_meta_add on an array with chunks (the reference's leaves such a file unreadable). */
  {
    const uint8_t extra[3] = {0x93, 7, 8};
    const void* got_meta = NULL;
    size_t got_size = 0;
    uint32_t count = 0;
    REQUIRE_OK(tessera_array_meta_add(a, "extra", extra, sizeof extra));
    CHECK_ERR(tessera_array_meta_add(a, "extra", extra, sizeof extra), TESSERA_ERR_INVALID_ARGUMENT);
    REQUIRE_OK(tessera_array_close(a));
    REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL));
    REQUIRE_OK(tessera_array_meta_count(a, &count));
    CHECK(count == 2);
    REQUIRE_OK(tessera_array_meta_get(a, "extra", &got_meta, &got_size));
    CHECK(got_size == sizeof extra && memcmp(got_meta, extra, sizeof extra) == 0);
    REQUIRE_OK(tessera_array_orthogonal_get(a, csel, counts, again, sizeof again));
    for (k = 0; k < 6; ++k) CHECK(again[k] == -k);
  }
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
}

/* The b2nd metalayer calls refuse every missing pointer and every value outside its range, and the layout check
 * tells a struct never initialized (no layout a build makes) from one of another build. */
static void test_b2nd_meta_arguments(void) {
  const int64_t shape[2] = {4, 5};
  const int32_t chunks[2] = {2, 5}, blocks[2] = {1, 5};
  int64_t oshape[2];
  int32_t ochunks[2], oblocks[2], ondim = 0, oformat = 0;
  uint8_t meta[128];
  size_t written = 0, len = 0, dlen = 0;
  const char* dt = NULL;
  char long_dtype[300];
  REQUIRE_OK(tessera_b2nd_meta_serialize(2, shape, chunks, blocks, "<i4", 0, meta, sizeof meta, &len));
  CHECK_ERR(tessera_b2nd_meta_serialize(2, shape, chunks, blocks, "<i4", 0, meta, sizeof meta, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_serialize(2, shape, chunks, blocks, NULL, 0, meta, sizeof meta, &written), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_serialize(2, shape, chunks, blocks, "<i4", 0, NULL, sizeof meta, &written), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_serialize(2, NULL, chunks, blocks, "<i4", 0, meta, sizeof meta, &written), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_serialize(2, shape, NULL, blocks, "<i4", 0, meta, sizeof meta, &written), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_serialize(2, shape, chunks, NULL, "<i4", 0, meta, sizeof meta, &written), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_serialize(TESSERA_MAX_DIMS + 1, shape, chunks, blocks, "<i4", 0, meta, sizeof meta, &written),
            TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_serialize(2, shape, chunks, blocks, "<i4", -1, meta, sizeof meta, &written), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_serialize(2, shape, chunks, blocks, "<i4", 128, meta, sizeof meta, &written), TESSERA_ERR_INVALID_ARGUMENT);
  memset(long_dtype, 'x', sizeof long_dtype - 1);
  long_dtype[sizeof long_dtype - 1] = 0;
  CHECK_ERR(tessera_b2nd_meta_serialize(2, shape, chunks, blocks, long_dtype, 0, meta, sizeof meta, &written), TESSERA_ERR_INVALID_ARGUMENT);
  {
    /* A geometry the format cannot hold (a negative shape): refused by the encoder. */
    const int64_t bad[2] = {-1, 5};
    CHECK_ERR(tessera_b2nd_meta_serialize(2, bad, chunks, blocks, "<i4", 0, meta, sizeof meta, &written), TESSERA_ERR_INVALID_ARGUMENT);
  }
  REQUIRE_OK(tessera_b2nd_meta_serialize(0, NULL, NULL, NULL, "<f8", 0, meta, sizeof meta, &written)); /* a scalar */
  REQUIRE_OK(tessera_b2nd_meta_deserialize(meta, written, 0, &ondim, NULL, NULL, NULL, &dt, &dlen, &oformat));
  CHECK(ondim == 0 && dlen == 3 && memcmp(dt, "<f8", 3) == 0);
  REQUIRE_OK(tessera_b2nd_meta_serialize(2, shape, chunks, blocks, "<i4", 0, meta, sizeof meta, &len));
  CHECK_ERR(tessera_b2nd_meta_deserialize(NULL, len, 2, &ondim, oshape, ochunks, oblocks, &dt, &dlen, &oformat), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_deserialize(meta, len, 2, NULL, oshape, ochunks, oblocks, &dt, &dlen, &oformat), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_deserialize(meta, len, 2, &ondim, NULL, ochunks, oblocks, &dt, &dlen, &oformat), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_deserialize(meta, len, 2, &ondim, oshape, NULL, oblocks, &dt, &dlen, &oformat), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_deserialize(meta, len, 2, &ondim, oshape, ochunks, NULL, &dt, &dlen, &oformat), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_deserialize(meta, len, 2, &ondim, oshape, ochunks, oblocks, NULL, &dlen, &oformat), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_deserialize(meta, len, 2, &ondim, oshape, ochunks, oblocks, &dt, NULL, &oformat), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_b2nd_meta_deserialize(meta, len, 2, &ondim, oshape, ochunks, oblocks, &dt, &dlen, NULL), TESSERA_ERR_INVALID_ARGUMENT);
  REQUIRE_OK(tessera_b2nd_meta_deserialize(meta, len, 2, &ondim, oshape, ochunks, oblocks, &dt, &dlen, &oformat));
  CHECK(ondim == 2 && oshape[1] == 5 && ochunks[0] == 2 && oblocks[0] == 1);

  /* Layouts no build makes: not initialized. */
  CHECK_ERR(tessera_layout_check(0), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_layout_check((TESSERA_LAYOUT & ~0xffu) | 65u), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_layout_check(TESSERA_LAYOUT & ~(0xfffu << 8)), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_layout_check(TESSERA_LAYOUT & 0xfffffu), TESSERA_ERR_INVALID_ARGUMENT);
}

/* ---- The growable memory buffer ---------------------------------------------------------------------------- */

static void test_memory_buffer(void) {
  tessera_allocator al = arena_reset();
  tessera_memory_buffer* mb = NULL;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill fill;
  tessera_array* a = NULL;
  tessera_array_view* v = NULL;
  const uint8_t* data = NULL;
  size_t size = 0;
  tessera_memory_bytes bytes;
  int64_t start[2] = {3, 4}, stop[2] = {5, 7};
  int32_t part[6];

  REQUIRE_OK(tessera_memory_buffer_create(&mb, &al, SIZE_MAX));
  st = tessera_memory_buffer_storage(mb);
  params_grid(&p);
  fill = fill_items();
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &fill));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_memory_buffer_bytes(mb, &data, &size));
  CHECK(data != NULL && size > 100);

  /* The buffer is a storage like any other: the array reopens from it. */
  REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL));
  REQUIRE_OK(tessera_array_read(a, g_out, sizeof g_out));
  CHECK(memcmp(g_out, g_items, sizeof g_items) == 0);
  REQUIRE_OK(tessera_array_close(a));

  /* Taking the bytes hands them over without a copy; the buffer goes, the bytes stay until freed. */
  REQUIRE_OK(tessera_memory_buffer_take(mb, &bytes));
  CHECK(bytes.data == data && bytes.size == size && bytes.capacity >= size);
  REQUIRE_OK(tessera_memory_buffer_bytes(mb, &data, &size));
  CHECK(size == 0);
  tessera_memory_buffer_destroy(mb);
  REQUIRE_OK(tessera_array_view_open(&v, bytes.data, bytes.size, &al, 0));
  REQUIRE_OK(tessera_array_view_slice_get(v, start, stop, part, sizeof part));
  CHECK(part[0] == g_items[3 * COLS + 4] && part[5] == g_items[4 * COLS + 6]);
  tessera_array_view_close(v);
  tessera_memory_bytes_free(&bytes);
  CHECK(bytes.data == NULL && bytes.size == 0);
  CHECK(g_arena.live == 0);

  /* A maximum size bounds it: the array does not fit in 256 bytes. */
  REQUIRE_OK(tessera_memory_buffer_create(&mb, &al, 256));
  st = tessera_memory_buffer_storage(mb);
  CHECK_ERR(tessera_array_create(&a, &st, &al, &p, &fill), TESSERA_ERR_NO_SPACE);
  CHECK(a == NULL);
  tessera_memory_buffer_destroy(mb);
  CHECK(g_arena.live == 0);
  CHECK_ERR(tessera_memory_buffer_create(NULL, &al, 1), TESSERA_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tessera_memory_buffer_take(NULL, &bytes), TESSERA_ERR_INVALID_ARGUMENT);
}

/* ---- Errors that say what ---------------------------------------------------------------------------------- */

/* With messages compiled in the message names the values; compiled out it is the code's name. */
static int message_names(const char* message, const char* code_name, const char* a, const char* b) {
  if (strcmp(message, code_name) == 0) return 1;
  return strstr(message, a) != NULL && strstr(message, b) != NULL;
}

static void test_errors(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_fill fill;
  tessera_array* a = NULL;
  tessera_status s;
  int64_t start[2] = {0, 0}, stop[2] = {2, 40};
  int64_t coords[2] = {1, 20}; /* outside: column 20 of 20 */
  int64_t inside[2] = {1, 2};
  int32_t item = 0;

  CHECK(strcmp(tessera_errc_name(TESSERA_ERR_READ_ONLY), "read_only") == 0);
  CHECK(TESSERA_ERR_READ_ONLY == 15 && TESSERA_ERR_READ_ONLY != TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(tessera_errc_name(16), "unknown") == 0);

  params_grid(&p);
  fill = fill_items();
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  st = tessera_buffer_storage(&buf);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &fill));
  REQUIRE_OK(tessera_array_close(a));
  REQUIRE_OK(tessera_array_open(&a, &st, &al, NULL)); /* read-only */
  CHECK_ERR(tessera_array_slice_set(a, start, stop, g_items, sizeof g_items), TESSERA_ERR_READ_ONLY);
  CHECK_ERR(tessera_array_element_set(a, inside, &item, sizeof item), TESSERA_ERR_READ_ONLY);
  CHECK_ERR(tessera_array_vlmeta_set(a, "x", "y", 1), TESSERA_ERR_READ_ONLY);
  CHECK_ERR(tessera_array_resize(a, stop), TESSERA_ERR_READ_ONLY);
  CHECK_ERR(tessera_array_delete(a, 0, 0, 10), TESSERA_ERR_READ_ONLY);

  /* Which dimension, what was given, what was allowed. */
  s = tessera_array_slice_get(a, start, stop, g_out, sizeof g_out);
  CHECK(s.code == TESSERA_ERR_OUT_OF_RANGE);
  CHECK(message_names(s.message, "out_of_range", "dimension 1", "stop 40"));
  CHECK(message_names(s.message, "out_of_range", "<= 20", "start 0"));
  s = tessera_array_element_get(a, coords, &item, sizeof item);
  CHECK(s.code == TESSERA_ERR_OUT_OF_RANGE);
  CHECK(message_names(s.message, "out_of_range", "dimension 1: coordinate 20", "[0, 20)"));
  stop[1] = 10;
  s = tessera_array_slice_get(a, start, stop, g_out, 10);
  CHECK(s.code == TESSERA_ERR_BUFFER_TOO_SMALL);
  CHECK(message_names(s.message, "buffer_too_small", "10 bytes", "80"));
  REQUIRE_OK(tessera_array_close(a));

  {
    tessera_open_options o;
    tessera_open_options_init(&o);
    o.writable = 1;
    REQUIRE_OK(tessera_array_open(&a, &st, &al, &o));
  }
  s = tessera_array_append(a, 2, 1, g_items, sizeof g_items);
  CHECK(s.code == TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(message_names(s.message, "invalid_argument", "axis 2", "[0, 2)"));
  s = tessera_array_insert(a, 0, 5, 10, g_items, sizeof g_items);
  CHECK(s.code == TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(message_names(s.message, "invalid_argument", "position 5", "chunk extent 10"));
  s = tessera_array_element_set(a, coords, &item, 2);
  CHECK(s.code == TESSERA_ERR_INVALID_ARGUMENT);
  CHECK(message_names(s.message, "invalid_argument", "2 bytes", "itemsize 4"));
  REQUIRE_OK(tessera_array_close(a));

  /* A read-only storage refuses a writable open with the same code. */
  st.write = NULL;
  {
    tessera_open_options o;
    tessera_open_options_init(&o);
    o.writable = 1;
    CHECK_ERR(tessera_array_open(&a, &st, &al, &o), TESSERA_ERR_READ_ONLY);
  }
  CHECK(g_arena.live == 0);
}

/* ---- Constants and copies ----------------------------------------------------------------------------------- */

static long g_exec_runs;

static void exec_run(void* context, size_t ntasks, tessera_executor_task task, void* task_context) {
  size_t i;
  ++*(long*)context;
  for (i = 0; i < ntasks; ++i) task(task_context, i, 0);
}

static void test_constants_and_copies(void) {
  tessera_allocator al = arena_reset();
  tessera_buffer buf;
  tessera_storage st;
  tessera_array_params p;
  tessera_chunk_params cp;
  tessera_chunk_info ci;
  tessera_fill fill;
  tessera_array* a = NULL;
  tessera_executor exec;
  size_t n = 0;

  params_grid(&p);
  p.splitmode = TESSERA_SPLIT_NEVER;
  exec.run = exec_run;
  exec.context = &g_exec_runs;
  exec.workers = 2;
  p.executor = &exec;
  fill.kind = TESSERA_FILL_ZEROS;
  fill.data = NULL;
  fill.size = 0;
  tessera_buffer_init(&buf, g_frame, sizeof g_frame, 0);
  st = tessera_buffer_storage(&buf);
  REQUIRE_OK(tessera_array_create(&a, &st, &al, &p, &fill));
  /* The executor struct was copied: the caller's may go (here: overwritten) and the array still runs on it. */
  memset(&exec, 0, sizeof exec);
  memset(&st, 0, sizeof st);
  g_exec_runs = 0;
  REQUIRE_OK(tessera_array_chunk_params_get(a, &cp));
  CHECK(cp.splitmode == TESSERA_SPLIT_NEVER);
  REQUIRE_OK(tessera_array_chunk_read(a, 0, g_chunk, sizeof g_chunk, &n));
  REQUIRE_OK(tessera_chunk_info_get(g_chunk, n, &ci));
  CHECK(ci.special == TESSERA_CHUNK_SPECIAL_ZEROS);
  REQUIRE_OK(tessera_array_slice_set(a, (const int64_t[]){0, 0}, (const int64_t[]){10, 10}, g_items, 400));
  CHECK(g_exec_runs > 0);
  REQUIRE_OK(tessera_array_chunk_read(a, 0, g_chunk, sizeof g_chunk, &n));
  REQUIRE_OK(tessera_chunk_info_get(g_chunk, n, &ci));
  CHECK(ci.special == TESSERA_CHUNK_SPECIAL_NONE);
  CHECK((g_chunk[2] & 0x10) != 0); /* never split: the format's no-split flag */
  REQUIRE_OK(tessera_array_close(a));
  CHECK(g_arena.live == 0);
}

static const test_case g_cases[] = {
    {"user_codec_and_filter", test_user_codec_and_filter},
    {"user_codec_copy", test_user_codec_copy},
    {"metalayer_listing", test_metalayer_listing},
    {"b2nd_idioms", test_b2nd_idioms},
    {"b2nd_meta_arguments", test_b2nd_meta_arguments},
    {"memory_buffer", test_memory_buffer},
    {"errors", test_errors},
    {"constants_and_copies", test_constants_and_copies},
};

int main(void) {
  tessera_codec_link_all();
  tessera_filter_link_all();
  tessera_encoder_link_plugins(); /* writing with user codecs and filters (bare metal links it only so) */
  tessera_encoder_link_parallel(); /* the executor of two workers */
  return capi_cases_run("capi_extensions", g_cases, sizeof(g_cases) / sizeof(g_cases[0]));
}
