// SPDX-License-Identifier: BSD-3-Clause
// The per-dimension index lists of an orthogonal selection, sorted so that the indices one chunk or one block
// holds are consecutive (array_orthogonal_read groups them by block, array_orthogonal_write by chunk).
#pragma once

#include <stdint.h>

namespace tessera::detail {

// One index of a selection: its value (a coordinate of the array) and its position in the caller's list.
struct orthogonal_entry {
  int64_t value;
  int64_t pos;
};

// Sorts n entries by (value, pos): equal values keep the caller's order, so when a write visits them in this
// order the last one listed wins. A heap sort: no libc qsort, no recursion, no scratch.
void orthogonal_sort(orthogonal_entry* v, int64_t n) noexcept;

}  // namespace tessera::detail
