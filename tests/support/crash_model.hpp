// SPDX-License-Identifier: BSD-3-Clause
// A page-cache crash model (issue 42): a storage over a durable image (what the disk holds) and the operations
// written since the last successful sync (what the page cache holds and the disk may or may not). Reads see the
// volatile state; a crash leaves the durable image plus any subset of the pending writes' sectors (lost or torn
// writes, in any order) and a size from any prefix of the pending size changes. A failed sync behaves like
// Linux after a failed fsync: the pending writes never reach the disk although reads still see them.
//
// It also checks each write as it is issued against the frame the durable image holds (check a): nothing the
// durable frame references may be overwritten, except its header in one write within a 512-byte sector, and
// the frame that header write commits may reference only durable bytes.
//
// Hosted targets only (std::vector, std::string, std::function).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/storage.hpp"

#include "random.hpp"

namespace crash_model {

using bytes = std::vector<uint8_t>;

// The storage callbacks, as the call counter sees them.
enum class call_kind : uint8_t { read, write, size, truncate, sync };
[[nodiscard]] const char* call_kind_name(call_kind k) noexcept;

// One operation since the last successful sync: a write {offset, bytes} or a truncate {size}, with the visible
// size before and after it (a size change when they differ).
struct pending_op {
  bool is_truncate = false;
  uint64_t offset = 0;  // write: where
  bytes data;           // write: what
  uint64_t size = 0;    // truncate: the new size
  uint64_t size_before = 0;
  uint64_t size_after = 0;
  uint64_t call = 0;  // the call that issued it
};

// Which calls fail with errc::io. Call numbers are 1-based and count every callback (read, write, size,
// truncate, sync); sync numbers count the sync calls alone.
struct fault_plan {
  std::vector<uint64_t> fail_calls;  // each fails once
  uint64_t fail_from = 0;            // 0: never; else this call and every later one fail (a crash)
  std::vector<uint64_t> fail_syncs;  // the Nth sync call fails
  void clear() {
    fail_calls.clear();
    fail_from = 0;
    fail_syncs.clear();
  }
};

// A half-open byte range [begin, end) of the storage (absolute offsets) and what it holds.
struct extent {
  uint64_t begin = 0;
  uint64_t end = 0;
  std::string what;
};

// What a frame in `image` at `base` references: header, every stored chunk, index and trailer (absolute
// offsets), read with tessera's own frame reader. valid false (and error set) when it does not open.
struct frame_extents {
  bool valid = false;
  std::string error;
  uint64_t base = 0;
  uint64_t header_len = 0;  // where the header's content ends (a padded header's pad excluded)
  uint64_t frame_len = 0;
  int64_t nchunks = 0;
  std::vector<extent> extents;
};
[[nodiscard]] frame_extents frame_extents_of(const bytes& image, uint64_t base);

// A read-only storage over `b` (with a view), for opening images with tessera's readers. b must outlive it.
[[nodiscard]] tessera::storage image_storage(const bytes* b) noexcept;

// A 64-bit hash of n bytes (FNV-style over 8-byte words, with the length and `seed` mixed in); different seeds
// give independent hashes.
[[nodiscard]] uint64_t bytes_hash(const uint8_t* p, size_t n, uint64_t seed = 0) noexcept;
[[nodiscard]] inline uint64_t bytes_hash(const bytes& b, uint64_t seed = 0) noexcept {
  return bytes_hash(b.data(), b.size(), seed);
}

class page_cache {
 public:
  page_cache() = default;
  explicit page_cache(bytes durable);  // a storage whose disk already holds `durable` (nothing pending)
  page_cache(const page_cache&) = delete;
  page_cache& operator=(const page_cache&) = delete;

  // The storage over this model (context this): read, write, size, truncate, sync; no view.
  [[nodiscard]] tessera::storage storage() noexcept;

  // ---- Faults and observation ------------------------------------------------------------------------------
  fault_plan faults;
  // While paused, calls are neither counted, nor failed, nor checked, nor shown to on_call (a test's own
  // look at the frame between steps).
  bool paused = false;
  // Called at every counted call, before it runs (and before it fails): the state a crash at that call leaves.
  std::function<void(uint64_t call, call_kind kind)> on_call;
  // Prints every counted call (number, kind, range, outcome) to stderr: for a failing sweep's reader.
  bool trace = false;
  // A fixed buffer's or a full disk's size: a write reaching past it fails with no_space and writes nothing.
  uint64_t capacity = UINT64_MAX;

