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
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tessera/frame.hpp"

#include "../support/check.hpp"
#include "../support/crash_model.hpp"
#include "../support/crash_sweep.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using crash_model::bytes;
using crash_model::page_cache;

namespace {

constexpr int32_t kBlock = 256;
constexpr size_t kMaxChunk = 8192;

// ---- The logical model ----------------------------------------------------------------------------------------

struct fmodel {
  std::vector<bytes> chunks;                          // decoded
  std::vector<std::pair<std::string, bytes>> vlmetas;  // decoded, any order
  std::vector<std::pair<std::string, bytes>> metas;    // fixed metalayers, header order
  std::string broken;                                  // an image that opens but does not read whole
};

bytes canon_of(const fmodel& m) {
  bytes out;
  if (!m.broken.empty()) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(m.broken.data()), m.broken.size());
    return out;
  }
  crash_sweep::canon_u64(out, m.chunks.size());
  for (const bytes& c : m.chunks) crash_sweep::canon_bytes(out, c.data(), c.size());
  auto v = m.vlmetas;
  std::sort(v.begin(), v.end());
  crash_sweep::canon_u64(out, v.size());
  for (const auto& e : v) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(e.first.data()), e.first.size());
    crash_sweep::canon_bytes(out, e.second.data(), e.second.size());
  }
  crash_sweep::canon_u64(out, m.metas.size());
  for (const auto& e : m.metas) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(e.first.data()), e.first.size());
    crash_sweep::canon_bytes(out, e.second.data(), e.second.size());
  }
  return out;
}

std::string describe(const fmodel& m) {
  if (!m.broken.empty()) return "a frame that does not read: " + m.broken;
  char h[24];
  const bytes c = canon_of(m);
  std::snprintf(h, sizeof h, "%08llx", static_cast<unsigned long long>(crash_model::bytes_hash(c) & 0xffffffffu));
  std::string s = std::to_string(m.chunks.size()) + " chunks, vlmetas {";
  auto v = m.vlmetas;
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i].first + ":" + std::to_string(v[i].second.size());
  return s + "}, content " + h;
}

span<const char> nm(const std::string& s) { return span<const char>(s.data(), s.size()); }

chunk_decoder& decoder() {
  static chunk_decoder d;
  static bool ready = false;
  if (!ready) ready = chunk_decoder_init(d, test::system_allocator()).ok();
  return d;
}

// The content of an open frame, read with tessera's reader.
fmodel read_frame(frame& f) {
  fmodel m;
  const frame_info* info = frame_info_get(f);
  if (info == nullptr) {
    m.broken = "not open";
    return m;
  }
  for (int64_t i = 0; i < info->nchunks; ++i) {
    auto r = frame_chunk_locate(f, i);
    if (!r.ok()) {
      m.broken = "chunk " + std::to_string(i) + " not located: " + r.err().message;
      return m;
    }
    bytes out(static_cast<size_t>(r->nbytes));
    auto n = frame_chunk_decode(f, decoder(), i, bytes_mut(out.data(), out.size()));
    if (!n.ok()) {
      m.broken = "chunk " + std::to_string(i) + " does not decode: " + n.err().message;
      return m;
    }
    out.resize(*n);
    m.chunks.push_back(std::move(out));
  }
  for (uint32_t i = 0; i < info->nvlmetalayers; ++i) {
    auto name = frame_vlmeta_name(f, i);
    if (!name.ok()) {
      m.broken = std::string("vlmetalayer name: ") + name.err().message;
      return m;
    }
    auto nb = frame_vlmeta_nbytes(f, *name);
    if (!nb.ok()) {
      m.broken = std::string("vlmetalayer size: ") + nb.err().message;
      return m;
    }
    bytes out(*nb);
    auto n = frame_vlmeta_decode(f, decoder(), *name, bytes_mut(out.data(), out.size()));
    if (!n.ok()) {
      m.broken = std::string("vlmetalayer does not decode: ") + n.err().message;
      return m;
    }
    m.vlmetas.emplace_back(std::string(name->data(), name->size()), std::move(out));
  }
  for (uint32_t i = 0; i < info->nmetalayers; ++i) {
    auto name = frame_meta_name(f, i);
    if (!name.ok()) {
      m.broken = std::string("metalayer name: ") + name.err().message;
      return m;
    }
    auto c = frame_meta_find(f, *name);
    if (!c.ok()) {
      m.broken = std::string("metalayer: ") + c.err().message;
      return m;
    }
    m.metas.emplace_back(std::string(name->data(), name->size()), bytes(c->data(), c->data() + c->size()));
  }
  return m;
}

