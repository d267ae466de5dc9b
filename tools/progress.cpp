// SPDX-License-Identifier: BSD-3-Clause
#include "progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace tessera::cli {

namespace {

double now_seconds() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

constexpr double kInterval = 0.2;  // seconds between redraws

}  // namespace

void progress_start(progress& p, const char* label, uint64_t total_bytes, bool quiet) noexcept {
  p.label = label;
  p.total = total_bytes;
  p.enabled = !quiet && isatty(2) == 1;
  p.shown = false;
  p.start = now_seconds();
  p.last = 0;
  p.delay = 0.5;
  if (const char* d = std::getenv("TESSERA_PROGRESS_DELAY_MS"); d != nullptr && d[0] != '\0')
    p.delay = std::strtod(d, nullptr) / 1000.0;
}

void progress_update(progress& p, uint64_t done) noexcept {
  if (!p.enabled) return;
  const double t = now_seconds();
  const double elapsed = t - p.start;
  if (elapsed < p.delay || (p.shown && t - p.last < kInterval)) return;
  p.last = t;
  p.shown = true;
  const double mb = 1e6;
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  char left[32] = "";
  if (rate > 0 && done < p.total)
    std::snprintf(left, sizeof left, ", %.1f s left", static_cast<double>(p.total - done) / rate);
  const double pct = p.total ? 100.0 * static_cast<double>(done) / static_cast<double>(p.total) : 100.0;
  // \r and erase-to-end: the line is redrawn in place.
  std::fprintf(stderr, "\rtessera %s: %.1f/%.1f MB (%.0f%%), %.1f MB/s%s\033[K", p.label,
               static_cast<double>(done) / mb, static_cast<double>(p.total) / mb, pct, rate / mb, left);
  std::fflush(stderr);
}

void progress_end(progress& p) noexcept {
  if (p.shown) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
  p.shown = false;
}

}  // namespace tessera::cli
