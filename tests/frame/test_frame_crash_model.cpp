// SPDX-License-Identifier: BSD-3-Clause
// Frame writers through the page-cache crash model (issue 42; tests/support/crash_model.hpp). Each workload
// (appends, rewrites, deletes, inserts, vlmetalayers, compaction, the close tidy, an empty frame, a frame at an
// offset) runs on a cframe (durable, the default options) over a page cache. The test keeps its own model of
// the frame's content (every chunk's decoded bytes, the vlmetalayers, the fixed metalayers) and records it
// before each commit; at every storage call the crash images of the disk (lost and torn writes per 512- and
// 4096-byte sector, any prefix of size changes) must open as a snapshot that may be durable then, exactly: the
// last committed one, or the one a commit is making (a failed commit's stays possible until another
// succeeds). Every write is also checked against the durable frame (nothing it references is overwritten; its
// header is rewritten in one write within a 512-byte sector, committing only durable bytes).
//
// Then the same workloads with failures: one failing call at every N (once, and from N on: a crash), the Nth
// sync failing (the program then reopens from the disk; or it keeps its handle and retries, and a commit that
// returns ok must have made its snapshot durable), and pairs of failing calls. Failed operations are reported
// and the workload goes on, as a user who retries (a failed frame operation must leave the frame as it was); at
// the end the frame must hold the model (after a crash, or on a handle a failed sync left, a possible snapshot).
// The machinery (the driver, the sweeps, the snapshot windows) is tests/support/crash_sweep.hpp.
//
// Reduced by default (calls after each workload's setup, a few images per state, a sample of pairs);
// TESSERA_LONG_TESTS=full runs every call, more images and more pairs.
#include <cstdint>
#include <string>

#include "tessera/frame.hpp"

#include "../support/check.hpp"
#include "../support/crash_frame_driver.hpp"
#include "../support/crash_model.hpp"
#include "../support/crash_sweep.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;
using crash_model::bytes;

namespace {

crash_sweep::decoded decode_image(const bytes& image, uint64_t base) {
  const storage st = crash_model::image_storage(&image);
  frame f;
  frame_open_options o;
  o.base_offset = base;
  const status s = frame_open(f, st, test::system_allocator(), o);
  return s.ok() ? crash_frame::decoded_of(crash_frame::read_frame(f)) : crash_sweep::not_open(s.message);
}

// The frame's driver (tests/support/crash_frame_driver.hpp) over a page cache, its frame at the workload's base.
class driver : public crash_frame::frame_driver<crash_model::page_cache> {
 public:
  driver(uint64_t base, const crash_sweep::run_plan& plan)
      : frame_driver(base, plan, [base](const bytes& image) { return decode_image(image, base); }, base + 1) {}