  [[nodiscard]] uint64_t calls() const noexcept { return calls_; }
  [[nodiscard]] uint64_t syncs() const noexcept { return syncs_; }
  [[nodiscard]] uint64_t failed_calls() const noexcept { return failed_; }
  [[nodiscard]] uint64_t failed_syncs() const noexcept { return failed_syncs_; }
  [[nodiscard]] bool crashed() const noexcept { return crashed_; }  // a fail_from call was reached
  // Changes whenever the durable image or the pending operations change (writes, truncates, syncs, restart).
  [[nodiscard]] uint64_t version() const noexcept { return version_; }

  [[nodiscard]] const bytes& durable() const noexcept { return durable_; }
  [[nodiscard]] const bytes& visible() const noexcept { return visible_; }
  [[nodiscard]] const std::vector<pending_op>& pending() const noexcept { return pending_; }
  // Byte ranges a failed sync dropped: visible, never durable (until written again and synced).
  [[nodiscard]] const std::vector<extent>& dropped() const noexcept { return dropped_; }

  // A restart (after a crash, or by a careful program after a failed sync): what reads see is the durable image;
  // pending and dropped writes are forgotten.
  void restart();
  // The same storage after a crash that left `image` on the disk (or a program that replaced the file).
  void restart_with(bytes image);

  // ---- Crash images ----------------------------------------------------------------------------------------
  // Units: the sector-aligned pieces (absolute offsets, sector 512 or 4096) of each pending write, in order.
  [[nodiscard]] size_t crash_units(uint32_t sector) const noexcept;
  // Pending size changes: each truncate and each write that changed the visible size.
  [[nodiscard]] size_t crash_size_changes() const noexcept;
  // The durable image plus the units where applied[u] is non-zero, at the size after the first `prefix` size
  // changes (0: the durable size); bytes past that size are cut, bytes growth exposes that no applied unit
  // covers are zero.
  [[nodiscard]] bytes crash_image_of(uint32_t sector, const std::vector<uint8_t>& applied, size_t prefix) const;
  // A random crash image: each unit applied or not, a random prefix of the size changes.
  [[nodiscard]] bytes crash_image(tessera::test::rng& r, uint32_t sector) const;
  // Visits crash images: when there are at most 12 units, every subset of them at every prefix of the size
  // changes; else `samples` random ones drawn from `seed` (report it with a failure) and the two extremes
  // (nothing applied, everything applied at the full size). fn returns false to stop. Returns the count visited.
  uint64_t for_each_crash_image(uint32_t sector, const std::function<bool(const bytes&)>& fn, uint64_t samples = 64,
                                uint64_t seed = 1, size_t exhaustive_units = 12) const;

  // ---- Write checks (check a) ------------------------------------------------------------------------------
  // On: every write (and truncate) is checked against the frame the durable image holds at `base`. Off: for
  // layouts that are not one contiguous frame. A durable image that is not (yet) a frame references nothing.
  void checks_on(uint64_t base);
  void checks_off() noexcept { checks_ = false; }
  [[nodiscard]] const std::vector<std::string>& violations() const noexcept { return violations_; }
  void violations_clear() noexcept { violations_.clear(); }
  // The durable frame's extents (cached; parsed again only after a sync or restart changed the durable image).
  [[nodiscard]] const frame_extents& durable_frame();

 private:
  static tessera::status cb_read(void* c, uint64_t offset, tessera::bytes_mut dst) noexcept;
  static tessera::status cb_write(void* c, uint64_t offset, tessera::bytes_view src) noexcept;
  static tessera::status cb_size(void* c, uint64_t* out) noexcept;
  static tessera::status cb_truncate(void* c, uint64_t size) noexcept;
  static tessera::status cb_sync(void* c) noexcept;

  bool tick(call_kind kind, uint64_t a = 0, uint64_t b = 0);  // counts a call, runs on_call; false: it fails
  void check_write(uint64_t offset, tessera::bytes_view src);
  void check_truncate(uint64_t size);
  void sync_ok();
  void sync_failed();
  void durable_changed() noexcept;
  void violation(const std::string& text);
  template <class Fn>
  void for_each_unit(uint32_t sector, Fn&& fn) const;

  bytes durable_;
  bytes visible_;
  std::vector<pending_op> pending_;
  std::vector<extent> dropped_;
  uint64_t calls_ = 0;
  uint64_t syncs_ = 0;
  uint64_t failed_ = 0;
  uint64_t failed_syncs_ = 0;
  uint64_t version_ = 0;
  bool crashed_ = false;
  uint64_t current_call_ = 0;

  bool checks_ = false;
  uint64_t base_ = 0;
  bool durable_parsed_ = false;
  frame_extents durable_frame_;
  std::vector<std::string> violations_;
};

}  // namespace crash_model
