// SPDX-License-Identifier: BSD-3-Clause
// Sweeps of sparse-frame writers through the directory crash model (crash_directory.hpp): the driver of
// crash_sweep.hpp over a crash_directory instead of a page cache. The sweeps themselves (crash_sweep::sweep: crash
// images without faults, a failing call once or from N on, the Nth sync failing with a reopen or a retry, pairs)
// run it unchanged. Crash images are a directory's content as entries_image bytes; the test's decode opens one as
// the sparse frame it holds (and checks what a writable reopen leaves). Hosted targets only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/storage_directory.hpp"

#include "crash_directory.hpp"
#include "crash_sweep.hpp"

namespace crash_sweep {

template <class Model>
class dir_driver {
 public:
  // tag: mixed into the verifier's cache key (decoded images are cached for the whole process).
  dir_driver(const run_plan& plan, std::function<decoded(const bytes&)> decode, std::function<bytes(const Model&)> canon_of,
             std::function<std::string(const Model&)> describe, uint64_t tag)
      : plan_(plan), ver_(std::move(decode), canon_of, describe, tag), canon_of_(std::move(canon_of)),
        describe_(std::move(describe)) {
    cd_.checks_on();
    cd_.faults = plan.faults;
    cd_.trace = std::getenv("TESSERA_CRASH_TRACE") != nullptr;
    cd_.on_call = [this](uint64_t call, crash_model::dir_call kind) {
      if (plan_.capture && call >= plan_.capture_from && call <= plan_.capture_to) capture(call, kind);
    };
    dir_ = cd_.directory();
  }
  dir_driver(const dir_driver&) = delete;
  dir_driver& operator=(const dir_driver&) = delete;
  virtual ~dir_driver() = default;

  // Someone else's file in the directory before the workload (a sweep must leave it).
  void put_foreign(const std::string& name, const bytes& content) { cd_.put_durable(name, content); }

  // Creates the writer (a commit of the initial model) over whatever the directory holds, retried as a user
  // would. Over an older frame that one stays possible until the creation's commit succeeds.
  void create() {
    if (stopped_) return;
    if (open_) {
      handle_release();
      open_ = false;
    }
    const Model m0 = initial_model();
    const int id = ver_.add(m0);
    // Over an older frame, its other chunk entries are left to the next writable open (frame_create_sparse).
    for (const auto& kv : cd_.visible_names()) created_over_ = created_over_ || crash_model::is_chunk_name(kv.first);
    for (int attempt = 0; attempt < 3 && !open_ && !stopped_; ++attempt) {
      const size_t v0 = cd_.violations().size();
      const uint64_t lossy0 = cd_.lossy_failures();
      trace_op("create");
      begin(id);
      const tessera::status s = handle_create();
      trace_result("create", s);
      end(s.ok());
      if (s.ok()) {
        open_ = true;
        closed_ = false;
        m_ = m0;
      } else {
        ++op_failures_;
      }
      note_violations("create", v0);
      if (cd_.crashed()) stopped_ = true;
      if (!s.ok() && cd_.lossy_failures() > lossy0 && plan_.policy == after_failed_sync::reopen) {
        restart_from_disk();
        const int now = ver_.identify(cd_.durable_image());
        if (now < 0) {
          fail("after the failed sync in create (call " + std::to_string(cd_.calls()) + "), the disk " +
               ver_.check(cd_.durable_image()));
          stopped_ = true;
          return;
        }
        known(now);
      }
    }
  }
  void commit() { committing("commit", [this] { return handle_commit(); }); }
  // Closes; changes a failed commit left are committed first (a user's retry), unless `drop` (they are dropped:
  // closing removes their new entries). The model becomes what the directory shows.
  void close(bool drop = false) {
    if (stopped_ || !open_) return;
    if (!drop && handle_dirty()) commit();
    if (stopped_ || !open_) return;
    const size_t v0 = cd_.violations().size();
    const uint64_t lossy0 = cd_.lossy_failures();
    const bool dirty = handle_dirty();
    trace_op(drop ? "close (dropping)" : "close");
    const tessera::status s = handle_close();
    trace_result("close", s);
    open_ = false;
    closed_ = true;
    if (!s.ok()) ++op_failures_;
    note_violations("close", v0);
    if (cd_.crashed()) {
      stopped_ = true;
      return;
    }
    if (cd_.lossy_failures() > lossy0 && plan_.policy == after_failed_sync::reopen) {
      reopen_from_disk("close");
      return;
    }
    if (dirty) model_from_storage("close with changes not committed");
    if (!plan_.faulty() && !created_over_) {
      // Without faults nothing waits for a sweep: each commit removed what it replaced, the close what it dropped.
      const std::string e = tidy_check(cd_.visible());
      if (!e.empty()) fail("after the close (call " + std::to_string(cd_.calls()) + "), the directory " + e);
    }
  }
  // Opens the closed writer again, writable (the sweep runs); after a lossy failure, from what the disk holds.
  void open_again() {
    if (stopped_ || open_) return;
    closed_ = false;
    if (cd_.lossy_failures() > lossy_seen_) {
      reopen_from_disk("open again");
      return;
    }
    model_from_storage("open again");
    open_with_retries();
    if (open_) created_over_ = false;  // swept
  }
  void focus() {
    if (focus_ == 0) focus_ = cd_.calls() + 1;
  }
  [[nodiscard]] const Model& model() const noexcept { return m_; }

