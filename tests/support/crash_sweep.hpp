// SPDX-License-Identifier: BSD-3-Clause
// Sweeps of writers through the page-cache crash model (crash_model.hpp; the directory crash model through
// crash_directory_sweep.hpp): the snapshots a test records before each commit, the set of them that may be
// durable, and the crash images taken at storage calls, each of which must open as one of that set exactly. The
// test supplies how an image decodes (its content as canonical bytes) and how its own logical model becomes those
// bytes. Hosted targets only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/error.hpp"

#include "check.hpp"
#include "crash_model.hpp"
#include "random.hpp"

namespace crash_sweep {

using crash_model::bytes;

// The long mode (TESSERA_LONG_TESTS=full) runs every sweep whole; anything else (unset included) runs the
// reduced variant, which asserts the same properties at fewer calls, images and pairs.
inline bool full_mode() {
  const char* v = std::getenv("TESSERA_LONG_TESTS");
  return v != nullptr && std::strcmp(v, "full") == 0;
}

// An image's content as the test reads it: canonical bytes (equal contents give equal bytes) and a short text.
struct decoded {
  bool ok = false;
  bytes canon;
  std::string desc;  // what it holds, or why it does not open
};
inline decoded not_open(const std::string& why) {
  decoded d;
  d.desc = why;
  return d;
}

// Appends integers and byte strings to canonical bytes (length-prefixed, so concatenations cannot collide).
inline void canon_u64(bytes& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline void canon_bytes(bytes& out, const uint8_t* p, size_t n) {
  canon_u64(out, n);
  out.insert(out.end(), p, p + n);
}

// How many crash images a captured state gets.
struct capture_settings {
  std::vector<uint32_t> sectors{512, 4096};
  size_t exhaustive_units = 2;  // every subset (and size prefix) up to this many units; else samples
  uint64_t samples = 2;         // random images per sector, besides the two extremes
  uint64_t seed = 1;            // mixed with the call number and the sector
};

// What the driver and the verifier need to know of a crash medium besides its common calls (calls, syncs,
// crashed, restart, version, paused, trace, faults, on_call, violations, pending, for_each_crash_image): the page
// cache's here, the crash directory's in crash_directory_sweep.hpp.
template <class Medium>
struct medium_traits;

template <>
struct medium_traits<crash_model::page_cache> {
  using call = crash_model::call_kind;
  using target = tessera::storage;  // what the writer is created on
  using listing = bytes;            // what visible() returns
  static constexpr bool directory = false;
  static constexpr const char* noun = "the storage";
  static constexpr const char* pending_text = "pending operations";
  static constexpr const char* trace_tag = "crash model";
  static constexpr const char* checks_tag = "write check";
  // A page cache whose disk holds `base` bytes of someone else's before the writer's.
  static bytes fresh(uint64_t base) { return bytes(static_cast<size_t>(base), 0xA5); }
  static crash_model::page_cache make(uint64_t base) { return crash_model::page_cache(fresh(base)); }
  static void checks_on(crash_model::page_cache& pc, uint64_t base) { pc.checks_on(base); }
  static target target_of(crash_model::page_cache& pc) { return pc.storage(); }
  static std::string call_text(call k) { return std::string("before its ") + crash_model::call_kind_name(k); }
  // Failures after which a careful program reopens from the disk: failed syncs.
  static uint64_t lossy(const crash_model::page_cache& pc) { return pc.failed_syncs(); }
  static const bytes& visible(const crash_model::page_cache& pc) { return pc.visible(); }
  static const bytes& durable(const crash_model::page_cache& pc) { return pc.durable(); }
  // no_space from a storage given a capacity is the workload's own (a full buffer), not a fault's.
  static bool workload_full(const crash_model::page_cache& pc, const tessera::status& s) {
    return s.code == tessera::errc::no_space && pc.capacity != UINT64_MAX;
  }
  static uint32_t open_handles(const crash_model::page_cache&) { return 0; }
  static bool holds_chunks(const crash_model::page_cache&) { return false; }
};

template <class Model>
class verifier {
 public:
  static constexpr int kNoFrame = -2;  // the class of an image that does not open
  static constexpr int kUnknown = -1;  // opens, as none of the snapshots

  // tag: what decode depends on besides the image (the base offset): decoded images are cached under it for
  // the whole process (the runs of a sweep see mostly the same images).
  verifier(std::function<decoded(const bytes&)> decode, std::function<bytes(const Model&)> canon_of,
           std::function<std::string(const Model&)> describe, uint64_t tag = 0)
      : decode_(std::move(decode)), canon_of_(std::move(canon_of)), describe_(std::move(describe)), tag_(tag) {}

  // ---- Snapshots and the window --------------------------------------------------------------------------
  // Snapshot 0 stands for "no frame yet": before the first commit, an image may not open.
  void start_without_frame() {
    possible_ = {kNoFrameId};
    ++window_;
  }
  // Records the content a commit is about to make durable; returns its id.
  int add(const Model& m) {
    snap s;
    s.model = m;
    s.canon = canon_of_(m);
    s.digest = digest_of(s.canon);
    s.cls = static_cast<int>(snaps_.size());
    for (size_t i = 0; i < snaps_.size(); ++i)
      if (snaps_[i].canon == s.canon) {
        s.cls = snaps_[i].cls;
        break;
      }
    snaps_.push_back(std::move(s));
    return static_cast<int>(snaps_.size()) - 1;
  }
  [[nodiscard]] const Model& model(int id) const { return snaps_[static_cast<size_t>(id)].model; }
  [[nodiscard]] std::string describe(int id) const {
    if (id == kNoFrameId) return "#" + std::to_string(id) + " (no frame)";
    return "#" + std::to_string(id) + " (" + describe_(snaps_[static_cast<size_t>(id)].model) + ")";
  }
  // A commit (or compaction) of snapshot `id` starts: images may hold it or any possible one.
  void commit_begin(int id) {
    attempted_ = id;
    ++window_;
  }
  // It returned: on success only it is possible; on failure it stays possible with the others until a later
  // commit succeeds.
  void commit_end(bool ok) {
    if (attempted_ >= 0) {
      if (ok) {
        possible_ = {attempted_};
      } else {
        bool have = false;
        for (int p : possible_) have = have || p == attempted_;
        if (!have) possible_.push_back(attempted_);
      }
    }
    attempted_ = -1;
    ++window_;
  }
  // The durable content is known to be snapshot id (a restart found it).
  void known(int id) {
    possible_ = {id};
    attempted_ = -1;
    ++window_;
  }
  [[nodiscard]] const std::vector<int>& possible() const noexcept { return possible_; }
  [[nodiscard]] std::string possible_text() const {
    std::string s;
    for (int p : possible_) s += (s.empty() ? "" : ", ") + describe(p);
    if (attempted_ >= 0) s += (s.empty() ? "" : ", ") + describe(attempted_) + " (being committed)";
    return s;
  }

  // ---- Images --------------------------------------------------------------------------------------------
  // The class of an image: a snapshot's class, kUnknown or kNoFrame. An image is decoded once per process (its
  // content kept as a 128-bit digest of its canonical bytes, compared with the snapshots').
  int classify(const bytes& image, std::string* desc = nullptr) {
    const uint64_t key = crash_model::bytes_hash(image) ^ (tag_ * 0x9E3779B97F4A7C15ull);
    auto& cache = shared_cache();
    auto it = cache.find(key);
    if (it == cache.end()) {
      ++decodes_;
      const decoded d = decode_(image);
      cached c;
      c.ok = d.ok;
      c.desc = d.desc;
      if (d.ok) c.digest = digest_of(d.canon);
      if (cache.size() > 200000) cache.clear();
      it = cache.emplace(key, std::move(c)).first;
    }
    if (desc != nullptr) *desc = it->second.desc;
    if (!it->second.ok) return kNoFrame;
    for (size_t i = 1; i < snaps_.size(); ++i)
      if (snaps_[i].digest == it->second.digest) return snaps_[i].cls;
    return kUnknown;
  }
  // The snapshot id among the possible ones that image holds, or -1.
  int identify(const bytes& image) {
    const int cls = classify(image);
    for (int p : possible_)
      if (class_of(p) == cls) return p;
    return -1;
  }
  // What image holds, in words.
  std::string what(const bytes& image) {
    std::string desc;
    const int cls = classify(image, &desc);
    return cls == kNoFrame ? "does not open (" + desc + ")" : "opens as " + desc;
  }
  // Whether image holds snapshot id exactly.
  bool holds(const bytes& image, int id) { return classify(image) == class_of(id); }
  // "" when image holds one of the possible snapshots (or the one being committed), else what is wrong.
  std::string check(const bytes& image) {
    ++checked_;
    std::string desc;
    const int cls = classify(image, &desc);
    for (int p : possible_)
      if (class_of(p) == cls) return "";
    if (attempted_ >= 0 && class_of(attempted_) == cls) return "";
    std::string got = cls == kNoFrame ? "does not open (" + desc + ")" : "opens as " + desc;
    if (cls >= 0) got += " = snapshot " + describe(cls) + ", not possible now";
    return got + "; possible: " + possible_text();
  }

  // Crash images of the medium's state (a page cache, a crash directory: medium_traits) at `call`, each checked;
  // a state (the medium's version within one window) is captured once. Failures go to failures().
  template <class Medium>
  void capture(Medium& md, uint64_t call, typename medium_traits<Medium>::call kind, const capture_settings& cs) {
    using traits = medium_traits<Medium>;
    if (md.version() == last_version_ && window_ == last_window_) return;
    last_version_ = md.version();
    last_window_ = window_;
    ++states_;
    const bool was = md.paused;
    md.paused = true;  // the decoders read images, never the medium: nothing here is the writer's call
    for (uint32_t sector : cs.sectors) {
      const uint64_t seed = cs.seed * 0x9E3779B97F4A7C15ull ^ (call << 13) ^ sector;
      md.for_each_crash_image(
          sector,
          [&](const bytes& image) {
            const std::string e = check(image);
            if (e.empty()) return true;
            fail("crash at call " + std::to_string(call) + " (" + traits::call_text(kind) + "; sector " +
                 std::to_string(sector) + ", " + std::to_string(md.pending().size()) + " " + traits::pending_text +
                 ", image seed " + std::to_string(seed) + "): the image " + e);
            return false;  // one report per state and sector
          },
          cs.samples, seed, cs.exhaustive_units);
    }
    md.paused = was;
  }

  void fail(const std::string& text) {
    ++nfailures_;
    if (failures_.size() < 8) failures_.push_back(text);
  }
  [[nodiscard]] const std::vector<std::string>& failures() const noexcept { return failures_; }
  [[nodiscard]] uint64_t failure_count() const noexcept { return nfailures_; }
  [[nodiscard]] uint64_t images_checked() const noexcept { return checked_; }
  [[nodiscard]] uint64_t images_decoded() const noexcept { return decodes_; }
  [[nodiscard]] uint64_t states_captured() const noexcept { return states_; }

 private:
  static constexpr int kNoFrameId = 0;
  using digest_t = std::pair<uint64_t, uint64_t>;
  static digest_t digest_of(const bytes& canon) {
    return {crash_model::bytes_hash(canon, 1), crash_model::bytes_hash(canon, 2)};
  }
  struct snap {
    Model model{};
    bytes canon;
    digest_t digest{};
    int cls = 0;
  };
  struct cached {
    bool ok = false;
    digest_t digest{};
    std::string desc;
  };
  static std::unordered_map<uint64_t, cached>& shared_cache() {
    static std::unordered_map<uint64_t, cached> cache;
    return cache;
  }
  [[nodiscard]] int class_of(int id) const { return id == kNoFrameId ? kNoFrame : snaps_[static_cast<size_t>(id)].cls; }

  std::function<decoded(const bytes&)> decode_;
  std::function<bytes(const Model&)> canon_of_;
  std::function<std::string(const Model&)> describe_;
  uint64_t tag_ = 0;
  std::vector<snap> snaps_{snap{}};  // id 0: no frame
  std::vector<int> possible_{kNoFrameId};
  int attempted_ = -1;
  uint64_t window_ = 1;
  uint64_t last_version_ = UINT64_MAX;
  uint64_t last_window_ = 0;
  std::vector<std::string> failures_;
  uint64_t nfailures_ = 0;
  uint64_t checked_ = 0;
  uint64_t decodes_ = 0;
  uint64_t states_ = 0;
};


// ---- One run of a workload ---------------------------------------------------------------------------------------

// What a program does after a failed sync: reopen from what the disk holds (dropping the handle and the cache,
// as after a restart), or go on with the same handle and retry (which frame_commit's contract allows).
enum class after_failed_sync { reopen, retry };

struct run_plan {
  crash_model::fault_plan faults;
  bool capture = false;  // crash images at the calls [capture_from, capture_to]
  uint64_t capture_from = 1;
  uint64_t capture_to = UINT64_MAX;
  capture_settings cs;
  after_failed_sync policy = after_failed_sync::reopen;
  [[nodiscard]] bool faulty() const { return !faults.fail_calls.empty() || faults.fail_from != 0 || !faults.fail_syncs.empty(); }
};

struct run_result {
  uint64_t calls = 0;
  uint64_t syncs = 0;
  uint64_t focus_call = 1;  // the first call after the workload's setup
  uint64_t op_failures = 0;
  uint64_t images = 0;
  uint64_t decodes = 0;
  std::vector<std::string> failures;
  uint64_t nfailures = 0;
};

// A run of one workload over a crash medium (a page cache; a crash directory, crash_directory_sweep.hpp): the
// operations of a writer (a frame, an array) each reported and never fatal, the model updated when they succeed,
// snapshots recorded at each commit, the medium's checks noted after each operation, a reopen from the disk after
// a lossy failure (a failed sync; policy reopen), and the checks at the end. A test derives from it for its handle
// (the pure virtuals) and its operations (through op and committing).
template <class Model, class Medium = crash_model::page_cache>
class driver {
  using traits = medium_traits<Medium>;

 public:
  // tag: mixed into the verifier's cache key (decoded images are cached for the whole process).
  driver(uint64_t base, const run_plan& plan, std::function<decoded(const bytes&)> decode,
         std::function<bytes(const Model&)> canon_of, std::function<std::string(const Model&)> describe, uint64_t tag)
      : base_(base), plan_(plan), medium_(traits::make(base)), ver_(std::move(decode), canon_of, describe, tag),
        canon_of_(std::move(canon_of)), describe_(std::move(describe)) {
    traits::checks_on(medium_, base);
    medium_.faults = plan.faults;
    medium_.trace = std::getenv("TESSERA_CRASH_TRACE") != nullptr;
    medium_.on_call = [this](uint64_t call, typename traits::call kind) {
      if (plan_.capture && call >= plan_.capture_from && call <= plan_.capture_to) ver_.capture(medium_, call, kind, plan_.cs);
    };
    target_ = traits::target_of(medium_);
  }
  driver(const driver&) = delete;
  driver& operator=(const driver&) = delete;
  virtual ~driver() = default;

  // Creates the writer (a commit of the initial model), retried as a user would. In a directory, over whatever
  // it holds: an older frame stays possible until the creation's commit succeeds.
  void create() {
    if (stopped_) return;
    if (open_) {
      handle_release();
      open_ = false;
    }
    const Model m0 = initial_model();
    const int id = ver_.add(m0);
    // Over an older sparse frame, its other chunk entries are left to the next writable open (frame_create_sparse).
    created_over_ = created_over_ || traits::holds_chunks(medium_);
    for (int attempt = 0; attempt < 3 && !open_ && !stopped_; ++attempt) {
      if constexpr (!traits::directory) {
        if (attempt > 0) {
          // A creation retried replaces the file (what a half-made one holds is nobody's data).
          medium_.restart_with(traits::fresh(base_));
          ver_.known(0);
        }
      }
      const size_t v0 = medium_.violations().size();
      const uint64_t lossy0 = traits::lossy(medium_);
      trace_op("create");
      ver_.commit_begin(id);
      const tessera::status s = handle_create();
      trace_result("create", s);
      ver_.commit_end(s.ok());
      if (s.ok()) {
        open_ = true;
        closed_ = false;
        m_ = m0;
      } else {
        count_failure(s);
      }
      note_violations("create", v0);
      if (medium_.crashed()) stopped_ = true;
      if (s.ok() || traits::lossy(medium_) == lossy0 || plan_.policy != after_failed_sync::reopen) continue;
      if constexpr (!traits::directory) {
        reopen_from_disk("create");
        return;
      } else {
        // Created again over what the disk holds.
        restart_from_disk();
        if (disk_snapshot("create") < 0) return;
      }
    }
  }
  void commit() { committing("commit", [this] { return handle_commit(); }); }
  void compact() { committing("compact", [this] { return handle_compact(); }); }
  // Closes (the close tidy: commits of the same content). Changes a failed commit left are committed first (a
  // user's retry), unless `drop` (they are dropped: closing removes a sparse frame's new entries); if that fails
  // too, closing drops them. The model becomes what the storage holds.
  void close(bool drop = false) {
    if (stopped_ || !open_) return;
    if (!drop && handle_dirty()) commit();
    if (stopped_ || !open_) return;
    const size_t v0 = medium_.violations().size();
    const uint64_t lossy0 = traits::lossy(medium_);
    const bool dirty = handle_dirty();
    trace_op(drop ? "close (dropping)" : "close");
    const tessera::status s = handle_close();
    trace_result("close", s);
    open_ = false;
    closed_ = true;
    if (!s.ok()) count_failure(s);
    note_violations("close", v0);
    if (medium_.crashed()) {
      stopped_ = true;
      return;
    }
    if (traits::lossy(medium_) > lossy0 && plan_.policy == after_failed_sync::reopen) {
      reopen_from_disk("close");
      return;
    }
    if (dirty) model_from_storage("close with changes not committed");
    if (!plan_.faulty() && !created_over_) {
      // Without faults nothing waits for a sweep: each commit removed what it replaced, the close what it dropped.
      const std::string e = tidy_check(medium_.visible());
      if (!e.empty()) fail("after the close (call " + std::to_string(medium_.calls()) + "), the directory " + e);
    }
  }
  // Opens the closed writer again, writable (what the storage shows; after a lossy failure, what the disk holds: a
  // program reopens from the disk then, not through a cache that still shows what never became durable).
  void open_again() {
    if (stopped_ || open_) return;
    closed_ = false;
    if (traits::lossy(medium_) > lossy_seen_) {
      reopen_from_disk("open again");
      return;
    }
    model_from_storage("open again");
    open_with_retries();
    if (open_) created_over_ = false;  // swept
  }
  // The workload's setup ends here: reduced sweeps fail calls from here on.
  void focus() {
    if (focus_ == 0) focus_ = medium_.calls() + 1;
  }
  [[nodiscard]] const Model& model() const noexcept { return m_; }

  // The end of a run: faults off, what is pending committed (a user's retry), closed, the storage checked (its
  // content, through decode), every storage a directory opened closed.
  run_result finish() {
    if (medium_.crashed() && open_) {
      // The program is gone: its handle is dropped with every call still failing (what those calls seem to do
      // vanishes with the restart below).
      handle_release();
      open_ = false;
    }
    medium_.faults.clear();
    if (!stopped_) {
      if (!open_ && !closed_) open_again();
      if (open_ && handle_dirty()) commit();
      if (open_) close();
    }
    if (plan_.capture) ver_.capture(medium_, medium_.calls() + 1, traits::call::read, plan_.cs);
    if (open_) {
      handle_release();
      open_ = false;
    }
    if (traits::open_handles(medium_) != 0)
      fail("at the end, " + std::to_string(traits::open_handles(medium_)) + " storages the directory opened are not closed");
    const std::string noun = traits::noun;
    if (medium_.crashed()) {
      medium_.restart();
      const std::string e = ver_.check(traits::durable(medium_));
      if (!e.empty()) fail("after the crash, the disk " + e);
    } else if (!stopped_ && plan_.policy == after_failed_sync::retry && traits::lossy(medium_) > 0) {
      // On the same handle after a failed sync, commits may be refused for good (the handle poisoned): the
      // storage and the disk hold a possible snapshot, the model's only if the last commit returned ok.
      const std::string e = ver_.check(traits::visible(medium_));
      if (!e.empty()) fail("at the end, " + noun + " " + e);
      const std::string d = ver_.check(traits::durable(medium_));
      if (!d.empty()) fail("at the end, the disk " + d);
    } else if (!stopped_) {
      // Faults off, the last commit retried: the storage holds the model exactly, and so does the disk.
      const int id = ver_.add(m_);
      const bytes& vis = traits::visible(medium_);
      const bytes& dur = traits::durable(medium_);
      if (!ver_.holds(vis, id)) fail("at the end, " + noun + " " + ver_.what(vis) + ", not the model's " + ver_.describe(id));
      if (!ver_.holds(dur, id)) fail("at the end, the disk " + ver_.what(dur) + ", not the model's " + ver_.describe(id));
    }
    run_result r;
    r.calls = medium_.calls();
    r.syncs = medium_.syncs();
    r.focus_call = focus_ == 0 ? 1 : focus_;
    r.op_failures = op_failures_;
    r.images = ver_.images_checked();
    r.decodes = ver_.images_decoded();
    for (const std::string& f : ver_.failures()) r.failures.push_back(f);
    r.nfailures = ver_.failure_count() + nfailures_;
    for (const std::string& f : failures_) r.failures.push_back(f);
    return r;
  }

 protected:
  // The handle: create (committed), open writable, drop without any write, dirty, close (with its tidy), commit,
  // compact, and its content as the model describes it (read through the handle).
  virtual tessera::status handle_create() = 0;
  virtual tessera::status handle_open() = 0;
  virtual void handle_release() = 0;
  virtual bool handle_dirty() = 0;
  virtual tessera::status handle_close() = 0;
  virtual tessera::status handle_commit() = 0;
  virtual tessera::status handle_compact() = 0;
  virtual Model handle_read() = 0;
  virtual Model initial_model() = 0;
  // Whether a failed operation may have changed the writer (an array's writing call: array_dirty). Then the
  // model becomes what the writer holds after it; else the writer must hold the model still.
  virtual bool failed_ops_may_change() { return false; }
  // "" when what a directory lists is exactly what its committed frame references (and names a sweep leaves
  // alone): checked at a close without faults.
  virtual std::string tidy_check(const typename traits::listing&) { return ""; }

  // An operation: call() on the handle; on success apply() changes the model.
  template <class Call, class Apply>
  void op(const char* name, Call&& call, Apply&& apply) {
    if (stopped_ || !open_) return;
    trace_op(name);
    const size_t v0 = medium_.violations().size();
    const uint64_t lossy0 = traits::lossy(medium_);
    const tessera::status s = call();
    trace_result(name, s);
    if (s.ok()) apply();
    else count_failure(s);
    after(name, s, v0, lossy0);
  }

  // A commit (or compaction): the model recorded first.
  template <class Call>
  void committing(const char* name, Call&& call) {
    committing(name, call, [] {});
  }
  // A commit that also changes the content (apply: the model's change, made after the check of the writer).
  template <class Call, class Apply>
  void committing(const char* name, Call&& call, Apply&& apply) {
    if (stopped_ || !open_) return;
    if (!plan_.faulty()) live_check(name, "before");
    apply();
    const size_t v0 = medium_.violations().size();
    const uint64_t lossy0 = traits::lossy(medium_);
    const int id = ver_.add(m_);
    trace_op(name);
    ver_.commit_begin(id);
    const tessera::status s = call();
    trace_result(name, s);
    ver_.commit_end(s.ok());
    if (!s.ok()) count_failure(s);
    after(name, s, v0, lossy0);
  }

  uint64_t base_;
  run_plan plan_;
  Medium medium_;
  verifier<Model> ver_;
  typename traits::target target_{};
  Model m_{};

 private:
  void trace_op(const char* name) const {
    if (medium_.trace)
      std::fprintf(stderr, "%s: -- %s (from call %llu)\n", traits::trace_tag, name, static_cast<unsigned long long>(medium_.calls() + 1));
  }
  void trace_result(const char* name, const tessera::status& s) const {
    if (medium_.trace && !s.ok()) std::fprintf(stderr, "%s: -- %s failed: %s\n", traits::trace_tag, name, s.message);
  }

  void after(const char* name, const tessera::status& s, size_t v0, uint64_t lossy0) {
    note_violations(name, v0);
    if (medium_.crashed()) {
      stopped_ = true;
      return;
    }
    if (traits::lossy(medium_) > lossy0 && plan_.policy == after_failed_sync::reopen) {
      reopen_from_disk(name);
      return;
    }
    if (s.ok()) return;
    if (!failed_ops_may_change()) {
      live_check(name, "after a failed");
      return;
    }
    medium_.paused = true;
    Model live = handle_read();
    medium_.paused = false;
    m_ = std::move(live);
  }

  // The live writer holds the model (calls paused: the test's own look).
  void live_check(const char* name, const char* when) {
    medium_.paused = true;
    const Model live = handle_read();
    medium_.paused = false;
    if (canon_of_(live) != canon_of_(m_))
      fail(std::string(when) + " " + name + " (call " + std::to_string(medium_.calls()) + "), the writer holds " +
           describe_(live) + ", not the model's " + describe_(m_));
  }

  void open_with_retries() {
    for (int attempt = 0; attempt < 3 && !open_ && !medium_.crashed(); ++attempt) {
      if (handle_open().ok()) open_ = true;
      else ++op_failures_;
    }
    if (!open_) stopped_ = true;
  }

  void restart_from_disk() {
    medium_.restart();
    lossy_seen_ = traits::lossy(medium_);
  }

  // The snapshot the disk holds, now known (it must be a possible one: else a failure, the run stopped, -1).
  int disk_snapshot(const char* name) {
    const int id = ver_.identify(traits::durable(medium_));
    if (id < 0) {
      fail(std::string("after the failed sync in ") + name + " (call " + std::to_string(medium_.calls()) +
           "), the disk " + ver_.check(traits::durable(medium_)));
      stopped_ = true;
      return -1;
    }
    ver_.known(id);
    return id;
  }

  // A careful program after a lossy failure: the handle is dropped (a sparse frame's uncommitted entries removed),
  // the cache too (a restart), and the writer is opened from what the disk holds, which must be one of the
  // possible snapshots.
  void reopen_from_disk(const char* name) {
    handle_release();
    open_ = false;
    if constexpr (traits::directory) {
      if (medium_.crashed()) {
        stopped_ = true;
        return;
      }
    }
    restart_from_disk();
    const int id = disk_snapshot(name);
    if (id < 0) return;
    if (id == 0) {
      // Nothing on the disk yet (or a creation half done: a frame that is not yet the writer's): the program
      // creates again (a file replaced; in a directory, over what it holds).
      if constexpr (!traits::directory) medium_.restart_with(traits::fresh(base_));
      create();
      return;
    }
    m_ = ver_.model(id);
    open_with_retries();
  }

  // The model becomes what the storage shows, which must be one of the possible snapshots.
  void model_from_storage(const char* why) {
    const bytes vis = traits::visible(medium_);
    const int id = ver_.identify(vis);
    if (id <= 0) {
      fail(std::string(why) + ": " + traits::noun + " " + ver_.check(vis));
      stopped_ = true;
      return;
    }
    m_ = ver_.model(id);
  }

  void note_violations(const char* name, size_t v0) {
    const auto& v = medium_.violations();
    for (size_t i = v0; i < v.size(); ++i) fail(std::string(traits::checks_tag) + ", in " + name + ": " + v[i]);
  }

  void fail(const std::string& text) {
    ++nfailures_;
    if (failures_.size() < 8) failures_.push_back(text);
  }

  // A failed operation; one the workload causes itself (a full buffer) does not count against a run without faults.
  void count_failure(const tessera::status& s) {
    if (!traits::workload_full(medium_, s)) ++op_failures_;
  }

  std::function<bytes(const Model&)> canon_of_;
  std::function<std::string(const Model&)> describe_;
  bool open_ = false;
  bool closed_ = false;
  bool stopped_ = false;
  bool created_over_ = false;  // created over an older frame, not reopened (swept) since
  uint64_t focus_ = 0;
  uint64_t lossy_seen_ = 0;  // lossy failures the last restart accounted for
  uint64_t op_failures_ = 0;
  std::vector<std::string> failures_;
  uint64_t nfailures_ = 0;
};

// ---- Sweeps ----------------------------------------------------------------------------------------------------

// A workload: a name, the writer's base offset, and its steps on a driver D.
template <class D>
struct workload {
  const char* name;
  uint64_t base;
  void (*body)(D&);
};

template <class D>
run_result run(const workload<D>& w, const run_plan& plan) {
  D d(w.base, plan);
  w.body(d);
  return d.finish();
}

// images: crash images at every call of a run without faults. once, from: one failing call at every N (from the
// workload's setup's end on in the reduced mode), once or from N on (a crash). syncs_reopen, syncs_retry: the Nth
// sync fails, for every N. pairs: two failing calls (a sample).
enum class sweep_kind { images, once, from, syncs_reopen, syncs_retry, pairs };

inline std::string plan_text(const run_plan& p) {
  std::string s;
  for (uint64_t c : p.faults.fail_calls) s += (s.empty() ? "" : ", ") + std::string("call ") + std::to_string(c) + " fails once";
  if (p.faults.fail_from != 0) s += (s.empty() ? "" : ", ") + std::string("every call from ") + std::to_string(p.faults.fail_from) + " fails (a crash)";
  for (uint64_t c : p.faults.fail_syncs)
    s += (s.empty() ? "" : ", ") + std::string("sync ") + std::to_string(c) + " fails" +
         (p.policy == after_failed_sync::retry ? " (the program retries on the same handle)" : " (the program reopens from the disk)");
  return s.empty() ? "no faults" : s;
}

// Crash images per captured state: without faults, and in the runs with faults (from the fault on).
inline capture_settings images_settings(bool full) {
  capture_settings cs;
  cs.exhaustive_units = full ? 6 : 3;
  cs.samples = full ? 12 : 2;
  return cs;
}
inline capture_settings fault_settings(bool full) {
  capture_settings cs;
  cs.exhaustive_units = full ? 3 : 1;
  cs.samples = full ? 3 : 1;
  return cs;
}

// Runs a sweep of workload w and reports what failed (the first three failing runs in full). A run without faults
// must pass with no failed operation first. TESSERA_CRASH_RUN=k runs only the sweep's kth plan;
// TESSERA_CRASH_TRACE=1 prints every storage call and operation.
template <class D>
void sweep(tessera::test::context& t, const workload<D>& w, sweep_kind kind) {
  const bool full = full_mode();
  run_plan clean_plan;
  if (kind == sweep_kind::images) {
    clean_plan.capture = true;
    clean_plan.cs = images_settings(full);
  }
  const run_result clean = run(w, clean_plan);
  std::printf("[%s] run without faults: %llu calls, %llu syncs, setup ends at call %llu, %llu images checked (%llu decoded)\n",
              w.name, static_cast<unsigned long long>(clean.calls), static_cast<unsigned long long>(clean.syncs),
              static_cast<unsigned long long>(clean.focus_call), static_cast<unsigned long long>(clean.images),
              static_cast<unsigned long long>(clean.decodes));
  if (clean.nfailures > 0 || clean.op_failures > 0) {
    std::string text = std::string(w.name) + ", without faults: " + std::to_string(clean.nfailures) + " failures, " +
                       std::to_string(clean.op_failures) + " failed operations";
    for (const std::string& f : clean.failures) text += "\n  " + f;
    tessera::test::report_failure(t, __FILE__, __LINE__, text.c_str());
    return;
  }
  if (kind == sweep_kind::images) return;

  std::vector<run_plan> plans;
  const uint64_t first = full ? 1 : clean.focus_call;
  const uint64_t window = full ? UINT64_MAX : 24;  // calls captured after the fault (the write checks: all)
  auto add = [&](run_plan p, uint64_t from) {
    p.capture = true;
    p.capture_from = from;
    p.capture_to = window == UINT64_MAX ? UINT64_MAX : from + window;
    p.cs = fault_settings(full);
    plans.push_back(std::move(p));
  };
  if (kind == sweep_kind::once || kind == sweep_kind::from) {
    // Up to the last call of the run without faults (a crash there leaves its final pending state).
    for (uint64_t n = first; n <= clean.calls; ++n) {
      run_plan p;
      if (kind == sweep_kind::once) p.faults.fail_calls = {n};
      else p.faults.fail_from = n;
      add(p, n);
    }
  } else if (kind == sweep_kind::syncs_reopen || kind == sweep_kind::syncs_retry) {
    for (uint64_t k = 1; k <= clean.syncs; ++k) {
      run_plan p;
      p.faults.fail_syncs = {k};
      p.policy = kind == sweep_kind::syncs_retry ? after_failed_sync::retry : after_failed_sync::reopen;
      add(p, first);
    }
  } else {
    tessera::test::rng r(0xC0FFEE ^ crash_model::bytes_hash(reinterpret_cast<const uint8_t*>(w.name), std::strlen(w.name)));
    const int npairs = full ? 200 : 16;
    for (int i = 0; i < npairs && clean.calls > first; ++i) {
      const uint64_t a = static_cast<uint64_t>(r.range(static_cast<int64_t>(first), static_cast<int64_t>(clean.calls)));
      const uint64_t b = static_cast<uint64_t>(r.range(static_cast<int64_t>(a) + 1, static_cast<int64_t>(a) + 40));
      run_plan p;
      p.faults.fail_calls = {a, b};
      add(p, a);
    }
  }
  if (const char* only = std::getenv("TESSERA_CRASH_RUN")) {
    const size_t k = static_cast<size_t>(std::strtoull(only, nullptr, 10));
    if (k >= 1 && k <= plans.size()) plans = {plans[k - 1]};
  }

  uint64_t failed_runs = 0, images = 0, op_failures = 0;
  std::string text;
  for (size_t i = 0; i < plans.size(); ++i) {
    const run_result r = run(w, plans[i]);
    images += r.images;
    op_failures += r.op_failures;
    if (r.nfailures == 0) continue;
    if (++failed_runs <= 3) {
      text += "\n" + std::string(w.name) + ", run " + std::to_string(i + 1) + " (" + plan_text(plans[i]) + "): " +
              std::to_string(r.nfailures) + " failures";
      for (const std::string& f : r.failures) text += "\n  " + f;
    }
  }
  std::printf("[%s] %zu runs, %llu failed operations reported, %llu images checked, %llu runs failed\n", w.name,
              plans.size(), static_cast<unsigned long long>(op_failures), static_cast<unsigned long long>(images),
              static_cast<unsigned long long>(failed_runs));
  if (failed_runs > 0) {
    text = std::to_string(failed_runs) + " of " + std::to_string(plans.size()) + " runs failed (the first 3 below; " +
           "TESSERA_CRASH_RUN=<run> TESSERA_CRASH_TRACE=1 replays one)" + text;
    tessera::test::report_failure(t, __FILE__, __LINE__, text.c_str());
  }
}

}  // namespace crash_sweep

// One test per workload and sweep (suites <prefix>_images, _fail_once, _fail_from, _sync_fails_reopen,
// _sync_fails_retry, _fail_pairs; case id): crash images without faults, one failing call at every N (once; from
// N on), the Nth sync failing (reopen; retry), pairs of failing calls.
#define TESSERA_CRASH_SWEEP_TESTS(prefix, id, wl)                                                              \
  TESSERA_TEST(prefix##_images, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::images); }            \
  TESSERA_TEST(prefix##_fail_once, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::once); }           \
  TESSERA_TEST(prefix##_fail_from, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::from); }           \
  TESSERA_TEST(prefix##_sync_fails_reopen, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::syncs_reopen); } \
  TESSERA_TEST(prefix##_sync_fails_retry, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::syncs_retry); }   \
  TESSERA_TEST(prefix##_fail_pairs, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::pairs); }
