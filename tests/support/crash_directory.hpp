// SPDX-License-Identifier: BSD-3-Clause
// A directory crash model (issue 42, sparse frames): a storage_directory whose entries are files of the page-cache
// model (crash_model.hpp: a durable image under pending writes, synced per file) and whose namespace (which name
// holds which file) has a durable part under pending operations too.
//
// What makes a namespace operation durable: the storage_directory contract (storage_directory.hpp), which
// port/posix meets and exceeds:
//   - an entry created by open(replace) is durable once a sync of its storage succeeds (posix_directory fsyncs the
//     directory right after creating it, at the open);
//   - remove and rename are durable when they return ok (posix_directory fsyncs the directory after unlinkat and
//     renameat);
//   - durability is prefix-closed: an operation made durable makes every earlier pending one durable too (what a
//     directory fsync, or a file fsync that commits a journal, does);
//   - a rename is atomic: a crash leaves its target old or new, and its source only where the target is old.
// Open of an existing entry with replace empties it: a truncate of that file, pending until its sync (O_TRUNC).
// A crash image holds the durable namespace with any subset of the pending namespace operations applied in order,
// and each file it names at its durable content plus any subset of its pending writes' sectors and any prefix of
// its size changes (the page-cache model's images, per file). A remove or rename is also shown to on_call once
// more while it is under way (applied, not yet durable): a crash inside the call.
//
// Failures: a failing call at N, from N on (a crash), the Nth sync failing. Syncs count file syncs and the
// namespace operations that sync the directory in posix_directory (remove, rename, an open that creates). A failed
// file sync drops the file's pending writes (page_cache: reads still see them). A failing remove, rename or
// creating open (posix_directory: the change made, the directory's fsync failed; or the call itself failed) takes
// one of three courses, by its call number modulo 3: 0, nothing done; 1, done in what reads and listings see and
// pending (a crash may keep it or not, a later durable operation makes it durable); 2, done in what reads see and
// dropped (never durable: Linux does not write again what a failed writeback dropped). Failing as the Nth sync, it
// is done, dropped when N is odd and pending when N is even. A failing close releases the handle.
//
// Checks (checks_on), against the sparse frame the durable state holds: no write or truncate of a file it
// references (its chunks.b2frame, its chunk entries), no replace, remove or rename of them, and the rename that
// commits a new chunks.b2frame commits only durable content: the renamed file and every chunk entry it references
// synced, their names durable. And every open is closed once.
//
// Hosted targets only (std::map, std::function).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/storage_directory.hpp"

#include "crash_model.hpp"
#include "random.hpp"

namespace crash_model {

// A directory's content: entry name -> bytes.
using entries = std::map<std::string, bytes>;

// Canonical bytes of a directory's content (names sorted, length-prefixed): what the sweeps hash and decode.
[[nodiscard]] bytes entries_image(const entries& e);
// The content back from entries_image's bytes (empty when they do not parse).
[[nodiscard]] entries image_entries(const bytes& image);

// A read-only storage_directory over `e` (open read only, storages with a view; list). e must outlive it.
[[nodiscard]] tessera::storage_directory entries_directory(const entries* e) noexcept;

// Whether `name` is named like a sparse frame's chunk entry (frame_sparse_chunk_name: "%08X.chunk").
[[nodiscard]] bool is_chunk_name(const std::string& name) noexcept;

// The calls of the directory and of the storages it opens, as the call counter sees them.
enum class dir_call : uint8_t { open, close, remove, rename, list, read, write, size, truncate, sync };
[[nodiscard]] const char* dir_call_name(dir_call k) noexcept;

// A namespace operation: link (a creation), unlink (a remove), rename (from `name` to `to`).
struct ns_op {
  enum class kind : uint8_t { link, unlink, rename };
  kind k = kind::link;
  std::string name;
  std::string to;
  uint32_t file = 0;  // the file linked, unlinked or moved
  uint64_t call = 0;  // the call that issued it
};

// The files of a sparse frame's durable state (its chunks.b2frame, the chunk entries its index references).
struct sparse_refs {
  bool valid = false;  // a durable chunks.b2frame that opens
  std::string error;
  std::map<std::string, uint32_t> names;  // referenced name (chunks.b2frame included) -> durable file, or UINT32_MAX
};

class crash_directory {
 public:
  crash_directory() = default;
  crash_directory(const crash_directory&) = delete;
  crash_directory& operator=(const crash_directory&) = delete;

  // The directory over this model (context this): open, close, remove, rename, list.
  [[nodiscard]] tessera::storage_directory directory() noexcept;

  // ---- Faults and observation ------------------------------------------------------------------------------
  fault_plan faults;  // call numbers count every call of the directory and of its storages
  // While paused, calls are neither counted, nor failed, nor checked, nor shown to on_call.
  bool paused = false;
  // Called at every counted call, before it runs (the state a crash at that call leaves); a remove or rename once
  // more while under way.
  std::function<void(uint64_t call, dir_call kind)> on_call;
  bool trace = false;  // every counted call to stderr