  // The end of a run: faults off, what is pending committed, closed, the directory checked (its content, and
  // what a writable reopen leaves, through decode), every storage closed.
  run_result finish() {
    if (cd_.crashed() && open_) {
      // The program is gone: its handle is dropped with every call still failing (what those calls seem to do
      // vanishes with the restart below).
      handle_release();
      open_ = false;
    }
    cd_.faults.clear();
    if (!stopped_) {
      if (!open_ && !closed_) open_again();
      if (open_ && handle_dirty()) commit();
      if (open_) close();
    }
    if (plan_.capture) capture(cd_.calls() + 1, crash_model::dir_call::read);
    if (open_) {
      handle_release();
      open_ = false;
    }
    if (cd_.open_handles() != 0)
      fail("at the end, " + std::to_string(cd_.open_handles()) + " storages the directory opened are not closed");
    if (cd_.crashed()) {
      cd_.restart();
      const std::string e = ver_.check(cd_.durable_image());
      if (!e.empty()) fail("after the crash, the disk " + e);
    } else if (!stopped_ && plan_.policy == after_failed_sync::retry && cd_.lossy_failures() > 0) {
      const std::string e = ver_.check(cd_.visible_image());
      if (!e.empty()) fail("at the end, the directory " + e);
      const std::string d = ver_.check(cd_.durable_image());
      if (!d.empty()) fail("at the end, the disk " + d);
    } else if (!stopped_) {
      const int id = ver_.add(m_);
      const bytes vis = cd_.visible_image(), dur = cd_.durable_image();
      if (!ver_.holds(vis, id)) fail("at the end, the directory " + ver_.what(vis) + ", not the model's " + ver_.describe(id));
      if (!ver_.holds(dur, id)) fail("at the end, the disk " + ver_.what(dur) + ", not the model's " + ver_.describe(id));
    }
    run_result r;
    r.calls = cd_.calls();
    r.syncs = cd_.syncs();
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
  virtual tessera::status handle_create() = 0;
  virtual tessera::status handle_open() = 0;
  virtual void handle_release() = 0;
  virtual bool handle_dirty() = 0;
  virtual tessera::status handle_close() = 0;
  virtual tessera::status handle_commit() = 0;
  virtual Model handle_read() = 0;
  virtual Model initial_model() = 0;
  virtual bool failed_ops_may_change() { return false; }
  // "" when a directory holds exactly what its committed frame references (and names a sweep leaves alone).
  virtual std::string tidy_check(const crash_model::entries&) { return ""; }

  template <class Call, class Apply>
  void op(const char* name, Call&& call, Apply&& apply) {
    if (stopped_ || !open_) return;
    trace_op(name);
    const size_t v0 = cd_.violations().size();
    const uint64_t lossy0 = cd_.lossy_failures();
    const tessera::status s = call();
    trace_result(name, s);
    if (s.ok()) apply();
    else ++op_failures_;
    after(name, s, v0, lossy0);
  }

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
    const size_t v0 = cd_.violations().size();
    const uint64_t lossy0 = cd_.lossy_failures();
    const int id = ver_.add(m_);
    trace_op(name);
    begin(id);
    const tessera::status s = call();
    trace_result(name, s);
    end(s.ok());
    if (!s.ok()) ++op_failures_;
    after(name, s, v0, lossy0);
  }

  run_plan plan_;
  crash_model::crash_directory cd_;
  verifier<Model> ver_;
  tessera::storage_directory dir_{};
  Model m_{};

 private:
  // The verifier's window, mirrored: a state is captured once per window and directory version.
  void begin(int id) {
    ver_.commit_begin(id);
    ++window_;
  }
  void end(bool ok) {
    ver_.commit_end(ok);
    ++window_;
  }
  void known(int id) {
    ver_.known(id);
    ++window_;
  }