crash_sweep::decoded decode_image(const bytes& image, uint64_t base) {
  crash_sweep::decoded d;
  const storage st = crash_model::image_storage(&image);
  frame f;
  frame_open_options o;
  o.base_offset = base;
  const status s = frame_open(f, st, test::system_allocator(), o);
  if (!s.ok()) {
    d.desc = s.message;
    return d;
  }
  const fmodel m = read_frame(f);
  d.ok = true;
  d.canon = canon_of(m);
  d.desc = describe(m);
  return d;
}

// ---- Chunks and contents ----------------------------------------------------------------------------------------

bytes content_of(uint64_t seed, size_t n) {
  bytes b(n);
  if (seed != 0) frame_test::content_fill(seed, b.data(), n);
  return b;
}

// The chunk of content seed (n bytes, typesize 4; seed 0: a special chunk of zeros).
bytes chunk_of(uint64_t seed, size_t n) {
  static uint8_t src[kMaxChunk], out[2 * kMaxChunk + 64], work[3 * kBlock];
  if (seed == 0) {
    frame_test::special_make(1, static_cast<int32_t>(n), out);
    return bytes(out, out + 32);
  }
  const size_t len = frame_test::chunk_make(seed, n, kBlock, src, out, sizeof out, work);
  return bytes(out, out + len);
}

// ---- The frame's driver -------------------------------------------------------------------------------------------

class driver : public crash_sweep::driver<fmodel> {
 public:
  driver(uint64_t base, const crash_sweep::run_plan& plan)
      : crash_sweep::driver<fmodel>(base, plan, [base](const bytes& image) { return decode_image(image, base); },
                                    canon_of, describe) {}

  // A fixed buffer (or a full disk): from now on the storage holds at most `extra` bytes more than it does.
  void capacity_from_now(uint64_t extra) { pc_.capacity = extra == UINT64_MAX ? UINT64_MAX : pc_.visible().size() + extra; }
  void append(uint64_t seed, size_t n) {
    const bytes c = chunk_of(seed, n);
    op("append", [&] { return frame_chunk_append(f_, bytes_view(c.data(), c.size())); },
       [&] { m_.chunks.push_back(content_of(seed, n)); });
  }
  void insert(int64_t at, uint64_t seed, size_t n) {
    const bytes c = chunk_of(seed, n);
    op("insert", [&] { return frame_chunk_insert(f_, at, bytes_view(c.data(), c.size())); },
       [&] { m_.chunks.insert(m_.chunks.begin() + at, content_of(seed, n)); });
  }
  void update(int64_t at, uint64_t seed, size_t n) {
    const bytes c = chunk_of(seed, n);
    op("update", [&] { return frame_chunk_update(f_, at, bytes_view(c.data(), c.size())); },
       [&] { m_.chunks[static_cast<size_t>(at)] = content_of(seed, n); });
  }
  void erase(int64_t at) {
    op("delete", [&] { return frame_chunk_delete(f_, at); }, [&] { m_.chunks.erase(m_.chunks.begin() + at); });
  }
  void vlmeta_set(const std::string& name, uint64_t seed, size_t n) {
    const bytes content = content_of(seed, n);
    op("vlmeta set", [&] { return frame_vlmeta_set(f_, nm(name), bytes_view(content.data(), content.size())); },
       [&] {
         for (auto& e : m_.vlmetas)
           if (e.first == name) {
             e.second = content;
             return;
           }
         m_.vlmetas.emplace_back(name, content);
       });
  }
  void vlmeta_delete(const std::string& name) {
    op("vlmeta delete", [&] { return frame_vlmeta_delete(f_, nm(name)); },
       [&] {
         for (auto it = m_.vlmetas.begin(); it != m_.vlmetas.end(); ++it)
           if (it->first == name) {
             m_.vlmetas.erase(it);
             return;
           }
       });
  }
  void meta_update(uint8_t v) {
    const bytes content{v, static_cast<uint8_t>(v + 1), 3, 4, 5, 6, 7, static_cast<uint8_t>(~v)};
    op("meta update", [&] { return frame_meta_update(f_, nm("m"), bytes_view(content.data(), content.size())); },
       [&] { m_.metas[0].second = content; });
  }
  // frame_meta_add: commits what is pending, then (contiguous) moves what lies where the longer header goes and
  // commits, then commits the longer header. A failure leaves the metalayer pending or not: the model follows
  // the live frame then.
  void meta_add(const std::string& name, uint64_t seed, size_t n) {
    const bytes content = content_of(seed, n);
    commit();  // what frame_meta_add does first: a commit of its own in the model
    meta_adding_ = true;
    committing("meta add", [&] { return frame_meta_add(f_, nm(name), bytes_view(content.data(), content.size())); },
               [&] { m_.metas.emplace_back(name, content); });
    meta_adding_ = false;
  }
  [[nodiscard]] int64_t nchunks() const { return static_cast<int64_t>(m_.chunks.size()); }

