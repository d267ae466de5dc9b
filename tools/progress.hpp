// SPDX-License-Identifier: BSD-3-Clause
// The progress line of long commands: on a terminal only (stderr a tty, no --quiet), after the command has run
// for a moment, at most a few times a second: "CMD: done/total MB (P%), R MB/s, T s left". Cleared at the end so
// the terminal shows only what the command printed. TESSERA_PROGRESS_DELAY_MS (default 500) sets the moment
// (0 shows it from the first update; the tests use it).
#pragma once

#include <cstdint>

namespace tessera::cli {

struct progress {
  const char* label = "";
  uint64_t total = 0;
  bool enabled = false;
  bool shown = false;
  double start = 0;
  double last = 0;
  double delay = 0.5;
};

void progress_start(progress& p, const char* label, uint64_t total_bytes, bool quiet) noexcept;
void progress_update(progress& p, uint64_t done_bytes) noexcept;
/// Clears the line (when it was shown).
void progress_end(progress& p) noexcept;

}  // namespace tessera::cli