  void capture(uint64_t call, crash_model::dir_call kind) {
    const uint64_t v = cd_.version();
    if (v == last_version_ && window_ == last_window_) return;
    last_version_ = v;
    last_window_ = window_;
    const bool was = cd_.paused;
    cd_.paused = true;  // the decoders read images, never the directory; nothing here is the writer's call
    for (uint32_t sector : plan_.cs.sectors) {
      const uint64_t seed = plan_.cs.seed * 0x9E3779B97F4A7C15ull ^ (call << 13) ^ sector;
      cd_.for_each_crash_image(
          sector,
          [&](const bytes& image) {
            const std::string e = ver_.check(image);
            if (e.empty()) return true;
            ver_.fail("crash at call " + std::to_string(call) + " (" + crash_model::dir_call_name(kind) + "; sector " +
                      std::to_string(sector) + ", " + std::to_string(cd_.pending().size()) +
                      " pending namespace operations, image seed " + std::to_string(seed) + "): the image " + e);
            return false;
          },
          plan_.cs.samples, seed, plan_.cs.exhaustive_units);
    }
    cd_.paused = was;
  }

  void trace_op(const char* name) const {
    if (cd_.trace) std::fprintf(stderr, "crash dir: -- %s (from call %llu)\n", name, static_cast<unsigned long long>(cd_.calls() + 1));
  }
  void trace_result(const char* name, const tessera::status& s) const {
    if (cd_.trace && !s.ok()) std::fprintf(stderr, "crash dir: -- %s failed: %s\n", name, s.message);
  }

  void after(const char* name, const tessera::status& s, size_t v0, uint64_t lossy0) {
    note_violations(name, v0);
    if (cd_.crashed()) {
      stopped_ = true;
      return;
    }
    if (cd_.lossy_failures() > lossy0 && plan_.policy == after_failed_sync::reopen) {
      reopen_from_disk(name);
      return;
    }
    if (s.ok()) return;
    if (!failed_ops_may_change()) {
      live_check(name, "after a failed");
      return;
    }
    cd_.paused = true;
    Model live = handle_read();
    cd_.paused = false;
    m_ = std::move(live);
  }

  void live_check(const char* name, const char* when) {
    cd_.paused = true;
    const Model live = handle_read();
    cd_.paused = false;
    if (canon_of_(live) != canon_of_(m_))
      fail(std::string(when) + " " + name + " (call " + std::to_string(cd_.calls()) + "), the writer holds " +
           describe_(live) + ", not the model's " + describe_(m_));
  }

  void open_with_retries() {
    for (int attempt = 0; attempt < 3 && !open_ && !cd_.crashed(); ++attempt) {
      if (handle_open().ok()) open_ = true;
      else ++op_failures_;
    }
    if (!open_) stopped_ = true;
  }

  void restart_from_disk() {
    cd_.restart();
    lossy_seen_ = cd_.lossy_failures();
  }

  // A careful program after a lossy failure: the handle dropped (its uncommitted entries removed), the cache too
  // (a restart), and the writer opened from what the disk holds, which must be a possible snapshot.
  void reopen_from_disk(const char* name) {
    handle_release();
    open_ = false;
    if (cd_.crashed()) {
      stopped_ = true;
      return;
    }
    restart_from_disk();
    const int id = ver_.identify(cd_.durable_image());
    if (id < 0) {
      fail(std::string("after the failed sync in ") + name + " (call " + std::to_string(cd_.calls()) + "), the disk " +
           ver_.check(cd_.durable_image()));
      stopped_ = true;
      return;
    }
    known(id);
    if (id == 0) {
      create();  // nothing committed yet: the program creates again, over what the directory holds
      return;
    }
    m_ = ver_.model(id);
    open_with_retries();
  }

  void model_from_storage(const char* why) {
    const bytes vis = cd_.visible_image();
    const int id = ver_.identify(vis);
    if (id <= 0) {
      fail(std::string(why) + ": the directory " + ver_.check(vis));
      stopped_ = true;
      return;
    }
    m_ = ver_.model(id);
  }

  void note_violations(const char* name, size_t v0) {
    const auto& v = cd_.violations();
    for (size_t i = v0; i < v.size(); ++i) fail(std::string("directory check, in ") + name + ": " + v[i]);
  }

  void fail(const std::string& text) {
    ++nfailures_;
    if (failures_.size() < 8) failures_.push_back(text);
  }

  std::function<bytes(const Model&)> canon_of_;
  std::function<std::string(const Model&)> describe_;
  bool open_ = false;
  bool closed_ = false;
  bool stopped_ = false;
  bool created_over_ = false;  // created over an older frame, not reopened (swept) since
  uint64_t focus_ = 0;
  uint64_t lossy_seen_ = 0;
  uint64_t op_failures_ = 0;
  uint64_t window_ = 1;
  uint64_t last_version_ = UINT64_MAX;
  uint64_t last_window_ = 0;
  std::vector<std::string> failures_;
  uint64_t nfailures_ = 0;
};

}  // namespace crash_sweep