  // A fixed buffer (or a full disk): from now on the storage holds at most `extra` bytes more than it does.
  void capacity_from_now(uint64_t extra) {
    medium_.capacity = extra == UINT64_MAX ? UINT64_MAX : medium_.visible().size() + extra;
  }
};

// ---- Workloads ---------------------------------------------------------------------------------------------------

using workload = crash_sweep::workload<driver>;

// Appends of chunks of varying sizes, a commit every three.
void wl_appends_varying(driver& d) {
  d.create();
  d.focus();
  test::rng r(7);
  for (int i = 0; i < 12; ++i) {
    d.append(2000 + static_cast<uint64_t>(i), static_cast<size_t>(4 * r.range(64, 1024)));
    if (i % 3 == 2) d.commit();
  }
  d.close();
}

// A run of deletes in the middle of 40 equal chunks, committed, then chunk 0 updated and committed (the tidy
// after those commits compacts).
void wl_delete_runs(driver& d) {
  d.create_with(40, 5000, 512);
  d.focus();
  for (int k = 10; k <= 17; ++k) d.erase(10);
  d.commit();
  d.update(0, 5100, 512);
  d.commit();
  d.close();
}

// Inserts at the front, in the middle and at the end.
void wl_inserts(driver& d) {
  d.create_with(6, 6000, 1024);
  d.focus();
  d.insert(0, 6100, 1024);
  d.insert(3, 6101, 1024);
  d.insert(d.nchunks(), 6102, 1024);
  d.commit();
  d.insert(1, 6103, 1024);
  d.insert(1, 6104, 1024);
  d.commit();
  d.close();
}

// Vlmetalayers set, replaced and deleted, one of them about 6 KB (a trailer over several sectors).
void wl_vlmetas(driver& d) {
  d.create_with(4, 7000, 1024);
  d.focus();
  d.vlmeta_set("a", 7100, 24);
  d.commit();
  d.vlmeta_set("big", 7101, 6000);
  d.commit();
  d.vlmeta_set("a", 7102, 40);
  d.vlmeta_delete("big");
  d.commit();
  d.vlmeta_set("big", 7103, 6000);
  d.commit();
  d.vlmeta_delete("a");
  d.commit();
  d.close();
}

// Rewrites and a delete leave holes; frame_compact makes the frame tight (two commits of moved chunks).
void wl_compact(driver& d) {
  d.create_with(10, 8000, 1024);
  d.focus();
  for (int i = 0; i < 6; ++i) d.update(i, 8100 + static_cast<uint64_t>(i), 1024);
  d.commit();
  d.erase(2);
  d.commit();
  d.compact();
  d.append(8200, 1024);
  d.commit();
  d.close();
}

// A frame left loose by a few changes: the close tidies it (commits of the same content); opened again and
// changed once more.
void wl_close_tidy(driver& d) {
  d.create_with(12, 9000, 1024);
  d.focus();
  d.update(1, 9100, 1024);
  d.update(5, 9101, 1024);
  d.update(9, 9102, 1024);
  d.commit();
  d.erase(3);
  d.commit();
  d.close();
  d.open_again();
  d.update(0, 9103, 1024);
  d.commit();
  d.close();
}

// A frame without chunks whose vlmetalayers (and fixed metalayer) change: its trailer sits right after the
// header.
void wl_empty_frame(driver& d) {
  d.create();
  d.focus();
  d.vlmeta_set("a", 10100, 24);
  d.commit();
  d.vlmeta_set("big", 10101, 6000);
  d.commit();
  d.vlmeta_set("a", 10102, 30);
  d.commit();
  d.vlmeta_delete("big");
  d.meta_update(9);
  d.commit();
  d.close();
}

// Every chunk deleted (the commit that clears the front), then chunks again.
void wl_cleared(driver& d) {
  d.create_with(6, 11000, 1024);
  d.focus();
  for (int i = 0; i < 6; ++i) d.erase(0);
  d.vlmeta_set("a", 11100, 24);
  d.commit();
  d.append(11101, 1024);
  d.append(11102, 1024);
  d.commit();
  d.close();
}

// A frame at an offset inside a larger file (the bytes before it belong to someone else). meta: the fixed
// metalayer changes too, so that the header's last bytes differ between commits (a torn header is a mix); only
// where the header fits one sector (a change across one is refused as unsupported).
void wl_at_offset(driver& d, bool meta) {
  d.create();
  d.focus();
  for (int i = 0; i < 6; ++i) d.append(12000 + static_cast<uint64_t>(i), 1024);
  d.commit();
  d.update(2, 12100, 1024);
  d.vlmeta_set("a", 12101, 24);
  if (meta) d.meta_update(1);
  d.commit();
  d.update(4, 12102, 1024);
  if (meta) d.meta_update(2);
  d.commit();
  d.close();
}

// A fixed buffer with room for about one chunk more than the frame: new versions go into holes or fail with
// no_space (the frame as it was), deletions make room, compaction needs room for its copy.
void wl_full_storage(driver& d) {
  d.create_with(8, 13000, 1024);
  d.capacity_from_now(1536);
  d.focus();
  for (int r = 0; r < 4; ++r) {
    d.update(r, 13100 + static_cast<uint64_t>(r), 1024);
    d.commit();
  }
  d.erase(7);
  d.commit();
  d.update(6, 13200, 1024);
  d.append(13201, 1024);
  d.commit();
  d.compact();
  d.capacity_from_now(UINT64_MAX);
  d.commit();
  d.close();
}

// Fixed metalayers added to a frame with chunks (they move out of the way of the longer header), with a
// vlmetalayer, and to a frame at an offset.
void wl_meta_add(driver& d) {
  d.create();
  for (int i = 0; i < 5; ++i) d.append(14000 + static_cast<uint64_t>(i), 1024);
  d.vlmeta_set("v", 14050, 40);
  d.commit();
  d.focus();
  d.meta_add("added", 14100, 12);
  d.update(1, 14101, 1024);
  d.meta_add("second", 14102, 30);
  d.commit();
  d.close();
}

// An empty frame (its trailer right after the header) gets a metalayer, then chunks.
void wl_meta_add_empty(driver& d) {
  d.create();
  d.vlmeta_set("v", 14200, 300);
  d.commit();
  d.focus();
  d.meta_add("added", 14201, 16);
  d.append(14202, 1024);
  d.commit();
  d.close();
}

const workload kAppendsEqual{"appends_equal", 0, [](driver& d) { crash_frame::wl_appends(d, 16); }};
const workload kAppendsVarying{"appends_varying", 0, wl_appends_varying};
const workload kRewriteLoop{"rewrite_loop", 0, [](driver& d) { crash_frame::wl_rewrite(d, 32, 4); }};
const workload kDeleteRuns{"delete_runs", 0, wl_delete_runs};
const workload kInserts{"inserts", 0, wl_inserts};
const workload kVlmetas{"vlmetas", 0, wl_vlmetas};
const workload kCompact{"compact", 0, wl_compact};
const workload kCloseTidy{"close_tidy", 0, wl_close_tidy};
const workload kEmptyFrame{"empty_frame", 0, wl_empty_frame};
const workload kCleared{"cleared", 0, wl_cleared};
const workload kBase97{"base_97", 97, [](driver& d) { wl_at_offset(d, true); }};
const workload kBase4000{"base_4000", 4000, [](driver& d) { wl_at_offset(d, false); }};
const workload kFullStorage{"full_storage", 0, wl_full_storage};
const workload kMetaAdd{"meta_add", 0, wl_meta_add};
const workload kMetaAddEmpty{"meta_add_empty", 0, wl_meta_add_empty};
const workload kMetaAdd97{"meta_add_97", 97, wl_meta_add};

}  // namespace

TESSERA_CRASH_SWEEP_TESTS(frame_crash, appends_equal, kAppendsEqual)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, appends_varying, kAppendsVarying)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, rewrite_loop, kRewriteLoop)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, delete_runs, kDeleteRuns)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, inserts, kInserts)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, vlmetas, kVlmetas)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, compact, kCompact)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, close_tidy, kCloseTidy)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, empty_frame, kEmptyFrame)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, cleared, kCleared)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, base_97, kBase97)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, base_4000, kBase4000)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, full_storage, kFullStorage)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, meta_add, kMetaAdd)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, meta_add_empty, kMetaAddEmpty)
TESSERA_CRASH_SWEEP_TESTS(frame_crash, meta_add_97, kMetaAdd97)
