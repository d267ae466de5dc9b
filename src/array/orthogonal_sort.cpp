// SPDX-License-Identifier: BSD-3-Clause
// Sorting an orthogonal selection's indices (orthogonal_sort.hpp).
#include "orthogonal_sort.hpp"

namespace tessera::detail {

namespace {

bool entry_less(const orthogonal_entry& x, const orthogonal_entry& y) noexcept {
  return x.value < y.value || (x.value == y.value && x.pos < y.pos);
}

void sift_down(orthogonal_entry* v, int64_t root, int64_t end) noexcept {
  for (;;) {
    int64_t child = 2 * root + 1;
    if (child >= end) return;
    if (child + 1 < end && entry_less(v[child], v[child + 1])) ++child;
    if (!entry_less(v[root], v[child])) return;
    const orthogonal_entry t = v[root];
    v[root] = v[child];
    v[child] = t;
    root = child;
  }
}

}  // namespace

void orthogonal_sort(orthogonal_entry* v, int64_t n) noexcept {
  for (int64_t i = n / 2 - 1; i >= 0; --i) sift_down(v, i, n);
  for (int64_t end = n - 1; end > 0; --end) {
    const orthogonal_entry t = v[0];
    v[0] = v[end];
    v[end] = t;
    sift_down(v, 0, end);
  }
}

}  // namespace tessera::detail
