/* SPDX-License-Identifier: BSD-3-Clause */
/* The C tests' harness: one failure count per test case, checks that print where they failed. */
#ifndef TESSERA_TESTS_CAPI_CHECK_H
#define TESSERA_TESTS_CAPI_CHECK_H

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

#endif