  [[nodiscard]] uint64_t calls() const noexcept { return calls_; }
  [[nodiscard]] uint64_t syncs() const noexcept { return syncs_; }
  [[nodiscard]] uint64_t failed_calls() const noexcept { return failed_; }
  // Failures that may have lost what reads still see: failed file syncs, and namespace operations that failed
  // after taking effect (durable or not). A careful program reopens from the disk after one.
  [[nodiscard]] uint64_t lossy_failures() const noexcept { return lossy_; }
  [[nodiscard]] bool crashed() const noexcept { return crashed_; }
  [[nodiscard]] uint64_t version() const noexcept;  // changes with the durable or pending state
  [[nodiscard]] uint32_t open_handles() const noexcept { return open_total_; }

  // ---- State -----------------------------------------------------------------------------------------------
  [[nodiscard]] entries visible() const;
  [[nodiscard]] entries durable() const;
  [[nodiscard]] bytes visible_image() const { return entries_image(visible()); }
  [[nodiscard]] bytes durable_image() const { return entries_image(durable()); }
  [[nodiscard]] const std::map<std::string, uint32_t>& visible_names() const noexcept { return visible_; }
  [[nodiscard]] const std::map<std::string, uint32_t>& durable_names() const noexcept { return durable_; }
  [[nodiscard]] const std::vector<ns_op>& pending() const noexcept { return pending_; }
  [[nodiscard]] const page_cache& file(uint32_t f) const { return *files_[f]; }

  // An entry put in place before the workload (someone else's file): durable at once, not counted.
  void put_durable(const std::string& name, const bytes& content);
  // A restart (after a crash, or a careful program after a lossy failure): reads see the durable state; pending
  // and dropped operations are forgotten. No storage may be open.
  void restart();

  // ---- Crash images ----------------------------------------------------------------------------------------
  // Binary units of the current state at `sector`: pending namespace operations, then the sector pieces of the
  // pending writes of every file a crash image may name.
  [[nodiscard]] size_t crash_units(uint32_t sector) const;
  // Visits crash images (entries_image bytes): every combination when there are at most exhaustive_units units
  // (and few size prefixes); else the two extremes, every subset of up to 3 pending namespace operations with
  // the files at both extremes, and `samples` random ones from `seed`. fn returns false to stop.
  uint64_t for_each_crash_image(uint32_t sector, const std::function<bool(const bytes&)>& fn, uint64_t samples = 4,
                                uint64_t seed = 1, size_t exhaustive_units = 8) const;

  // ---- Checks ----------------------------------------------------------------------------------------------
  void checks_on() noexcept { checks_ = true; }
  void checks_off() noexcept { checks_ = false; }
  [[nodiscard]] const std::vector<std::string>& violations() const noexcept { return violations_; }
  // The durable sparse frame's files (cached until the durable state changes).
  [[nodiscard]] const sparse_refs& durable_frame();

 private:
  static tessera::status cb_open(void* c, const char* name, tessera::storage_open mode, tessera::storage* out) noexcept;
  static tessera::status cb_close(void* c, tessera::storage* s) noexcept;
  static tessera::status cb_remove(void* c, const char* name) noexcept;
  static tessera::status cb_rename(void* c, const char* from, const char* to) noexcept;
  static tessera::status cb_list(void* c, tessera::storage_directory_visit visit, void* arg) noexcept;
  tessera::status unlink_or_rename(const char* from, const char* to) noexcept;  // to null: a remove

  // What a failing remove, rename or creating open did: nothing; took effect, pending (a crash may keep it, a later
  // durable operation makes it durable); took effect, dropped (never durable).
  enum class failure_effect : uint8_t { none, pending, dropped };
  [[nodiscard]] failure_effect failure_effect_now() const noexcept;
  bool tick(dir_call kind, const std::string& what, bool as_sync);  // false: the call fails
  bool file_tick(uint32_t f, call_kind kind);                       // true: the call fails
  uint32_t new_file(bytes durable);
  void durable_through(size_t k);  // pending ops [0, k] become durable
  void apply(std::map<std::string, uint32_t>& names, const ns_op& op) const;
  void durable_changed() noexcept;
  [[nodiscard]] std::string names_of(uint32_t f) const;
  void violation(const std::string& text);
  void check_file_write(uint32_t f, dir_call kind);
  void check_remove(const std::string& name);
  void check_rename(const std::string& from, const std::string& to);
  [[nodiscard]] bool file_durable(uint32_t f) const;
  [[nodiscard]] bytes image_of(uint32_t sector, const std::vector<uint8_t>& ops, const std::vector<uint32_t>& files,
                               const std::vector<std::vector<uint8_t>>& units, const std::vector<size_t>& prefixes) const;

  std::vector<std::unique_ptr<page_cache>> files_;
  std::map<const void*, uint32_t> file_of_;  // a file's page_cache (its storages' context) -> its number
  std::vector<uint32_t> open_count_;         // storages open per file
  uint32_t open_total_ = 0;
  std::map<std::string, uint32_t> visible_;
  std::map<std::string, uint32_t> durable_;
  std::vector<ns_op> pending_;
  uint64_t calls_ = 0;
  uint64_t syncs_ = 0;
  uint64_t failed_ = 0;
  uint64_t lossy_ = 0;
  uint64_t version_ = 0;
  uint64_t current_call_ = 0;
  bool crashed_ = false;
  bool fail_as_sync_ = false;  // the failing call failed as a sync

  bool checks_ = false;
  bool durable_parsed_ = false;
  sparse_refs durable_frame_;
  std::vector<std::string> violations_;
};

}  // namespace crash_model
