// SPDX-License-Identifier: BSD-3-Clause
// Sweeps of sparse-frame writers through the directory crash model (crash_directory.hpp): what the driver of
// crash_sweep.hpp needs to run over a crash_directory instead of a page cache. The sweeps themselves
// (crash_sweep::sweep: crash images without faults, a failing call once or from N on, the Nth sync failing with a
// reopen or a retry, pairs) run it unchanged. Crash images are a directory's content as entries_image bytes; the
// test's decode opens one as the sparse frame it holds (and checks what a writable reopen leaves). Hosted targets
// only.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/error.hpp"
#include "tessera/storage_directory.hpp"

#include "crash_directory.hpp"
#include "crash_sweep.hpp"

namespace crash_sweep {

template <>
struct medium_traits<crash_model::crash_directory> {
  using call = crash_model::dir_call;
  using target = tessera::storage_directory;
  using listing = crash_model::entries;
  static constexpr bool directory = true;
  static constexpr const char* noun = "the directory";
  static constexpr const char* pending_text = "pending namespace operations";
  static constexpr const char* trace_tag = "crash dir";
  static constexpr const char* checks_tag = "directory check";
  static crash_model::crash_directory make(uint64_t) { return crash_model::crash_directory(); }
  static void checks_on(crash_model::crash_directory& cd, uint64_t) { cd.checks_on(); }
  static target target_of(crash_model::crash_directory& cd) { return cd.directory(); }
  static std::string call_text(call k) { return crash_model::dir_call_name(k); }
  // Failures after which a careful program reopens from the disk: those that took effect, maybe never durably.
  static uint64_t lossy(const crash_model::crash_directory& cd) { return cd.lossy_failures(); }
  static bytes visible(const crash_model::crash_directory& cd) { return cd.visible_image(); }
  static bytes durable(const crash_model::crash_directory& cd) { return cd.durable_image(); }
  static bool workload_full(const crash_model::crash_directory&, const tessera::status&) { return false; }
  static uint32_t open_handles(const crash_model::crash_directory& cd) { return cd.open_handles(); }
  // Whether it shows chunk entries (a sparse frame's).
  static bool holds_chunks(const crash_model::crash_directory& cd) {
    for (const auto& kv : cd.visible_names())
      if (crash_model::is_chunk_name(kv.first)) return true;
    return false;
  }
};

}  // namespace crash_sweep
