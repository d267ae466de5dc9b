/* SPDX-License-Identifier: BSD-3-Clause */
/* A caller compiled with another TESSERA_MAX_DIMS than the library (4, or 5 when the library has 4): its
 * tessera_array_params and tessera_array_info have another layout. Every call that takes or fills one, and the
 * opens, must answer TESSERA_ERR_INVALID_ARGUMENT, write nothing past the caller's structs and hand out no
 * handle. */
#include <stdio.h>
#include <string.h>

#if TESSERA_MAX_DIMS == 4
#define OTHER_MAX_DIMS 5
#else
#define OTHER_MAX_DIMS 4
#endif
#undef TESSERA_MAX_DIMS
#define TESSERA_MAX_DIMS OTHER_MAX_DIMS

#include "tessera/tessera.h"

#include "test_capi_layout_other.h"

static int g_failures;

#define EXPECT(cond)                                               \
  do {                                                             \
    if (!(cond)) {                                                 \
      printf("%s:%d: Failure\n  %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                \
    }                                                              \
  } while (0)
#define EXPECT_LAYOUT_ERROR(call)                                                                  \
  do {                                                                                             \
    tessera_status s_ = (call);                                                                    \
    if (s_.code != TESSERA_ERR_INVALID_ARGUMENT || s_.message == NULL || s_.message[0] == '\0') {   \
      printf("%s:%d: Failure\n  %s -> %s: %s, expected invalid_argument\n", __FILE__, __LINE__,    \
             #call, tessera_errc_name(s_.code), s_.message);                                       \
      ++g_failures;                                                                                \
    }                                                                                              \
  } while (0)

/* A struct followed by guard bytes that no call may touch. */
typedef struct guarded_info {
  tessera_array_info info;
  uint8_t guard[512];
} guarded_info;
typedef struct guarded_params {
  tessera_array_params params;
  uint8_t guard[512];
} guarded_params;

static int untouched(const uint8_t* p, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (p[i] != 0xa5) return 0;
  return 1;
}

int other_layout_max_dims(void) { return TESSERA_MAX_DIMS; }

int other_layout_run(const struct tessera_array* a, const struct tessera_storage* st,
                     const struct tessera_allocator* alloc, const uint8_t* frame, size_t frame_len) {
  guarded_info gi;
  guarded_params gp;
  tessera_array* out = NULL;
  tessera_array_view* view = NULL;
  g_failures = 0;
  EXPECT(tessera_max_dims() != TESSERA_MAX_DIMS);
  EXPECT_LAYOUT_ERROR(tessera_layout_check(TESSERA_LAYOUT));

  /* init leaves a mark that create refuses; nothing is written past the caller's struct. */
  memset(&gp, 0xa5, sizeof gp);
  tessera_array_params_init(&gp.params);
  EXPECT(gp.params.layout == TESSERA_LAYOUT);
  EXPECT(untouched(gp.guard, sizeof gp.guard));
  gp.params.ndim = 1;
  gp.params.shape[0] = 4;
  out = (tessera_array*)1;
  EXPECT_LAYOUT_ERROR(tessera_array_create(&out, st, alloc, &gp.params, NULL));
  EXPECT(out == NULL);

  /* The getters fill nothing. */
  memset(&gi, 0xa5, sizeof gi);
  EXPECT_LAYOUT_ERROR(tessera_array_info_get(a, &gi.info));
  EXPECT(untouched((const uint8_t*)&gi, sizeof gi));
  memset(&gp, 0xa5, sizeof gp);
  EXPECT_LAYOUT_ERROR(tessera_array_params_get(a, &gp.params));
  EXPECT(untouched((const uint8_t*)&gp, sizeof gp));

  /* Opens hand out no handle. */
  out = (tessera_array*)1;
  EXPECT_LAYOUT_ERROR(tessera_array_open(&out, st, alloc, NULL));
  EXPECT(out == NULL);
  EXPECT_LAYOUT_ERROR(tessera_array_view_open(&view, frame, frame_len, alloc, 0));
  EXPECT(view == NULL);
  return g_failures;
}
