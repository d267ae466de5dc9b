// SPDX-License-Identifier: BSD-3-Clause
// Sparse frames through the directory crash model (issue 42; tests/support/crash_directory.hpp, the contiguous
// frames' sweeps are test_frame_crash_model.cpp). Each workload (appends, rewrites, deletes and inserts,
// vlmetalayers, changes dropped at close, writable reopens that sweep, a frame created over an older one, and two
// arrays: planes rewritten, resizes) runs on an sframe in a crash_directory: entries that are page-cache files,
// a namespace whose creations, removals and renames are durable as storage_directory promises (see the model's
// header). The test keeps its own model of the content and records it before each commit; at every call the crash
// images of the directory (any subset of the pending namespace operations, each file's lost and torn writes per
// 512- and 4096-byte sector) must open read-only as a snapshot that may be durable then, exactly; and nothing is
// left behind: after a writable reopen of the image (which sweeps), the directory holds exactly chunks.b2frame, one
// entry per stored chunk its index references, and the names a sweep leaves alone (directory_holds_exactly). Every
// call is also checked against the durable frame (nothing it references is written, emptied, removed or renamed
// away; the rename that commits a chunks.b2frame commits only durable content) and every storage opened is closed.
//
// Then the same workloads with failures, as for contiguous frames: one failing call at every N (once; from N on:
// a crash), the Nth sync failing (file syncs, and the removes, renames and creating opens that sync the
// directory in posix_directory; the program reopens from the disk, or retries on its handle), pairs of failing
// calls. Reduced by default; TESSERA_LONG_TESTS=full runs every call, more images and more pairs.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/crash_array_driver.hpp"
#include "../support/crash_directory.hpp"
#include "../support/crash_directory_sweep.hpp"
#include "../support/crash_frame_driver.hpp"
#include "../support/crash_sweep.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using crash_array::amodel;
using crash_frame::fmodel;
using crash_model::bytes;
using crash_model::entries;

namespace {

// ---- Nothing left behind ------------------------------------------------------------------------------------------

// Whether a name is one a sweep leaves alone (neither a chunk entry's, nor the index's, nor its temporary's).
bool foreign_name(const std::string& n) {
  return !crash_model::is_chunk_name(n) && n != kSparseIndexName && n != kSparseIndexTempName;
}

// "" when a writable reopen of the frame the entries hold (its sweep) leaves exactly chunks.b2frame, one entry per
// stored chunk its index references and the foreign names; else what it leaves. Run over a memory_directory copy.
std::string left_behind(const entries& e) {
  memory_directory md;
  if (!memory_directory_init(md, test::system_allocator(), static_cast<uint32_t>(e.size()) + 8).ok()) return "no memory";
  const storage_directory dir = memory_directory_interface(md);
  uint32_t foreign = 0;
  for (const auto& kv : e) {
    storage st;
    if (!storage_directory_open(dir, kv.first.c_str(), storage_open::replace, &st).ok()) return "copy failed";
    const status w = storage_write(st, 0, bytes_view(kv.second.data(), kv.second.size()));
    if (!storage_directory_close(dir, &st).ok() || !w.ok()) return "copy failed";
    foreign += foreign_name(kv.first) ? 1 : 0;
  }
  frame f;
  frame_open_options o;
  o.writable = true;
  const status s = frame_open_sparse(f, dir, test::system_allocator(), o);
  if (!s.ok()) return std::string("a writable reopen fails: ") + s.message;
  if (frame_test::directory_holds_exactly(md, f, foreign)) {
    (void)frame_close(f);
    return "";
  }
  std::string held, referenced;
  for (uint32_t i = 0; i < memory_directory_slots(md); ++i)
    if (const char* n = memory_directory_name(md, i)) held += std::string(held.empty() ? "" : " ") + n;
  const frame_info* info = frame_info_get(f);
  for (int64_t i = 0; info != nullptr && i < info->nchunks; ++i) {
    auto r = frame_chunk_locate(f, i);
    char name[16];
    if (r.ok() && r->special == chunk_special::none && frame_sparse_chunk_name(r->offset, name, sizeof name).ok())
      referenced += std::string(referenced.empty() ? "" : " ") + name;
  }
  (void)frame_close(f);
  return "after a writable reopen (the sweep) the directory holds {" + held + "}, its index references {" + referenced +
         "} (and " + std::to_string(foreign) + " foreign names)";
}

// "" when the entries are exactly chunks.b2frame, the entries its index references and foreign names, as they
// are (no sweep); else what is more or missing.
std::string exactly_referenced(const entries& e) {
  const storage_directory dir = crash_model::entries_directory(&e);
  frame f;
  const status s = frame_open_sparse(f, dir, test::system_allocator());
  if (!s.ok()) return std::string("holds no frame: ") + s.message;
  std::vector<std::string> want{kSparseIndexName};
  const frame_info* info = frame_info_get(f);
  for (int64_t i = 0; info != nullptr && i < info->nchunks; ++i) {
    auto r = frame_chunk_locate(f, i);
    if (!r.ok()) return "holds a frame whose chunk " + std::to_string(i) + " is not located: " + r.err().message;
    char name[16];
    if (r->special == chunk_special::none && frame_sparse_chunk_name(r->offset, name, sizeof name).ok()) want.emplace_back(name);
  }
  std::string more, missing;
  for (const auto& kv : e)
    if (!foreign_name(kv.first) && std::find(want.begin(), want.end(), kv.first) == want.end()) more += " " + kv.first;
  for (const std::string& n : want)
    if (e.count(n) == 0) missing += " " + n;
  if (more.empty() && missing.empty()) return "";
  return "holds entries its frame does not reference {" + more + " } and misses {" + missing + " }";
}

// An image opened as a sparse frame (the decoder's key) over its directory; read_error: the frame opens, what the
// test writes does not (an array's frame before its first commit with chunks).
struct opened_frame {
  frame own;
  storage_directory dir{};
  std::string read_error;
};

// A decoded image: cached by what decoding depends on (the names, the index, the entries the index references),
// not by the bytes of entries nobody references (a half-written new chunk's).
template <class Model>
struct sparse_decoder {
  std::unordered_map<uint64_t, crash_sweep::decoded> cache;

