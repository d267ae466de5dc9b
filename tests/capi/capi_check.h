/* SPDX-License-Identifier: BSD-3-Clause */
/* The C tests' harness, shared by every test_capi*.c: one failure count per test case, checks that print where
 * they failed, the case runner, and an arena allocator over a caller's static buffer (no heap). */
#ifndef TESSERA_TESTS_CAPI_CHECK_H
#define TESSERA_TESTS_CAPI_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tessera/tessera.h"

static int g_case_failures;

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      printf("%s:%d: Failure\n  %s\n", __FILE__, __LINE__, #cond);        \
      ++g_case_failures;                                                  \
    }                                                                     \
  } while (0)
#define REQUIRE(cond)                                                     \
  do {                                                                    \
    if (!(cond)) {                                                        \
      printf("%s:%d: Failure (required)\n  %s\n", __FILE__, __LINE__, #cond); \
      ++g_case_failures;                                                  \
      return;                                                             \
    }                                                                     \
  } while (0)
#define REQUIRE_OK(call)                                                                        \
  do {                                                                                          \
    tessera_status s_ = (call);                                                                 \
    if (s_.code != TESSERA_OK) {                                                                \
      printf("%s:%d: Failure\n  %s -> %s (%d): %s\n", __FILE__, __LINE__, #call,               \
             tessera_errc_name(s_.code), (int)s_.code, s_.message);                             \
      ++g_case_failures;                                                                        \
      return;                                                                                   \
    }                                                                                           \
  } while (0)
#define CHECK_ERR(call, want)                                                                   \
  do {                                                                                          \
    tessera_status s_ = (call);                                                                 \
    if (s_.code != (want) || s_.message == NULL || s_.message[0] == '\0') {                     \
      printf("%s:%d: Failure\n  %s -> %s (%d) \"%s\", expected %s\n", __FILE__, __LINE__, #call, \
             tessera_errc_name(s_.code), (int)s_.code, s_.message ? s_.message : "(null)",      \
             tessera_errc_name(want));                                                          \
      ++g_case_failures;                                                                        \
    }                                                                                           \
  } while (0)

/* ---- The cases ---------------------------------------------------------------------------------------------- */

typedef struct test_case {
  const char* name;
  void (*fn)(void);
} test_case;

/* Runs every case, printing gtest-style lines ("[ RUN      ] SUITE.name"...) and "N passed, M failed"; returns
 * the exit status (failures != 0). */
static inline int capi_cases_run(const char* suite, const test_case* cases, size_t n) {
  int passed = 0, failed = 0;
  size_t i;
  for (i = 0; i < n; ++i) {
    printf("[ RUN      ] %s.%s\n", suite, cases[i].name);
    g_case_failures = 0;
    cases[i].fn();
    if (g_case_failures == 0) {
      ++passed;
      printf("[       OK ] %s.%s\n", suite, cases[i].name);
    } else {
      ++failed;
      printf("[  FAILED  ] %s.%s\n", suite, cases[i].name);
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  fflush(stdout);
  return failed != 0;
}

/* ---- An arena allocator over a static buffer (no heap) ------------------------------------------------------ */
/* Blocks go one after another; freeing the last one gives its bytes back, and the arena is empty again once
 * every block is freed. It counts live blocks and requests, and refuses every request while `refuse`, and the
 * request numbered refuse_at (1-based; 0: none). */

typedef struct test_arena {
  uint8_t* base;
  size_t capacity;
  size_t used;
  size_t high_water; /* the most bytes used at once */
  long live;         /* blocks allocated and not yet freed */
  long requests;     /* allocation requests so far */
  long refuse_at;    /* refuse the request with this number (1-based); 0: none */
  int refuse;        /* refuse every request */
} test_arena;

static inline void* test_arena_allocate(void* context, size_t size, size_t alignment) {
  test_arena* a = (test_arena*)context;
  uintptr_t at = (uintptr_t)(a->base + a->used);
  size_t pad = (size_t)((alignment - (at % alignment)) % alignment);
  ++a->requests;
  if (a->refuse || a->requests == a->refuse_at) return NULL;
  if (pad > a->capacity - a->used || size > a->capacity - a->used - pad) return NULL;
  a->used += pad + size;
  if (a->used > a->high_water) a->high_water = a->used;
  ++a->live;
  return (void*)(at + pad);
}

static inline void test_arena_deallocate(void* context, void* block, size_t size, size_t alignment) {
  test_arena* a = (test_arena*)context;
  (void)alignment;
  --a->live;
  if ((uint8_t*)block + size == a->base + a->used) a->used -= size; /* the last block gives its bytes back */
  if (a->live == 0) a->used = 0;
}

/* Empties `a` over `bytes` bytes at `memory` and returns its allocator. */
static inline tessera_allocator test_arena_init(test_arena* a, void* memory, size_t bytes) {
  tessera_allocator al;
  a->base = (uint8_t*)memory;
  a->capacity = bytes;
  a->used = 0;
  a->high_water = 0;
  a->live = 0;
  a->requests = 0;
  a->refuse_at = 0;
  a->refuse = 0;
  al.allocate = test_arena_allocate;
  al.deallocate = test_arena_deallocate;
  al.context = a;
  return al;
}

#endif