 protected:
  status handle_create() override {
    const fmodel m0 = initial_model();
    const frame_metalayer_init ml{nm(m0.metas[0].first), bytes_view(m0.metas[0].second.data(), m0.metas[0].second.size())};
    frame_create_params p;
    p.typesize = 4;
    p.blocksize = kBlock;
    p.metalayers = &ml;
    p.nmetalayers = 1;
    return frame_create(f_, st_, test::system_allocator(), p, options());
  }
  status handle_open() override { return frame_open(f_, st_, test::system_allocator(), options()); }
  void handle_release() override { (void)detail::frame_release(f_); }
  bool handle_dirty() override { return frame_dirty(f_); }
  status handle_close() override { return frame_close(f_); }
  status handle_commit() override { return frame_commit(f_); }
  status handle_compact() override { return frame_compact(f_); }
  fmodel handle_read() override { return read_frame(f_); }
  bool failed_ops_may_change() override { return meta_adding_; }
  bool meta_adding_ = false;
  fmodel initial_model() override {
    fmodel m0;
    m0.metas.emplace_back("m", bytes{1, 2, 3, 4, 5, 6, 7, 8});
    return m0;
  }

 private:
  // The frame's default options (durable), at the workload's base offset, writable.
  frame_open_options options() const {
    frame_open_options o;
    o.base_offset = base_;
    o.writable = true;
    return o;
  }

  frame f_;
};

// ---- Workloads ---------------------------------------------------------------------------------------------------

using workload = crash_sweep::workload<driver>;

// Appends of equal chunks (one of them a special chunk of zeros), a commit every four.
void wl_appends_equal(driver& d) {
  d.create();
  d.focus();
  for (int i = 0; i < 16; ++i) {
    d.append(i == 5 ? 0 : 1000 + static_cast<uint64_t>(i), 1024);
    if (i % 4 == 3) d.commit();
  }
  d.close();
}

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

// A rewrite loop: the same chunks rewritten and committed round after round (space reuse, relocation, the
// tidy after commits), the fixed metalayer now and then.
void wl_rewrite_loop(driver& d) {
  d.create();
  for (int i = 0; i < 6; ++i) d.append(3000 + static_cast<uint64_t>(i), 1024);
  d.commit();
  d.focus();
  for (int round = 0; round < 32; ++round) {
    d.update(round % 6, 4000 + 2 * static_cast<uint64_t>(round), 1024);
    d.update((round + 3) % 6, 4001 + 2 * static_cast<uint64_t>(round), 1024);
    if (round % 4 == 0) d.meta_update(static_cast<uint8_t>(round));
    d.commit();
  }
  d.close();
}