  template <class Read>
  crash_sweep::decoded decode(const bytes& image, Read&& read, std::string (*describe)(const Model&),
                              bytes (*canon_of)(const Model&), Model (*broken)(const std::string&)) {
    crash_sweep::decoded d;
    const entries e = crash_model::image_entries(image);
    opened_frame h;
    h.dir = crash_model::entries_directory(&e);
    const status opened = frame_open_sparse(h.own, h.dir, test::system_allocator());
    if (!opened.ok()) return crash_sweep::not_open(opened.message);
    // The key: every name, the index, and each referenced entry's content.
    bytes key;
    for (const auto& kv : e) crash_sweep::canon_bytes(key, reinterpret_cast<const uint8_t*>(kv.first.data()), kv.first.size());
    auto idx = e.find(kSparseIndexName);
    if (idx != e.end()) crash_sweep::canon_bytes(key, idx->second.data(), idx->second.size());
    bool keyed = true;
    const frame_info* info = frame_info_get(h.own);
    for (int64_t i = 0; info != nullptr && i < info->nchunks && keyed; ++i) {
      auto r = frame_chunk_locate(h.own, i);
      if (!r.ok()) {
        keyed = false;
        break;
      }
      if (r->special != chunk_special::none) continue;
      char name[16];
      if (!frame_sparse_chunk_name(r->offset, name, sizeof name).ok()) {
        keyed = false;
        break;
      }
      auto it = e.find(name);
      if (it == e.end()) keyed = false;
      else crash_sweep::canon_bytes(key, it->second.data(), it->second.size());
    }
    const uint64_t k = crash_model::bytes_hash(key, 7) ^ (crash_model::bytes_hash(key, 8) << 1);
    if (keyed) {
      auto c = cache.find(k);
      if (c != cache.end()) return c->second;
    }
    Model m = read(h);
    (void)frame_close(h.own);
    if (!h.read_error.empty()) {
      // Opens as a frame, not as what the test writes (an array's frame before its first commit with chunks).
      d.desc = h.read_error;
      if (keyed) cache.emplace(k, d);
      return d;
    }
    if (m.broken.empty()) {  // reads whole: what a writable reopen leaves
      const std::string left = left_behind(e);
      if (!left.empty()) m = broken("it reads as " + describe(m) + ", but " + left);
    }
    d.ok = true;
    d.canon = canon_of(m);
    d.desc = describe(m);
    if (keyed) {
      if (cache.size() > 100000) cache.clear();
      cache.emplace(k, d);
    }
    return d;
  }
};

// ---- Frames ------------------------------------------------------------------------------------------------------

crash_sweep::decoded decode_frame_image(const bytes& image) {
  static sparse_decoder<fmodel> dec;
  return dec.decode(
      image, [](opened_frame& h) { return crash_frame::read_frame(h.own); }, crash_frame::describe, crash_frame::canon_of,
      crash_frame::broken);
}

// The frame's driver (tests/support/crash_frame_driver.hpp) over a crash directory.
class fdriver : public crash_frame::frame_driver<crash_model::crash_directory> {
 public:
  fdriver(uint64_t, const crash_sweep::run_plan& plan) : frame_driver(0, plan, decode_frame_image, 0x53465241ull) {}

