// SPDX-License-Identifier: BSD-3-Clause
// Array writers through the page-cache crash model (issue 42; tests/support/crash_model.hpp and crash_sweep.hpp,
// the frame-level sweeps are tests/frame/test_frame_crash_model.cpp). Each workload (a rewrite loop of planes,
// random boxes, resize/insert/delete along an axis, a resize to a 0-length dimension with a vlmetalayer rewritten,
// compaction and close) runs on a contiguous array (durable) over a page cache, commits explicit (auto_commit
// off). The test keeps its own C-order model of the array (shape, items, vlmetalayers) and records it before each
// commit: every crash image taken at every storage call must open as an array that may be durable then, exactly,
// and every write is checked against the durable frame. Then the same workloads with failing calls (once, from N
// on, the Nth sync, pairs), as for frames. Reduced by default; TESSERA_LONG_TESTS=full runs every call.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tessera/array.hpp"

#include "../support/check.hpp"
#include "../support/crash_array_driver.hpp"
#include "../support/crash_model.hpp"
#include "../support/crash_sweep.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;
using crash_array::values;
using crash_model::bytes;

namespace {

crash_sweep::decoded decode_image(const bytes& image, uint64_t base) {
  const storage st = crash_model::image_storage(&image);
  array a;
  array_open_options o;
  o.frame.base_offset = base;
  const status s = array_open(a, st, test::system_allocator(), o);
  if (!s.ok()) return crash_sweep::not_open(s.message);
  const crash_array::amodel m = crash_array::read_array(a);
  (void)array_close(a);
  return crash_array::decoded_of(m);
}

// The array's driver (tests/support/crash_array_driver.hpp) over a page cache: an 8x12x12 array at the workload's
// base.
class driver : public crash_array::array_driver<crash_model::page_cache> {
 public:
  driver(uint64_t base, const crash_sweep::run_plan& plan)
      : array_driver(base, plan, [base](const bytes& image) { return decode_image(image, base); }, base + 1, {8, 12, 12}) {}
};

using workload = crash_sweep::workload<driver>;

// A rewrite loop of planes along the first axis, each slice write committed (the same chunks rewritten).
void wl_planes(driver& d, int rounds) {
  d.create();
  d.focus();
  test::rng r(1);
  for (int round = 0; round < rounds; ++round) {
    const int64_t* sh = d.shape();
    if (sh[0] == 0) break;  // the creation failed: no array, nothing to write
    const int64_t z = round % sh[0];
    d.write({z, 0, 0}, {z + 1, sh[1], sh[2]}, r);
    d.commit();
  }
  d.close();
}

// Random boxes, each committed; a compaction at the end.
void wl_boxes(driver& d) {
  d.create();
  d.focus();
  test::rng r(2);
  for (int round = 0; round < 10; ++round) {
    const int64_t* sh = d.shape();
    if (crash_array::count_of(sh) == 0) break;  // the creation failed: no array, nothing to write
    crash_array::box start, stop;
    for (size_t k = 0; k < start.size(); ++k) {
      const int64_t e = r.range(1, std::min<int64_t>(sh[k], 6));
      start[k] = r.range(0, sh[k] - e);
      stop[k] = start[k] + e;
    }
    d.write(start, stop, r);
    d.commit();
  }
  d.compact();
  d.close();
}

// The shape changed along axes: whole chunks inserted and deleted in the middle, a resize at the ends.
void wl_shapes(driver& d) {
  d.create();
  test::rng r(3);
  d.write({0, 0, 0}, {8, 12, 12}, r);
  d.commit();
  d.focus();
  d.insert(0, 4, 4, values(r, 4 * d.shape()[1] * d.shape()[2]));
  d.commit();
  d.erase(1, 4, 4);
  d.commit();
  d.resize({d.shape()[0] - 3, d.shape()[1] + 5, d.shape()[2]});
  d.commit();
  d.insert(2, d.shape()[2], 3, values(r, d.shape()[0] * d.shape()[1] * 3));  // at the end: any count
  d.commit();
  d.close();
}

// Resized to a 0-length first dimension with a vlmetalayer rewritten (a commit that leaves no chunks), grown again,
// written, closed.
void wl_cleared(driver& d) {
  d.create();
  test::rng r(4);
  d.write({0, 0, 0}, {8, 12, 12}, r);
  d.vlmeta_write("meta", 40, 30);
  d.commit();
  d.focus();
  d.resize({0, 12, 12});
  d.vlmeta_write("meta", 41, 50);
  d.commit();
  d.vlmeta_write("meta", 42, 20);
  d.commit();
  d.resize({6, 12, 12});
  d.write({1, 2, 3}, {5, 9, 8}, r);
  d.commit();
  d.close();
}

// An array of zeros (special index entries only: no chunk bytes, a small frame), closed and opened again,
// resized to a 0-length dimension with a vlmetalayer added: the cleared frame's trailer, right after the header,
// is longer than what followed the header before.
void wl_zeros_cleared(driver& d) {
  d.create();
  d.close();
  d.open_again();
  d.focus();
  d.vlmeta_write("meta", 43, 50);
  d.resize({0, 12, 12});
  d.commit();
  d.close();
}

// A few rewrites leave the frame loose: the close tidies it; opened again, written, closed.
void wl_close(driver& d) {
  d.create();
  test::rng r(5);
  d.write({0, 0, 0}, {8, 12, 12}, r);
  d.commit();
  d.focus();
  for (int64_t round = 0; round < 3; ++round) {
    d.write({0, 4 * round, 0}, {4, 4 * round + 4, 12}, r);
    d.commit();
  }
  d.close();
  d.open_again();
  d.write({5, 5, 5}, {7, 7, 7}, r);
  d.commit();
  d.close();
}

const workload kPlanes{"array_planes", 0, [](driver& d) { wl_planes(d, 12); }};
const workload kBoxes{"array_boxes", 0, wl_boxes};
const workload kShapes{"array_shapes", 0, wl_shapes};
const workload kCleared{"array_cleared", 0, wl_cleared};
const workload kClose{"array_close", 0, wl_close};
const workload kZerosCleared{"array_zeros_cleared", 0, wl_zeros_cleared};
const workload kPlanesAt{"array_planes_at_97", 97, [](driver& d) { wl_planes(d, 6); }};

}  // namespace

TESSERA_CRASH_SWEEP_TESTS(array_crash, planes, kPlanes)
TESSERA_CRASH_SWEEP_TESTS(array_crash, boxes, kBoxes)
TESSERA_CRASH_SWEEP_TESTS(array_crash, shapes, kShapes)
TESSERA_CRASH_SWEEP_TESTS(array_crash, cleared, kCleared)
TESSERA_CRASH_SWEEP_TESTS(array_crash, close, kClose)
TESSERA_CRASH_SWEEP_TESTS(array_crash, zeros_cleared, kZerosCleared)
TESSERA_CRASH_SWEEP_TESTS(array_crash, planes_at_97, kPlanesAt)