// A run of deletes in the middle of 40 equal chunks, committed, then chunk 0 updated and committed (the tidy
// after those commits compacts).
void wl_delete_runs(driver& d) {
  d.create();
  for (int i = 0; i < 40; ++i) d.append(5000 + static_cast<uint64_t>(i), 512);
  d.commit();
  d.focus();
  for (int k = 10; k <= 17; ++k) d.erase(10);
  d.commit();
  d.update(0, 5100, 512);
  d.commit();
  d.close();
}

// Inserts at the front, in the middle and at the end.
void wl_inserts(driver& d) {
  d.create();
  for (int i = 0; i < 6; ++i) d.append(6000 + static_cast<uint64_t>(i), 1024);
  d.commit();
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
  d.create();
  for (int i = 0; i < 4; ++i) d.append(7000 + static_cast<uint64_t>(i), 1024);
  d.commit();
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
  d.create();
  for (int i = 0; i < 10; ++i) d.append(8000 + static_cast<uint64_t>(i), 1024);
  d.commit();
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
  d.create();
  for (int i = 0; i < 12; ++i) d.append(9000 + static_cast<uint64_t>(i), 1024);
  d.commit();
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
  d.create();
  for (int i = 0; i < 6; ++i) d.append(11000 + static_cast<uint64_t>(i), 1024);
  d.commit();
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
  d.create();
  for (int i = 0; i < 8; ++i) d.append(13000 + static_cast<uint64_t>(i), 1024);
  d.commit();
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

const workload kAppendsEqual{"appends_equal", 0, wl_appends_equal};
const workload kAppendsVarying{"appends_varying", 0, wl_appends_varying};
const workload kRewriteLoop{"rewrite_loop", 0, wl_rewrite_loop};
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

// One test per workload and sweep: crash images without faults, one failing call at every N (once; from N on),
// the Nth sync failing (reopen; retry), pairs of failing calls.
#define TESSERA_FRAME_CRASH_TESTS(id, wl)                                                                    \
  TESSERA_TEST(frame_crash_images, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::images); }     \
  TESSERA_TEST(frame_crash_fail_once, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::once); }    \
  TESSERA_TEST(frame_crash_fail_from, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::from); }    \
  TESSERA_TEST(frame_crash_sync_fails_reopen, id) {                                                        \
    crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::syncs_reopen);                                      \
  }                                                                                                        \
  TESSERA_TEST(frame_crash_sync_fails_retry, id) {                                                         \
    crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::syncs_retry);                                       \
  }                                                                                                        \
  TESSERA_TEST(frame_crash_fail_pairs, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::pairs); }

TESSERA_FRAME_CRASH_TESTS(appends_equal, kAppendsEqual)
TESSERA_FRAME_CRASH_TESTS(appends_varying, kAppendsVarying)
TESSERA_FRAME_CRASH_TESTS(rewrite_loop, kRewriteLoop)
TESSERA_FRAME_CRASH_TESTS(delete_runs, kDeleteRuns)
TESSERA_FRAME_CRASH_TESTS(inserts, kInserts)
TESSERA_FRAME_CRASH_TESTS(vlmetas, kVlmetas)
TESSERA_FRAME_CRASH_TESTS(compact, kCompact)
TESSERA_FRAME_CRASH_TESTS(close_tidy, kCloseTidy)
TESSERA_FRAME_CRASH_TESTS(empty_frame, kEmptyFrame)
TESSERA_FRAME_CRASH_TESTS(cleared, kCleared)
TESSERA_FRAME_CRASH_TESTS(base_97, kBase97)
TESSERA_FRAME_CRASH_TESTS(base_4000, kBase4000)
TESSERA_FRAME_CRASH_TESTS(full_storage, kFullStorage)
TESSERA_FRAME_CRASH_TESTS(meta_add, kMetaAdd)
TESSERA_FRAME_CRASH_TESTS(meta_add_empty, kMetaAddEmpty)
TESSERA_FRAME_CRASH_TESTS(meta_add_97, kMetaAdd97)
