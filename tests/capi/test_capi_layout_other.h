/* SPDX-License-Identifier: BSD-3-Clause */
/* The C API seen by a caller compiled with another TESSERA_MAX_DIMS than the library (test_capi_layout_other.c):
 * the interface between it and test_capi_dims.c has no struct whose layout depends on TESSERA_MAX_DIMS. */
#ifndef TESSERA_TEST_CAPI_LAYOUT_OTHER_H
#define TESSERA_TEST_CAPI_LAYOUT_OTHER_H

#include <stddef.h>
#include <stdint.h>

struct tessera_array;
struct tessera_storage;
struct tessera_allocator;

/* Runs the other-layout checks against a (an open 1-D array of the library's layout) in storage st, whose
 * frame is frame[0, frame_len); returns the number of failed checks (each printed). */
int other_layout_run(const struct tessera_array* a, const struct tessera_storage* st,
                     const struct tessera_allocator* alloc, const uint8_t* frame, size_t frame_len);

/* The TESSERA_MAX_DIMS that file was compiled with. */
int other_layout_max_dims(void);

#endif