  // Someone else's file in the directory before the workload (a sweep must leave it).
  void put_foreign(const std::string& name, const bytes& content) { medium_.put_durable(name, content); }

 protected:
  std::string tidy_check(const entries& e) override { return exactly_referenced(e); }
};

// ---- Frame workloads -------------------------------------------------------------------------------------------------

using fworkload = crash_sweep::workload<fdriver>;

// Deletes in the middle, inserts at the front, middle and end, every chunk deleted (with a vlmetalayer set), then
// chunks again.
void wl_delete_insert(fdriver& d) {
  d.create_with(10, 5000, 512);
  d.focus();
  for (int k = 0; k < 3; ++k) d.erase(4);
  d.commit();
  d.insert(0, 5100, 512);
  d.insert(3, 5101, 512);
  d.insert(d.nchunks(), 5102, 512);
  d.update(1, 5103, 512);
  d.commit();
  for (int64_t i = 0, n = d.nchunks(); i < n; ++i) d.erase(0);  // a stopped run changes nothing: bounded
  d.vlmeta_set("a", 5104, 24);
  d.commit();
  d.append(5105, 512);
  d.append(5106, 512);
  d.commit();
  d.close();
}

// Vlmetalayers set, replaced and deleted, one of them about 6 KB (an index file over several sectors), and a
// fixed metalayer added (frame_meta_add: its own commits).
void wl_vlmetas(fdriver& d) {
  d.create_with(3, 7000, 1024);
  d.focus();
  d.vlmeta_set("a", 7100, 24);
  d.commit();
  d.vlmeta_set("big", 7101, 6000);
  d.update(1, 7102, 1024);
  d.commit();
  d.vlmeta_set("a", 7103, 40);
  d.vlmeta_delete("big");
  d.commit();
  d.update(2, 7104, 1024);
  d.meta_add("added", 7105, 12);
  d.close();
}

// Someone else's files in the directory; changes dropped at close (their new entries removed at once); writable
// reopens (the sweep) with changes after them.
void wl_reopen(fdriver& d) {
  d.put_foreign("notes.txt", bytes{'h', 'i'});
  d.put_foreign("0000000a.chunk", bytes{1, 2, 3});  // lower-case hex: not a chunk entry's name
  d.create_with(6, 8000, 1024);
  d.focus();
  d.update(1, 8100, 1024);
  d.append(8101, 1024);
  d.close(true);
  d.open_again();
  d.update(2, 8102, 1024);
  d.erase(0);
  d.commit();
  d.close();
  d.open_again();
  d.append(8103, 1024);
  d.erase(d.nchunks() - 2);
  d.commit();
  d.close();
}

// A frame created over an older one (whose entries the new chunks replace by number, the rest left to the next
// writable open), then reopened and changed.
void wl_create_over(fdriver& d) {
  d.create();
  for (int i = 0; i < 6; ++i) d.append(i == 2 ? 0 : 9000 + static_cast<uint64_t>(i), 1024);
  d.commit();
  d.close();
  d.focus();
  d.create_with(3, 9100, 1024);
  d.close();
  d.open_again();
  d.update(0, 9103, 1024);
  d.commit();
  d.close();
}

const fworkload kAppends{"sparse_appends", 0, [](fdriver& d) { crash_frame::wl_appends(d, 12); }};
const fworkload kRewrite{"sparse_rewrite", 0, [](fdriver& d) { crash_frame::wl_rewrite(d, 8, 3); }};
const fworkload kDeleteInsert{"sparse_delete_insert", 0, wl_delete_insert};
const fworkload kVlmetas{"sparse_vlmetas", 0, wl_vlmetas};
const fworkload kReopen{"sparse_reopen", 0, wl_reopen};
const fworkload kCreateOver{"sparse_create_over", 0, wl_create_over};

// ---- Arrays ------------------------------------------------------------------------------------------------------

// The image opened as a frame (the decoder's key), then as the array over that frame.
crash_sweep::decoded decode_array_image(const bytes& image) {
  static sparse_decoder<amodel> dec;
  return dec.decode(
      image,
      [](opened_frame& h) {
        array a;
        const status s = array_open_sparse(a, h.dir, test::system_allocator());
        if (!s.ok()) {
          h.read_error = std::string("the array does not open: ") + s.message;
          return crash_array::broken(h.read_error);
        }
        amodel m = crash_array::read_array(a);
        (void)array_close(a);
        return m;
      },
      crash_array::describe, crash_array::canon_of, crash_array::broken);
}

// The array's driver (tests/support/crash_array_driver.hpp) over a crash directory: an 8x8x8 array.
class adriver : public crash_array::array_driver<crash_model::crash_directory> {
 public:
  adriver(uint64_t, const crash_sweep::run_plan& plan) : array_driver(0, plan, decode_array_image, 0x53415252ull, {8, 8, 8}) {}

 protected:
  std::string tidy_check(const entries& e) override { return exactly_referenced(e); }
};

using aworkload = crash_sweep::workload<adriver>;

// Planes along the first axis rewritten, each committed (the same chunk entries replaced by new ones).
void wl_array_planes(adriver& d) {
  d.create();
  d.focus();
  test::rng r(11);
  for (int round = 0; round < 5; ++round) {
    const int64_t* sh = d.shape();
    if (sh[0] == 0) break;  // never created (a crash from the first call on)
    const int64_t z = (3 * round) % sh[0];
    d.write({z, 0, 0}, {z + 1, sh[1], sh[2]}, r);
    d.commit();
  }
  d.close();
}

// Written whole, shrunk (the chunks past the new shape deleted), grown and written, closed, reopened (the sweep)
// and written again.
void wl_array_resize(adriver& d) {
  d.create();
  test::rng r(12);
  d.write({0, 0, 0}, {8, 8, 8}, r);
  d.commit();
  d.focus();
  d.resize({4, 8, 5});
  d.commit();
  d.resize({8, 8, 8});
  d.write({3, 2, 4}, {6, 7, 8}, r);
  d.commit();
  d.close();
  d.open_again();
  d.write({0, 5, 5}, {2, 7, 7}, r);
  d.commit();
  d.close();
}

const aworkload kArrayPlanes{"sparse_array_planes", 0, wl_array_planes};
const aworkload kArrayResize{"sparse_array_resize", 0, wl_array_resize};

}  // namespace

// The smallest case of what the sweeps with a failed sync retried on the same handle find: an append whose new
// entry's creation fails as posix_directory fails it (the entry made, the directory's fsync failed: it is seen and
// may never be durable), retried on the same handle, then committed. The retry must not commit an entry whose name
// is not durable (it reused the number: open(replace) found the entry and created nothing, so nothing made its
// name durable), and the disk must hold the committed frame.
TESSERA_TEST(sparse_crash_cases, a_retried_append_after_a_failed_creation_commits_only_durable_entries) {
  crash_model::crash_directory cd;
  cd.checks_on();
  const storage_directory dir = cd.directory();
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = crash_frame::kBlock;
  frame_open_options o;
  o.writable = true;
  frame f;
  REQUIRE_OK(frame_create_sparse(f, dir, test::system_allocator(), p, o));
  const bytes c = crash_frame::chunk_of(77, 1024);
  if (cd.syncs() % 2 == 1) {
    // Someone else's file, so that the failing sync below has an odd number (the model then drops the creation).
    storage st;
    REQUIRE_OK(storage_directory_open(dir, "notes.txt", storage_open::replace, &st));
    REQUIRE_OK(storage_directory_close(dir, &st));
  }
  cd.faults.fail_syncs = {cd.syncs() + 1};  // the next sync is the new entry's creation (its directory's fsync)
  CHECK_ERR(frame_chunk_append(f, bytes_view(c.data(), c.size())), errc::io);
  cd.faults.clear();
  REQUIRE_OK(frame_chunk_append(f, bytes_view(c.data(), c.size())));
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_close(f));
  for (const std::string& v : cd.violations()) test::report_failure(t, __FILE__, __LINE__, v.c_str());
  cd.restart();
  const crash_sweep::decoded d = decode_frame_image(cd.durable_image());
  fmodel want;
  want.chunks.push_back(crash_frame::content_of(77, 1024));
  if (!d.ok || d.canon != crash_frame::canon_of(want)) {
    const std::string text = "after a restart, the disk " + (d.ok ? "holds " + d.desc : "does not open: " + d.desc) +
                             ", not the committed " + crash_frame::describe(want);
    test::report_failure(t, __FILE__, __LINE__, text.c_str());
  }
}

TESSERA_CRASH_SWEEP_TESTS(sparse_crash, appends, kAppends)
TESSERA_CRASH_SWEEP_TESTS(sparse_crash, rewrite, kRewrite)
TESSERA_CRASH_SWEEP_TESTS(sparse_crash, delete_insert, kDeleteInsert)
TESSERA_CRASH_SWEEP_TESTS(sparse_crash, vlmetas, kVlmetas)
TESSERA_CRASH_SWEEP_TESTS(sparse_crash, reopen, kReopen)
TESSERA_CRASH_SWEEP_TESTS(sparse_crash, create_over, kCreateOver)
TESSERA_CRASH_SWEEP_TESTS(sparse_crash, array_planes, kArrayPlanes)
TESSERA_CRASH_SWEEP_TESTS(sparse_crash, array_resize, kArrayResize)
